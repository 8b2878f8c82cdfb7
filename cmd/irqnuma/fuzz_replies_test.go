package main

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// replyValues are the values a structure-aware mutation sets a field to:
// the edges where a count used as a size costs most.
var replyValues = []uint32{0, 1 << 16, 1 << 24, 1<<31 - 1, 1<<32 - 1}

// replyTree is a copy of the seed with eth0's recorded netlink and ioctl
// replies, and the fields of each reply a mutation may set: a netlink
// reply's u16, u32 and u64 attributes (walking nested ones), an ioctl
// reply's 32-bit words.
type replyTree struct {
	root   string
	files  []string         // the recorded replies, relative, sorted
	fields map[string][]int // a reply's settable fields: byte offsets
	sizes  map[string][]int // and each one's size
}

func newReplyTree(f *testing.F) *replyTree {
	rt := &replyTree{root: seedWithSteering(f), fields: map[string][]int{}, sizes: map[string][]int{}}
	dir := filepath.Join(rt.root, "irqnuma")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(rt.root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rt.files = append(rt.files, rel)
		if strings.HasPrefix(filepath.Base(rel), "ioctl.") {
			for off := 0; off+4 <= len(b); off += 4 {
				rt.fields[rel] = append(rt.fields[rel], off)
				rt.sizes[rel] = append(rt.sizes[rel], 4)
			}
			return nil
		}
		for off := 0; off+20 <= len(b); {
			n := int(binary.NativeEndian.Uint32(b[off:]))
			if n < 20 || off+n > len(b) {
				break
			}
			rt.walkAttrs(rel, b, off+20, off+n) // past nlmsghdr and genlmsghdr
			off += (n + 3) &^ 3
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	slices.Sort(rt.files)
	if len(rt.files) == 0 {
		f.Fatal("the seed's steering overlay holds no recorded replies")
	}
	return rt
}

// walkAttrs notes the integer attributes of b[start:end], recursing into
// nested ones.
func (rt *replyTree) walkAttrs(rel string, b []byte, start, end int) {
	for off := start; off+4 <= end; {
		n := int(binary.NativeEndian.Uint16(b[off:]))
		typ := binary.NativeEndian.Uint16(b[off+2:])
		if n < 4 || off+n > end {
			return
		}
		switch payload := n - 4; {
		case typ&0x8000 != 0: // NLA_F_NESTED
			rt.walkAttrs(rel, b, off+4, off+n)
		case payload == 2 || payload == 4 || payload == 8:
			rt.fields[rel] = append(rt.fields[rel], off+4)
			rt.sizes[rel] = append(rt.sizes[rel], payload)
		}
		off += (n + 3) &^ 3
	}
}

// FuzzRecordedReplies sets one integer field of one of eth0's recorded
// ethtool and netdev replies to a hostile value (0, 2^16, 2^24, 2^31-1,
// 2^32-1, or the fuzzer's own) and runs every command that reads the
// steering on it: none may panic, call the damage a usage error, or
// allocate more than replyAllocBound, which a count used as a size
// passes at once (the commands allocate some 5 MB on the seed).
func FuzzRecordedReplies(f *testing.F) {
	rt := newReplyTree(f)
	idx := func(rel string) uint16 { return uint16(slices.Index(rt.files, rel)) }
	rings, channels := "irqnuma/steer/eth0/ioctl.rxrings", "irqnuma/steer/eth0/ethtool.channels"
	// The repros: GRXRINGS's data (word 2) and the channels' combined
	// count (the ninth integer attribute) at 2^24, 2^31-1 and 2^32-1.
	f.Add(idx(rings), uint16(2), uint8(2), uint32(0), false)
	f.Add(idx(rings), uint16(2), uint8(3), uint32(0), false)
	f.Add(idx(rings), uint16(3), uint8(4), uint32(0), false)
	f.Add(idx(channels), uint16(8), uint8(3), uint32(0), false)
	f.Add(idx(channels), uint16(8), uint8(4), uint32(0), false)
	f.Add(idx(channels), uint16(4), uint8(4), uint32(0), true)
	f.Add(idx("irqnuma/steer/eth0/ethtool.rss"), uint16(1), uint8(4), uint32(0), false)
	f.Add(idx("irqnuma/steer/eth0/netdev.queue-get"), uint16(0), uint8(4), uint32(0), false)
	f.Add(idx("irqnuma/steer/eth0/ioctl.rxclsrlcnt"), uint16(2), uint8(5), uint32(1<<20), false)
	commands := [][]string{
		{"topology", "-o", "json"},
		{"irq", "list"},
		{"audit", "--fail-on", "never", "-o", "json"},
		{"map"},
		{"flow", "tcp", "10.0.0.1:40000", "192.168.1.2:5202", "--nic", "eth0"},
		{"zc", "check", "eth0", "--queue", "0"},
		{"zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--dry-run"},
	}
	f.Fuzz(func(t *testing.T, file, field uint16, sel uint8, raw uint32, high bool) {
		rel := rt.files[int(file)%len(rt.files)]
		if len(rt.fields[rel]) == 0 {
			return
		}
		v := raw
		if int(sel) < len(replyValues) {
			v = replyValues[sel]
		}
		i := int(field) % len(rt.fields[rel])
		w := uint64(v) // a u64 field takes v in its low word, and in its high one too when high
		if high {
			w |= uint64(v) << 32
		}
		defer hosttest.PutNative(t, filepath.Join(rt.root, rel), rt.fields[rel][i], rt.sizes[rel][i], w)()
		for _, c := range commands {
			args := append([]string{"--root", rt.root}, c...)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, stderr, code := runCLI(t, args...)
			wall := time.Since(start)
			runtime.ReadMemStats(&after)
			what := "irqnuma " + strings.Join(c, " ") + " with " + rel + " field " + "set"
			if code == cli.ExitInternal || strings.Contains(stderr, "panic") {
				t.Fatalf("%s: exit %d: %s", what, code, stderr)
			}
			if code == cli.ExitUsage {
				t.Fatalf("%s: exit 2 on a damaged reply: %s", what, stderr)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > replyAllocBound {
				t.Fatalf("%s: allocated %d MB, more than %d", what, a>>20, replyAllocBound>>20)
			}
			// A hang catcher, not a speed bound: the seed's commands take
			// milliseconds, a loop sized by 2^31 takes minutes.
			if wall > 20*time.Second {
				t.Fatalf("%s: took %v", what, wall)
			}
		}
	})
}

// replyAllocBound is what one command may allocate on a damaged reply.
const replyAllocBound = 100 << 20
