//go:build vmtest

package lab

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A labKernel is one Debian kernel package the lab boots.
type labKernel struct {
	Name string // short name: "6.1", "6.12"
	Meta string // the metapackage whose dependency is the kernel: linux-image-amd64
}

// labKernels are the kernels every scenario runs on: bookworm's own
// (linux-image-amd64 depends on a 6.1 one) and the newest 6.12 Debian 12
// carries.
var labKernels = []labKernel{
	{Name: "6.1", Meta: "linux-image-amd64"},
	{Name: "6.12", Meta: "linux-image-6.12-amd64"},
}

// wantModules are the drivers the guest needs; their dependencies follow
// from each module's depends= (modinfo). Those built into a kernel are
// skipped.
var wantModules = []string{"virtio_pci", "virtio_net", "nvme"}

// preparedKernel is a kernel unpacked into the cache: the image, its
// release, the exact package and the modules in load order.
type preparedKernel struct {
	labKernel
	Package string   // linux-image-6.1.0-57-amd64
	Version string   // 6.1.192-3
	Release string   // 6.1.0-57-amd64 (uname -r)
	Vmlinuz string   // path in the cache
	Modules []string // uncompressed .ko paths in the cache, in load order
	// LinksNAPI: whether its virtio_net names each queue's NAPI to
	// netdev netlink (nil: no virtio_net module).
	LinksNAPI *bool
}

// cacheDir is where downloads and unpacked kernels stay between runs:
// $IRQNUMA_LAB_CACHE, else $XDG_CACHE_HOME/irqnuma-lab, else
// ~/.cache/irqnuma-lab.
func cacheDir(t *testing.T) string {
	if d := os.Getenv("IRQNUMA_LAB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "irqnuma-lab")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatalf("no cache folder: set IRQNUMA_LAB_CACHE: %v", err)
	}
	return filepath.Join(home, ".cache", "irqnuma-lab")
}

// needTool fails the test, saying what to install, when a program is
// missing: the lab never skips for want of its tools.
func needTool(t *testing.T, prog, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		t.Fatalf("%s not found: the lab needs Debian's %s (apt-get install --no-install-recommends %s)", prog, pkg, pkg)
	}
}

func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// resolveKernel names the package the metapackage depends on and the
// version apt would fetch.
func resolveKernel(t *testing.T, k labKernel) (pkg, version string) {
	deps := output(t, "apt-cache", "depends", k.Meta)
	m := regexp.MustCompile(`(?m)^\s+Depends: (linux-image-\S+)$`).FindStringSubmatch(deps)
	if m == nil {
		t.Fatalf("apt-cache depends %s names no linux-image package (run apt-get update):\n%s", k.Meta, deps)
	}
	pkg = m[1]
	pol := output(t, "apt-cache", "policy", pkg)
	v := regexp.MustCompile(`(?m)^\s+Candidate: (\S+)$`).FindStringSubmatch(pol)
	if v == nil || v[1] == "(none)" {
		t.Fatalf("apt-cache policy %s: no candidate version:\n%s", pkg, pol)
	}
	return pkg, v[1]
}

// prepareKernel downloads and unpacks a kernel once per package version.
func prepareKernel(t *testing.T, k labKernel) preparedKernel {
	needTool(t, "apt-get", "apt")
	needTool(t, "dpkg-deb", "dpkg")
	needTool(t, "xz", "xz-utils")
	pkg, version := resolveKernel(t, k)
	pk := preparedKernel{labKernel: k, Package: pkg, Version: version}
	dir := filepath.Join(cacheDir(t), pkg+"_"+strings.ReplaceAll(version, ":", "%3a"))
	done := filepath.Join(dir, "ready")
	if _, err := os.Stat(done); err != nil {
		unpackKernel(t, pk, dir)
	}
	b, err := os.ReadFile(done)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	pk.Release = lines[0]
	pk.Vmlinuz = filepath.Join(dir, "vmlinuz")
	for _, m := range lines[1:] {
		pk.Modules = append(pk.Modules, filepath.Join(dir, "modules", m))
	}
	pk.LinksNAPI = linksNAPI(t, pk.Modules)
	return pk
}

// unpackKernel fetches the .deb, unpacks it in a scratch folder and keeps
// the image and the modules the guest loads. "ready" lists the release
// and then the modules in load order.
func unpackKernel(t *testing.T, pk preparedKernel, dir string) {
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	dl := t.TempDir()
	cmd := exec.Command("apt-get", "download", pk.Package+"="+pk.Version)
	cmd.Dir = dl
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apt-get download %s=%s: %v\n%s", pk.Package, pk.Version, err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dl, "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("apt-get download %s: want one .deb, got %v", pk.Package, debs)
	}
	x := t.TempDir()
	if out, err := exec.Command("dpkg-deb", "-x", debs[0], x).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x %s: %v\n%s", debs[0], err, out)
	}
	rels, _ := filepath.Glob(filepath.Join(x, "lib/modules/*"))
	if len(rels) != 1 {
		t.Fatalf("%s: want one lib/modules/<release>, got %v", pk.Package, rels)
	}
	release := filepath.Base(rels[0])
	mdir := rels[0]
	if err := copyFile(filepath.Join(x, "boot", "vmlinuz-"+release), filepath.Join(dir, "vmlinuz")); err != nil {
		t.Fatal(err)
	}
	order, err := moduleOrder(mdir, wantModules)
	if err != nil {
		t.Fatalf("%s: %v", pk.Package, err)
	}
	var ready bytes.Buffer
	ready.WriteString(release + "\n")
	for _, m := range order {
		name := strings.TrimSuffix(filepath.Base(m), ".xz")
		data, err := readModule(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "modules", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		ready.WriteString(name + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), ready.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// readModule returns a module's ELF image, decompressing .ko.xz.
func readModule(path string) ([]byte, error) {
	if !strings.HasSuffix(path, ".xz") {
		return os.ReadFile(path)
	}
	out, err := exec.Command("xz", "-dc", path).Output()
	if err != nil {
		return nil, fmt.Errorf("xz -dc %s: %w", path, err)
	}
	return out, nil
}

// modName is a module's name as the kernel spells it: '-' becomes '_'.
func modName(s string) string { return strings.ReplaceAll(s, "-", "_") }

// moduleOrder returns the module files to load for want, dependencies
// first, leaving out what modules.builtin lists.
func moduleOrder(mdir string, want []string) ([]string, error) {
	builtin := map[string]bool{}
	if f, err := os.Open(filepath.Join(mdir, "modules.builtin")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			builtin[modName(strings.TrimSuffix(filepath.Base(sc.Text()), ".ko"))] = true
		}
		f.Close()
	} else {
		return nil, err
	}
	files := map[string]string{}
	err := filepath.WalkDir(filepath.Join(mdir, "kernel"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := filepath.Base(p)
		if i := strings.Index(base, ".ko"); i > 0 && !d.IsDir() {
			files[modName(base[:i])] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name, from string) error
	visit = func(name, from string) error {
		name = modName(name)
		switch {
		case builtin[name] || state[name] == 2:
			return nil
		case state[name] == 1:
			return fmt.Errorf("module dependency cycle at %s", name)
		}
		p, ok := files[name]
		if !ok {
			return fmt.Errorf("module %s (needed by %s) is neither built in nor shipped", name, from)
		}
		state[name] = 1
		data, err := readModule(p)
		if err != nil {
			return err
		}
		deps, err := modDepends(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, d := range deps {
			if err := visit(d, name); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, p)
		return nil
	}
	for _, w := range want {
		if err := visit(w, "the lab"); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// modDepends reads depends= from a module's .modinfo section.
func modDepends(ko []byte) ([]string, error) {
	f, err := elf.NewFile(bytes.NewReader(ko))
	if err != nil {
		return nil, err
	}
	s := f.Section(".modinfo")
	if s == nil {
		return nil, fmt.Errorf("no .modinfo")
	}
	b, err := s.Data()
	if err != nil {
		return nil, err
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			if len(v) == 0 {
				return nil, nil
			}
			return strings.Split(string(v), ","), nil
		}
	}
	return nil, nil
}
