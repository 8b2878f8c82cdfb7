package safetext

import (
	"unicode/utf8"
)

// JSON returns the JSON text b with every rune Escape escapes that
// encoding/json leaves raw (DEL, the C1 controls, the bidirectional
// controls) written as its \uNNNN escape, b itself when it has none. It
// is the one path by which a JSON document irqnuma writes (every -o
// json, the state file) shows a name that came from the host: the
// document decodes to exactly the values encoded, and a terminal shown
// it, or a viewer of the file, shows every character.
//
// JSON's own syntax is ASCII, so each such rune stands inside a string,
// where its escape means the same rune. The bytes below U+0020 are left
// as they are: encoding/json has escaped them inside strings, and
// outside one they are the document's whitespace. A byte that is not
// UTF-8, which encoding/json never writes, becomes \ufffd, as
// encoding/json writes one in a string.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unsafeRune(r, n) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		if b[i] < 0x7f {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unsafeRune(r, n) {
			// Every rune unsafeRune takes above ASCII is in the BMP.
			out = append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}
