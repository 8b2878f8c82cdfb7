// Package lab boots real Linux kernels under QEMU and runs the built
// irqnuma inside them: a two-node guest with multi-queue virtio-net NICs
// and an NVMe drive, whose kernel's own files and refused writes are the
// evidence irqnuma's answers are checked against.
//
// The driver is a Go test behind the vmtest build tag, so `go test ./...`
// boots nothing; `make vmtest` runs it. It fetches Debian's kernel
// packages with apt-get download (the newest, from trixie-backports,
// through apt sources and lists of its own under its cache), builds a static irqnuma and the guest
// agent (lab/agent), writes a busybox initramfs (with Debian's iperf3 and
// the libraries it loads, for the bench scenario, and the host's ethtool
// with its libraries, for the steer scenario) and boots each kernel
// in a network namespace it creates, with multi-queue taps whose only
// peer is the guest, and an iperf3 server. The agent runs the scenarios inside the guest and reports
// each check on the second serial port; the driver turns them into one
// subtest per kernel and scenario.
//
// The initramfs writer (newc cpio) is in this package proper and tested
// by the default suite.
package lab
