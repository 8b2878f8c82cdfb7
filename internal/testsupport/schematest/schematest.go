// Package schematest validates irqnuma's JSON documents against their
// JSON Schemas, the files under docs/schema (NAME.vVERSION.json), with
// a maintained validator of JSON Schema 2020-12
// (santhosh-tekuri/jsonschema). A document names its schema and version
// in its first members; Validate picks the schema by them, so a document
// that names none, or one with no file, fails too.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Dir returns the folder of the schema files.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "schema")
}

// Set is every schema under Dir, compiled, by its file name without
// ".json" ("topology.v2").
type Set struct {
	byName map[string]*jsonschema.Schema
	// Raw is each schema file as decoded JSON, by the same names.
	Raw map[string]any
}

var (
	loadOnce sync.Once
	loaded   *Set
	loadErr  error
)

// Load compiles the schema files once per test binary; a test calling it
// fails when one does not compile.
func Load(t testing.TB) *Set {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = load(Dir()) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func load(dir string) (*Set, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no schema files in %s", dir)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	s := &Set{byName: map[string]*jsonschema.Schema{}, Raw: map[string]any{}}
	ids := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		id, _ := doc.(map[string]any)["$id"].(string)
		if want := "https://github.com/irqnuma/irqnuma/docs/schema/" + name + ".json"; id != want {
			return nil, fmt.Errorf("%s: $id %q, want %q", f, id, want)
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		ids[name] = id
		s.Raw[name] = doc
	}
	for name, id := range ids {
		sch, err := c.Compile(id)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", name, err)
		}
		s.byName[name] = sch
	}
	return s, nil
}

// Check validates one document, b, against the schema it names, and
// returns that schema's name ("topology.v2").
func (s *Set) Check(b []byte) (string, error) {
	var head struct {
		Schema  string `json:"schema"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return "", err
	}
	if head.Schema == "" {
		return "", fmt.Errorf("the document names no schema")
	}
	name := fmt.Sprintf("%s.v%d", head.Schema, head.Version)
	sch := s.byName[name]
	if sch == nil && head.Schema == "state" {
		name, sch = "state.v4", s.byName["state.v4"] // one file holds every state version
	}
	if sch == nil {
		return name, fmt.Errorf("no schema file %s.json in %s", name, Dir())
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return name, err
	}
	if err := sch.Validate(inst); err != nil {
		return name, err
	}
	return name, nil
}

// Validate is Check as a test step: it fails t, naming what, when b does
// not validate, and returns the schema's name.
func (s *Set) Validate(t testing.TB, what string, b []byte) string {
	t.Helper()
	name, err := s.Check(b)
	if err != nil {
		// The validator names every failing place; the first few say it.
		lines := strings.Split(err.Error(), "\n")
		if len(lines) > 12 {
			lines = append(lines[:12], fmt.Sprintf("  ... and %d more lines", len(lines)-12))
		}
		t.Errorf("%s: %s: %s", what, name, strings.Join(lines, "\n"))
	}
	return name
}
