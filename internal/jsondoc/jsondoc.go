// Package jsondoc writes the envelope every JSON document irqnuma writes
// carries: the name of its schema and the schema's version, first in the
// object ({"schema": "topology", "version": 2, ...}). The schemas are
// the files under docs/schema/, NAME.vVERSION.json, and are the contract
// a script reading -o json builds on: fields are added within a version,
// and a rename or a change of type is a new version.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/safetext"
)

// Schema names a kind of document.
type Schema string

// The documents irqnuma writes, by the command that writes them.
const (
	SchemaTopology      Schema = "topology"       // irqnuma topology -o json
	SchemaIRQList       Schema = "irq-list"       // irqnuma irq list [--all] [--steer] -o json
	SchemaMap           Schema = "map"            // irqnuma map -o json
	SchemaAudit         Schema = "audit"          // irqnuma audit -o json
	SchemaFlow          Schema = "flow"           // irqnuma flow ... -o json
	SchemaFlowProcesses Schema = "flow-processes" // irqnuma flow --pid/--comm/--pod -o json
	SchemaWatch         Schema = "watch"          // irqnuma watch -o json, one per line
	SchemaZC            Schema = "zc"             // irqnuma zc -o json
	SchemaPin           Schema = "pin"            // irqnuma irq pin/restore -o json
	SchemaTune          Schema = "tune"           // irqnuma tune -o json
	SchemaMask          Schema = "mask"           // irqnuma mask -o json
	SchemaBench         Schema = "bench"          // irqnuma bench -o json, and its result file
	SchemaState         Schema = "state"          // the tuner's state file
)

// Version is the version of every document but the state file, whose
// version says which of its parts a file holds (see internal/tune).
const Version = 2

// head returns the first members of a document of schema s at version
// v, "schema": NAME, "version": V, and a comma.
func head(s Schema, v int) string {
	return `"schema":` + strconv.Quote(string(s)) + `,"version":` + strconv.Itoa(v) + `,`
}

// marshal encodes v, a struct or a map, as a document of schema s at
// version v: its members after the envelope, indented by indent at each
// level (none when ""), every host name escaped (safetext.JSON).
func marshal(s Schema, version int, v any, indent string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("jsondoc: a %s document is an object, not %.20s", s, b)
	}
	out := make([]byte, 0, len(b)+48)
	out = append(out, '{')
	out = append(out, head(s, version)...)
	if len(b) == 2 { // {}
		out = out[:len(out)-1]
	}
	out = append(out, b[1:]...)
	if indent != "" {
		var ib bytes.Buffer
		ib.Grow(len(out) * 2)
		if err := json.Indent(&ib, out, "", indent); err != nil {
			return nil, err
		}
		out = ib.Bytes()
	}
	return safetext.JSON(out), nil
}

// Write writes v as a document of schema s at Version, indented by two
// spaces when indent, with a final newline, in one Write.
func Write(w io.Writer, s Schema, v any, indent bool) error {
	in := ""
	if indent {
		in = "  "
	}
	b, err := marshal(s, Version, v, in)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
