package steer

import (
	"errors"
	"testing"
)

// The fuzz targets hold each text parser to: no panic, an error that
// wraps ErrText or a result, and nothing larger than the text holds.

// fuzzSeeds are real-format outputs, one of each command, plus the drift.
var fuzzSeeds = []string{
	xNewest,
	"RX flow hash indirection table for eth0 with 1 RX ring(s):\nOperation not supported\nRSS hash key:\nOperation not supported\nRSS hash function:\n    toeplitz: on\n",
	"RX flow hash indirection table for eno2 with 8 RX ring(s):\n    0:      0     0\n   ...skip similar lines...\nRSS hash key:\nbe:c3:\n8a:f9\n",
	"netlink error: Operation not supported\n",
	"Channel parameters for em1:\nPre-set maximums:\nRX: 64\nTX: 64\nOther: 1\nCombined: 64\nCurrent hardware settings:\nRX: 0\nTX: 0\nOther: 1\nCombined: 8\n",
	"Ring parameters for eth0:\nRX:\t\t\t8184\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t8184\nHDS thresh:\t\tn/a\nRX:\t\t\t2048\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t4096\nTCP data split:\t\tn/a\n",
	"Features for em1:\nrx-checksumming: on\n\ttx-checksum-ipv4: off [fixed]\ngeneric-segmentation-offload: off [requested on]\n",
	"Coalesce parameters for em1:\nAdaptive RX: off  TX: off\nrx-usecs: 12\nrx-frames: n/a\n\nCQE mode RX: n/a  TX: n/a\n",
	"driver: ice\nversion: 6.15\nfirmware-version: 4.51\nexpansion-rom-version:\nbus-info: 0000:63:00.0\nsupports-statistics: yes\n",
	"4 RX rings available\nTotal 1 rules\n\nFilter: 7679\n\tRule Type: Raw IPv4\n\tSrc IP addr: 10.251.0.194 mask: 0.0.0.0\n\tSrc port: 1 mask: 0x0\n\tAction: Direct to RSS Context 1 (queue base offset: 2)\n",
	"UDP over IPV4 flows use these fields for computing Hash flow key:\nIP SA\nIP DA\n",
	"[{'id': 0, 'ifindex': 2, 'napi-id': 8201, 'type': 'rx'},\n[...]\n {'defer-hard-irqs': 0, 'id': 65, 'irq': 29, 'pid': 3, 'threaded': 'enabled', 'x': [b'\\x00', None, True]}]\n",
	"Private flags for eth0:\nlegacy-rx      : off\nflow-director-atr: on\n",
}

func fuzzText(f *testing.F, parse func([]byte) error) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := parse(b); err != nil && !errors.Is(err, ErrText) {
			t.Fatalf("error %v does not wrap ErrText", err)
		}
	})
}

func FuzzParseEthtoolX(f *testing.F) {
	fuzzText(f, func(b []byte) error {
		x, err := ParseEthtoolX(b)
		if err == nil && (len(x.RSS.Table) > len(b) || len(x.Entries) > len(b) || len(x.RSS.Key) > len(b)) {
			panic("more entries than bytes of text")
		}
		return err
	})
}

func FuzzParseEthtoolL(f *testing.F) {
	fuzzText(f, func(b []byte) error { _, err := ParseEthtoolL(b); return err })
}

func FuzzParseEthtoolG(f *testing.F) {
	fuzzText(f, func(b []byte) error { _, err := ParseEthtoolG(b); return err })
}

func FuzzParseEthtoolK(f *testing.F) {
	fuzzText(f, func(b []byte) error { _, err := parseEthtoolK(b); return err })
}

func FuzzParseEthtoolC(f *testing.F) {
	fuzzText(f, func(b []byte) error { _, err := parseEthtoolC(b); return err })
}

func FuzzParseEthtoolI(f *testing.F) {
	fuzzText(f, func(b []byte) error { _, err := parseEthtoolI(b); return err })
}

func FuzzParseEthtoolN(f *testing.F) {
	fuzzText(f, func(b []byte) error {
		n, err := parseEthtoolN(b)
		if err == nil && n.Rules != nil && len(n.Rules.Rules) > len(b) {
			panic("more rules than bytes of text")
		}
		return err
	})
}

func FuzzParseRxFlowHash(f *testing.F) {
	fuzzText(f, func(b []byte) error {
		h, err := parseRxFlowHash(b, "udp4")
		if err == nil && len(h) > len(rxfhFields)+1 {
			panic("more hash fields than ethtool has")
		}
		return err
	})
}

func FuzzParseYNL(f *testing.F) {
	fuzzText(f, func(b []byte) error {
		y, err := parseYNL(b)
		if err == nil && len(y.Queues)+len(y.NAPIs) > len(b) {
			panic("more entries than bytes of text")
		}
		return err
	})
}

func FuzzParseEthtoolPrivFlags(f *testing.F) {
	fuzzText(f, func(b []byte) error { _, err := parseEthtoolPrivFlags(b); return err })
}

func FuzzSplitSession(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte("$ ethtool -x eth0\n" + s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		for _, c := range splitSession(b) {
			n += len(c.Output) + len(c.Line)
		}
		if n > len(b) {
			t.Fatalf("the commands hold %d bytes of a %d-byte text", n, len(b))
		}
	})
}
