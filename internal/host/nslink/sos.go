package nslink

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// A sosreport keeps what its networking plugin runs under
// sos_commands/networking/, each command's output in a file named by
// sos' _mangle_command: it runs `ip -s -d link` (ip_-s_-d_link) and `ip
// -d address` (ip_-d_address) in the host's namespace (sos 4.12,
// sos/report/plugins/networking.py). Both print each link's IFLA_XDP as
// iproute2's xdp_dump (ip/iplink_xdp.c) writes it: a mode word after
// "mtu N" on the link's first line when a program is attached ("xdp"
// driver, "xdpgeneric", "xdpoffload", "xdpmulti", "xdp[N]"; `ip address`
// adds "/id:N"), and with -d an indented "prog/xdp id N …" line per
// program ("prog/xdpgeneric", "prog/xdpdrv", "prog/xdpoffload" in
// multi mode). Nothing is printed for XDP_ATTACHED_NONE.

// sosNetworking is where a sosreport keeps the networking commands'
// output, and sosIPLink the files of the link dumps, the one with the
// link statistics first.
const sosNetworking = "sos_commands/networking"

var sosIPLink = []string{"ip_-s_-d_link", "ip_-d_address"}

// ErrIPLink is wrapped by the error for text that is not what ip(8)
// prints for links.
var ErrIPLink = errors.New("not ip link output")

// ReadSos returns the host's links as a sosreport's `ip -s -d link` (or,
// without it, `ip -d address`) shows them: each link's index, name and
// XDP state, nothing else (Kind, Link, ParentDev and Flags stay zero).
// found is false when the root holds neither file; a file that cannot
// be read or parsed is Known false with why. ip prints XDP only for a
// link with a program attached, so a link without the marker has
// XDP.Reported true and Attached none: iproute2 has printed the marker
// since 4.10 (2016) and the kernel has sent IFLA_XDP since 4.8.
func ReadSos(fsys kfile.FS) (ls *Links, found bool) {
	for _, name := range sosIPLink {
		rel := filepath.Join(sosNetworking, name)
		b, err := fsys.ReadLimit(fsys.Path(rel), maxReply)
		if kfile.IsNotExist(err) {
			continue
		}
		ls := &Links{Source: "sosreport " + rel}
		var links []Link
		if err == nil {
			if links, err = parseIPLink(b); err != nil {
				err = kfile.Malformed(fsys.Path(rel), err)
			}
		}
		setLinks(ls, links, err)
		ls.InitNSID = unknown.NotAs[int](unknown.KindNotCaptured, "a sosreport does not record namespace ids")
		return ls, true
	}
	return nil, false
}

// parseIPLink reads the text `ip -s -d link` or `ip -d address` prints:
// each link's index and name from its first line ("4: eth0: <…> mtu
// 1500 …"; a name printed as "veth0@if5" is "veth0") and its XDP state
// from the markers xdp_dump prints. Lines it does not use are skipped;
// a first line it cannot read, an indented line before any link, a
// repeated index or name and a program line without the mode word are
// errors.
func parseIPLink(b []byte) ([]Link, error) {
	var links []Link
	seen, names := map[int]bool{}, map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case line[0] == ' ' || line[0] == '\t':
			if len(links) == 0 {
				return nil, fmt.Errorf("line %d: %q before any link: %w", n, clip(line), ErrIPLink)
			}
			if err := progLine(&links[len(links)-1], strings.TrimSpace(line)); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			continue
		}
		l, err := linkLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if seen[l.Index] {
			return nil, fmt.Errorf("line %d: link index %d twice: %w", n, l.Index, ErrIPLink)
		}
		if j, ok := names[l.Name]; ok {
			return nil, fmt.Errorf("line %d: link %d is named %q, as link %d is (a namespace's link names are unique): %w", n, l.Index, l.Name, j, ErrIPLink)
		}
		seen[l.Index], names[l.Name] = true, l.Index
		links = append(links, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ip link output: %v: %w", err, ErrIPLink)
	}
	return links, nil
}

// linkLine reads a link's first line: "INDEX: NAME[@LINK]: <FLAGS> mtu
// N [XDP] …".
func linkLine(line string) (Link, error) {
	bad := func(what string) (Link, error) {
		return Link{}, fmt.Errorf("%q: %s: %w", clip(line), what, ErrIPLink)
	}
	idx, rest, ok := strings.Cut(line, ": ")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || i <= 0 || idx[0] == '+' {
		return bad("no link index")
	}
	name, rest, ok := strings.Cut(rest, ": ")
	name, _, _ = strings.Cut(name, "@")
	if !ok || name == "" || strings.ContainsAny(name, " \t/:") {
		return bad("no link name")
	}
	f := strings.Fields(rest)
	if len(f) == 0 || !strings.HasPrefix(f[0], "<") || !strings.HasSuffix(f[0], ">") {
		return bad("no <flags>")
	}
	l := Link{Index: i, Name: name, XDP: XDP{Reported: true}, LinkNetNSID: inThisNamespace}
	for j := 1; j+1 < len(f); j++ {
		if f[j] != "mtu" {
			continue
		}
		if _, err := strconv.ParseUint(f[j+1], 10, 32); err != nil {
			return bad("mtu is not a number")
		}
		if j+2 < len(f) && strings.HasPrefix(f[j+2], "xdp") {
			x, err := xdpWord(f[j+2])
			if err != nil {
				return bad(err.Error())
			}
			l.XDP = x
		}
		return l, nil
	}
	return bad("no mtu")
}

// xdpWords are xdp_dump's mode words.
var xdpWords = map[string]uint8{
	"xdp": XDPAttachedDrv, "xdpgeneric": XDPAttachedSKB, "xdpoffload": XDPAttachedHW, "xdpmulti": XDPAttachedMulti,
}

// xdpWord reads the mode word and, from `ip address`, "/id:N".
func xdpWord(w string) (XDP, error) {
	x := XDP{Reported: true}
	mode, id, hasID := strings.Cut(w, "/id:")
	if m, ok := xdpWords[mode]; ok {
		x.Attached = m
	} else if v, ok := strings.CutPrefix(mode, "xdp["); ok && strings.HasSuffix(v, "]") {
		n, err := strconv.ParseUint(strings.TrimSuffix(v, "]"), 10, 8)
		if err != nil || n == XDPAttachedNone {
			return x, fmt.Errorf("xdp mode %q", clip(w))
		}
		x.Attached = uint8(n)
	} else {
		return x, fmt.Errorf("xdp mode %q", clip(w))
	}
	if hasID {
		n, err := progID(id)
		if err != nil {
			return x, err
		}
		x.ProgID = n
	}
	return x, nil
}

// progLine reads an indented "prog/xdp[generic|drv|offload] id N …"
// line into l; other indented lines are not XDP's.
func progLine(l *Link, s string) error {
	word, rest, _ := strings.Cut(s, " ")
	mode, ok := strings.CutPrefix(word, "prog/xdp")
	if !ok {
		return nil
	}
	if l.XDP.Attached == XDPAttachedNone {
		return fmt.Errorf("%q for %s, whose first line names no xdp mode: %w", clip(s), l.Name, ErrIPLink)
	}
	f := strings.Fields(rest)
	if len(f) < 2 || f[0] != "id" {
		return fmt.Errorf("%q: no program id: %w", clip(s), ErrIPLink)
	}
	id, err := progID(f[1])
	if err != nil {
		return err
	}
	switch mode {
	case "":
		l.XDP.ProgID = id
	case "generic":
		l.XDP.SKBProgID = id
	case "drv":
		l.XDP.DrvProgID = id
	case "offload":
		l.XDP.HWProgID = id
	default:
		return fmt.Errorf("%q: unknown program mode: %w", clip(s), ErrIPLink)
	}
	return nil
}

// progID reads a BPF program id: a u32, never 0 (ip prints none then).
func progID(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("program id %q: %w", clip(s), ErrIPLink)
	}
	return uint32(n), nil
}
