package watch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestReadersFileParse: each reader of a kernel file that finds it
// malformed says so with one sentinel, kfile.ErrFileParse, naming the
// file, with the message it had before ("read PATH: ..." or "parse
// PATH: ..."); the parser's own sentinel stays in the chain.
func TestReadersFileParse(t *testing.T) {
	readTopology := func(fsys kfile.FS) error { _, err := topology.Read(fsys); return err }
	readIRQs := func(fsys kfile.FS) error { _, _, err := irq.Read(fsys, irq.Options{}); return err }
	sample := func(fsys kfile.FS) error {
		s, err := Open(fsys, nil, proc.Selection{}, time.Now, nil)
		if err == nil {
			_, err = s.Sample()
		}
		return err
	}
	tests := []struct {
		name, file, give string
		read             func(kfile.FS) error
		want             string // the message after the path
		also             error  // a sentinel still in the chain, or nil
	}{
		{"node cpulist", "sys/devices/system/node/node0/cpulist", "0-3,\n", readTopology, "", nil},
		{"node distance", "sys/devices/system/node/node0/distance", "10 x\n", readTopology, `: bad distance "x"`, nil},
		{"node meminfo", "sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: lots kB\n", readTopology, `: bad MemTotal "lots"`, nil},
		{"/proc/interrupts", "proc/interrupts", "CPU0 CPU0\n", readIRQs, ": header: CPU0 twice: not in /proc/interrupts format", interrupts.ErrFormat},
		{"smp_affinity_list", "proc/irq/24/smp_affinity_list", "3-1\n", func(fsys kfile.FS) error { _, err := irq.ReadInfo(fsys, 24, false); return err }, "", nil},
		{"/proc/irq/N/node", "proc/irq/24/node", "x\n", func(fsys kfile.FS) error { _, err := irq.ReadInfo(fsys, 24, false); return err }, `: not a node: "x\n"`, nil},
		{"/proc/stat", "proc/stat", "cpu0 x\n", sample, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			p := filepath.Join(root, tt.file)
			if err := os.WriteFile(p, []byte(tt.give), 0o644); err != nil {
				t.Fatal(err)
			}
			err := tt.read(hosttest.Open(t, root))
			if !errors.Is(err, kfile.ErrFileParse) {
				t.Fatalf("%s holding %q: %v, want kfile.ErrFileParse", tt.file, tt.give, err)
			}
			if !strings.Contains(err.Error(), "read "+p+": ") && !strings.Contains(err.Error(), "parse "+p+": ") {
				t.Errorf("%q does not name %s", err, p)
			}
			if tt.want != "" && !strings.HasSuffix(err.Error(), p+tt.want) {
				t.Errorf("%q, want it to end %q", err, p+tt.want)
			}
			if tt.also != nil && !errors.Is(err, tt.also) {
				t.Errorf("%v: not %v", err, tt.also)
			}
		})
	}
}
