// Package pci knows the one form the kernel gives a PCI function's
// address in sysfs paths, IRQ names and MSI chip names.
package pci

// IsAddress reports whether s is a PCI function address such as
// "0000:98:00.0": a domain of four or more lower-case hex digits, a
// two-digit bus and device, and a function 0-7.
func IsAddress(s string) bool {
	n := len(s)
	if n < 12 || s[n-2] != '.' || s[n-1] < '0' || s[n-1] > '7' || s[n-5] != ':' || s[n-8] != ':' {
		return false
	}
	return isLowerHex(s[:n-8]) && isLowerHex(s[n-7:n-5]) && isLowerHex(s[n-4:n-2])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}
