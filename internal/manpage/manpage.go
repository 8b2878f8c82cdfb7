// Package manpage writes manual pages in roff's man macros from plain
// text: the same help text a command prints with --help, laid out as
// man(7) expects (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLES, ...).
package manpage

import (
	"fmt"
	"io"
	"strings"
)

// Page is one manual page.
type Page struct {
	Name    string // "irqnuma-irq-pin"
	Section string // "1"
	Date    string // "2026-11-30"
	Source  string // "irqnuma 1.2.0"
	Manual  string // "irqnuma manual"
	Short   string // the one line after the name in NAME
	// Synopsis lines, each a command line form.
	Synopsis []string
	// Description is plain text: paragraphs separated by blank lines,
	// lines indented by two spaces or more kept as they are.
	Description string
	Options     []Option
	// Sections come after OPTIONS, in order (EXIT STATUS, EXAMPLES...).
	Sections []Section
	SeeAlso  []string // "irqnuma(1)"
}

// Option is one command-line option.
type Option struct {
	Flags string // "-o, --output format"
	Usage string
}

// Section is a titled body of plain text, laid out as Description is,
// then its items, if any.
type Section struct {
	Title string
	Body  string
	Items []Item
}

// Item is one entry of a section's tagged list (man(7)'s .TP): a tag
// in bold, then plain text laid out as Description is, indented.
type Item struct {
	Tag  string
	Body string
}

// Write writes p as roff.
func Write(w io.Writer, p Page) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s %s %s %s %s\n", quote(strings.ToUpper(p.Name)), quote(p.Section), quote(p.Date), quote(p.Source), quote(p.Manual))
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", escape(p.Name), escape(p.Short))
	if len(p.Synopsis) > 0 {
		b.WriteString(".SH SYNOPSIS\n")
		for i, s := range p.Synopsis {
			if i > 0 {
				b.WriteString(".br\n")
			}
			b.WriteString(line(s))
		}
	}
	if p.Description != "" {
		b.WriteString(".SH DESCRIPTION\n")
		text(&b, p.Description)
	}
	if len(p.Options) > 0 {
		b.WriteString(".SH OPTIONS\n")
		for _, o := range p.Options {
			b.WriteString(".TP\n")
			fmt.Fprintf(&b, "\\fB%s\\fR\n", escape(o.Flags))
			b.WriteString(line(o.Usage))
		}
	}
	for _, s := range p.Sections {
		fmt.Fprintf(&b, ".SH %s\n", quote(strings.ToUpper(s.Title)))
		text(&b, s.Body)
		for _, it := range s.Items {
			b.WriteString(".TP\n")
			fmt.Fprintf(&b, "\\fB%s\\fR\n", escape(it.Tag))
			item(&b, it.Body)
		}
	}
	if len(p.SeeAlso) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		b.WriteString(line(strings.Join(p.SeeAlso, ", ")))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// text lays out plain text: blank lines start paragraphs; a run of lines
// indented by two spaces or more is kept as it is (examples, tables).
func text(b *strings.Builder, s string) {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	literal := false
	for i, l := range lines {
		indented := strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != ""
		switch {
		case strings.TrimSpace(l) == "":
			if literal {
				b.WriteString(".fi\n")
				literal = false
			}
			if i > 0 {
				b.WriteString(".PP\n")
			}
			continue
		case indented && !literal:
			b.WriteString(".nf\n")
			literal = true
		case !indented && literal:
			b.WriteString(".fi\n")
			literal = false
		}
		b.WriteString(line(l))
	}
	if literal {
		b.WriteString(".fi\n")
	}
}

// item lays out an item's body: each line starts a line of the page
// (.br), and a blank line a paragraph that stays inside the item's
// indent (.IP, where .PP would end the list).
func item(b *strings.Builder, s string) {
	for i, para := range strings.Split(strings.Trim(s, "\n"), "\n\n") {
		if i > 0 {
			b.WriteString(".IP\n")
		}
		for j, l := range strings.Split(para, "\n") {
			if j > 0 {
				b.WriteString(".br\n")
			}
			b.WriteString(line(l))
		}
	}
}

// line is one line of text, escaped, with a zero-width character before
// a leading dot or apostrophe, which roff would take for a request.
func line(s string) string {
	e := escape(s)
	if strings.HasPrefix(e, ".") || strings.HasPrefix(e, "'") {
		e = "\\&" + e
	}
	return e + "\n"
}

// escape makes text literal in roff: backslashes and minus signs.
func escape(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\e")
	return strings.ReplaceAll(s, "-", "\\-")
}

// quote is an argument of a macro, in double quotes.
func quote(s string) string { return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"` }
