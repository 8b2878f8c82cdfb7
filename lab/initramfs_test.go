//go:build vmtest

package lab

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the module root, from this file's location.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Dir(filepath.Dir(file))
}

// buildStatic builds a static linux/amd64 binary of pkg into dir, with
// the build tags given.
func buildStatic(t *testing.T, pkg, out string, tags ...string) {
	t.Helper()
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	requireStatic(t, out)
}

// requireStatic fails unless path is an ELF executable without an
// interpreter: the initramfs has no libc.
func requireStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s is dynamically linked: the initramfs has no libc (for busybox install Debian's busybox-static)", path)
		}
	}
}

// guestBinaries are the programs every initramfs holds, built once.
type guestBinaries struct {
	Irqnuma, Agent, Busybox string
	// Extra are the other programs' files: iperf3, ethtool, irqbalance
	// and their libraries.
	Extra []guestFile
}

func buildGuestBinaries(t *testing.T, dir string) guestBinaries {
	needTool(t, "busybox", "busybox-static")
	bb, _ := exec.LookPath("busybox")
	requireStatic(t, bb)
	g := guestBinaries{Irqnuma: filepath.Join(dir, "irqnuma"), Agent: filepath.Join(dir, "agent"), Busybox: bb}
	// labfault: zc prepare's fault hook (cmd/irqnuma/zcfault_lab.go).
	buildStatic(t, "./cmd/irqnuma", g.Irqnuma, "labfault")
	buildStatic(t, "./lab/agent", g.Agent)
	g.Extra = mergeFiles(mergeFiles(prepareIperf3(t), prepareEthtool(t)), prepareIrqbalance(t))
	return g
}

// writeInitramfs writes the guest's root: /init is the agent, irqnuma and
// busybox in /bin, iperf3, ethtool and irqbalance in /bin with their loader and libraries, the
// kernel's modules in /lib/modules with their load order in
// /etc/lab/modules, and the run's configuration in /etc/lab/config.json.
func writeInitramfs(t *testing.T, path string, g guestBinaries, k preparedKernel, config []byte) {
	var buf bytes.Buffer
	c := NewCPIO(&buf)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		must(err)
		return b
	}
	dirs := []string{"bin", "dev", "etc", "etc/lab", "lib", "lib/modules", "proc", "sys", "tmp", "run", "var", "var/lib"}
	for _, d := range dirs {
		must(c.Dir(d, 0o755))
	}
	must(c.CharDev("dev/console", 0o600, 5, 1))
	must(c.File("init", 0o755, read(g.Agent)))
	must(c.File("bin/irqnuma", 0o755, read(g.Irqnuma)))
	must(c.File("bin/busybox", 0o755, read(g.Busybox)))
	for _, app := range []string{"sh", "arp", "ip"} {
		must(c.Symlink("bin/"+app, "busybox"))
	}
	made := map[string]bool{}
	for _, d := range dirs {
		made[d] = true
	}
	for _, f := range g.Extra {
		parts := strings.Split(filepath.Dir(f.Path), "/")
		for i := range parts {
			if d := strings.Join(parts[:i+1], "/"); !made[d] {
				must(c.Dir(d, 0o755))
				made[d] = true
			}
		}
		must(c.File(f.Path, 0o755, read(f.From)))
	}
	var order bytes.Buffer
	for _, m := range k.Modules {
		name := filepath.Base(m)
		must(c.File("lib/modules/"+name, 0o644, read(m)))
		order.WriteString(name + "\n")
	}
	must(c.File("etc/lab/modules", 0o644, order.Bytes()))
	must(c.File("etc/lab/config.json", 0o644, config))
	must(c.Close())
	must(os.WriteFile(path, buf.Bytes(), 0o644))
}
