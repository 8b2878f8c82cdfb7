package steer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// RSSItem names one piece of what ethtool -x prints.
type RSSItem string

// The pieces of ethtool -x.
const (
	RSSItemTable     RSSItem = "table"
	RSSItemKey       RSSItem = "key"
	RSSItemHashFunc  RSSItem = "hash function"
	RSSItemInputXfrm RSSItem = "input transformation"
)

// RSSText is what one ethtool -x output says. RSS holds each piece the
// text shows whole; a piece it does not (the driver said it has none, the
// ethtool that printed it did not print it, the capture's author elided
// part of it) is left empty in RSS and Unknown says why.
type RSSText struct {
	// Interface is the name in the table's header.
	Interface string
	RSS       RSS
	// Entries are the table entries the text shows, by index, also when
	// the table is not whole (an elided capture): what it holds.
	Entries map[uint32]uint32
	Unknown map[RSSItem]unknown.Reason
}

func (r *RSSText) unknown(it RSSItem, why unknown.Kind, format string, args ...any) {
	if r.Unknown == nil {
		r.Unknown = make(map[RSSItem]unknown.Reason)
	}
	r.Unknown[it] = unknown.Reason{Kind: why, Detail: fmt.Sprintf(format, args...)}
}

const (
	xHeaderPrefix = "RX flow hash indirection table for "
	xKeyHeader    = "RSS hash key:"
	xFuncHeader   = "RSS hash function:"
	xXfrmHeader   = "RSS input transformation:"
	xNotSupported = "Operation not supported"
)

// xState is ParseEthtoolX's reading of one output.
type xState struct {
	out RSSText
	// table
	table       []uint32
	tableBroken string // why the rows do not make a whole table
	// key
	key       strings.Builder
	keyNone   bool
	keyElided bool
	// hash function and input transformation
	funcs     []string // "name: on|off" in order
	funcOn    string
	funcNone  bool
	funcExtra string
	xfrm      *uint32
	section   string
}

// ParseEthtoolX reads the output of ethtool -x (ethtool's
// print_indir_table, print_rss_hkey and the hash function and input
// transformation lists of do_grxfh and the netlink rss_reply_cb): the
// header "RX flow hash indirection table for IF with N RX ring(s):", the
// table as rows of eight entries after the index of the first ("%5u: "
// then " %5u" each; a capture may have lost the alignment), or "Operation
// not supported"; "RSS hash key:" with the key as hex bytes joined by ':'
// (a capture may wrap it over lines) or "Operation not supported"; "RSS
// hash function:" with "    NAME: on|off" per function the kernel names
// (or "    Operation not supported"); "RSS input transformation:" with
// "symmetric-xor" and "symmetric-or-xor". Older ethtool prints no hash
// function or input transformation, the oldest no key: those pieces are
// unknown, not captured. An output that is only ethtool's failure
// ("netlink error: Operation not supported") gives every piece unknown
// with the kernel's answer. The error, wrapping ErrText, says what in the
// text is not ethtool's.
func ParseEthtoolX(b []byte) (*RSSText, error) {
	const cmd = "ethtool -x"
	if r, ok := ethtoolFailure(b); ok {
		out := &RSSText{}
		for _, it := range []RSSItem{RSSItemTable, RSSItemKey, RSSItemHashFunc, RSSItemInputXfrm} {
			out.unknown(it, r.Kind, "%s", r.Detail)
		}
		return out, nil
	}
	ls, err := textLines(cmd, b)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, textErr(cmd, 0, "empty")
	}
	s := &xState{section: "start"}
	for _, l := range ls {
		if err := s.line(cmd, l); err != nil {
			return nil, err
		}
	}
	if s.section == "start" {
		return nil, textErr(cmd, 0, "no %q header", xHeaderPrefix+"IF with N RX ring(s):")
	}
	if err := s.finish(cmd); err != nil {
		return nil, err
	}
	return &s.out, nil
}

// line reads one line in the current section.
func (s *xState) line(cmd string, l textLine) error {
	t := strings.TrimSpace(l.text)
	switch {
	case strings.HasPrefix(t, xHeaderPrefix):
		if s.section != "start" {
			return textErr(cmd, l.n, "a second table header: the text holds more than one output")
		}
		return s.header(cmd, l.n, t)
	case s.section == "start":
		return textErr(cmd, l.n, "%q before the %q header", textClip(t), xHeaderPrefix+"...")
	case t == xKeyHeader:
		return s.enter(cmd, l.n, "key")
	case t == xFuncHeader:
		return s.enter(cmd, l.n, "func")
	case t == xXfrmHeader:
		return s.enter(cmd, l.n, "xfrm")
	}
	switch s.section {
	case "table":
		return s.tableLine(cmd, l.n, t)
	case "key":
		return s.keyLine(cmd, l.n, t)
	case "func":
		return s.funcLine(cmd, l.n, t)
	}
	return s.xfrmLine(cmd, l.n, t)
}

// sectionOrder is the order ethtool prints the sections in.
var sectionOrder = map[string]int{"start": 0, "table": 1, "key": 2, "func": 3, "xfrm": 4}

func (s *xState) enter(cmd string, n int, sec string) error {
	if sectionOrder[sec] <= sectionOrder[s.section] {
		return textErr(cmd, n, "the %s section after the %s section", sec, s.section)
	}
	s.section = sec
	return nil
}

func (s *xState) header(cmd string, n int, t string) error {
	rest := strings.TrimPrefix(t, xHeaderPrefix)
	i := strings.LastIndex(rest, " with ")
	if i <= 0 || !strings.HasSuffix(rest, " RX ring(s):") {
		return textErr(cmd, n, "header %q is not %q", textClip(t), xHeaderPrefix+"IF with N RX ring(s):")
	}
	rings, err := strconv.ParseUint(strings.TrimSuffix(rest[i+len(" with "):], " RX ring(s):"), 10, 64)
	if err != nil || rings > 1<<32-1 {
		return textErr(cmd, n, "ring count in %q is not a u32", textClip(t))
	}
	s.out.Interface = rest[:i]
	s.out.RSS.Rings = uint32(rings)
	s.section = "table"
	return nil
}

// tableLine reads one row "IDX: Q Q ...", ethtool's "Operation not
// supported", or an elision mark.
func (s *xState) tableLine(cmd string, n int, t string) error {
	switch {
	case t == xNotSupported:
		if len(s.table) > 0 {
			return textErr(cmd, n, "%q after table rows", xNotSupported)
		}
		s.out.unknown(RSSItemTable, unknown.KindDriver, "ethtool -x: %s", xNotSupported)
		return nil
	case textElided(t):
		if s.tableBroken == "" {
			s.tableBroken = fmt.Sprintf("the capture leaves out rows after entry %d (%q)", len(s.table), textClip(t))
		}
		return nil
	}
	idx, rest, ok := strings.Cut(t, ":")
	if !ok {
		return textErr(cmd, n, "table row %q has no index", textClip(t))
	}
	at, err := textU32(strings.TrimSpace(idx))
	if err != nil {
		return textErr(cmd, n, "table row index: %v", err)
	}
	qs := strings.Fields(rest)
	if len(qs) == 0 || len(qs) > 8 {
		return textErr(cmd, n, "table row %d has %d entries, not 1 to 8", at, len(qs))
	}
	if s.out.Entries == nil {
		s.out.Entries = make(map[uint32]uint32)
	}
	if s.tableBroken == "" && (int64(at) != int64(len(s.table)) || len(s.table)%8 != 0) {
		s.tableBroken = fmt.Sprintf("row %d follows entry %d", at, len(s.table))
	}
	for i, q := range qs {
		v, err := textU32(q)
		if err != nil {
			return textErr(cmd, n, "table entry: %v", err)
		}
		if uint64(at)+uint64(i) > 1<<32-1 {
			return textErr(cmd, n, "table index past 2^32")
		}
		s.out.Entries[at+uint32(i)] = v
		s.table = append(s.table, v)
	}
	return nil
}

// keyLine reads the key, or one piece of a key wrapped over lines.
func (s *xState) keyLine(cmd string, n int, t string) error {
	switch {
	case t == xNotSupported:
		s.keyNone = true
		return nil
	case textElided(t):
		s.keyElided = true
		return nil
	}
	if strings.Contains(t, "...") {
		s.keyElided = true
	}
	for _, c := range t {
		if !strings.ContainsRune("0123456789abcdefABCDEF:.", c) {
			return textErr(cmd, n, "key line %q is not hex bytes joined by ':'", textClip(t))
		}
	}
	if s.key.Len() > 0 && !strings.HasSuffix(s.key.String(), ":") {
		s.key.WriteByte(':')
	}
	s.key.WriteString(t)
	return nil
}

// funcLine reads one "NAME: on|off" of the hash function list.
func (s *xState) funcLine(cmd string, n int, t string) error {
	if t == xNotSupported {
		s.funcNone = true
		return nil
	}
	if v, ok := strings.CutPrefix(t, "Unknown hash function: "); ok {
		s.funcExtra = v
		return nil
	}
	name, v, ok := textKV(t)
	if !ok || name == "" {
		return textErr(cmd, n, "hash function line %q is not NAME: on|off", textClip(t))
	}
	on, err := textOnOff(v)
	if err != nil {
		return textErr(cmd, n, "hash function %s: %v", textClip(name), err)
	}
	s.funcs = append(s.funcs, name)
	if on {
		if s.funcOn != "" {
			return textErr(cmd, n, "two hash functions on: %s and %s", s.funcOn, textClip(name))
		}
		s.funcOn = name
	}
	return nil
}

// xfrmLine reads one line of the input transformation list.
func (s *xState) xfrmLine(cmd string, n int, t string) error {
	if s.xfrm == nil {
		s.xfrm = new(uint32)
	}
	if v, ok := strings.CutPrefix(t, "Unknown bits in RSS input transformation: "); ok {
		bits, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 32)
		if err != nil || !strings.HasPrefix(v, "0x") {
			return textErr(cmd, n, "input transformation bits %q are not 0x hex", textClip(v))
		}
		*s.xfrm |= uint32(bits)
		return nil
	}
	name, v, ok := textKV(t)
	if !ok {
		return textErr(cmd, n, "input transformation line %q is not NAME: on|off", textClip(t))
	}
	on, err := textOnOff(v)
	if err != nil {
		return textErr(cmd, n, "input transformation %s: %v", textClip(name), err)
	}
	var bit uint32
	switch name {
	case "symmetric-xor":
		bit = 1 // RXH_XFRM_SYM_XOR
	case "symmetric-or-xor":
		bit = 2 // RXH_XFRM_SYM_OR_XOR
	default:
		return textErr(cmd, n, "input transformation %q is not symmetric-xor or symmetric-or-xor", textClip(name))
	}
	if on {
		*s.xfrm |= bit
	}
	return nil
}

// finish turns what was read into RSS and Unknown.
func (s *xState) finish(cmd string) error {
	s.finishTable()
	if err := s.finishKey(cmd); err != nil {
		return err
	}
	s.finishFunc()
	switch {
	case s.funcNone && s.xfrm == nil:
		s.out.unknown(RSSItemInputXfrm, unknown.KindNotCaptured, "ethtool prints no input transformation after an unsupported hash function")
	case sectionOrder[s.section] < sectionOrder["xfrm"]:
		s.out.unknown(RSSItemInputXfrm, unknown.KindNotCaptured, "the text has no %q section (older ethtool prints none)", xXfrmHeader)
	default:
		s.out.RSS.InputXfrm = s.xfrm
	}
	return nil
}

func (s *xState) finishTable() {
	if _, ok := s.out.Unknown[RSSItemTable]; ok {
		return
	}
	switch {
	case s.tableBroken != "":
		s.out.unknown(RSSItemTable, unknown.KindNotCaptured, "%s", s.tableBroken)
	case len(s.table) == 0:
		s.out.unknown(RSSItemTable, unknown.KindNotCaptured, "the text has no table rows after its header")
	case s.section == "table" && len(s.table)%8 != 0:
		// ethtool ends a table with a short row, then prints the key;
		// a text that stops after a short row may have been cut in it.
		s.out.unknown(RSSItemTable, unknown.KindNotCaptured, "the text ends after a short row at entry %d with nothing after it: it may be cut inside the table", len(s.table)-1)
	default:
		s.out.RSS.Table = s.table
	}
}

func (s *xState) finishKey(cmd string) error {
	switch {
	case sectionOrder[s.section] < sectionOrder["key"]:
		s.out.unknown(RSSItemKey, unknown.KindNotCaptured, "the text ends after the table: no %q section", xKeyHeader)
	case s.keyNone:
		s.out.unknown(RSSItemKey, unknown.KindDriver, "ethtool -x: %s", xNotSupported)
	case s.keyElided:
		s.out.unknown(RSSItemKey, unknown.KindNotCaptured, "the capture elides part of the key (%q)", textClip(s.key.String()))
	case s.key.Len() == 0:
		s.out.unknown(RSSItemKey, unknown.KindNotCaptured, "the %q section is empty", xKeyHeader)
	default:
		key, err := ParseKey(s.key.String())
		if err != nil {
			return textErr(cmd, 0, "RSS hash key: %v", err)
		}
		s.out.RSS.Key = key
	}
	return nil
}

func (s *xState) finishFunc() {
	switch {
	case sectionOrder[s.section] < sectionOrder["func"]:
		s.out.unknown(RSSItemHashFunc, unknown.KindNotCaptured, "the text has no %q section (older ethtool prints none)", xFuncHeader)
	case s.funcNone:
		s.out.unknown(RSSItemHashFunc, unknown.KindDriver, "ethtool -x: %s", xNotSupported)
	case s.funcOn != "":
		s.out.RSS.HashFunc = s.funcOn
	case s.funcExtra != "":
		s.out.unknown(RSSItemHashFunc, unknown.KindMalformed, "a hash function ethtool has no name for: %s", textClip(s.funcExtra))
	default:
		s.out.unknown(RSSItemHashFunc, unknown.KindNotCaptured, "no hash function is on in %v", s.funcs)
	}
}
