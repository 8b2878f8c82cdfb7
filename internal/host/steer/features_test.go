package steer

import (
	"testing"

	"github.com/mdlayher/netlink"
)

// TestDecodeFeaturesUnnamedBit: a bit the kernel's string set leaves
// unnamed (a retired feature, as 6.18's netdev_features_strings has) is
// no feature: ethtool -k does not show it, and the reading must not hold
// a feature named "".
func TestDecodeFeaturesUnnamedBit(t *testing.T) {
	b := enc(t, func(ae *netlink.AttributeEncoder) {
		bitsetAttr(ae, ethnlFeaturesHW, func(int) bool { return true })
		bitsetAttr(ae, ethnlFeaturesActive, func(i int) bool { return i%2 == 0 })
		bitsetAttr(ae, ethnlFeaturesNochange, func(int) bool { return false })
	})
	names := append([]string(nil), featureNames...)
	names[2] = ""
	got, err := decodeFeatures(b, names)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[""]; ok {
		t.Errorf("decodeFeatures kept the unnamed bit as feature %q", "")
	}
	if len(got) != len(names)-1 {
		t.Errorf("decodeFeatures gave %d features, want %d", len(got), len(names)-1)
	}
	if f := got[names[4]]; !f.On || f.Fixed {
		t.Errorf("%s = %+v, want on and not fixed", names[4], f)
	}
}
