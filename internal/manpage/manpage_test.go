package manpage

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

var sample = Page{
	Name: "irqnuma-mask", Section: "1", Date: "2026-11-30", Source: "irqnuma 1.0", Manual: "irqnuma manual",
	Short:       "print the CPUs a benchmark should run on",
	Synopsis:    []string{"irqnuma mask (--nic NAME | --node N) [flags]"},
	Description: "mask picks CPUs.\n.dots start no request; 'quotes neither.\n\nA second paragraph with a \\ backslash.\n  16-31,48-63  kept as is\n  second literal line\nback to text",
	Options:     []Option{{Flags: "--nic NAME", Usage: "candidates: the CPUs local to this NIC"}, {Flags: "-o, --output format", Usage: `output "format"`}},
	Sections: []Section{{Title: "Checks", Body: "Each check.", Items: []Item{{Tag: "irq-remote", Body: "Severity: error.\n.Needs: affinity.\n\nA second paragraph."}}},
		{Title: "Examples", Body: "  irqnuma mask --nic eth0"}},
	SeeAlso: []string{"irqnuma(1)", "taskset(1)"},
}

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sample); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		".TH \"IRQNUMA\\-MASK\" \"1\" \"2026\\-11\\-30\" \"irqnuma 1.0\" \"irqnuma manual\"\n",
		".SH NAME\nirqnuma\\-mask \\- print the CPUs a benchmark should run on\n",
		"\\&.dots start no request; 'quotes neither.\n",
		".PP\nA second paragraph with a \\e backslash.\n.nf\n  16\\-31,48\\-63  kept as is\n  second literal line\n.fi\nback to text\n",
		".TP\n\\fB\\-\\-nic NAME\\fR\ncandidates: the CPUs local to this NIC\n",
		".SH \"EXAMPLES\"\n.nf\n  irqnuma mask \\-\\-nic eth0\n.fi\n",
		".SH SEE ALSO\nirqnuma(1), taskset(1)\n",
		".SH \"CHECKS\"\nEach check.\n.TP\n\\fBirq\\-remote\\fR\nSeverity: error.\n.br\n\\&.Needs: affinity.\n.IP\nA second paragraph.\n.SH \"EXAMPLES\"",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// TestRenders runs the page through groff with every warning on: it must
// render without one, and the text must read as written.
func TestRenders(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff")
	}
	var b bytes.Buffer
	if err := Write(&b, sample); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-P", "-cbou")
	cmd.Stdin = &b
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || errb.Len() > 0 {
		t.Fatalf("groff: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"irqnuma-mask - print the CPUs", ".dots start no request", "16-31,48-63  kept as is", "--nic NAME", `output "format"`, "a \\ backslash", "irq-remote\n              Severity: error.\n              .Needs: affinity.\n\n              A second paragraph."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendered page lacks %q:\n%s", want, out.String())
		}
	}
}
