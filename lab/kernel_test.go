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
	"slices"
	"strings"
	"testing"
)

// A labKernel is one Debian kernel package the lab boots.
type labKernel struct {
	Meta string // the metapackage whose dependency is the kernel: linux-image-amd64
	// Suite is the Debian suite the lab fetches it from with apt
	// sources and state of its own (labApt), for a kernel the host's
	// release does not carry; empty: from the host's apt sources.
	Suite string
}

// labKernels are the kernels every scenario runs on: bookworm's own
// (linux-image-amd64 depends on a 6.1 one), the newest 6.12 Debian 12
// carries, and the newest Debian ships at all: trixie-backports'
// linux-image-amd64 (7.3 today), which moves on when Debian's does.
// Each is named by its version (kernelName).
var labKernels = []labKernel{
	{Meta: "linux-image-amd64"},
	{Meta: "linux-image-6.12-amd64"},
	{Meta: "linux-image-amd64", Suite: "trixie-backports"},
}

// wantModules are the drivers the guest needs; their dependencies follow
// from each module's depends= (modinfo). Those built into a kernel are
// skipped.
var wantModules = []string{"virtio_pci", "virtio_net", "nvme"}

// preparedKernel is a kernel unpacked into the cache: the image, its
// release, the exact package and the modules in load order.
type preparedKernel struct {
	labKernel
	Name    string   // major.minor of Version: "6.1", "6.12", "7.3"
	Package string   // linux-image-6.1.0-57-amd64
	Version string   // 6.1.192-3
	Release string   // 6.1.0-57-amd64 (uname -r)
	Vmlinuz string   // path in the cache
	Modules []string // uncompressed .ko paths in the cache, in load order
	// LinksNAPI: whether its virtio_net names each queue's NAPI to
	// netdev netlink: it calls netif_queue_set_napi (7.3's does, 6.1's
	// and 6.12's not). Nil: no virtio_net module.
	LinksNAPI *bool
	// SetsNAPIIRQ: whether its virtio_net ties an IRQ to a NAPI, so that
	// napi-get reports it: it calls netif_napi_set_irq_locked, which the
	// inline netif_napi_set_irq calls since 6.15. 7.3's virtio_net does
	// not. Nil: no virtio_net module, or a kernel before 6.15, where
	// netif_napi_set_irq was an inline store that leaves no import.
	SetsNAPIIRQ *bool
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

// aptConfig is the options every apt-get and apt-cache call for one
// kernel takes: none for the host's sources, the lab's own (labApt) for
// a Suite.
type aptConfig []string

// args is the command line of an apt-get or apt-cache call: the options,
// then args.
func (a aptConfig) args(args ...string) []string {
	return append(slices.Clone([]string(a)), args...)
}

// debianMirror and debianKeyring are what the lab's own apt sources name:
// Debian's archive and the keyring that verifies it, the one Debian 13's
// own sources name. Debian 12's debian-archive-keyring holds Debian 13's
// archive keys beside its own since 2023.3+deb12u2 ("Add automatic
// signing keys for trixie"), and trixie-backports' InRelease is signed by
// both (gpgv with that keyring: "Good signature from Debian Archive
// Automatic Signing Key (13/trixie)", and the 12/bookworm one).
const (
	debianMirror  = "http://deb.debian.org/debian"
	debianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
)

// labApt writes apt sources of the lab's own for suite (Debian's main,
// amd64, Signed-By debianKeyring) with a state, lists and cache folder
// beside them under the cache, runs apt-get update against them, and
// returns the options that make apt use them and none of the host's
// sources, pins or installed packages. A signature that does not verify,
// or an index that does not download, fails the lab.
func labApt(t *testing.T, suite string) aptConfig {
	if _, err := os.Stat(debianKeyring); err != nil {
		t.Fatalf("the lab's %s sources are verified with %s: %v (apt-get install debian-archive-keyring)", suite, debianKeyring, err)
	}
	dir := filepath.Join(cacheDir(t), "apt-"+suite)
	for _, d := range []string{"etc", "state/lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sources := filepath.Join(dir, "etc", "lab.sources")
	deb822 := fmt.Sprintf("Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nArchitectures: amd64\nSigned-By: %s\n", debianMirror, suite, debianKeyring)
	status := filepath.Join(dir, "state", "status")
	for p, b := range map[string]string{sources: deb822, status: ""} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := aptConfig{
		"-o", "Dir::Etc::SourceList=" + sources,
		"-o", "Dir::Etc::SourceParts=-",
		"-o", "Dir::Etc::Preferences=" + filepath.Join(dir, "etc", "preferences"),
		"-o", "Dir::Etc::PreferencesParts=" + filepath.Join(dir, "etc", "preferences.d"),
		"-o", "Dir::State=" + filepath.Join(dir, "state"),
		"-o", "Dir::State::status=" + status,
		"-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
		"-o", "Acquire::Languages=none",
	}
	if out, err := exec.Command("apt-get", a.args("update", "--error-on=any")...).CombinedOutput(); err != nil {
		t.Fatalf("apt-get update of the lab's own sources (%s %s main, Signed-By %s; lists in %s): %v\n%s", debianMirror, suite, debianKeyring, dir, err, out)
	}
	return a
}

// resolveKernel names the package the metapackage depends on and the
// version apt would fetch.
func resolveKernel(t *testing.T, a aptConfig, k labKernel) (pkg, version string) {
	from := "the host's apt sources (run apt-get update)"
	if k.Suite != "" {
		from = "the lab's own " + k.Suite + " sources"
	}
	deps := output(t, "apt-cache", a.args("depends", k.Meta)...)
	m := regexp.MustCompile(`(?m)^\s+Depends: (linux-image-\S+)$`).FindStringSubmatch(deps)
	if m == nil {
		t.Fatalf("apt-cache depends %s names no linux-image package in %s:\n%s", k.Meta, from, deps)
	}
	pkg = m[1]
	pol := output(t, "apt-cache", a.args("policy", pkg)...)
	v := regexp.MustCompile(`(?m)^\s+Candidate: (\S+)$`).FindStringSubmatch(pol)
	if v == nil || v[1] == "(none)" {
		t.Fatalf("apt-cache policy %s: no candidate version in %s:\n%s", pkg, from, pol)
	}
	return pkg, v[1]
}

// kernelName is the lab's name of a kernel: major.minor of its Debian
// version ("7.3" of 7.3.4-1~bpo13+1), what its subtests and snapshot are
// called.
func kernelName(version string) (string, error) {
	_, v, ok := strings.Cut(version, ":")
	if !ok {
		v = version
	}
	m := regexp.MustCompile(`^([0-9]+\.[0-9]+)[.~+-]`).FindStringSubmatch(v)
	if m == nil {
		return "", fmt.Errorf("kernel version %q does not start with major.minor", version)
	}
	return m[1], nil
}

// atLeast reports whether the kernel named name (kernelName's
// major.minor) is major.minor or later.
func atLeast(name string, major, minor int) bool {
	var ma, mi int
	if _, err := fmt.Sscanf(name, "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// kernelPackages are the packages whose files make the kernel: the image
// and, since Debian split it (7.x in trixie-backports: the image package
// is empty), each package of the same release and version it depends on
// (linux-binary-R holds vmlinuz, linux-modules-R the modules, linux-base-R
// modules.builtin). Each is pkg=version, for apt-get download.
func kernelPackages(t *testing.T, a aptConfig, pkg, version string) []string {
	release, ok := strings.CutPrefix(pkg, "linux-image-")
	if !ok {
		t.Fatalf("%s is not a linux-image package", pkg)
	}
	show := output(t, "apt-cache", a.args("show", "--no-all-versions", pkg+"="+version)...)
	var depends string
	for _, l := range strings.Split(show, "\n") {
		if d, ok := strings.CutPrefix(l, "Depends: "); ok {
			depends = d
		}
	}
	specs := []string{pkg + "=" + version}
	for _, d := range strings.Split(depends, ",") {
		alt, _, _ := strings.Cut(strings.TrimSpace(d), "|")
		name, rel, _ := strings.Cut(strings.TrimSpace(alt), " ")
		if !strings.HasPrefix(name, "linux-") || !strings.HasSuffix(name, "-"+release) {
			continue
		}
		if rel != "(= "+version+")" {
			t.Fatalf("%s=%s depends on %s %s, not on its own version", pkg, version, name, rel)
		}
		specs = append(specs, name+"="+version)
	}
	return specs
}

// prepareKernel downloads and unpacks a kernel once per package version.
func prepareKernel(t *testing.T, k labKernel) preparedKernel {
	needTool(t, "apt-get", "apt")
	needTool(t, "dpkg-deb", "dpkg")
	needTool(t, "xz", "xz-utils")
	var a aptConfig
	if k.Suite != "" {
		a = labApt(t, k.Suite)
	}
	pkg, version := resolveKernel(t, a, k)
	name, err := kernelName(version)
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	pk := preparedKernel{labKernel: k, Name: name, Package: pkg, Version: version}
	dir := filepath.Join(cacheDir(t), pkg+"_"+strings.ReplaceAll(version, ":", "%3a"))
	done := filepath.Join(dir, "ready")
	if _, err := os.Stat(done); err != nil {
		unpackKernel(t, pk, kernelPackages(t, a, pkg, version), a, dir)
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
	if imp := virtioNetImports(t, pk.Modules, "netif_queue_set_napi", "netif_napi_set_irq_locked"); imp != nil {
		links, setsIRQ := imp["netif_queue_set_napi"], imp["netif_napi_set_irq_locked"]
		pk.LinksNAPI = &links
		if atLeast(name, 6, 15) {
			pk.SetsNAPIIRQ = &setsIRQ
		}
	}
	return pk
}

// unpackKernel fetches the kernel's packages (specs, from
// kernelPackages), unpacks them in one scratch folder and keeps the
// image and the modules the guest loads. "ready" lists the release and
// then the modules in load order.
func unpackKernel(t *testing.T, pk preparedKernel, specs []string, a aptConfig, dir string) {
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	dl := t.TempDir()
	cmd := exec.Command("apt-get", a.args(append([]string{"download"}, specs...)...)...)
	cmd.Dir = dl
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apt-get download %s: %v\n%s", strings.Join(specs, " "), err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dl, "*.deb"))
	if len(debs) != len(specs) {
		t.Fatalf("apt-get download %s: want %d .deb, got %v", strings.Join(specs, " "), len(specs), debs)
	}
	x := t.TempDir()
	for _, d := range debs {
		if out, err := exec.Command("dpkg-deb", "-x", d, x).CombinedOutput(); err != nil {
			t.Fatalf("dpkg-deb -x %s: %v\n%s", d, err, out)
		}
	}
	// Bookworm's packages ship /lib/modules/R and /boot/vmlinuz-R; the
	// split ones of trixie-backports /usr/lib/modules/R, vmlinuz in it.
	rels, _ := filepath.Glob(filepath.Join(x, "lib/modules/*"))
	usrRels, _ := filepath.Glob(filepath.Join(x, "usr/lib/modules/*"))
	rels = append(rels, usrRels...)
	if len(rels) != 1 {
		t.Fatalf("%s: want one lib/modules/<release> or usr/lib/modules/<release>, got %v", strings.Join(specs, " "), rels)
	}
	mdir := rels[0]
	release := filepath.Base(mdir)
	vmlinuz := filepath.Join(x, "boot", "vmlinuz-"+release)
	if _, err := os.Stat(vmlinuz); err != nil {
		vmlinuz = filepath.Join(mdir, "vmlinuz")
	}
	if err := copyFile(vmlinuz, filepath.Join(dir, "vmlinuz")); err != nil {
		t.Fatalf("%s: no boot/vmlinuz-%s nor %s/vmlinuz: %v", strings.Join(specs, " "), release, strings.TrimPrefix(mdir, x+"/"), err)
	}
	order, err := moduleOrder(mdir, wantModules)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(specs, " "), err)
	}
	var ready bytes.Buffer
	ready.WriteString(release + "\n")
	for _, m := range order {
		data, err := readModule(m)
		if err != nil {
			t.Fatal(err)
		}
		name := moduleFile(m)
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

// moduleDecompressors are the compressions of a module file the lab
// reads, by suffix after .ko, with the program that undoes it and its
// Debian package: Debian's kernels ship .ko.xz (6.1, 6.12 and 7.3
// alike); Linux's Kconfig also offers zstd (MODULE_COMPRESS_ZSTD) and
// gzip.
var moduleDecompressors = map[string][2]string{
	".xz":  {"xz", "xz-utils"},
	".zst": {"zstd", "zstd"},
	".gz":  {"gzip", "gzip"},
}

// moduleFile is the uncompressed file name of a module: virtio_net.ko of
// .../virtio_net.ko.xz.
func moduleFile(path string) string {
	base := filepath.Base(path)
	i := strings.LastIndex(base, ".ko")
	return base[:i+len(".ko")]
}

// readModule returns a module's ELF image, decompressing .ko.xz, .ko.zst
// and .ko.gz with their programs.
func readModule(path string) ([]byte, error) {
	base := filepath.Base(path)
	i := strings.LastIndex(base, ".ko")
	if i < 0 {
		return nil, fmt.Errorf("%s: not a .ko module", path)
	}
	suffix := base[i+len(".ko"):]
	if suffix == "" {
		return os.ReadFile(path)
	}
	d, ok := moduleDecompressors[suffix]
	if !ok {
		return nil, fmt.Errorf("%s: a module compressed as %q, which the lab does not read", path, suffix)
	}
	if _, err := exec.LookPath(d[0]); err != nil {
		return nil, fmt.Errorf("%s: %s not found: the lab needs Debian's %s for the kernel's .ko%s modules", path, d[0], d[1], suffix)
	}
	out, err := exec.Command(d[0], "-dc", path).Output()
	if err != nil {
		return nil, fmt.Errorf("%s -dc %s: %w", d[0], path, err)
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

// TestKernelName: the lab's names of Debian's kernel versions, as apt
// gives them, and the versions it refuses.
func TestKernelName(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"6.1.192-3", "6.1"},
		{"6.12.118-1~deb12u1", "6.12"},
		{"7.3.4-1~bpo13+1", "7.3"},
		{"1:7.4-1", "7.4"},
		{"7.4~rc3-1~exp1", "7.4"},
	}
	for _, tt := range tests {
		got, err := kernelName(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("kernelName(%q) = %q, %v, want %q", tt.give, got, err, tt.want)
		}
	}
	for _, give := range []string{"", "7", "7.x-1", "linux-7.3"} {
		if got, err := kernelName(give); err == nil {
			t.Errorf("kernelName(%q) = %q, want an error", give, got)
		}
	}
	if !atLeast("7.3", 6, 15) || atLeast("6.12", 6, 15) || !atLeast("6.15", 6, 15) {
		t.Error("atLeast: 7.3 and 6.15 are 6.15 or later, 6.12 is not")
	}
}

// TestModuleFile: the uncompressed name of each compression the lab
// reads, and the compressions it refuses.
func TestModuleFile(t *testing.T) {
	for give, want := range map[string]string{
		"kernel/drivers/net/virtio_net.ko.xz":  "virtio_net.ko",
		"kernel/drivers/nvme/host/nvme.ko.zst": "nvme.ko",
		"kernel/drivers/net/failover.ko":       "failover.ko",
	} {
		if got := moduleFile(give); got != want {
			t.Errorf("moduleFile(%q) = %q, want %q", give, got, want)
		}
	}
	if _, err := readModule(filepath.Join(t.TempDir(), "virtio_net.ko.lz4")); err == nil || !strings.Contains(err.Error(), `".lz4"`) {
		t.Errorf("readModule of a .ko.lz4: %v, want an error naming .lz4", err)
	}
}
