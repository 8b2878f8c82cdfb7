// Package irqbalance tells what the irqbalance daemon on a host will
// leave alone and what it will move: it finds the daemon's processes,
// reads their command line and environment (or the service's environment
// files when it does not run), asks a running daemon on the live host
// what it bans now over its Unix socket (socket.go), and answers whether
// an IRQ or a set of CPUs is banned, and what to add to its
// configuration to ban more (envfile.go). It only reads and asks: the
// tuner sends the bans and writes the files.
package irqbalance

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Environment variables irqbalance reads for the CPUs it must not place
// IRQs on (cputree.c setup_banned_cpus). The mask form wins when both are
// set; with neither, irqbalance bans the isolated and nohz_full CPUs.
const (
	EnvBannedCPUs    = "IRQBALANCE_BANNED_CPUS"    // a CPU mask, "00ff0000,00000000"
	EnvBannedCPUList = "IRQBALANCE_BANNED_CPULIST" // a CPU list, "16-31"
	envArgs          = "IRQBALANCE_ARGS"           // extra arguments the service unit appends
)

// irqbalanceEnvFiles are the environment files irqbalance's service units
// read, in the order systemd reads them (later ones override earlier
// ones): upstream's defaults, Debian/Ubuntu, Fedora/RHEL/SUSE.
var irqbalanceEnvFiles = []string{
	"usr/lib/irqbalance/defaults.env",
	"etc/default/irqbalance",
	"etc/sysconfig/irqbalance",
}

// Settings is what the irqbalance daemon on a host will leave alone, as
// far as its command line and environment say. irqbalance rewrites the
// affinity of every IRQ it does not ban, so a hand-placed NIC IRQ stays
// where it is only when irqbalance is not running or bans it.
type Settings struct {
	// Running is whether an irqbalance process runs; unknown when
	// root/proc holds no process folders (a capture of /proc/irq and
	// /sys only).
	Running unknown.Value[bool]
	PIDs    []int    // every irqbalance process, ascending
	Args    []string // command line of the first one, argv[0] excluded; from IRQBALANCE_ARGS when not running

	// BannedIRQs are the --banirq (-i) IRQs, ascending, deduplicated.
	BannedIRQs []int
	// BannedModules are the --banmod (-m) names. irqbalance bans an IRQ
	// when one of them is a substring of its device's driver name or of
	// the IRQ's name (classify.c check_for_irq_ban).
	BannedModules []string
	// BannedCPUs are the CPUs irqbalance will not put IRQs on. It moves
	// IRQs it balances off them: a banned CPU repels, it does not protect.
	BannedCPUs cpuset.Set
	// BannedCPUsFrom says where BannedCPUs comes from: EnvBannedCPUs,
	// EnvBannedCPUList, or "isolated and nohz_full CPUs" (irqbalance's
	// default when neither variable is set).
	BannedCPUsFrom string
	// PolicyScript is the --policyscript (-l) path; a script may ban more
	// IRQs, which irqnuma cannot know without running it.
	PolicyScript string
	Oneshot      bool // --oneshot: balances once, then exits

	// Source says where these settings were read, e.g.
	// "/proc/812/cmdline, /proc/812/environ" or "/etc/default/irqbalance".
	Source string
	// ConfigFile is the environment file the service reads (the last of
	// those present under the root), or "" when there is none.
	ConfigFile string
	// ConfigArgs is IRQBALANCE_ARGS from the environment files, split on
	// white space as systemd splits an unquoted $VAR.
	ConfigArgs []string
	// Runtime is what the first daemon said over its socket (`setup`):
	// the IRQs it bans now, the --banirq ones and those a client banned
	// at run time, and the CPUs it bans. Asked on the live root only:
	// unknown, with why, on a tree (not captured), when irqbalance does
	// not run (not applicable), or when the socket refused (not
	// permitted), failed or answered garbled (malformed).
	Runtime unknown.Value[Runtime]
	// Notes says what could not be known, one line each.
	Notes []string
}

// ReadOptions says how Read reaches a running daemon.
type ReadOptions struct {
	// Socket asks the daemon `setup`; nil: its own socket on the live
	// root, and none on a tree. A test sets one naming its own daemon's
	// address, which is asked on a tree too.
	Socket *Socket
	// KernelIsolated, when set, is the union of cpu/isolated and
	// cpu/nohz_full as the caller read them (topology.Read; a file the
	// tree lacks adds nothing), which irqbalance bans when no variable
	// names its CPUs: they are not read again. nil: Read reads them.
	KernelIsolated *cpuset.Set
}

// findRunning sets PIDs and Running from the process folders; Running
// is unknown when the root has none.
func (b *Settings) findRunning(fsys kfile.FS) error {
	pids, processes, err := proc.FindByCommAny(fsys, "irqbalance")
	if err != nil && !kfile.IsNotExist(err) {
		return err
	}
	if !processes {
		b.Notes = append(b.Notes, "no process folders under /proc: whether irqbalance runs is unknown")
		b.Running = unknown.NotAs[bool](unknown.KindNotCaptured, "no process folders under /proc")
		return nil
	}
	b.PIDs, b.Running = pids, unknown.Of(len(pids) > 0)
	return nil
}

// Read finds irqbalance processes under root/proc and reads
// what they ban: the command line (--banirq, --banmod, --policyscript),
// and IRQBALANCE_BANNED_CPUS / IRQBALANCE_BANNED_CPULIST from the
// process's environment, or from the service's environment file when the
// environment cannot be read. When no irqbalance runs, it reports the
// configuration the environment files would give it. On the live root
// it asks a running daemon what it bans now (Runtime); what the socket
// says, or why it said nothing, never fails the read. A setting that is
// not in its format is an error naming the file.
func Read(fsys kfile.FS) (*Settings, error) { return ReadWith(fsys, ReadOptions{}) }

// ReadWith is Read reaching the daemon as opts says.
func ReadWith(fsys kfile.FS, opts ReadOptions) (*Settings, error) {
	root := fsys.Root()
	b := &Settings{}
	env, files, err := readEnvFiles(fsys)
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		b.ConfigFile = "/" + files[len(files)-1]
	}
	b.ConfigArgs = strings.Fields(env[envArgs])

	if err := b.findRunning(fsys); err != nil {
		return nil, err
	}
	pids := b.PIDs
	var sources []string
	if len(pids) > 0 {
		pid := pids[0]
		if len(pids) > 1 {
			b.Notes = append(b.Notes, fmt.Sprintf("%d irqbalance processes (%s); settings read from PID %d", len(pids), irqbPIDs(pids), pid))
		}
		base := filepath.Join(root, "proc", strconv.Itoa(pid))
		argv, err := readNulList(fsys, base+"/cmdline")
		if err != nil {
			return nil, fmt.Errorf("irqbalance PID %d: %w", pid, err)
		}
		if len(argv) > 0 {
			b.Args = argv[1:]
		}
		sources = append(sources, fmt.Sprintf("/proc/%d/cmdline", pid))
		penv, err := readNulList(fsys, base+"/environ")
		switch {
		case err == nil:
			env = map[string]string{}
			for _, kv := range penv {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
			sources = append(sources, fmt.Sprintf("/proc/%d/environ", pid))
		case kfile.IsNotExist(err) || errors.Is(err, os.ErrPermission):
			if len(files) > 0 {
				sources = append(sources, "/"+strings.Join(files, ", /"))
			}
			b.Notes = append(b.Notes, fmt.Sprintf("/proc/%d/environ unreadable: banned CPUs taken from %s", pid, irqbOr(b.ConfigFile, "irqbalance's defaults")))
		default:
			return nil, fmt.Errorf("irqbalance PID %d: %w", pid, err)
		}
	} else {
		b.Args = b.ConfigArgs
		for _, f := range files {
			sources = append(sources, "/"+f)
		}
	}
	b.Source = strings.Join(sources, ", ")
	if err := b.parseArgs(); err != nil {
		return nil, fmt.Errorf("irqbalance arguments (%s): %w", irqbOr(b.Source, "none"), err)
	}
	if err := b.bannedCPUs(fsys, env, opts.KernelIsolated); err != nil {
		return nil, fmt.Errorf("irqbalance environment (%s): %w", irqbOr(b.Source, "none"), err)
	}
	b.readRuntime(fsys, opts.Socket)
	return b, nil
}

// parseArgs reads Args the way irqbalance's getopt_long does
// ("odfjVi:p:s:c:l:m:t:e:"): short options may be grouped or carry their
// value attached, long options take "=value" or the next word and may be
// abbreviated to any unambiguous prefix, "--" ends the options, other
// words are skipped.
func (b *Settings) parseArgs() error {
	b.BannedIRQs, b.BannedModules, b.PolicyScript, b.Oneshot = nil, nil, "", false
	type opt struct {
		long  string
		short byte
		arg   bool
	}
	opts := []opt{
		{"oneshot", 'o', false}, {"debug", 'd', false}, {"foreground", 'f', false},
		{"powerthresh", 'p', true}, {"banirq", 'i', true}, {"deepestcache", 'c', true},
		{"policyscript", 'l', true}, {"pid", 's', true}, {"journal", 'j', false},
		{"banmod", 'm', true}, {"interval", 't', true}, {"version", 'V', false},
		{"migrateval", 'e', true},
	}
	apply := func(short byte, val string) error {
		switch short {
		case 'o':
			b.Oneshot = true
		case 'i':
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fmt.Errorf("--banirq %q: not an IRQ number", val)
			}
			b.BannedIRQs = append(b.BannedIRQs, n)
		case 'm':
			if val == "" {
				return errors.New("--banmod: empty module name")
			}
			b.BannedModules = append(b.BannedModules, val)
		case 'l':
			b.PolicyScript = val
		}
		return nil
	}
	args := b.Args
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			var match []opt
			for _, o := range opts {
				if o.long == name {
					match = []opt{o}
					break
				}
				if strings.HasPrefix(o.long, name) {
					match = append(match, o)
				}
			}
			if len(match) != 1 {
				return fmt.Errorf("%q: unknown or ambiguous option", a)
			}
			o := match[0]
			if o.arg && !hasVal {
				if i+1 >= len(args) {
					return fmt.Errorf("%q: missing value", a)
				}
				i++
				val = args[i]
			} else if !o.arg && hasVal {
				return fmt.Errorf("%q: takes no value", a)
			}
			if err := apply(o.short, val); err != nil {
				return err
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				k := slices.IndexFunc(opts, func(o opt) bool { return o.short == a[j] })
				if k < 0 {
					return fmt.Errorf("%q: unknown option -%c", a, a[j])
				}
				o := opts[k]
				if !o.arg {
					if err := apply(o.short, ""); err != nil {
						return err
					}
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						return fmt.Errorf("%q: missing value", a)
					}
					i++
					val = args[i]
				}
				if err := apply(o.short, val); err != nil {
					return err
				}
				break
			}
		}
	}
	slices.Sort(b.BannedIRQs)
	b.BannedIRQs = slices.Compact(b.BannedIRQs)
	return nil
}

// bannedCPUs applies setup_banned_cpus: the mask variable when non-empty,
// else the list variable when non-empty, else isolated and nohz_full.
// "-" in the list variable (what OpenShift writes) bans nothing.
//
// isolated, when not nil, is isolated and nohz_full as read already.
func (b *Settings) bannedCPUs(fsys kfile.FS, env map[string]string, isolated *cpuset.Set) error {
	root := fsys.Root()
	if v := strings.TrimSpace(env[EnvBannedCPUs]); v != "" {
		set, err := cpuset.ParseMask(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvBannedCPUs, err)
		}
		b.BannedCPUs, b.BannedCPUsFrom = set, EnvBannedCPUs
		return nil
	}
	if v := strings.TrimSpace(env[EnvBannedCPUList]); v != "" {
		b.BannedCPUsFrom = EnvBannedCPUList
		if v == "-" {
			return nil
		}
		set, err := cpuset.ParseList(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvBannedCPUList, err)
		}
		b.BannedCPUs = set
		return nil
	}
	b.BannedCPUsFrom = "isolated and nohz_full CPUs"
	if isolated != nil {
		b.BannedCPUs = *isolated
		return nil
	}
	for _, f := range []string{"isolated", "nohz_full"} {
		p := filepath.Join(root, "sys/devices/system/cpu", f)
		s, err := fsys.String(p)
		if err != nil {
			if kfile.IsNotExist(err) {
				continue
			}
			return err
		}
		s = strings.TrimSpace(s)
		if s == "(null)" {
			continue
		}
		set, err := cpuset.ParseList(s)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		b.BannedCPUs = b.BannedCPUs.Union(set)
	}
	return nil
}

// IRQBanned reports whether irqbalance leaves an IRQ alone, and why:
// "--banirq=284", "banned at run time over its socket" when the daemon
// said so (Runtime), or "--banmod=mlx5" when that module name is inside
// the driver name or the IRQ name, as irqbalance matches it. A nil
// receiver (no irqbalance information) bans nothing.
func (b *Settings) IRQBanned(irq int, driver, name string) (bool, string) {
	if b == nil {
		return false, ""
	}
	_, cmdline := slices.BinarySearch(b.BannedIRQs, irq)
	rt, asked := b.Runtime.Get()
	switch {
	case asked && rt.Banned(irq) && !cmdline:
		return true, "banned at run time over its socket"
	case cmdline && (!asked || rt.Banned(irq)):
		// Once asked, the daemon's list is the truth: a client may
		// have replaced it, --banirq IRQs and all.
		return true, fmt.Sprintf("--banirq=%d", irq)
	}
	for _, m := range b.BannedModules {
		if (driver != "" && strings.Contains(driver, m)) || (name != "" && strings.Contains(name, m)) {
			return true, "--banmod=" + m
		}
	}
	return false, ""
}

// CPUsBanned reports whether every CPU of a non-empty set is banned:
// irqbalance will move the IRQs it balances off all of them.
func (b *Settings) CPUsBanned(cpus cpuset.Set) bool {
	if b == nil {
		return false
	}
	banned, _ := b.BannedCPUsNow()
	return !cpus.IsEmpty() && cpus.IsSubsetOf(banned)
}

// BannedCPUsNow returns the CPUs irqbalance bans and where that comes
// from: what the daemon said over its socket when it was asked (a client
// may have set them at run time), else BannedCPUs and BannedCPUsFrom.
func (b *Settings) BannedCPUsNow() (cpuset.Set, string) {
	if rt, ok := b.Runtime.Get(); ok {
		return rt.BannedCPUs, "the daemon, over its socket"
	}
	return b.BannedCPUs, b.BannedCPUsFrom
}

// BanConfig returns the lines of an environment file that keep
// irqbalance away from irqs (by --banirq) and off cpus (by
// IRQBALANCE_BANNED_CPULIST), keeping what is banned already: the
// existing IRQBALANCE_ARGS and the CPUs banned now (a list set here
// replaces irqbalance's isolated/nohz_full default, so those are kept
// too). The first line is a comment naming the file and the restart.
func (b *Settings) BanConfig(irqs []int, cpus cpuset.Set) []string {
	file := "/etc/default/irqbalance (Debian, Ubuntu) or /etc/sysconfig/irqbalance (RHEL, Fedora, SUSE)"
	var cur *Settings
	if b != nil {
		cur = b
		if b.ConfigFile != "" {
			file = b.ConfigFile
		}
	}
	lines := []string{fmt.Sprintf("# in %s, then: systemctl restart irqbalance", file)}

	var args []string
	var have []int
	if cur != nil {
		args = slices.Clone(cur.ConfigArgs)
		have = cur.BannedIRQs
	}
	add := slices.Clone(irqs)
	slices.Sort(add)
	add = slices.Compact(add)
	added := false
	for _, n := range add {
		if _, ok := slices.BinarySearch(have, n); ok {
			continue
		}
		args = append(args, fmt.Sprintf("--banirq=%d", n))
		added = true
	}
	if added || len(args) > 0 {
		lines = append(lines, fmt.Sprintf("%s=%q", envArgs, strings.Join(args, " ")))
	}
	if !cpus.IsEmpty() {
		all := cpus
		if cur != nil {
			all = all.Union(cur.BannedCPUs)
		}
		if cur != nil && cur.BannedCPUsFrom == EnvBannedCPUs {
			lines = append(lines, fmt.Sprintf("# and remove %s: it overrides %s", EnvBannedCPUs, EnvBannedCPUList))
		}
		lines = append(lines, fmt.Sprintf("%s=%s", EnvBannedCPUList, all.List()))
	}
	return lines
}

// readEnvFiles reads irqbalance's environment files under root as systemd
// reads an EnvironmentFile: KEY=VALUE lines, "#" and ";" comments, values
// optionally in single or double quotes. It returns the merged variables
// and the files found, relative to root.
func readEnvFiles(fsys kfile.FS) (map[string]string, []string, error) {
	root := fsys.Root()
	env := map[string]string{}
	var found []string
	for _, rel := range irqbalanceEnvFiles {
		p := filepath.Join(root, rel)
		data, err := fsys.ReadLimit(p, 1<<20)
		if err != nil {
			if kfile.IsNotExist(err) || errors.Is(err, os.ErrPermission) {
				continue
			}
			return nil, nil, err
		}
		found = append(found, rel)
		vars, err := parseEnvFile(data)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", p, err)
		}
		for k, v := range vars {
			env[k] = v
		}
	}
	return env, found, nil
}

// parseEnvFile parses the text of a systemd EnvironmentFile (or a shell
// file of plain assignments such as /etc/default/irqbalance): KEY=VALUE
// lines, blank lines and "#"/";" comments, an optional "export " prefix,
// values in matching single or double quotes unquoted. A line that is not
// an assignment is an error.
func parseEnvFile(data []byte) (map[string]string, error) {
	vars := map[string]string{}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return nil, fmt.Errorf("line %d: %q is not KEY=VALUE", n+1, irqbClip(line))
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			if v[len(v)-1] != v[0] {
				return nil, fmt.Errorf("line %d: %s: unterminated quote", n+1, k)
			}
			v = v[1 : len(v)-1]
		}
		vars[k] = v
	}
	return vars, nil
}

// readNulList reads a NUL-separated /proc file (cmdline, environ).
func readNulList(fsys kfile.FS, path string) ([]string, error) {
	data, err := fsys.ReadLimit(path, 4<<20)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		return nil, nil
	}
	return strings.Split(string(data), "\x00"), nil
}

func irqbPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}

func irqbOr(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func irqbClip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
