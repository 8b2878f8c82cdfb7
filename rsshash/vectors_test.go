package rsshash

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// vector is one row of the published verification table.
type vector struct {
	tuple          Tuple
	hashIP, hashL4 uint32
}

// msVectors reads the key and rows of Microsoft's verification table as
// realhosts/nic/toeplitz keeps them.
func msVectors(t *testing.T) ([]byte, []vector) {
	t.Helper()
	p := filepath.Join(realhosts.Require(t), "nic", "toeplitz", "ms_rss_verification_vectors.tsv")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var key []byte
	var out []vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "# Key (40 bytes): "); ok {
			if key, err = hex.DecodeString(strings.TrimSpace(k)); err != nil {
				t.Fatalf("%s: key: %v", p, err)
			}
			continue
		}
		f := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(f) != 7 || f[0] == "family" {
			continue
		}
		v := vector{tuple: Tuple{Src: addrPort(t, f[3], f[4]), Dst: addrPort(t, f[1], f[2])}}
		v.hashIP, v.hashL4 = hex32(t, f[5]), hex32(t, f[6])
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(key) != 40 || len(out) != 8 {
		t.Fatalf("%s: read a %d-byte key and %d rows, want 40 and 8", p, len(key), len(out))
	}
	return key, out
}

func addrPort(t *testing.T, a, p string) netip.AddrPort {
	t.Helper()
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	return netip.AddrPortFrom(netip.MustParseAddr(a), uint16(port))
}

func hex32(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

// TestMicrosoftVectors: all 16 published hashes (IPv4 and IPv6, with and
// without ports), by the bitwise function and by the precomputed table.
func TestMicrosoftVectors(t *testing.T) {
	key, vs := msVectors(t)
	tab, err := NewTable(key, 36)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		for _, c := range []struct {
			fields string
			want   uint32
		}{{"sd", v.hashIP}, {"sdfn", v.hashL4}} {
			in, err := Input(c.fields, v.tuple)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Toeplitz(key, in)
			if err != nil || got != c.want {
				t.Errorf("Toeplitz(%s %v) = %#08x, %v; want %#08x", c.fields, v.tuple, got, err, c.want)
			}
			if got, err := tab.Hash(in); err != nil || got != c.want {
				t.Errorf("Table.Hash(%s %v) = %#08x, %v; want %#08x", c.fields, v.tuple, got, err, c.want)
			}
		}
	}
}

// TestFreeBSDTestrss: FreeBSD's testrss printed, beside Microsoft's
// reference, its own 2-tuple and 4-tuple hashes of the IPv4 rows. Its
// columns are labelled "2tuple MS ref, 2tuple fbsd, 4tuple MS ref, 4tuple
// fbsd" but hold MS 2-tuple, MS 4-tuple, FreeBSD 2-tuple, FreeBSD
// 4-tuple: FreeBSD's 2-tuple agrees with the reference and with ours, its
// 4-tuple does not: it is the hash of the ports in little-endian (host)
// byte order, a testrss bug, which the test shows by computing it so.
func TestFreeBSDTestrss(t *testing.T) {
	key, _ := msVectors(t)
	p := filepath.Join(realhosts.Require(t), "nic", "toeplitz", "freebsd_testrss_output_ocochard.txt")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 6 || !strings.HasPrefix(f[2], "0x") {
			continue
		}
		dst, src := netip.MustParseAddrPort(f[0]), netip.MustParseAddrPort(f[1])
		tu := Tuple{Src: src, Dst: dst}
		h2, h4 := hashOf(t, key, "sd", tu), hashOf(t, key, "sdfn", tu)
		if hex32(t, f[2]) != h2 || hex32(t, f[3]) != h4 || hex32(t, f[4]) != h2 {
			t.Errorf("%s: %s: columns %s %s %s, want %#08x %#08x %#08x", p, f[0], f[2], f[3], f[4], h2, h4, h2)
		}
		le, _ := Input("sd", tu)
		le = binary.LittleEndian.AppendUint16(le, src.Port())
		le = binary.LittleEndian.AppendUint16(le, dst.Port())
		if h, _ := Toeplitz(key, le); hex32(t, f[5]) != h || h == h4 {
			t.Errorf("%s: %s: FreeBSD's 4-tuple %s, want %#08x (ports little-endian), unlike %#08x", p, f[0], f[5], h, h4)
		}
		rows++
	}
	if rows != 5 {
		t.Fatalf("%s: %d rows read, want 5", p, rows)
	}
}

func hashOf(t *testing.T, key []byte, fields string, tu Tuple) uint32 {
	t.Helper()
	in, err := Input(fields, tu)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Toeplitz(key, in)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
