package irqbalance

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// EnvFiles are the environment files irqbalance's service units read, in
// the order systemd reads them (later ones override earlier ones), as
// rooted paths: upstream's defaults, Debian/Ubuntu, Fedora/RHEL/SUSE.
func EnvFiles() []string {
	out := make([]string, len(irqbalanceEnvFiles))
	for i, f := range irqbalanceEnvFiles {
		out[i] = "/" + f
	}
	return out
}

// DebianEnvFile is the environment file of Debian's (and Ubuntu's) unit
// and init script (EnvironmentFile=-/etc/default/irqbalance), which the
// package ships with IRQBALANCE_ARGS commented out.
const DebianEnvFile = "/etc/default/irqbalance"

// Config is irqbalance's configuration as its service's environment
// files give it: what a daemon started now would ban.
type Config struct {
	// File is the last of the files present, the one whose assignments
	// win; "" when there is none.
	File string
	// Files are those present, in the order they are read, rooted.
	Files []string
	// Args is IRQBALANCE_ARGS as the files leave it, split on white space.
	Args []string
	// BannedIRQs are the --banirq IRQs of Args, ascending.
	BannedIRQs []int
}

// ReadConfig reads the environment files under root. A file that is not
// KEY=VALUE lines, or arguments irqbalance would refuse, is an error
// naming it.
func ReadConfig(fsys kfile.FS) (*Config, error) {
	env, files, err := readEnvFiles(fsys)
	if err != nil {
		return nil, err
	}
	c := &Config{Args: strings.Fields(env[envArgs])}
	for _, f := range files {
		c.Files = append(c.Files, "/"+f)
	}
	if len(files) > 0 {
		c.File = c.Files[len(c.Files)-1]
	}
	b := &Settings{Args: c.Args}
	if err := b.parseArgs(); err != nil {
		return nil, fmt.Errorf("%s in %s: %w", envArgs, irqbOr(strings.Join(c.Files, ", "), "none"), err)
	}
	c.BannedIRQs = b.BannedIRQs
	return c, nil
}

// AddedComment is the line AddBannedIRQs writes above an IRQBALANCE_ARGS
// it adds to a file.
const AddedComment = "# added by irqnuma irq pin, to keep irqbalance off the IRQs it placed; irqnuma irq restore takes it out"

// AddBannedIRQs returns the text of an environment file with
// --banirq=N added to its IRQBALANCE_ARGS for each of irqs it does not
// ban yet, and the IRQs added, ascending; data unchanged and none added
// when it bans them all. The last assignment of IRQBALANCE_ARGS, the one
// that counts, is changed in place, its quotes kept (an unquoted value
// is put in double quotes, which a shell sourcing the file needs); every
// other byte stays. A file without one gets one at its end, after
// AddedComment, holding inherited (IRQBALANCE_ARGS as the files read
// before it set it) and the bans. A file that is not KEY=VALUE lines, or
// an unquoted value a shell would read otherwise inside double quotes,
// is an error.
func AddBannedIRQs(data []byte, inherited []string, irqs []int) ([]byte, []int, error) {
	if _, err := parseEnvFile(data); err != nil {
		return nil, nil, err
	}
	lines := strings.Split(string(data), "\n")
	at := -1
	for i, line := range lines {
		if k, _, ok := envAssignment(line); ok && k == envArgs {
			at = i
		}
	}
	args := inherited
	var a assignment
	if at >= 0 {
		a = splitAssignment(lines[at])
		args = strings.Fields(a.value)
	}
	add, err := notBanned(args, irqs)
	if err != nil || len(add) == 0 {
		return data, nil, err
	}
	var words []string
	for _, n := range add {
		words = append(words, "--banirq="+strconv.Itoa(n))
	}
	if at >= 0 {
		v := insertOptions(a.value, strings.Join(words, " "))
		q := a.quote
		if q == 0 {
			if err := shellSafe(a.value); err != nil {
				return nil, nil, fmt.Errorf("line %d: %s: %w", at+1, envArgs, err)
			}
			q = '"'
		}
		lines[at] = a.prefix + envArgs + "=" + string(q) + v + string(q) + a.suffix
		return []byte(strings.Join(lines, "\n")), add, nil
	}
	v := insertOptions(strings.Join(inherited, " "), strings.Join(words, " "))
	if err := shellSafe(v); err != nil {
		return nil, nil, fmt.Errorf("%s inherited from the files before: %w", envArgs, err)
	}
	out := append([]byte(nil), data...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, AddedComment+"\n"+envArgs+"=\""+v+"\"\n"...)
	return out, add, nil
}

// ArgsWithBans is what AddBannedIRQs makes of IRQBALANCE_ARGS: args with
// --banirq=N for each of irqs (ascending, not banned yet) put before a
// "--", else at the end.
func ArgsWithBans(args []string, irqs []int) ([]string, error) {
	add, err := notBanned(args, irqs)
	if err != nil || len(add) == 0 {
		return args, err
	}
	words := make([]string, len(add))
	for i, n := range add {
		words[i] = "--banirq=" + strconv.Itoa(n)
	}
	return strings.Fields(insertOptions(strings.Join(args, " "), strings.Join(words, " "))), nil
}

// insertOptions puts opts into the arguments args: before a "--", after
// which irqbalance's getopt reads no option, else at the end. Words are
// split where strings.Fields splits them.
func insertOptions(args, opts string) string {
	i := 0
	for _, w := range strings.Fields(args) {
		i += strings.Index(args[i:], w)
		if w == "--" {
			return args[:i] + opts + " " + args[i:]
		}
		i += len(w)
	}
	if strings.TrimSpace(args) == "" {
		return opts
	}
	return args + " " + opts
}

// notBanned returns the IRQs of irqs that args do not ban, ascending.
func notBanned(args []string, irqs []int) ([]int, error) {
	b := &Settings{Args: args}
	if err := b.parseArgs(); err != nil {
		return nil, fmt.Errorf("%s: %w", envArgs, err)
	}
	var add []int
	for _, n := range irqs {
		if n < 0 {
			return nil, fmt.Errorf("IRQ %d: not an IRQ number", n)
		}
		if _, ok := slices.BinarySearch(b.BannedIRQs, n); !ok {
			add = append(add, n)
		}
	}
	slices.Sort(add)
	return slices.Compact(add), nil
}

// shellSafe says why a value cannot be put in double quotes unchanged
// for a shell (the init script sources /etc/default/irqbalance).
func shellSafe(v string) error {
	if strings.ContainsAny(v, "\"\\$`") {
		return errors.New("an unquoted value holding \", \\, $ or `: add the --banirq options by hand")
	}
	return nil
}

// assignment is one KEY=VALUE line taken apart, so it can be put back
// together with another value: what comes before the key (blanks, an
// "export "), the value without its quotes, the quote, and the blanks
// after it.
type assignment struct {
	prefix, value, suffix string
	quote                 byte
}

// envAssignment reports whether line is an assignment as parseEnvFile
// reads one, and its key and unquoted value.
func envAssignment(line string) (key, value string, ok bool) {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' || t[0] == ';' {
		return "", "", false
	}
	t = strings.TrimPrefix(t, "export ")
	k, _, ok := strings.Cut(t, "=")
	if !ok {
		return "", "", false
	}
	a := splitAssignment(line)
	return strings.TrimSpace(k), a.value, true
}

// splitAssignment takes apart a line envAssignment accepted.
func splitAssignment(line string) assignment {
	body := strings.TrimRight(line, " \t\r\v\f")
	a := assignment{suffix: line[len(body):]}
	lead := len(body) - len(strings.TrimLeft(body, " \t\r\v\f"))
	rest := body[lead:]
	if strings.HasPrefix(rest, "export ") {
		lead += len("export ")
		rest = rest[len("export "):]
	}
	a.prefix = body[:lead]
	_, v, _ := strings.Cut(rest, "=")
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		a.quote, v = v[0], v[1:len(v)-1]
	}
	a.value = v
	return a
}
