package kfile

import (
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// traced is what one tracer saw of one root: "op rel present|absent|err".
type traced struct {
	mu  sync.Mutex
	got []string
}

func (tr *traced) add(root string) func(Access) {
	return func(a Access) {
		if a.Root != root {
			return
		}
		how := "present"
		switch {
		case IsNotExist(a.Err):
			how = "absent"
		case a.Err != nil:
			how = "failed"
		}
		tr.mu.Lock()
		tr.got = append(tr.got, string(a.Op)+" "+a.Rel+" "+how)
		tr.mu.Unlock()
	}
}

// TestTraceEveryRead: every operation that reads a root reports its path
// relative to the root and whether it was there, a missing file as
// absent, through every read method; two tracers each see it all, and
// neither after its stop.
func TestTraceEveryRead(t *testing.T) {
	root := tree(t)
	f, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var a, b traced
	stopA := Trace(a.add(root))
	stopB := Trace(b.add(root))
	buf := make([]byte, 0, 64)
	num := f.Path("sys/devices/pci0000:00/0000:00:03.0/numa_node")
	f.Read(f.Path("proc/cmdline"))
	f.ReadLimit(f.Path("proc/nope"), 10)
	f.ReadMode(num, buf)
	f.ReadInto(num, buf)
	f.ReadBuf(num, buf)
	f.String(num)
	f.Int(f.Path("sys/bus/pci/0000:00:03.0/numa_node"))
	f.List(num)
	f.Mask(num)
	f.ReadDir(f.Path("sys/bus/pci"))
	f.ReadDir(f.Path("sys/class/net"))
	f.Stat(f.Path("proc/abs"))
	f.Lstat(f.Path("proc/out"))
	f.Lstat(f.Path("proc/gone"))
	f.Readlink(f.Path("sys/bus/pci/0000:00:03.0"))
	f.Readlink(f.Path("sys/bus/pci/absent"))
	f.Resolve(f.Path("proc/up"))
	if file, err := f.OpenFile(f.Path("proc/cmdline"), os.O_RDONLY); err == nil {
		file.Close()
	}
	f.OpenFile(f.Path("proc/none"), os.O_WRONLY)
	f.OpenKernelFile(f.Path("proc/none"))
	f.IsKernelPath(f.Path("proc"))
	stopA()
	f.Read(f.Path("proc/cmdline")) // B only
	stopB()
	stopB()                        // a second stop does nothing
	f.Read(f.Path("proc/cmdline")) // neither

	want := []string{
		"read proc/cmdline present",
		"read proc/nope absent",
		"read sys/devices/pci0000:00/0000:00:03.0/numa_node present",
		"read sys/devices/pci0000:00/0000:00:03.0/numa_node present",
		"read sys/devices/pci0000:00/0000:00:03.0/numa_node present",
		"read sys/devices/pci0000:00/0000:00:03.0/numa_node present",
		"read sys/bus/pci/0000:00:03.0/numa_node present",
		"read sys/devices/pci0000:00/0000:00:03.0/numa_node present",
		"read sys/devices/pci0000:00/0000:00:03.0/numa_node present",
		"readdir sys/bus/pci present",
		"readdir sys/class/net absent",
		"stat proc/abs present",
		"lstat proc/out present",
		"lstat proc/gone absent",
		"readlink sys/bus/pci/0000:00:03.0 present",
		"readlink sys/bus/pci/absent absent",
		"resolve proc/up absent",
		"read proc/cmdline present",
		"write proc/none absent",
		"write proc/none absent",
		"stat proc present",
	}
	if diff := cmp.Diff(want, a.got); diff != "" {
		t.Errorf("first tracer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(want, "read proc/cmdline present"), b.got); diff != "" {
		t.Errorf("second tracer (-want +got):\n%s", diff)
	}
	if tracers.Load() != nil {
		t.Error("tracers left registered after every stop")
	}
}
