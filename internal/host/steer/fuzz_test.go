package steer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/irqnuma/irqnuma/internal/ethnl"
)

// seedAnswers are the recorded answers of a small model NIC, by key.
func seedAnswers(t testing.TB) map[string][]byte {
	out := nicReplies(t, modelNIC(0, 4, 16))
	out["nlctrl.ethtool"] = familyReply(t, "ethtool", 0x1a, ethnlFamilyOps)
	out["ethtool.strset"] = strsetReply(t)
	return out
}

// attrsOf returns the attributes of the first message of a framed answer.
func attrsOf(t testing.TB, b []byte) []byte {
	msgs, err := ethnl.DecodeMsgs(b)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("seed: %v", err)
	}
	return msgs[0].Attrs
}

// FuzzEthtoolReplies runs every ethtool decoder on the same
// attributes: none panics, and a table is never longer than its bytes.
func FuzzEthtoolReplies(f *testing.F) {
	seeds := seedAnswers(f)
	for _, k := range []string{"ethtool.channels", "ethtool.rings", "ethtool.coalesce", "ethtool.features", "ethtool.rss", "ethtool.strset"} {
		f.Add(attrsOf(f, seeds[k]))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeChannels(b)
		decodeRings(b)
		decodeCoalesce(b)
		decodeFeatures(b, featureNames)
		decodeStrset(b)
		if r, err := decodeRSS(b, hashFuncNames); err == nil && 4*len(r.rss.Table) > len(b) {
			t.Errorf("a table of %d entries from %d bytes", len(r.rss.Table), len(b))
		}
	})
}

// FuzzNetdevReplies runs the netdev decoders.
func FuzzNetdevReplies(f *testing.F) {
	seeds := seedAnswers(f)
	for _, k := range []string{"netdev.queue-get", "netdev.napi-get", "netdev.qstats-get"} {
		f.Add(attrsOf(f, seeds[k]))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeQueue(b)
		decodeNAPI(b)
		decodeQStats(b)
	})
}

// FuzzIoctlReplies runs the ioctl decoders on a struct's bytes: the
// flow spec, the rule count and locations, drvinfo, rxnfc's data.
func FuzzIoctlReplies(f *testing.F) {
	seeds := seedAnswers(f)
	for _, k := range []string{"ioctl.rxclsrule.3", "ioctl.rxclsrule.9", "ioctl.rxclsrlcnt", "ioctl.rxclsrlall", "ioctl.drvinfo", "ioctl.rxfh.tcp4"} {
		f.Add(seeds[k], uint32(2))
	}
	_, full := rxfhAnswers(RSS{Table: []uint32{0, 1, 0, 1}, Key: []byte{1, 2, 3}, HashFunc: "xor"})
	f.Add(full, uint32(0))
	f.Fuzz(func(t *testing.T, b []byte, want uint32) {
		decodeRule(b)
		decodeRuleCount(b)
		if locs, err := decodeRuleLocs(b, want); err == nil && len(locs) > int(want) {
			t.Errorf("%d locations for %d asked", len(locs), want)
		}
		decodeDrvinfo(b)
		if len(b) >= rxfhSize {
			if sizes, err := decodeRxfhSizes(b[:rxfhSize]); err == nil {
				decodeRxfh(b, sizes, hashFuncNames)
			}
		}
		if v, err := decodeRxnfcData(b); err == nil {
			hashFields(v)
		}
	})
}

// FuzzRecordedRoot garbles one recorded answer of a whole root and reads
// it: Read never panics, and the garbled part is unknown or read.
func FuzzRecordedRoot(f *testing.F) {
	seeds := seedAnswers(f)
	keys := []string{"ethtool.rss", "ethtool.features", "netdev.napi-get", "ioctl.rxclsrlall", "ioctl.rxclsrlcnt", "ethtool.rss-dump"}
	for i, k := range keys {
		f.Add(uint8(i), seeds[k])
	}
	root := f.TempDir()
	writeRecorded(f, root, []*NIC{modelNIC(0, 4, 16)})
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		key := keys[int(which)%len(keys)]
		p := filepath.Join(root, recordDir, "eth0", key)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(p, seeds[key], 0o644)
		h, err := Read(openTree(t, root), []string{"eth0"})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.NICs) != 1 {
			t.Fatalf("%d NICs", len(h.NICs))
		}
	})
}
