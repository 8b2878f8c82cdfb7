package realhosts

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
)

// hwloc is what an hwloc expected answer says: NUMA node os index -> the
// PUs (CPUs) it covers, and all PUs.
type hwloc struct {
	nodes map[int]cpuset.Set
	pus   cpuset.Set
}

// hwlocTopology reads c's lstopo console, or its XML when there is no
// console.
func hwlocTopology(c Capture) (hwloc, error) {
	p, parse := c.expected(".console"), parseConsole
	if p == "" {
		p, parse = c.expected(".xml"), parseHwlocXML
	}
	if p == "" {
		return hwloc{}, noExpected(c, "lstopo console or XML")
	}
	b, err := readBounded(p)
	if err != nil {
		return hwloc{}, err
	}
	h, err := parse(b)
	if err != nil {
		return hwloc{}, fmt.Errorf("parse %s: %w", p, err)
	}
	return h, nil
}

var (
	numaLine = regexp.MustCompile(`^NUMANode L#\d+ \(P#(\d+)[ )]`)
	puLine   = regexp.MustCompile(`^PU L#\d+ \(P#(\d+)\)`)
)

// consoleObj is one object line of the tree lstopo prints.
type consoleObj struct {
	indent int
	numa   int // os index of a NUMANode, else -1
	pu     int // os index of a PU, else -1
}

// parseConsole reads lstopo's console output: one object a line, children
// indented below their parent, e.g.
//
//	Machine (P#0 total=96GiB ...)
//	  Package L#0 (P#0 total=24GiB ...)
//	    L3Cache L#0 (...)
//	      NUMANode L#0 (P#0 local=8190MiB total=8190MiB)
//	      L2Cache L#0 (...)
//	        ...
//	              PU L#0 (P#0)
//
// In hwloc 2 a NUMANode is a memory child of the object whose CPUs it
// covers, printed among that object's children, before or after the cores,
// with nothing below it that is a PU (it may carry Misc children such as
// memory modules); a NUMANode then covers the PUs in its parent's subtree.
// In hwloc 1 a NUMANode is an ordinary parent of its PUs. Both are read.
// The tree ends at the "depth N:" summary.
func parseConsole(b []byte) (hwloc, error) {
	var objs []consoleObj
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		text := strings.TrimLeft(line, " ")
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "depth ") || strings.HasPrefix(text, "Special depth ") {
			break
		}
		o := consoleObj{indent: len(line) - len(text), numa: -1, pu: -1}
		if m := numaLine.FindStringSubmatch(text); m != nil {
			o.numa, _ = strconv.Atoi(m[1])
		} else if m := puLine.FindStringSubmatch(text); m != nil {
			o.pu, _ = strconv.Atoi(m[1])
		}
		if strings.Contains(text, " + ") && (strings.Contains(text, "PU L#") || strings.Contains(text, "NUMANode L#")) {
			return hwloc{}, fmt.Errorf("collapsed line %q: run lstopo with --no-collapse", text)
		}
		if o.numa > cpuset.MaxID || o.pu > cpuset.MaxID {
			return hwloc{}, fmt.Errorf("line %q: id out of range", text)
		}
		objs = append(objs, o)
	}
	if err := sc.Err(); err != nil {
		return hwloc{}, err
	}

	// pusUnder returns the PUs in the subtree of objs[i], excluding itself.
	pusUnder := func(i int) []int {
		var ids []int
		for k := i + 1; k < len(objs) && objs[k].indent > objs[i].indent; k++ {
			if objs[k].pu >= 0 {
				ids = append(ids, objs[k].pu)
			}
		}
		return ids
	}
	h := hwloc{nodes: map[int]cpuset.Set{}}
	var all []int
	for i, o := range objs {
		if o.pu >= 0 {
			all = append(all, o.pu)
		}
		if o.numa < 0 {
			continue
		}
		if _, dup := h.nodes[o.numa]; dup {
			return hwloc{}, fmt.Errorf("NUMANode P#%d twice", o.numa)
		}
		ids := pusUnder(i) // hwloc 1: the node is the PUs' parent
		if len(ids) == 0 {
			parent := -1
			for j := i - 1; j >= 0; j-- {
				if objs[j].indent < o.indent {
					parent = j
					break
				}
			}
			if parent < 0 {
				return hwloc{}, fmt.Errorf("NUMANode P#%d has no parent object", o.numa)
			}
			ids = pusUnder(parent)
		}
		h.nodes[o.numa] = cpuset.New(ids...)
	}
	if len(h.nodes) == 0 {
		return hwloc{}, errors.New("no NUMANode lines")
	}
	h.pus = cpuset.New(all...)
	return h, nil
}

// parseHwlocXML reads the NUMANode and PU objects of an hwloc XML export:
//
//	<object type="NUMANode" os_index="0" cpuset="0x000000ff" complete_cpuset="0x000000ff" .../>
//
// "cpuset" holds the online, allowed CPUs; "complete_cpuset" adds offline
// ones. Bitmaps are comma-separated 32-bit words, most significant first,
// each with a 0x prefix.
func parseHwlocXML(b []byte) (hwloc, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	h := hwloc{nodes: map[int]cpuset.Set{}}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return hwloc{}, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "object" {
			continue
		}
		var typ, osIndex, set string
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "type":
				typ = a.Value
			case "os_index":
				osIndex = a.Value
			case "cpuset":
				set = a.Value
			}
		}
		if typ != "NUMANode" && typ != "PU" {
			continue
		}
		id, err := strconv.Atoi(osIndex)
		if err != nil || id < 0 || id > cpuset.MaxID {
			return hwloc{}, fmt.Errorf("%s object: bad os_index %q", typ, osIndex)
		}
		s, err := parseHwlocBitmap(set)
		if err != nil {
			return hwloc{}, fmt.Errorf("%s P#%d: %w", typ, id, err)
		}
		if typ == "PU" {
			h.pus = h.pus.Union(s)
			continue
		}
		if _, dup := h.nodes[id]; dup {
			return hwloc{}, fmt.Errorf("NUMANode P#%d twice", id)
		}
		h.nodes[id] = s
	}
	if len(h.nodes) == 0 {
		return hwloc{}, errors.New("no NUMANode objects")
	}
	return h, nil
}

// parseHwlocBitmap parses "0x00000003,0xffffffff" into a set.
func parseHwlocBitmap(s string) (cpuset.Set, error) {
	words := strings.Split(s, ",")
	for i, w := range words {
		hex, ok := strings.CutPrefix(w, "0x")
		if !ok || hex == "" {
			return cpuset.Set{}, fmt.Errorf("bitmap %q: word %q lacks 0x", s, w)
		}
		words[i] = hex
	}
	set, err := cpuset.ParseMask(strings.Join(words, ","))
	if err != nil {
		return cpuset.Set{}, fmt.Errorf("bitmap %q: %w", s, err)
	}
	return set, nil
}
