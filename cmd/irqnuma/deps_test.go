package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestLeanStart: what `irqnuma --version` initialises, read from the
// built binary's GODEBUG=inittrace=1 report (one line per package whose
// initialisation ran). No google.golang.org/protobuf package (kube
// decodes the pod resources answer itself; protobuf's detrand read the
// executable at every start), and no net/http, crypto/tls or crypto/x509
// (kube makes its one HTTP/2 call itself; the exporter's server is
// httpserve's, which only irqnuma-exporter links). And no more packages
// than maxInits, the count when this test was written (113 before), so a
// new dependency that adds initialisation to every start is a decision
// made here, not an accident; lower it as packages leave (yaml is still
// linked, for tune's pin config).
func TestLeanStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary (-short)")
	}
	const maxInits = 75
	bin := filepath.Join(t.TempDir(), "irqnuma")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("irqnuma --version: %v\n%s", err, stderr.String())
	}
	var inits []string
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	if !slices.Contains(inits, "runtime") || !slices.Contains(inits, "github.com/spf13/cobra") {
		t.Fatalf("inittrace names neither runtime nor cobra: not the report this test reads\n%s", stderr.String())
	}
	for _, p := range inits {
		for _, banned := range []string{"google.golang.org/protobuf", "net/http", "crypto/tls", "crypto/x509"} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("irqnuma --version initialises %s", p)
			}
		}
	}
	if len(inits) > maxInits {
		t.Errorf("irqnuma --version initialises %d packages, more than %d:\n%s", len(inits), maxInits, strings.Join(inits, "\n"))
	}
}
