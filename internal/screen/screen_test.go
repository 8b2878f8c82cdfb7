package screen

import (
	"strings"
	"testing"
)

func TestFit(t *testing.T) {
	for _, tt := range []struct {
		name          string
		text          string
		width, height int
		want          string
	}{
		{"fits", "ab\ncd\n", 80, 24, "\x1b[Hab\x1b[K\r\ncd\x1b[K\r\n\x1b[J"},
		{"cut to width in runes", "héllo\n", 3, 24, "\x1b[Hhél\x1b[K\r\n\x1b[J"},
		{"too many lines", "1\n2\n3\n4\n5\n", 80, 4, "\x1b[H1\x1b[K\r\n2\x1b[K\r\n... 3 more lines: enlarge the window\x1b[K\r\n\x1b[J"},
		{"tiny window still says so", "1\n2\n3\n", 80, 1, "\x1b[H1\x1b[K\r\n... 2 more lines: enlarge the window\x1b[K\r\n\x1b[J"},
	} {
		if got := fit(tt.text, tt.width, tt.height); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := fit("", 80, 24); !strings.HasPrefix(got, "\x1b[H") {
		t.Errorf("empty text: %q", got)
	}
}
