//go:build vmtest

package lab

import (
	"debug/elf"
	"maps"
	"path/filepath"
	"slices"
	"testing"
)

// prepareEthtool returns the files the guest needs to run the host's
// ethtool (Debian's ethtool package, which .ci/run installs): bin/ethtool,
// its ELF interpreter and the libraries it loads (libmnl, libm, libc),
// taken from the host's own root. The steer scenario compares irqnuma's
// reading of the RSS NIC with what ethtool says in the guest.
func prepareEthtool(t *testing.T) []guestFile {
	needTool(t, "ethtool", "ethtool")
	files, err := elfClosure("/", "usr/sbin/ethtool")
	if err != nil {
		t.Fatalf("the host's ethtool: %v", err)
	}
	var out []guestFile
	for _, guest := range slices.Sorted(maps.Keys(files)) {
		out = append(out, guestFile{Path: guest, From: files[guest]})
	}
	return out
}

// mergeFiles is a's files and those of b whose guest path a does not
// have: where iperf3's packages and the host both give a library (libc,
// the loader), the packages' copy is the one apt would install, never
// older than the host's.
func mergeFiles(a, b []guestFile) []guestFile {
	have := map[string]bool{}
	for _, f := range a {
		have[f.Path] = true
	}
	out := slices.Clone(a)
	for _, f := range b {
		if !have[f.Path] {
			out = append(out, f)
			have[f.Path] = true
		}
	}
	return out
}

// virtioNetImports reports which of syms the virtio_net module among
// modules imports (undefined symbols of its ELF file): what the driver
// calls of the kernel's exported functions. Nil when no virtio_net.ko
// is among them.
func virtioNetImports(t *testing.T, modules []string, syms ...string) map[string]bool {
	for _, m := range modules {
		if filepath.Base(m) != "virtio_net.ko" {
			continue
		}
		f, err := elf.Open(m)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		defer f.Close()
		all, err := f.Symbols()
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		out := map[string]bool{}
		for _, name := range syms {
			out[name] = slices.ContainsFunc(all, func(s elf.Symbol) bool { return s.Section == elf.SHN_UNDEF && s.Name == name })
		}
		return out
	}
	return nil
}
