package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteTable(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{
			name:   "aligned, no trailing spaces",
			header: []string{"IRQ", "NAME", "CPUS"},
			rows:   [][]string{{"1", "timer", "0"}, {"284", "mlx5_comp0@pci:0000:98:00.0", ""}, {"9", "", "0-63"}},
			want: "IRQ  NAME                         CPUS\n" +
				"1    timer                        0\n" +
				"284  mlx5_comp0@pci:0000:98:00.0\n" +
				"9                                 0-63\n",
		},
		{
			name:   "wide and combining characters take their terminal columns",
			header: []string{"NIC", "NODE"},
			rows:   [][]string{{"网卡0", "1"}, {"e\u0301th0", "0"}},
			want:   "NIC    NODE\n网卡0  1\ne\u0301th0   0\n",
		},
		{
			name:   "control bytes and invalid UTF-8 are escaped",
			header: []string{"NAME", "X"},
			rows:   [][]string{{"evil\x1b[2J\n", "1"}, {"bad\xff", "2"}},
			want:   "NAME             X\nevil\\x1b[2J\\x0a  1\nbad\\xff          2\n",
		},
		{
			name:   "header only",
			header: []string{"A", "B"},
			want:   "A  B\n",
		},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := writeTable(&b, tt.header, tt.rows); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s: WriteTable (-want +got):\n%s", tt.name, diff)
		}
	}
}

// BenchmarkWriteTableHuge: a 50 MB cell (a hostile IRQ name) costs time
// linear in its size, not the minutes a cell-reflowing writer takes.
func BenchmarkWriteTableHuge(b *testing.B) {
	name := strings.Repeat("x", 50<<20)
	rows := [][]string{{"1", name}, {"2", "eth0-TxRx-0"}}
	b.SetBytes(int64(len(name)))
	for b.Loop() {
		if err := writeTable(discard{}, []string{"IRQ", "NAME"}, rows); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestWriteTableCutsWideCells: a cell wider than MaxCellWidth is cut,
// saying so, unless it is in the last column.
func TestWriteTableCutsWideCells(t *testing.T) {
	long := strings.Repeat("r", 1000)
	var b bytes.Buffer
	if err := writeTable(&b, []string{"NAME", "IRQ", "NOTE"}, [][]string{{long, "8", long}, {"timer", "0", "x"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	name := strings.Repeat("r", maxCellWidth-24) + "...(904 more bytes)"
	if want := name + "  8    " + long; lines[1] != want {
		t.Errorf("row 1 = %.200q..., want the name cut and the last column whole", lines[1])
	}
	if w := len(lines[2]); w > 2*maxCellWidth {
		t.Errorf("a short row is %d wide: padded to the long cell", w)
	}
}
