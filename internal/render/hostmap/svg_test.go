package hostmap

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// svgDoc is what the tests read back from an SVG.
type svgDoc struct {
	root     xml.StartElement
	texts    []string
	elements map[string]int
}

// parseSVG decodes every token of an SVG and fails the test on anything
// that would reach outside the file: a link (href) that is not a fragment,
// a url() that is not a fragment, scripts, images, foreign objects, style
// sheets or processing instructions other than the XML declaration.
func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	doc := svgDoc{elements: map[string]int{}}
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				doc.root = tok.Copy()
			}
			stack = append(stack, tok.Name.Local)
			doc.elements[tok.Name.Local]++
			switch tok.Name.Local {
			case "script", "image", "foreignObject", "style", "use", "a", "iframe":
				t.Errorf("SVG has a <%s> element", tok.Name.Local)
			}
			for _, a := range tok.Attr {
				v := strings.TrimSpace(a.Value)
				if a.Name.Local == "href" && !strings.HasPrefix(v, "#") {
					t.Errorf("<%s> links outside the file: %s=%q", tok.Name.Local, a.Name.Local, v)
				}
				if i := strings.Index(v, "url("); i >= 0 && !strings.HasPrefix(v[i+4:], "#") {
					t.Errorf("<%s %s=%q> refers outside the file", tok.Name.Local, a.Name.Local, v)
				}
				if a.Name.Local != "xmlns" && strings.Contains(v, "://") {
					t.Errorf("<%s %s=%q> holds an address", tok.Name.Local, a.Name.Local, v)
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1] == "text" {
				doc.texts = append(doc.texts, string(tok))
			}
		case xml.ProcInst:
			if tok.Target != "xml" {
				t.Errorf("SVG has a processing instruction <?%s", tok.Target)
			}
		case xml.Directive:
			t.Errorf("SVG has a directive <!%s>", tok)
		}
	}
	if doc.root.Name.Local != "svg" || doc.root.Name.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element %v, want svg in the SVG namespace", doc.root.Name)
	}
	return doc
}

func (d svgDoc) attr(name string) string {
	for _, a := range d.root.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (d svgDoc) hasText(s string) bool {
	for _, t := range d.texts {
		if t == s {
			return true
		}
	}
	return false
}

// Every host tree: the SVG is well-formed, self-contained, and draws every
// CPU with its label and every NIC.
func TestMapSVGHosts(t *testing.T) {
	for _, host := range hosttest.Names() {
		t.Run(host, func(t *testing.T) {
			h, tb := loadMapHost(t, hosttest.Root(host))
			m := audited(t, h, tb, nil, Options{})
			var buf bytes.Buffer
			if err := WriteSVG(&buf, m); err != nil {
				t.Fatal(err)
			}
			doc := parseSVG(t, buf.Bytes())
			for _, c := range h.CPUs {
				if !doc.hasText("CPU " + strconv.Itoa(c.ID)) {
					t.Errorf("no cell for CPU %d", c.ID)
				}
				mc, _ := m.CPU(c.ID)
				if !doc.hasText(mc.Label) {
					t.Errorf("CPU %d's label %q is not drawn", c.ID, mc.Label)
				}
			}
			for _, n := range m.NICs {
				if !strings.Contains(strings.Join(doc.texts, "\n"), "NIC "+n.Name) {
					t.Errorf("NIC %s is not drawn", n.Name)
				}
			}
			if got := doc.elements["title"]; got != len(h.CPUs)+1 {
				t.Errorf("%d <title> elements, want one per CPU plus the picture's (%d)", got, len(h.CPUs)+1)
			}
			for _, a := range []string{"width", "height"} {
				if v, err := strconv.ParseFloat(doc.attr(a), 64); err != nil || v <= 0 {
					t.Errorf("svg %s = %q", a, doc.attr(a))
				}
			}
		})
	}
}

// Names from the host (NIC names, process comms) are escaped.
func TestMapSVGEscapes(t *testing.T) {
	m := &Map{
		Packages: []Package{{Packages: []int{0}, Nodes: []Node{{ID: unknown.Of(0), CPUs: cpuset.New(0),
			NICs: []string{`e<t>h&"0'`},
			Cores: []Core{{ID: 0, Threads: []CPU{{ID: 0, Online: true, Label: "q0P!", LastRan: []int{7},
				IRQs: []IRQ{{IRQ: 30, NIC: `e<t>h&"0'`, Queue: 0}}, Conflict: true}}}}}}}},
		NICs:      []NIC{{Name: `e<t>h&"0'`, Key: "q", Node: unknown.Of(0), QueueIRQs: []int{30}, QueueCPUs: cpuset.New(0)}},
		Processes: []Process{{PID: 7, Comm: "a<b>&c", Threads: 1, Allowed: cpuset.New(0), LastCPUs: cpuset.New(0)}},
		Conflicts: []Conflict{{Kind: ConflictKindThread, CPU: 0, IRQs: []int{30}, PIDs: []int{7}, LastRan: []int{7}}},
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, m); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, buf.Bytes())
	all := strings.Join(doc.texts, "\n")
	for _, want := range []string{`NIC e<t>h&"0' [q]`, "a<b>&c (pid 7): 1 thread", "a<b>&c (pid 7) last ran on queue CPU 0"} {
		if !strings.Contains(all, want) {
			t.Errorf("SVG text lacks %q:\n%s", want, all)
		}
	}
}

// TestMapSVGRenders opens the seed host's SVG in headless Chromium and
// checks the screenshot: a PNG of the picture's size, not blank, showing
// the conflict colour of CPU 53's cell and the queue colour.
func TestMapSVGRenders(t *testing.T) {
	const browser = "/usr/bin/chromium"
	if _, err := os.Stat(browser); err != nil {
		t.Skipf("no headless browser: %s is absent (apt-get install chromium to run this test)", browser)
	}
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	h, tb := loadMapHost(t, hosttest.Root("seed"))
	var buf bytes.Buffer
	if err := WriteSVG(&buf, audited(t, h, tb, nil, Options{})); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, buf.Bytes())
	w, _ := strconv.ParseFloat(doc.attr("width"), 64)
	hgt, _ := strconv.ParseFloat(doc.attr("height"), 64)

	dir := t.TempDir()
	svgPath := filepath.Join(dir, "seed.svg")
	pngPath := filepath.Join(dir, "seed.png")
	if err := os.WriteFile(svgPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--hide-scrollbars", "--force-device-scale-factor=1",
		fmt.Sprintf("--window-size=%d,%d", int(w)+1, int(hgt)+1), "--screenshot="+pngPath, "file://"+svgPath)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < int(w) || b.Dy() < int(hgt) {
		t.Errorf("screenshot %dx%d, want at least the picture's %.0fx%.0f", b.Dx(), b.Dy(), w, hgt)
	}
	near := func(r, g, bl uint32, want [3]uint32) bool {
		d := func(a, b uint32) uint32 {
			if a > b {
				return a - b
			}
			return b - a
		}
		return d(r>>8, want[0]) < 12 && d(g>>8, want[1]) < 12 && d(bl>>8, want[2]) < 12
	}
	var nonWhite, conflict, queue, total int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if r>>8 < 250 || g>>8 < 250 || bl>>8 < 250 {
				nonWhite++
			}
			if near(r, g, bl, [3]uint32{0xff, 0xa8, 0xa8}) {
				conflict++
			}
			if near(r, g, bl, [3]uint32{0xa5, 0xd8, 0xff}) {
				queue++
			}
		}
	}
	if nonWhite*100 < total {
		t.Errorf("screenshot is blank: %d of %d pixels not white", nonWhite, total)
	}
	// One conflict cell (CPU 53) and its legend swatch; 14 single-queue
	// cells and a swatch.
	cellArea := (svgCellW - 6) * (svgCellH - 6)
	if conflict < cellArea {
		t.Errorf("conflict colour covers %d pixels, want at least one cell (%d)", conflict, cellArea)
	}
	if queue < 14*cellArea {
		t.Errorf("queue colour covers %d pixels, want at least 14 cells (%d)", queue, 14*cellArea)
	}
}
