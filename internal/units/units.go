// Package units prints quantities the way irqnuma's tables and messages
// show them.
package units

import (
	"fmt"
	"strconv"
	"strings"
)

// Bytes prints a byte count in binary units, "125.8 GiB".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// Plural is "1 queue IRQ" or "16 queue IRQs".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Ints joins integers with sep: "3,7,9".
func Ints(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// OrDash is s, or "-" for an empty cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Choose is one for n == 1, many otherwise: the verb or phrase that goes
// with a count ("shares a core with" or "share cores with").
func Choose(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
