package rootpath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sys/devices/pci0000:00/0000:00:03.0/net/eth0"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "sys/class/net"), 0o755))
	must(os.Symlink("../../devices/pci0000:00/0000:00:03.0/net/eth0", filepath.Join(root, "sys/class/net/eth0")))
	must(os.Symlink("../../../0000:00:03.0", filepath.Join(root, "sys/devices/pci0000:00/0000:00:03.0/net/eth0/device")))
	must(os.Symlink("/sys/devices", filepath.Join(root, "sys/abs")))
	must(os.Symlink("../../..", filepath.Join(root, "sys/class/out")))
	must(os.Symlink("loop", filepath.Join(root, "sys/loop")))

	tests := []struct {
		give, dir, want string
		wantErr         error
	}{
		{give: "sys/class/net/eth0", want: "sys/devices/pci0000:00/0000:00:03.0/net/eth0"},
		{give: "sys/class/net/eth0/device", want: "sys/devices/pci0000:00/0000:00:03.0"},
		{give: "sys/abs/pci0000:00", want: "sys/devices/pci0000:00"},
		{give: "../sys/class", dir: "sys", want: "sys/class"},
		{give: "sys/class/out/x", wantErr: ErrLeavesRoot},
		{give: "..", wantErr: ErrLeavesRoot},
		{give: "sys/loop", wantErr: ErrTooManyLinks},
		{give: "sys/nothing", wantErr: os.ErrNotExist},
	}
	for _, tt := range tests {
		got, err := Resolve(Dir(root), tt.dir, tt.give)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Resolve(%q, %q) = %q, %v; want %v", tt.dir, tt.give, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tt.dir, tt.give, got, err, tt.want)
		}
	}
}

func TestEscapes(t *testing.T) {
	for rel, want := range map[string]bool{
		"..": true, "../etc": true, "a/../..": true, "/etc": true, "a/../../b": true,
		"a": false, "a/..": false, "a/b/../c": false, ".": false, "..a": false,
	} {
		if got := Escapes(rel); got != want {
			t.Errorf("Escapes(%q) = %v, want %v", rel, got, want)
		}
	}
}
