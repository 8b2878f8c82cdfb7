package hosttest

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WatchOpens reports, through the returned function, which of paths
// (files, or folders and the files in them) were opened since the last
// call: inotify IN_OPEN. The escape tests use it to prove a file outside
// a tree was never opened; they open one on purpose first, so a watch
// that saw nothing is shown to work.
func WatchOpens(t testing.TB, paths ...string) (opened func() []string) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	wd := map[int32]string{}
	for _, p := range paths {
		w, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN)
		if err != nil {
			t.Fatalf("inotify watch %s: %v", p, err)
		}
		wd[int32(w)] = p
	}
	return func() []string {
		var got []string
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if err != nil || n <= 0 {
				return got
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				got = append(got, wd[ev.Wd])
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}
