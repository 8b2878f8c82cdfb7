package interrupts

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestParseInterruptsRows(t *testing.T) {
	tests := []struct {
		name string
		give string
		want *Interrupts
	}{
		{
			name: "x86 MSI-X row with hwirq and flow",
			give: "            CPU0       CPU1       \n" +
				" 284:          7     100000  IR-PCI-MSIX-0000:98:00.0    1-edge      mlx5_comp0@pci:0000:98:00.0\n",
			want: &Interrupts{CPUs: []int{0, 1}, Rows: []Row{{
				ID: "284", IRQ: unknown.Of(284), Counts: []uint64{7, 100000}, Chip: "IR-PCI-MSIX-0000:98:00.0",
				HWIRQ: "1-edge", Name: "mlx5_comp0@pci:0000:98:00.0"}}},
		},
		{
			name: "offline CPU: columns come from the header",
			give: "           CPU0       CPU2       CPU3\n" +
				"  9:          1          2          3   IO-APIC   9-fasteoi   acpi\n",
			want: &Interrupts{CPUs: []int{0, 2, 3}, Rows: []Row{{
				ID: "9", IRQ: unknown.Of(9), Counts: []uint64{1, 2, 3}, Chip: "IO-APIC", HWIRQ: "9-fasteoi", Name: "acpi"}}},
		},
		{
			name: "arm64 GICv3 with Level and ITS-MSI with Edge",
			give: "           CPU0       CPU1\n" +
				" 10: 3287008667 3310445093     GICv3  27 Level     arch_timer\n" +
				" 52:          0       4242   ITS-MSI 524288 Edge      eth0-Tx-Rx-0\n",
			want: &Interrupts{CPUs: []int{0, 1}, Rows: []Row{
				{ID: "10", IRQ: unknown.Of(10), Counts: []uint64{3287008667, 3310445093}, Chip: "GICv3", HWIRQ: "27", Trigger: "Level", Name: "arch_timer"},
				{ID: "52", IRQ: unknown.Of(52), Counts: []uint64{0, 4242}, Chip: "ITS-MSI", HWIRQ: "524288", Trigger: "Edge", Name: "eth0-Tx-Rx-0"},
			}},
		},
		{
			name: "named rows: counts touching the colon, single-value ERR",
			give: "           CPU0       CPU1\n" +
				"IPI0:12345678901 2844211768       Rescheduling interrupts\n" +
				"NMI:          0          0   Non-maskable interrupts\n" +
				"ERR:          0\n" +
				"MIS:          3\n",
			want: &Interrupts{CPUs: []int{0, 1}, Rows: []Row{
				{ID: "IPI0", IRQ: namedRow, Counts: []uint64{12345678901, 2844211768}, Name: "Rescheduling interrupts"},
				{ID: "NMI", IRQ: namedRow, Counts: []uint64{0, 0}, Name: "Non-maskable interrupts"},
				{ID: "ERR", IRQ: namedRow, Counts: []uint64{0}},
				{ID: "MIS", IRQ: namedRow, Counts: []uint64{3}},
			}},
		},
		{
			name: "old kernel: flow inside the chip name, shared actions",
			give: "           CPU0       CPU1       CPU2       CPU3       \n" +
				"  0:         18          0          0          0  IR-IO-APIC-edge      timer\n" +
				" 16:          1          0          0          0   IO-APIC  16-fasteoi   ehci_hcd:usb1, PCIe PME\n",
			want: &Interrupts{CPUs: []int{0, 1, 2, 3}, Rows: []Row{
				{ID: "0", IRQ: unknown.Of(0), Counts: []uint64{18, 0, 0, 0}, Chip: "IR-IO-APIC-edge", Name: "timer"},
				{ID: "16", IRQ: unknown.Of(16), Counts: []uint64{1, 0, 0, 0}, Chip: "IO-APIC", HWIRQ: "16-fasteoi", Name: "ehci_hcd:usb1, PCIe PME"},
			}},
		},
		{
			name: "short row keeps the counts it has",
			give: "           CPU0       CPU1       CPU2\n" +
				" 30:          5          6\n",
			want: &Interrupts{CPUs: []int{0, 1, 2}, Rows: []Row{{ID: "30", IRQ: unknown.Of(30), Counts: []uint64{5, 6}}}},
		},
		{
			name: "no action: chip and hwirq only",
			give: "           CPU0\n" +
				"  7:          0   IO-APIC   7-fasteoi\n",
			want: &Interrupts{CPUs: []int{0}, Rows: []Row{{ID: "7", IRQ: unknown.Of(7), Counts: []uint64{0}, Chip: "IO-APIC", HWIRQ: "7-fasteoi"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.give))
			if err != nil {
				t.Fatalf("ParseInterrupts: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(unknown.Value[int]{})); diff != "" {
				t.Errorf("ParseInterrupts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseInterruptsErrors(t *testing.T) {
	tests := []struct {
		name string
		give string
	}{
		{"empty", ""},
		{"no CPU columns", "\n  1: 2\n"},
		{"junk header", "hello world\n"},
		{"duplicate CPU", "CPU0 CPU0\n"},
		{"row without colon", "CPU0\n garbage\n"},
		{"duplicate IRQ", "CPU0\n 1: 0 a b\n 1: 0 a b\n"},
		{"count overflow", "CPU0\n 1: 99999999999999999999999 IO-APIC 1-edge i8042\n"},
		{"negative IRQ", "CPU0\n -1: 0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.give))
			if !errors.Is(err, ErrFormat) {
				t.Errorf("Parse(%q) = %+v, %v; want an error wrapping ErrFormat", tt.give, got, err)
			}
		})
	}
}

// TestParseCaptures parses every real /proc/interrupts capture without
// loss: every line becomes a row, the columns are the header's, and every
// numbered row has a count per CPU column and a chip.
func TestParseCaptures(t *testing.T) {
	realhosts.Require(t)
	files, err := realhosts.InterruptsFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			in, err := Parse(b)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !slices.Equal(in.CPUs, f.CPUs) {
				t.Errorf("columns %v, want %v", in.CPUs, f.CPUs)
			}
			lines := 0
			for _, l := range strings.Split(string(b), "\n")[1:] {
				if strings.TrimSpace(l) != "" {
					lines++
				}
			}
			if len(in.Rows) != lines {
				t.Errorf("%d rows, want %d (one per line)", len(in.Rows), lines)
			}
			for _, r := range in.Rows {
				if r.IRQ.Known() && len(r.Counts) != len(in.CPUs) {
					t.Errorf("row %s: %d counts, want %d", r.ID, len(r.Counts), len(in.CPUs))
				}
				if r.IRQ.Known() && r.Chip == "" {
					t.Errorf("row %s: no chip", r.ID)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("           CPU0       CPU2\n 284:  1 2  IR-PCI-MSIX-0000:98:00.0    1-edge      mlx5_comp0@pci:0000:98:00.0\nERR: 0\n"))
	f.Add([]byte("CPU0 CPU1\nIPI0:12345678901 2 Rescheduling interrupts\n 10: 1 2 GICv3 27 Level arch_timer\n"))
	f.Add([]byte("CPU0\n 5:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		for _, r := range in.Rows {
			if len(r.Counts) > len(in.CPUs) {
				t.Fatalf("row %s has %d counts for %d columns", r.ID, len(r.Counts), len(in.CPUs))
			}
			_ = in.PerCPU(r)
		}
	})
}
