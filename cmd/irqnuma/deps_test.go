package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoArchivedModules: go.mod requires no module whose repository is
// archived (go mod tidy keeps it exactly what the code and its tests
// import), each named with its maintained replacement.
func TestNoArchivedModules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	archived := map[string]string{
		"gopkg.in/yaml.v3": "go.yaml.in/yaml/v3, its maintained continuation with the same API",
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) == 0 {
			continue
		}
		if use, ok := archived[fields[0]]; ok {
			t.Errorf("go.mod requires %s, which is archived: use %s", fields[0], use)
		}
	}
}
