//go:build vmtest

package lab

import "testing"

// irqbalancePackages are the Debian packages whose files irqbalance needs
// in the guest: the daemon and the libraries it loads, transitively
// (readelf -d: libcap-ng, glib, libnuma and libsystemd; glib's pcre2;
// libsystemd's libcap, libgcrypt, liblzma, libzstd and liblz4;
// libgcrypt's libgpg-error; libc and libm).
var irqbalancePackages = []string{"irqbalance", "libcap-ng0", "libglib2.0-0", "libnuma1", "libsystemd0", "libpcre2-8-0",
	"libcap2", "libgcrypt20", "libgpg-error0", "liblzma5", "libzstd1", "liblz4-1", "libc6"}

// prepareIrqbalance returns the files the guest needs to run Debian's
// irqbalance: bin/irqbalance, its loader and its libraries. The tune
// scenario starts it, so that the audit sees an irqbalance that bans
// none of the NIC's IRQs.
func prepareIrqbalance(t *testing.T) []guestFile {
	return prepareDebProgram(t, "irqbalance", "usr/sbin/irqbalance", irqbalancePackages)
}
