//go:build vmtest

package lab

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// iperf3Packages are the Debian packages whose files iperf3 needs in the
// guest: the program, its library and theirs (apt-cache depends).
var iperf3Packages = []string{"iperf3", "libiperf0", "libsctp1", "libssl3", "libc6"}

// guestFile is a file the initramfs holds: its path there and its bytes
// on the host.
type guestFile struct {
	Path, From string
}

// prepareIperf3 fetches Debian's iperf3 and the libraries it loads once
// per set of package versions, and returns the files the guest needs:
// bin/iperf3, its ELF interpreter at the path it names, and every
// library it needs (DT_NEEDED, transitively) in lib/x86_64-linux-gnu,
// where glibc's loader looks without an ld.so.cache.
func prepareIperf3(t *testing.T) []guestFile {
	return prepareDebProgram(t, "iperf3", "usr/bin/iperf3", iperf3Packages)
}

// prepareDebProgram fetches Debian's packages (the program's and those
// of the libraries it loads) once per set of package versions, and
// returns the files the guest needs to run prog (its path in the
// package): bin/<name>, its interpreter and its libraries, as
// prepareIperf3 says. The cache folder is named by the packages and
// their versions, or by their hash where that name would be too long.
func prepareDebProgram(t *testing.T, name, prog string, pkgs []string) []guestFile {
	needTool(t, "apt-get", "apt")
	needTool(t, "dpkg-deb", "dpkg")
	var specs []string
	for _, p := range pkgs {
		specs = append(specs, p+"="+candidate(t, p))
	}
	key := strings.ReplaceAll(strings.Join(specs, "_"), ":", "%3a")
	if len(key) > 200 {
		sum := sha256.Sum256([]byte(strings.Join(specs, " ")))
		key = hex.EncodeToString(sum[:12])
	}
	dir := filepath.Join(cacheDir(t), name+"_"+key)
	ready := filepath.Join(dir, "ready")
	if _, err := os.Stat(ready); err != nil {
		unpackDebs(t, specs, dir, prog)
	}
	b, err := os.ReadFile(ready)
	if err != nil {
		t.Fatal(err)
	}
	var files []guestFile
	for _, p := range strings.Fields(string(b)) {
		files = append(files, guestFile{Path: p, From: filepath.Join(dir, "files", p)})
	}
	return files
}

// candidate is the version apt would fetch of pkg.
func candidate(t *testing.T, pkg string) string {
	pol := output(t, "apt-cache", "policy", pkg)
	for _, l := range strings.Split(pol, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Candidate: "); ok && v != "(none)" {
			return v
		}
	}
	t.Fatalf("apt-cache policy %s: no candidate version (run apt-get update):\n%s", pkg, pol)
	return ""
}

// unpackDebs downloads and unpacks the packages and keeps prog, its
// interpreter and its libraries under dir/files; "ready" lists them (and
// "packages" the packages they came from).
func unpackDebs(t *testing.T, specs []string, dir, prog string) {
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	dl, x := t.TempDir(), t.TempDir()
	cmd := exec.Command("apt-get", append([]string{"download"}, specs...)...)
	cmd.Dir = dl
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apt-get download %s: %v\n%s", strings.Join(specs, " "), err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dl, "*.deb"))
	if len(debs) != len(specs) {
		t.Fatalf("apt-get download %s: got %v", strings.Join(specs, " "), debs)
	}
	for _, d := range debs {
		if out, err := exec.Command("dpkg-deb", "-x", d, x).CombinedOutput(); err != nil {
			t.Fatalf("dpkg-deb -x %s: %v\n%s", d, err, out)
		}
	}
	files, err := elfClosure(x, prog)
	if err != nil {
		t.Fatalf("%s from %s: %v", prog, strings.Join(specs, " "), err)
	}
	var list strings.Builder
	for _, guest := range slices.Sorted(maps.Keys(files)) {
		from := files[guest]
		to := filepath.Join(dir, "files", guest)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyFile(from, to); err != nil {
			t.Fatal(err)
		}
		list.WriteString(guest + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "packages"), []byte(strings.Join(specs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// libDirs are where a Debian package keeps shared libraries.
var libDirs = []string{"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "lib", "usr/lib"}

// elfClosure maps the guest path of prog (bin/<name>), of its ELF
// interpreter and of every library it needs, transitively, to the file
// in the unpacked tree x that holds it (links followed inside x).
func elfClosure(x, prog string) (map[string]string, error) {
	out := map[string]string{}
	from, err := inTree(x, prog)
	if err != nil {
		return nil, err
	}
	out["bin/"+filepath.Base(prog)] = from
	queue := []string{from}
	for len(queue) > 0 {
		f, err := elf.Open(queue[0])
		if err != nil {
			return nil, err
		}
		queue = queue[1:]
		for _, p := range f.Progs {
			if p.Type != elf.PT_INTERP {
				continue
			}
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				f.Close()
				return nil, err
			}
			interp := strings.TrimPrefix(strings.TrimRight(string(b), "\x00"), "/")
			if out[interp], err = inTree(x, interp); err != nil {
				f.Close()
				return nil, fmt.Errorf("interpreter: %w", err)
			}
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, lib := range libs {
			guest := "lib/x86_64-linux-gnu/" + lib
			if _, done := out[guest]; done {
				continue
			}
			var path string
			for _, d := range libDirs {
				if path, err = inTree(x, d+"/"+lib); err == nil {
					break
				}
			}
			if err != nil {
				return nil, fmt.Errorf("%s is needed but in none of the packages", lib)
			}
			out[guest] = path
			queue = append(queue, path)
		}
	}
	return out, nil
}

// inTree resolves rel inside the tree x, following links (absolute ones
// relative to x), to a regular file.
func inTree(x, rel string) (string, error) {
	p := filepath.Join(x, rel)
	for range 16 {
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		if fi.Mode().IsRegular() {
			return p, nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return "", fmt.Errorf("%s is not a file", rel)
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			p = filepath.Join(x, target)
		} else {
			p = filepath.Join(filepath.Dir(p), target)
		}
		if root := strings.TrimSuffix(filepath.Clean(x), "/") + "/"; !strings.HasPrefix(p, root) {
			return "", fmt.Errorf("%s leads out of the packages", rel)
		}
	}
	return "", fmt.Errorf("%s: too many links", rel)
}
