package tune

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// This file is the settings a tune writes beyond IRQ affinity and XPS:
// a rx queue's rps_cpus, a NIC's NAPI defaults in sysfs
// (napi_defer_hard_irqs, gro_flush_timeout) and a CPU's cpufreq
// governor. Each is one sysfs attribute, saved before the first write
// (pinState.Settings), written with one write(2), read back, and put
// back by restore byte for byte.

// SettingKind is which attribute a setting step writes.
type SettingKind string

// The settings a tune writes, by the file each is.
const (
	// SettingKindRPS is /sys/class/net/IF/queues/rx-N/rps_cpus: a CPU
	// mask (net-sysfs.c show_rps_map prints it with %*pb).
	SettingKindRPS SettingKind = "rps"
	// SettingKindDeferHardIRQs is /sys/class/net/IF/napi_defer_hard_irqs:
	// an unsigned count the kernel takes up to S32_MAX
	// (net-sysfs.c change_napi_defer_hard_irqs).
	SettingKindDeferHardIRQs SettingKind = "napi-defer-hard-irqs"
	// SettingKindGROFlushTimeout is /sys/class/net/IF/gro_flush_timeout:
	// nanoseconds, an unsigned long (net-sysfs.c change_gro_flush_timeout).
	SettingKindGROFlushTimeout SettingKind = "gro-flush-timeout"
	// SettingKindGovernor is
	// /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor: a governor
	// name, at most CPUFREQ_NAME_LEN-1 (15) bytes (cpufreq.c
	// store_scaling_governor).
	SettingKindGovernor SettingKind = "governor"
)

// maxDeferHardIRQs is the largest napi_defer_hard_irqs the kernel takes.
const maxDeferHardIRQs = 1<<31 - 1

// settingTarget is what a setting's path names.
type settingTarget struct {
	Path  string
	Kind  SettingKind
	NIC   string // "" for a governor
	Queue int    // rx queue of an rps setting; -1 otherwise
	CPU   int    // CPU of a governor; -1 otherwise
}

// errSettingPath is wrapped by the error for a path no setting is.
var errSettingPath = errors.New("not a setting irqnuma writes")

// parseSetting accepts exactly the setting paths a tune writes, rooted
// and clean: /sys/class/net/IF/queues/rx-N/rps_cpus,
// /sys/class/net/IF/{napi_defer_hard_irqs,gro_flush_timeout} and
// /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor.
func parseSetting(p string) (settingTarget, error) {
	bad := func(why string) (settingTarget, error) {
		return settingTarget{}, fmt.Errorf("%w: %q: %s", errSettingPath, p, why)
	}
	if p == "" || p[0] != '/' || path.Clean(p) != p {
		return bad("want a clean absolute path")
	}
	parts := strings.Split(p[1:], "/")
	t := settingTarget{Path: p, Queue: -1, CPU: -1}
	switch {
	case len(parts) == 5 && parts[0] == "sys" && parts[1] == "class" && parts[2] == "net":
		if !irq.ValidIfName(parts[3]) {
			return bad("not an interface name")
		}
		t.NIC = parts[3]
		switch parts[4] {
		case "napi_defer_hard_irqs":
			t.Kind = SettingKindDeferHardIRQs
		case "gro_flush_timeout":
			t.Kind = SettingKindGROFlushTimeout
		default:
			return bad("only napi_defer_hard_irqs and gro_flush_timeout are written under a NIC")
		}
		return t, nil
	case len(parts) == 7 && parts[0] == "sys" && parts[1] == "class" && parts[2] == "net" && parts[4] == "queues":
		if !irq.ValidIfName(parts[3]) {
			return bad("not an interface name")
		}
		q, ok := strings.CutPrefix(parts[5], "rx-")
		n, isNum := irq.Decimal(q)
		if !ok || !isNum || parts[6] != "rps_cpus" {
			return bad("only a rx queue's rps_cpus is written as a setting")
		}
		t.Kind, t.NIC, t.Queue = SettingKindRPS, parts[3], n
		return t, nil
	case len(parts) == 7 && strings.Join(parts[:4], "/") == "sys/devices/system/cpu" && parts[5] == "cpufreq" && parts[6] == "scaling_governor":
		c, ok := strings.CutPrefix(parts[4], "cpu")
		n, isNum := irq.Decimal(c)
		if !ok || !isNum {
			return bad("not a CPU folder")
		}
		t.Kind, t.CPU = SettingKindGovernor, n
		return t, nil
	}
	return bad("only rps_cpus, a NIC's napi_defer_hard_irqs and gro_flush_timeout, and a CPU's scaling_governor are settings")
}

// RPSPath returns "/sys/class/net/<nic>/queues/rx-<q>/rps_cpus".
func RPSPath(nic string, queue int) string {
	return "/sys/class/net/" + nic + "/queues/rx-" + strconv.Itoa(queue) + "/rps_cpus"
}

// GovernorPath returns
// "/sys/devices/system/cpu/cpu<n>/cpufreq/scaling_governor".
func GovernorPath(cpu int) string {
	return "/sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/cpufreq/scaling_governor"
}

// NICSettingPath returns "/sys/class/net/<nic>/<file>".
func NICSettingPath(nic, file string) string { return "/sys/class/net/" + nic + "/" + file }

// checkValue says why v cannot be written to t's file, nil when it can:
// it parses in the file's form and, for a mask, names only CPUs the host
// can have.
func (t settingTarget) checkValue(v string, possible cpuset.Set, hasPossible bool) error {
	bad := func(why string) error { return fmt.Errorf("%s: value %q: %s", t.name(), clip(v), why) }
	switch t.Kind {
	case SettingKindRPS:
		set, err := cpuset.ParseMask(v)
		if err != nil {
			return bad(err.Error())
		}
		if extra := set.Difference(possible); hasPossible && !extra.IsEmpty() {
			return bad(fmt.Sprintf("CPUs %s do not exist on this host (possible: %s)", clip(extra.String()), possible))
		}
	case SettingKindDeferHardIRQs:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > maxDeferHardIRQs {
			return bad("want an integer from 0 to 2147483647")
		}
	case SettingKindGROFlushTimeout:
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return bad("want a non-negative integer (nanoseconds)")
		}
	case SettingKindGovernor:
		if !governorName(v) {
			return bad("want a governor name: 1 to 15 bytes of a-z, 0-9, _ and -")
		}
	}
	return nil
}

// governorName reports whether s can be a cpufreq governor's name.
func governorName(s string) bool {
	if s == "" || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// name says which setting t is, as rows do: "eth0 rx-3 rps_cpus",
// "CPU 4 scaling_governor", "eth0 gro_flush_timeout".
func (t settingTarget) name() string {
	switch t.Kind {
	case SettingKindRPS:
		return fmt.Sprintf("%s rx-%d rps_cpus", t.NIC, t.Queue)
	case SettingKindGovernor:
		return fmt.Sprintf("CPU %d scaling_governor", t.CPU)
	}
	return t.NIC + " " + path.Base(t.Path)
}

// canonical is v as the kernel prints it back, for comparing a read-back
// with what was written: a mask as a set, a number without leading
// zeros, a name as it is.
func (t settingTarget) canonical(v string) string {
	switch t.Kind {
	case SettingKindRPS:
		if s, err := cpuset.ParseMask(v); err == nil {
			return s.String()
		}
	case SettingKindDeferHardIRQs, SettingKindGROFlushTimeout:
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return strconv.FormatUint(n, 10)
		}
	}
	return v
}

// SettingChange is one setting a tune writes: the file, the value, and
// the findings it answers.
type SettingChange struct {
	Path string
	To   string
	// For are the audit's check ids the change answers.
	For []string
}

// SettingRow is what became of one setting: planned, changed, failed,
// rolled back or restored, with what the file says after.
type SettingRow struct {
	Kind   SettingKind `json:"kind"`
	NIC    string      `json:"nic"`
	File   string      `json:"file"`
	From   string      `json:"from"`
	To     string      `json:"to"`
	For    []string    `json:"for"`
	Result Result      `json:"result"`
	Error  string      `json:"error"`
	// Now is the file's value read back after the run; unknown in a dry
	// run or when the read failed, with why.
	Now unknown.Value[string] `json:"now"`
	err error
}

// MarshalJSON writes Now's reason beside it when it is unknown.
func (r SettingRow) MarshalJSON() ([]byte, error) {
	type plain SettingRow
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *SettingRow) UnmarshalJSON(b []byte) error {
	type plain SettingRow
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// Name says which setting the row is.
func (r SettingRow) Name() string {
	t, err := parseSetting(r.File)
	if err != nil {
		return r.File
	}
	return t.name()
}

// Err is the error of a failed step or rollback, nil otherwise.
func (r SettingRow) Err() error { return r.err }

func (r *SettingRow) fail(err error) { r.err, r.Error = err, err.Error() }

// savedSetting is one setting file and its bytes before, as read: restore
// writes them back exactly (a host tree's copy without its newline
// stays without it).
type savedSetting struct {
	Path  string `json:"path"`
	Value string `json:"value"` // without the final newline
	// Raw is the file's bytes when they are not Value and a newline.
	Raw *string `json:"raw,omitempty"`
}

// data is the bytes restore writes.
func (s savedSetting) data() []byte {
	if s.Raw != nil {
		return []byte(*s.Raw)
	}
	return []byte(s.Value + "\n")
}

// readSetting reads a setting's file under fsys: its bytes and its value.
func readSetting(fsys kfile.FS, p string) ([]byte, string, error) {
	if _, err := parseSetting(p); err != nil {
		return nil, "", err
	}
	return irq.ReadAttr(fsys, p)
}

// saveSettings reads the value of each setting before it is changed, and
// refuses one restore could not write back.
func saveSettings(fsys kfile.FS, changes []SettingChange) ([]savedSetting, []SettingRow, error) {
	possible, hasPossible, err := possibleCPUs(fsys)
	if err != nil {
		return nil, nil, fmt.Errorf("save current value: %w", err)
	}
	saved := make([]savedSetting, 0, len(changes))
	rows := make([]SettingRow, 0, len(changes))
	for _, c := range changes {
		t, err := parseSetting(c.Path)
		if err != nil {
			return nil, nil, err
		}
		if err := t.checkValue(c.To, possible, hasPossible); err != nil {
			return nil, nil, fmt.Errorf("plan: %w", err)
		}
		raw, v, err := readSetting(fsys, c.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("save current value: %w", err)
		}
		if err := t.checkValue(v, possible, hasPossible); err != nil {
			return nil, nil, fmt.Errorf("%w: %w; restore could not put it back, so nothing was written", ErrUnsaveable, err)
		}
		s := savedSetting{Path: c.Path, Value: v}
		if string(raw) != v+"\n" {
			r := string(raw)
			s.Raw = &r
		}
		saved = append(saved, s)
		rows = append(rows, SettingRow{Kind: t.Kind, NIC: t.NIC, File: c.Path, From: v, To: c.To, For: c.For,
			Result: ResultPlanned, Now: unknown.Not[string](whyNotWritten)})
	}
	return saved, rows, nil
}

// checkSettings validates a state's settings: every path is one a tune
// writes, no path twice, and every value restore would write parses.
func checkSettings(fsys kfile.FS, saved []savedSetting) error {
	possible, hasPossible, err := possibleCPUs(fsys)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(saved))
	for i, s := range saved {
		t, err := parseSetting(s.Path)
		if err != nil {
			return fmt.Errorf("setting %d: %w", i, err)
		}
		if seen[s.Path] {
			return fmt.Errorf("setting %d: %s appears twice", i, s.Path)
		}
		seen[s.Path] = true
		if err := t.checkValue(s.Value, possible, hasPossible); err != nil {
			return fmt.Errorf("setting %d: %w", i, err)
		}
		if s.Raw != nil && string(kfile.TrimAttr([]byte(*s.Raw))) != s.Value {
			return fmt.Errorf("setting %d: %s: raw bytes %q do not say value %q", i, t.name(), clip(*s.Raw), clip(s.Value))
		}
	}
	return nil
}

// settingStep writes one setting; its undo writes back the bytes before.
type settingStep struct {
	w    Writer
	fsys kfile.FS
	to   []byte
	back []byte
	path string
	row  *SettingRow
}

func settingSteps(w Writer, fsys kfile.FS, changes []SettingChange, saved []savedSetting, rows []SettingRow) []step {
	steps := make([]step, len(changes))
	for i, c := range changes {
		steps[i] = &settingStep{w: w, fsys: fsys, to: []byte(c.To + "\n"), back: saved[i].data(), path: c.Path, row: &rows[i]}
	}
	return steps
}

func (s *settingStep) do() error { return writeBytes(s.w, s.fsys, s.path, s.row.To, s.to) }

func (s *settingStep) done(err error) bool {
	if err != nil {
		s.row.Result = ResultFailed
		s.row.fail(err)
		return true
	}
	s.row.Result = ResultChanged
	return false
}

func (s *settingStep) undo() error {
	return writeBytes(s.w, s.fsys, s.path, s.row.From, s.back)
}

func (s *settingStep) undone(err error) {
	if err != nil {
		s.row.fail(&RollbackError{Step: s.row.Name(), Err: err})
		return
	}
	s.row.Result = ResultRolledBack
}

func (s *settingStep) strict() bool { return true }

// readBackSettings reads every setting's file after the run; a changed
// one that does not say what was written is a failure.
func readBackSettings(fsys kfile.FS, rows []SettingRow) {
	for i := range rows {
		r := &rows[i]
		if r.Result == ResultPlanned {
			continue
		}
		_, v, err := readSetting(fsys, r.File)
		if err != nil {
			r.Now = unknown.NotAs[string](unknown.KindFailed, err.Error())
			continue
		}
		r.Now = unknown.Of(v)
		t, _ := parseSetting(r.File)
		if r.Result == ResultChanged && t.canonical(v) != t.canonical(r.To) {
			r.Result = ResultFailed
			r.fail(fmt.Errorf("%s: wrote %q, reads back %q", r.Name(), r.To, v))
		}
	}
}

// restoreSettings writes every saved setting back, newest first, as a
// final txn: each is tried whatever fails.
func (r *RestoreResult) restoreSettings(ctx context.Context, fsys kfile.FS, w Writer, saved []savedSetting) {
	start := len(r.Settings)
	var write []int // indexes of the saved values to write back
	for i := len(saved) - 1; i >= 0; i-- {
		s := saved[i]
		t, _ := parseSetting(s.Path) // validated by loadStateEntries
		row := SettingRow{Kind: t.Kind, NIC: t.NIC, File: s.Path, To: s.Value, Result: ResultUnchanged, Now: unknown.Not[string](whyNotWritten)}
		_, cur, err := readSetting(fsys, s.Path)
		switch {
		case err != nil:
			row.Result, row.Error = ResultGone, err.Error()
			r.Gone = append(r.Gone, t.name())
		case cur != s.Value:
			write = append(write, i)
		}
		row.From = cur
		r.Settings = append(r.Settings, row)
	}
	// The rows are all made: each step records into its own.
	rows := r.Settings[start:]
	steps := make([]step, 0, len(write))
	for _, i := range write {
		row := &rows[len(saved)-1-i]
		steps = append(steps, &settingStep{w: w, fsys: fsys, to: saved[i].data(), path: saved[i].Path, row: row})
	}
	tx := txn{steps: steps, final: true}
	tx.run(ctx)
	readBackSettings(fsys, rows)
	for _, row := range rows {
		if row.Result == ResultFailed {
			r.Failed = append(r.Failed, row.Name()+": "+row.Error)
		}
	}
}

// recordSettings reads back the settings written, and names those whose
// write, read-back or rollback failed.
func (res *PinResult) recordSettings(fsys kfile.FS) {
	readBackSettings(fsys, res.Settings)
	for _, r := range res.Settings {
		var rb *RollbackError
		switch {
		case errors.As(r.err, &rb):
			res.RollbackFailed = append(res.RollbackFailed, r.Name()+": "+rb.Err.Error())
		case r.Result == ResultFailed:
			res.Failed = append(res.Failed, r.Name()+": "+r.Error)
		case r.Result == ResultChanged:
			res.Changed++
		}
	}
}
