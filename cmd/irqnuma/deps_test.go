package main

import (
	"os"
	"os/exec"
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

// TestCLINoClientGolang: the CLI links no prometheus/client_golang (nor
// its procfs) and no prometheus/exporter-toolkit (nor its TLS, bcrypt
// and systemd code): its metrics are the exporter package's own text
// writer, and the client library with its collectors and the toolkit's
// web server are irqnuma-exporter's alone, so no irqnuma command pays
// their initialisation at start. The exporter binary links both, which
// shows the test looks at the right list.
func TestCLINoClientGolang(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list (-short)")
	}
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
		}
		return strings.Fields(string(out))
	}
	banned := []string{"github.com/prometheus/client_golang", "github.com/prometheus/exporter-toolkit", "github.com/prometheus/procfs"}
	linked := func(deps []string, prefix string) []string {
		var out []string
		for _, d := range deps {
			if d == prefix || strings.HasPrefix(d, prefix+"/") {
				out = append(out, d)
			}
		}
		return out
	}
	cli := deps("github.com/irqnuma/irqnuma/cmd/irqnuma")
	for _, b := range banned {
		if got := linked(cli, b); len(got) > 0 {
			t.Errorf("cmd/irqnuma links %s: only cmd/irqnuma-exporter may", strings.Join(got, ", "))
		}
	}
	exp := deps("github.com/irqnuma/irqnuma/cmd/irqnuma-exporter")
	for _, b := range banned[:2] {
		if got := linked(exp, b); len(got) == 0 {
			t.Errorf("cmd/irqnuma-exporter does not link %s: go list is not answering what this test asks", b)
		}
	}
}

// TestCLINoGRPC: the CLI speaks the kubelet's pod resources API through
// kube's own client and links no google.golang.org/grpc (it made every
// start 25% slower) nor k8s.io/kubelet; kube's tests, which serve the
// real API, do link both, so go list is answering what is asked.
func TestCLINoGRPC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list (-short)")
	}
	list := func(args ...string) string {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", args, err)
		}
		return string(out)
	}
	cli := list("github.com/irqnuma/irqnuma/cmd/irqnuma")
	for _, b := range []string{"google.golang.org/grpc\n", "k8s.io/kubelet/"} {
		if strings.Contains(cli, b) {
			t.Errorf("cmd/irqnuma links %s", strings.TrimSpace(b))
		}
	}
	if !strings.Contains(cli, "github.com/irqnuma/irqnuma/internal/host/kube\n") {
		t.Error("cmd/irqnuma does not link kube: --pod is not wired")
	}
	if tests := list("-test", "github.com/irqnuma/irqnuma/internal/host/kube"); !strings.Contains(tests, "google.golang.org/grpc\n") {
		t.Error("kube's tests do not link grpc: go list is not answering what this test asks")
	}
}

// TestShippedNoFaultHook: the fault injection of zc prepare's steering
// (tune's SetLabFault, set from IRQNUMA_LAB_ZC_FAULT) is built only
// into the lab's guest binary, with the labfault tag; the shipped build
// has neither file, so nothing in it can fail a transaction on purpose.
func TestShippedNoFaultHook(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list (-short)")
	}
	files := func(tags string) string {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}}: {{join .GoFiles \" \"}}",
			"github.com/irqnuma/irqnuma/internal/tune", "github.com/irqnuma/irqnuma/cmd/irqnuma").Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v", tags, err)
		}
		return string(out)
	}
	hooks := []string{" fault_lab.go", " zcfault_lab.go"}
	shipped, lab := files(""), files("labfault")
	for _, f := range hooks {
		if strings.Contains(shipped, f) {
			t.Errorf("the shipped build has%s:\n%s", f, shipped)
		}
		if !strings.Contains(lab, f) {
			t.Errorf("the labfault build lacks%s: go list is not answering what this test asks\n%s", f, lab)
		}
	}
}
