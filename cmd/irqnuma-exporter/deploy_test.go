package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDeployArgs: the DaemonSet's args and the systemd unit's ExecStart
// are flags this exporter takes, in today's spellings (no warning), the
// DaemonSet with --pods all.
func TestDeployArgs(t *testing.T) {
	deploy := filepath.Join("..", "..", "deploy")
	b, err := os.ReadFile(filepath.Join(deploy, "kubernetes", "daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ds struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &ds); err != nil || len(ds.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("daemonset.yaml: %v, %d containers", err, len(ds.Spec.Template.Spec.Containers))
	}
	unit, err := os.ReadFile(filepath.Join(deploy, "systemd", "irqnuma-exporter.service"))
	if err != nil {
		t.Fatal(err)
	}
	var exec []string
	for line := range strings.Lines(string(unit)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart="); ok {
			exec = strings.Fields(rest)[1:]
		}
	}
	for name, args := range map[string][]string{"daemonset.yaml": ds.Spec.Template.Spec.Containers[0].Args, "irqnuma-exporter.service": exec} {
		o, done, err := parse(args, io.Discard)
		if err != nil || done {
			t.Errorf("%s: irqnuma-exporter %q: %v, done %v", name, args, err, done)
			continue
		}
		if len(o.deprecated) > 0 {
			t.Errorf("%s: irqnuma-exporter %q: warnings %q", name, args, o.deprecated)
		}
		if name == "daemonset.yaml" && (!o.allPods || o.root != "/host") {
			t.Errorf("daemonset.yaml: %q: want --root /host --pods all", args)
		}
	}
}
