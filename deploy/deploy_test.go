package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/template"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// labelsOf are the labels of each exported metric.
var labelsOf = map[string][]string{
	exporter.MetricFinding:         {"check", "severity", "nic", "subject"},
	exporter.MetricIRQLocal:        {"irq", "nic", "queue"},
	exporter.MetricIRQEffective:    {"irq", "nic", "queue"},
	exporter.MetricNICNode:         {"nic"},
	exporter.MetricProcessPresent:  {"selector"},
	exporter.MetricProcessNIC:      {"selector", "nic", "attribution"},
	exporter.MetricPodCPUs:         podLabels,
	exporter.MetricPodExclusive:    podLabels,
	exporter.MetricPodProcesses:    podLabels,
	exporter.MetricPodExclusiveIRQ: append(slices.Clone(podLabels), "nic"),
	exporter.MetricPodNICRemote:    append(slices.Clone(podLabels), "nic"),
	exporter.MetricPodFinding:      append([]string{"check", "severity", "nic"}, podLabels...),
	exporter.MetricScrapeDuration:  nil,
	exporter.MetricScrapeError:     nil,
	exporter.MetricBuildInfo:       {"version", "revision", "goversion"},
}

// podLabels name a selected group on every irqnuma_pod_* series.
var podLabels = []string{"cgroup", "namespace", "pod", "container"}

// targetLabels are the labels Prometheus adds to every scraped series.
var targetLabels = []string{"instance", "job"}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var (
	stringRE  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	matcherRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}`)
	rangeRE   = regexp.MustCompile(`\[[^\]]*\]`)
	identRE   = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	numberRE  = regexp.MustCompile(`\b[0-9][0-9a-zA-Z.]*`)
	labelRE   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	keywords  = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
		"and", "or", "unless", "offset", "atan2", "inf", "nan"}
)

// exprMetrics returns the metric names an expression selects and the
// label names its matchers use, per metric ("" for a bare {...}).
// It is a tokenizer, not a PromQL parser: the parser is not in the module
// graph, and promtool (when installed) checks the syntax below.
func exprMetrics(expr string) (metrics []string, matchers map[string][]string, err error) {
	matchers = map[string][]string{}
	s := stringRE.ReplaceAllString(expr, `""`)
	if strings.Count(s, "(") != strings.Count(s, ")") || strings.Count(s, "{") != strings.Count(s, "}") {
		return nil, nil, fmt.Errorf("unbalanced brackets in %q", expr)
	}
	for _, m := range matcherRE.FindAllStringSubmatch(s, -1) {
		for _, l := range labelRE.FindAllStringSubmatch(m[2], -1) {
			matchers[m[1]] = append(matchers[m[1]], l[1])
		}
	}
	s = matcherRE.ReplaceAllString(s, "$1 ")
	s = rangeRE.ReplaceAllString(s, " ")
	s = numberRE.ReplaceAllString(s, " ") // 0, 1.5, 1h after offset
	// Grouping clauses list label names, not metrics.
	s = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`).ReplaceAllString(s, " ")
	for _, id := range identRE.FindAllString(s, -1) {
		if strings.HasSuffix(id, "(") || slices.Contains(keywords, strings.ToLower(id)) {
			continue // a function or an operator
		}
		metrics = append(metrics, id)
	}
	return metrics, matchers, nil
}

func TestExprMetrics(t *testing.T) {
	tests := []struct {
		give string
		want []string
	}{
		{`irqnuma_finding{severity="error"} > 0`, []string{"irqnuma_finding"}},
		{`sum by (nic) (irqnuma_irq_local == bool 0) > 1`, []string{"irqnuma_irq_local"}},
		{`absent(irqnuma_scrape_error{job="x"}) or rate(up[5m]) offset 1h`, []string{"irqnuma_scrape_error", "up"}},
	}
	for _, tt := range tests {
		got, _, err := exprMetrics(tt.give)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("exprMetrics(%q) = %v, %v, want %v", tt.give, got, err, tt.want)
		}
	}
	if _, _, err := exprMetrics(`sum(irqnuma_finding`); err == nil {
		t.Error("exprMetrics accepted unbalanced brackets")
	}
}

// TestAlertRules checks the rules file the way promtool check rules
// would, as far as that is possible without the PromQL parser, and
// against what the exporter exports.
func TestAlertRules(t *testing.T) {
	var f ruleFile
	readYAML(t, "prometheus/irqnuma-rules.yaml", &f)
	for _, p := range checkRules(f) {
		t.Error(p)
	}
	if len(exporter.Metrics) != len(labelsOf) {
		t.Errorf("exporter.Metrics %v and this test's labelsOf disagree", exporter.Metrics)
	}
}

// TestAlertRulesCatch: the checks catch what they are for.
func TestAlertRulesCatch(t *testing.T) {
	tests := []struct {
		give string // one rule, YAML
		want string // in a problem
	}{
		{`{alert: A, expr: 'irqnuma_findings > 0', for: 10m, labels: {severity: error}, annotations: {summary: s, description: d}}`,
			"uses irqnuma_findings, which irqnuma's exporter does not export"},
		{`{alert: A, expr: 'irqnuma_irq_local{cpu="3"} == 0', for: 10m, labels: {severity: error}, annotations: {summary: s, description: d}}`,
			`irqnuma_irq_local has no label "cpu"`},
		{`{alert: A, expr: 'irqnuma_irq_local == 0', for: 10m, labels: {severity: error}, annotations: {summary: '{{ $labels.subject }}', description: d}}`,
			`map has no entry for key "subject"`},
		{`{alert: A, expr: 'irqnuma_irq_local == 0', for: ten, labels: {severity: error}, annotations: {summary: s, description: d}}`,
			`for "ten"`},
		{`{alert: A, expr: 'sum(irqnuma_irq_local', for: 1m, labels: {severity: error}, annotations: {summary: s, description: d}}`,
			"unbalanced brackets"},
		{`{alert: A, expr: 'irqnuma_irq_local == 0', for: 1m, labels: {severity: critical}, annotations: {summary: s, description: d}}`,
			`severity label "critical"`},
	}
	for _, tt := range tests {
		var f ruleFile
		if err := yaml.Unmarshal([]byte("groups: [{name: g, rules: ["+tt.give+"]}]"), &f); err != nil {
			t.Fatal(err)
		}
		problems := strings.Join(checkRules(f), "\n")
		if !strings.Contains(problems, tt.want) {
			t.Errorf("checkRules(%s) = %q, want a problem with %q", tt.give, problems, tt.want)
		}
	}
}

// checkRules returns the problems of a rules file, one line each.
func checkRules(f ruleFile) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(f.Groups) == 0 {
		bad("no rule groups")
	}
	seen := map[string]bool{}
	var errorAlert bool
	for _, g := range f.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			bad("group %q: want a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			if r.Alert == "" || r.Record != "" {
				bad("rule %q: want an alerting rule", r.Alert)
				continue
			}
			if !regexp.MustCompile(`^[A-Z][A-Za-z0-9]+$`).MatchString(r.Alert) || seen[r.Alert] {
				bad("alert %q: not a CamelCase name, or twice", r.Alert)
			}
			seen[r.Alert] = true
			if _, err := model.ParseDuration(r.For); err != nil {
				bad("alert %s: for %q: %v", r.Alert, r.For, err)
			}
			if sev := r.Labels["severity"]; sev != "error" && sev != "warning" && sev != "info" {
				bad("alert %s: severity label %q: want the audit's error, warning or info", r.Alert, sev)
			}
			metrics, matchers, err := exprMetrics(r.Expr)
			if err != nil || len(metrics) == 0 {
				bad("alert %s: expr %q: %v, metrics %v", r.Alert, r.Expr, err, metrics)
				continue
			}
			known := append([]string{}, targetLabels...)
			for _, m := range metrics {
				ls, ok := labelsOf[m]
				if m == "up" { // Prometheus's own series of every target
					ls, ok = nil, true
				}
				if !ok {
					bad("alert %s: expr uses %s, which irqnuma's exporter does not export (it has %v)", r.Alert, m, exporter.Metrics)
				}
				known = append(known, ls...)
				for _, l := range matchers[m] {
					if !slices.Contains(ls, l) && !slices.Contains(targetLabels, l) {
						bad("alert %s: %s has no label %q", r.Alert, m, l)
					}
				}
			}
			if strings.Contains(r.Expr, `irqnuma_finding{severity="error"}`) {
				errorAlert = errorAlert || r.For == "10m"
			}
			for k, a := range r.Annotations {
				if err := checkTemplate(r.Alert+" "+k, a, known); err != nil {
					bad("%v", err)
				}
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				bad("alert %s: want summary and description annotations", r.Alert)
			}
		}
	}
	if len(f.Groups) > 0 && len(f.Groups[0].Rules) > 1 && !errorAlert {
		bad(`no alert on irqnuma_finding{severity="error"} for 10m`)
	}
	return out
}

// checkTemplate parses an annotation as Prometheus does (Go text/template
// with $labels, $value and $externalLabels defined) and runs it with the
// labels the alert's series carry, so a $labels.X they lack is an error.
func checkTemplate(what, text string, labels []string) error {
	const defs = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$value := .Value}}"
	tmpl, err := template.New(what).Option("missingkey=error").Parse(defs + text)
	if err != nil {
		return err
	}
	ls := map[string]string{}
	for _, l := range labels {
		ls[l] = l
	}
	data := map[string]any{"Labels": ls, "ExternalLabels": map[string]string{}, "Value": 1.0}
	return tmpl.Execute(new(strings.Builder), data)
}

// promtool runs promtool when it is installed (Debian's prometheus
// package has it); the checks above stand in for it otherwise.
func promtool(t *testing.T, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus): structural checks only")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	promtool(t, "check", "rules", "prometheus/irqnuma-rules.yaml")
}

// TestPromtoolTestRules: the alerts fire on the nps2 tree's series.
func TestPromtoolTestRules(t *testing.T) {
	promtool(t, "test", "rules", "prometheus/irqnuma-rules_test.yaml")
}

// TestRulesTestSeriesAreReal: the host1 series of the promtool test are
// what the exporter answers for the nps2 tree, label for label and value
// for value, not made up.
func TestRulesTestSeriesAreReal(t *testing.T) {
	var f struct {
		RuleFiles          []string `yaml:"rule_files"`
		EvaluationInterval string   `yaml:"evaluation_interval"`
		Tests              []struct {
			Interval      string                            `yaml:"interval"`
			InputSeries   []struct{ Series, Values string } `yaml:"input_series"`
			AlertRuleTest []any                             `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	readYAML(t, "prometheus/irqnuma-rules_test.yaml", &f)
	exported := nps2Series(t)
	checked := 0
	for _, tt := range f.Tests {
		for _, in := range tt.InputSeries {
			if !strings.Contains(in.Series, `instance="host1:9143"`) {
				continue
			}
			s := strings.NewReplacer(`instance="host1:9143",`, "", `job="irqnuma",`, "", `,job="irqnuma"`, "", `{instance="host1:9143",job="irqnuma"}`, "").Replace(in.Series)
			value, _, _ := strings.Cut(in.Values, "x")
			if got, ok := exported[s]; !ok || got != value {
				t.Errorf("input series %s %s: the exporter answers %q (present %v) for nps2", s, value, got, ok)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Errorf("%d host1 series checked, want the test's", checked)
	}
}

// nps2Series scrapes the exporter for the nps2 tree once and returns its
// samples as "name{labels}" -> value text.
func nps2Series(t *testing.T) map[string]string {
	t.Helper()
	return samples(t, exporter.New(hosttest.Open(t, hosttest.Root("nps2")), audit.Selection{}, nil).Scrape())
}

// samples returns fams' samples as "name{labels}" -> value text, the
// labels sorted as Prometheus prints them.
func samples(t *testing.T, fams []exporter.Family) map[string]string {
	t.Helper()
	var text bytes.Buffer
	if _, err := exporter.WriteText(&text, fams); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(&text)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(ls)
			name := mf.GetName()
			if len(ls) > 0 {
				name += "{" + strings.Join(ls, ",") + "}"
			}
			out[name] = model.SampleValue(m.GetGauge().GetValue()).String()
		}
	}
	return out
}

// unit reads a systemd unit file into section.key -> values.
func unit(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not key=value in a section", path, n, line)
			}
			out[section+"."+k] = append(out[section+"."+k], v)
		}
	}
	return out
}

func TestSystemdUnits(t *testing.T) {
	pin := unit(t, "systemd/irqnuma-pin.service")
	exp := unit(t, "systemd/irqnuma-exporter.service")
	tests := []struct {
		unit map[string][]string
		key  string
		want string // contained in one of the values
	}{
		{pin, "Service.Type", "oneshot"},
		{pin, "Unit.After", "network-online.target"},
		{pin, "Unit.Wants", "network-online.target"},
		{pin, "Service.ExecStart", " irq pin --config /etc/irqnuma/pin.yaml"},
		{pin, "Service.StateDirectory", "irqnuma"},
		{pin, "Install.WantedBy", "multi-user.target"},
		{exp, "Service.ExecStart", "/irqnuma-exporter --web.listen-address 127.0.0.1:9143"},
		{exp, "Service.DynamicUser", "yes"},
		{exp, "Service.NoNewPrivileges", "yes"},
		{exp, "Service.ProtectSystem", "strict"},
		{exp, "Service.ProtectKernelTunables", "yes"},
		{exp, "Service.CapabilityBoundingSet", ""},
		{exp, "Install.WantedBy", "multi-user.target"},
	}
	for _, tt := range tests {
		vals, ok := tt.unit[tt.key]
		if !ok || !slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, tt.want) }) {
			t.Errorf("%s = %q, want one containing %q", tt.key, vals, tt.want)
		}
	}
	// The pin writes /proc/irq: it must not make /proc read-only.
	if _, ok := pin["Service.ProtectKernelTunables"]; ok {
		t.Error("irqnuma-pin.service sets ProtectKernelTunables, which makes /proc/irq read-only")
	}
	// The exporter must see every process and /proc/interrupts.
	for _, k := range []string{"Service.ProtectProc", "Service.ProcSubset"} {
		if _, ok := exp[k]; ok {
			t.Errorf("irqnuma-exporter.service sets %s, which hides what the audit reads", k)
		}
	}
}

func TestDaemonSet(t *testing.T) {
	var ds struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata struct {
					Labels map[string]string `yaml:"labels"`
				} `yaml:"metadata"`
				Spec struct {
					HostPID    bool `yaml:"hostPID"`
					Containers []struct {
						Command []string `yaml:"command"`
						Args    []string `yaml:"args"`
						Ports   []struct {
							ContainerPort int `yaml:"containerPort"`
						} `yaml:"ports"`
						SecurityContext struct {
							ReadOnlyRootFilesystem   bool `yaml:"readOnlyRootFilesystem"`
							AllowPrivilegeEscalation bool `yaml:"allowPrivilegeEscalation"`
							Capabilities             struct {
								Drop []string `yaml:"drop"`
							} `yaml:"capabilities"`
						} `yaml:"securityContext"`
						VolumeMounts []struct {
							Name      string `yaml:"name"`
							MountPath string `yaml:"mountPath"`
							ReadOnly  bool   `yaml:"readOnly"`
						} `yaml:"volumeMounts"`
					} `yaml:"containers"`
					Volumes []struct {
						Name     string `yaml:"name"`
						HostPath struct {
							Path string `yaml:"path"`
						} `yaml:"hostPath"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	b, err := os.ReadFile("kubernetes/daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &ds); err != nil {
		t.Fatalf("daemonset.yaml: %v", err)
	}
	spec := ds.Spec.Template.Spec
	if ds.APIVersion != "apps/v1" || ds.Kind != "DaemonSet" || !spec.HostPID || len(spec.Containers) != 1 {
		t.Fatalf("want one apps/v1 DaemonSet container with hostPID, got %s %s hostPID=%v", ds.APIVersion, ds.Kind, spec.HostPID)
	}
	for k, v := range ds.Spec.Selector.MatchLabels {
		if ds.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod labels", k, v)
		}
	}
	c := spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/irqnuma-exporter"}) || !slices.Contains(c.Args, "--root=/host") || !slices.Contains(c.Args, "--pods=all") {
		t.Errorf("command %q, args %q: want /irqnuma-exporter --root=/host --pods=all", c.Command, c.Args)
	}
	if !c.SecurityContext.ReadOnlyRootFilesystem || c.SecurityContext.AllowPrivilegeEscalation ||
		!slices.Equal(c.SecurityContext.Capabilities.Drop, []string{"ALL"}) {
		t.Error("container: want a read-only root filesystem, no privilege escalation and every capability dropped (it runs as UID 0 for the kubelet's socket)")
	}
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		hostPaths[v.Name] = v.HostPath.Path
	}
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if !m.ReadOnly {
			t.Errorf("mount %s at %s is not read-only", m.Name, m.MountPath)
		}
		mounted[hostPaths[m.Name]+" -> "+m.MountPath] = true
	}
	// /proc and /sys for the host, /sys/fs/cgroup, /var/lib/kubelet
	// (the pod resources socket, the CPU manager checkpoint) and the
	// kubelet's log folders (pod and container names) for the pod
	// selections, and CRI-O's run root (the pods' IRQ balancing).
	for _, want := range []string{"/proc -> /host/proc", "/sys -> /host/sys", "/sys/fs/cgroup -> /host/sys/fs/cgroup",
		"/var/lib/kubelet -> /host/var/lib/kubelet", "/var/log/pods -> /host/var/log/pods",
		"/var/log/containers -> /host/var/log/containers", "/run/containers/storage -> /host/run/containers/storage"} {
		if !mounted[want] {
			t.Errorf("no mount %s (have %v)", want, mounted)
		}
	}
	port := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--web.listen-address="); ok {
			_, port, _ = strings.Cut(v, ":")
		}
	}
	if len(c.Ports) != 1 || fmt.Sprint(c.Ports[0].ContainerPort) != port {
		t.Errorf("containerPort %v does not match --web.listen-address port %q", c.Ports, port)
	}
}
