// Package safetext escapes what a terminal would act on rather than show:
// control bytes, line breaks and the bidirectional controls that reorder
// the text after them. Every name irqnuma read from a host reaches a
// terminal through it: Escape for text, JSON for JSON documents.
package safetext

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every rune a terminal would act on rather than
// show written as an escape, s itself when it has none. It is the one
// path by which text meant for a terminal shows a name that came from
// the host (a process's comm, a NIC, driver or IRQ name, which may hold
// any byte but '/' and NUL): report's tables and lines, and the error
// lines internal/cli writes.
//
// Control characters (C0 with the line breaks, DEL, C1) and bytes that
// are not UTF-8 become \xNN, one per byte; the line and paragraph
// separators and the bidirectional marks, embeddings, overrides and
// isolates (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), which
// reorder what follows them on screen, become \uNNNN. The JSON forms
// keep every value whole, JSON writing the same runes as JSON's own
// escapes; the SVG form has its own escaping.
func Escape(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !unsafeRune(r, n):
			b = append(b, s[i:i+n]...)
		case n > 1 && !unicode.IsControl(r):
			b = append(b, `\u`...)
			b = append(b, fmt.Sprintf("%04x", r)...)
		default:
			for _, c := range []byte(s[i : i+n]) {
				b = append(b, `\x`...)
				b = strconv.AppendUint(b, uint64(c)>>4, 16)
				b = strconv.AppendUint(b, uint64(c)&0xf, 16)
			}
		}
		i += n
	}
	return string(b)
}

// unsafeRune reports whether the rune r, n bytes long in its string, is
// one Escape escapes.
func unsafeRune(r rune, n int) bool {
	switch {
	case r < utf8.RuneSelf:
		return r < 0x20 || r == 0x7f
	case r == utf8.RuneError && n <= 1, unicode.IsControl(r):
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
