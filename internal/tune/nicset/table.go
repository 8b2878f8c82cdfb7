package nicset

// IsDefaultTable reports whether t is the table the kernel gives a NIC
// with rings rx rings that nobody configured (ethtool_rxfh_indir_default:
// entry i is i mod rings). A user's table equal to it cannot be told
// apart from it: the kernel keeps that flag (IFF_RXFH_CONFIGURED) to
// itself.
func IsDefaultTable(t []uint32, rings uint32) bool {
	if len(t) == 0 || rings == 0 {
		return false
	}
	for i, q := range t {
		if q != uint32(i)%rings {
			return false
		}
	}
	return true
}

// EqualTable is the table spread evenly over queues (ethtool -X IF
// equal N weight form: entry i is queues[i mod len(queues)]).
func EqualTable(size int, queues []uint32) []uint32 {
	if len(queues) == 0 {
		return nil
	}
	t := make([]uint32, size)
	for i := range t {
		t[i] = queues[i%len(queues)]
	}
	return t
}
