package tune

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/atomicfile"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// A pin may keep irqbalance off the IRQs it places (PinRequest.Irqbalance),
// as one step of its transaction, after the steering and before the IRQ
// writes, undone with them and taken back out by irq restore after them.
// The way is planned from what irqbalance.Read says:
//
//   - socket: irqbalance runs and answered `setup` over its socket. The
//     step sends `settings ban irqs` with the daemon's list and the IRQs,
//     which takes effect at once (the daemon rebuilds at its next scan and
//     moves no banned IRQ after), and reads the list back with `setup`.
//     The undo, and restore, send the list without the IRQs the pin added
//     ("NONE" when that leaves it empty), to the same daemon only (its PID
//     and start time). A restart of irqbalance forgets the ban: the result
//     says so, with the IRQBALANCE_ARGS line that would keep it.
//   - config: otherwise (irqbalance does not run, its socket did not
//     answer, or the root is a host tree). The step adds --banirq=N to
//     IRQBALANCE_ARGS in the environment file irqbalance's service reads
//     (irqbalance.Settings.ConfigFile, the last present of its files; on a
//     Debian-like root with none, told by its /etc/debian_version,
//     /etc/default/irqbalance, which Debian's and Ubuntu's unit and init
//     script read), written whole (atomicfile.ReplaceIn) with the old
//     file's mode. Its exact bytes, or its absence, are saved first, and
//     restore puts them back, or removes the file, only over what the pin
//     wrote. A running daemon reads the file only when it starts: the
//     result says to run `systemctl restart irqbalance`.

// IrqbalanceBan is what a pin keeps irqbalance off (PinRequest.Irqbalance).
type IrqbalanceBan struct {
	IRQs []int // the IRQs irqbalance must leave where the pin puts them
}

// IrqbalanceWay is how a pin keeps irqbalance off its IRQs.
type IrqbalanceWay string

// The ways.
const (
	// IrqbalanceWaySocket: over the running daemon's socket, at once, until
	// it restarts.
	IrqbalanceWaySocket IrqbalanceWay = "socket"
	// IrqbalanceWayConfig: in its service's environment file, from its next
	// start.
	IrqbalanceWayConfig IrqbalanceWay = "config"
)

// IrqbalanceRow is what became of a pin's irqbalance ban, or of a
// restore's taking it out.
type IrqbalanceRow struct {
	Way IrqbalanceWay `json:"way"`
	// Where is the daemon's socket and PID, or the environment file.
	Where string `json:"where"`
	// IRQs are those the step bans that were not banned before (a pin),
	// or those it takes out again (a restore), ascending.
	IRQs []int `json:"irqs"`
	// From and To are the daemon's list of banned IRQs (socket), or the
	// file's IRQBALANCE_ARGS (config), before and after.
	From   string `json:"from"`
	To     string `json:"to"`
	Result Result `json:"result"`
	Error  string `json:"error"`
	err    error
}

// Name names the step in messages: "irqbalance ban over its socket (PID
// 812)", "irqbalance ban in /etc/default/irqbalance".
func (r IrqbalanceRow) Name() string {
	if r.Way == IrqbalanceWaySocket {
		return "irqbalance ban over its socket (" + r.Where + ")"
	}
	return "irqbalance ban in " + r.Where
}

// Err returns the error Error says when the step failed or its rollback
// did (a *RollbackError), nil when it did neither.
func (r IrqbalanceRow) Err() error { return r.err }

func (r *IrqbalanceRow) fail(err error) { r.err, r.Error = err, err.Error() }

// savedIrqbalance is a pin's irqbalance ban in a state file (version 4):
// what restore takes back out. The part Way names is set, the other nil.
type savedIrqbalance struct {
	Way    IrqbalanceWay          `json:"way"`
	Socket *savedIrqbalanceSocket `json:"socket,omitempty"`
	Config *savedIrqbalanceConfig `json:"config,omitempty"`
}

// savedIrqbalanceSocket is a ban sent over the daemon's socket.
type savedIrqbalanceSocket struct {
	// PID and Start (/proc/PID/stat field 22) name the daemon: restore
	// speaks to it only, since another has forgotten the ban.
	PID   int    `json:"pid"`
	Start uint64 `json:"start_time"`
	// Address is where it answered, for the report.
	Address string `json:"address"`
	// Before is the daemon's list of banned IRQs before the pin, Added
	// the IRQs the pin added to it; both ascending.
	Before []int `json:"banned_before"`
	Added  []int `json:"added"`
}

// savedIrqbalanceConfig is a ban written to an environment file.
type savedIrqbalanceConfig struct {
	// Path is the file, one of irqbalance.EnvFiles.
	Path string `json:"path"`
	// Absent says there was no such file: restore removes it.
	Absent bool `json:"absent"`
	// Old is its bytes before, exactly (base64 in JSON); null when
	// absent.
	Old []byte `json:"old"`
	// Mode is its permission bits (those the new file got when absent).
	Mode uint32 `json:"mode"`
	// Written is the SHA-256 of what the pin wrote, in hex: restore puts
	// the old bytes back only over that, never over a later edit.
	Written string `json:"written_sha256"`
	Added   []int  `json:"added"`
}

// irqbalanceSocket reaches the daemon for a pin and a restore; nil: its
// own socket on the live root, and none on a tree. A test sets its fake
// daemon's.
var irqbalanceSocket *irqbalance.Socket

// maxEnvFile bounds the environment file read and saved.
const maxEnvFile = 1 << 20

// irqbalanceStep is a pin's irqbalance ban, planned: the way, the old
// value saved and the new one, and its row.
type irqbalanceStep struct {
	fsys  kfile.FS
	sock  irqbalance.Socket
	saved savedIrqbalance
	ban   []int  // socket: the daemon's whole list after the step
	data  []byte // config: the file after the step
	row   *IrqbalanceRow
}

// planIrqbalance plans the ban the request asks (nil when it asks none, or
// when nothing needs banning), puts its row in the result, notes how long
// it lasts, and keeps the IRQs it bans out of the irqbalance warning. b
// is what irqbalance.Read said, err why it could not say; a ban cannot be
// planned without it.
func (res *PinResult) planIrqbalance(req PinRequest, b *irqbalance.Settings, err error) (*irqbalanceStep, error) {
	if req.Irqbalance == nil || len(req.Irqbalance.IRQs) == 0 {
		return nil, nil
	}
	irqs := slices.Clone(req.Irqbalance.IRQs)
	slices.Sort(irqs)
	irqs = slices.Compact(irqs)
	for _, n := range irqs {
		if n < 0 || n > interrupts.MaxIRQ {
			return nil, fmt.Errorf("irqbalance ban: IRQ %d: not an IRQ number (0 to %d)", n, interrupts.MaxIRQ)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("irqbalance ban: %w", err)
	}
	s := &irqbalanceStep{fsys: req.Root, row: &IrqbalanceRow{}}
	if irqbalanceSocket != nil {
		s.sock = *irqbalanceSocket
	}
	var note string
	if rt, ok := b.Runtime.Get(); ok {
		if note, err = s.planSocket(b, rt, irqs); err != nil {
			note, err = s.planConfig(b, irqs, "its list of banned IRQs would be "+err.Error())
		}
	} else {
		note, err = s.planConfig(b, irqs, b.Runtime.Why().String())
	}
	if err != nil {
		return nil, fmt.Errorf("irqbalance ban: %w", err)
	}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	if s.row.Way == "" {
		return nil, nil
	}
	res.IrqbalanceBan = s.row
	res.Irqbalance.Loose = slices.DeleteFunc(res.Irqbalance.Loose, func(n int) bool { _, ok := slices.BinarySearch(irqs, n); return ok })
	res.Irqbalance.BanConfig = nil
	if len(res.Irqbalance.Loose) > 0 {
		// The configuration that would ban the rest keeps the ban
		// this step writes.
		after := *b
		if s.saved.Config != nil {
			after.ConfigFile = s.saved.Config.Path
			after.ConfigArgs, _ = irqbalance.ArgsWithBans(b.ConfigArgs, s.saved.Config.Added)
		}
		res.Irqbalance.BanConfig = after.BanConfig(res.Irqbalance.Loose, cpuset.Set{})
	}
	if s.row.Result == ResultUnchanged {
		return nil, nil
	}
	return s, nil
}

// planSocket plans the socket way: the daemon's list and irqs. It fails
// when the command would be too long for irqbalance before v1.9.4.
func (s *irqbalanceStep) planSocket(b *irqbalance.Settings, rt irqbalance.Runtime, irqs []int) (string, error) {
	var added []int
	for _, n := range irqs {
		if !rt.Banned(n) {
			added = append(added, n)
		}
	}
	ban := append(slices.Clone(rt.BannedIRQs), added...)
	slices.Sort(ban)
	if cmd := irqbalance.BanCommand(ban); len(cmd) > irqbalance.MaxCommand {
		return "", fmt.Errorf("%d bytes long, past the %d irqbalance before v1.9.4 reads whole", len(cmd), irqbalance.MaxCommand)
	}
	s.ban = ban
	s.saved = savedIrqbalance{Way: IrqbalanceWaySocket, Socket: &savedIrqbalanceSocket{PID: rt.PID, Start: rt.Start,
		Address: irqbalance.SocketName(rt.Socket), Before: orNoIRQs(rt.BannedIRQs), Added: orNoIRQs(added)}}
	*s.row = IrqbalanceRow{Way: IrqbalanceWaySocket, Where: fmt.Sprintf("%s, PID %d", irqbalance.SocketName(rt.Socket), rt.PID),
		IRQs: orNoIRQs(added), From: banList(rt.BannedIRQs), To: banList(ban), Result: ResultPlanned}
	if len(added) == 0 {
		s.row.Result = ResultUnchanged
		return "", nil
	}
	note := fmt.Sprintf("irqbalance (PID %d) leaves %s alone from now on, banned at run time over its socket: a restart of irqbalance forgets the ban",
		rt.PID, irqsText(added))
	// BanConfig's first line names the file, its second the setting.
	if keep := b.BanConfig(added, cpuset.Set{}); len(keep) > 1 {
		file, _, _ := strings.Cut(strings.TrimPrefix(keep[0], "# in "), ", then:")
		note += fmt.Sprintf("; to keep it, set %s in %s", keep[1], file)
	}
	return note, nil
}

// planConfig plans the config way; why says why not the socket.
func (s *irqbalanceStep) planConfig(b *irqbalance.Settings, irqs []int, why string) (string, error) {
	cfg, err := irqbalance.ReadConfig(s.fsys)
	if err != nil {
		return "", err
	}
	path := cfg.File
	if path == "" {
		switch {
		case noDaemon(b):
			return fmt.Sprintf("%s and has no environment file (%s): nothing to ban", notRunning(b), strings.Join(irqbalance.EnvFiles(), ", ")), nil
		case !debianLike(s.fsys):
			return "", fmt.Errorf("irqbalance runs, its socket cannot take the ban (%s), and the root has none of its environment files (%s) and is not Debian-like (no /etc/debian_version): no file to write the ban to",
				why, strings.Join(irqbalance.EnvFiles(), ", "))
		}
		path = irqbalance.DebianEnvFile
	}
	c, err := readEnvFile(s.fsys, path)
	if err != nil {
		return "", err
	}
	data, added, err := irqbalance.AddBannedIRQs(c.Old, cfg.Args, irqs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	c.Written, c.Added = hex.EncodeToString(sum[:]), orNoIRQs(added)
	s.data = data
	s.saved = savedIrqbalance{Way: IrqbalanceWayConfig, Config: c}
	*s.row = IrqbalanceRow{Way: IrqbalanceWayConfig, Where: path, IRQs: orNoIRQs(added), From: argsIn(c.Old, c.Absent), To: argsIn(data, false), Result: ResultPlanned}
	if len(added) == 0 {
		s.row.Result = ResultUnchanged
		return "", nil
	}
	if noDaemon(b) {
		return fmt.Sprintf("%s: %s in %s keeps it off %s when it starts", notRunning(b), banirqs(added), path, irqsText(added)), nil
	}
	return fmt.Sprintf("irqbalance (PID %d) runs and its socket cannot take the ban (%s): %s in %s takes effect only when it restarts, and it may move %s until then: systemctl restart irqbalance",
		b.PIDs[0], why, banirqs(added), path, irqsText(added)), nil
}

// noDaemon reports whether no irqbalance process was found: none runs,
// or the root holds no processes.
func noDaemon(b *irqbalance.Settings) bool { return len(b.PIDs) == 0 }

// notRunning says, of a root where noDaemon, whether irqbalance runs.
func notRunning(b *irqbalance.Settings) string {
	if !b.Running.Known() {
		return "whether irqbalance runs is unknown (no process folders under /proc)"
	}
	return "irqbalance does not run"
}

// debianLike reports whether the root is Debian's or a derivative's
// (Ubuntu's): it has /etc/debian_version, as base-files installs it.
func debianLike(fsys kfile.FS) bool {
	fi, err := fsys.Stat(fsys.Path("etc/debian_version"))
	return err == nil && fi.Mode().IsRegular()
}

// readEnvFile reads the environment file at the rooted path as a saved
// config: its bytes and mode, or its absence. Anything but a regular file
// (a link, which a replace would not keep) is refused, and so is a
// missing folder, which restore would not remove.
func readEnvFile(fsys kfile.FS, path string) (*savedIrqbalanceConfig, error) {
	p := fsys.Path(path)
	fi, err := fsys.Lstat(p)
	switch {
	case kfile.IsNotExist(err):
		if _, derr := fsys.Stat(filepath.Dir(p)); derr != nil {
			return nil, fmt.Errorf("%s: no such file, and its folder: %w", path, derr)
		}
		return &savedIrqbalanceConfig{Path: path, Absent: true, Mode: 0o644}, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%v): add the --banirq options to it by hand", path, fi.Mode().Type())
	}
	old, err := fsys.ReadLimit(p, maxEnvFile)
	if err != nil {
		return nil, err
	}
	if old == nil {
		old = []byte{}
	}
	return &savedIrqbalanceConfig{Path: path, Old: old, Mode: uint32(fi.Mode().Perm())}, nil
}

// argsIn is the IRQBALANCE_ARGS an environment file sets, for a row.
func argsIn(data []byte, absent bool) string {
	if absent {
		return "(no file)"
	}
	for _, line := range slices.Backward(strings.Split(string(data), "\n")) {
		if k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "export "), "="); ok && strings.TrimSpace(k) == "IRQBALANCE_ARGS" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			return "IRQBALANCE_ARGS=" + strings.TrimSpace(v)
		}
	}
	return "(no IRQBALANCE_ARGS)"
}

// do makes the ban and reads it back. A ban that may have been made
// and does not read back is taken out again at once, since the
// transaction undoes only the steps that succeeded; when that fails too,
// the error is a *RollbackError and the state file is the way back.
func (s *irqbalanceStep) do() error {
	var made bool
	var err error
	if s.saved.Way == IrqbalanceWaySocket {
		made, err = s.sendBan()
	} else {
		made, err = s.writeConfig()
	}
	if err != nil && made {
		if uerr := takeOut(s.fsys, s.sock, s.saved); uerr != nil {
			return &RollbackError{Step: s.row.Name(), Err: fmt.Errorf("%v; taking it out again: %w", err, uerr)}
		}
	}
	return err
}

// sendBan checks the daemon is the one planned for, sends the ban and
// reads it back; made says the daemon may have taken some of it.
func (s *irqbalanceStep) sendBan() (made bool, err error) {
	v := s.saved.Socket
	if err := sameDaemon(s.fsys, v); err != nil {
		return false, err
	}
	if _, err := s.sock.BanIRQs(s.fsys, v.PID, s.ban); err != nil {
		return true, err
	}
	rt, err := s.sock.Setup(s.fsys, v.PID)
	if err != nil {
		return true, fmt.Errorf("read back: %w", err)
	}
	if !slices.Equal(rt.BannedIRQs, s.ban) {
		return true, fmt.Errorf("read back: irqbalance bans %s, not %s", banList(rt.BannedIRQs), banList(s.ban))
	}
	return true, nil
}

// writeConfig writes the file planned, over what was planned from only,
// and reads it back as irqbalance's service would; made says the file
// was written.
func (s *irqbalanceStep) writeConfig() (made bool, err error) {
	c := s.saved.Config
	if err := unchangedSince(s.fsys, c.Path, c.Old, c.Absent); err != nil {
		return false, err
	}
	if err := atomicfile.ReplaceIn(s.fsys, s.fsys.Path(c.Path), os.FileMode(c.Mode), func(w io.Writer) error {
		_, err := w.Write(s.data)
		return err
	}); err != nil {
		return false, err
	}
	cfg, err := irqbalance.ReadConfig(s.fsys)
	if err != nil {
		return true, fmt.Errorf("read back: %w", err)
	}
	for _, n := range c.Added {
		if _, ok := slices.BinarySearch(cfg.BannedIRQs, n); !ok {
			return true, fmt.Errorf("read back: irqbalance's service would not ban IRQ %d (IRQBALANCE_ARGS %q, from %s)", n, strings.Join(cfg.Args, " "), strings.Join(cfg.Files, ", "))
		}
	}
	return true, nil
}

func (s *irqbalanceStep) done(err error) bool { return s.row.record(err) }

func (r *IrqbalanceRow) record(err error) (failed bool) {
	if err != nil {
		r.Result = ResultFailed
		r.fail(err)
		return true
	}
	r.Result = ResultChanged
	return false
}

func (s *irqbalanceStep) undo() error { return takeOut(s.fsys, s.sock, s.saved) }

func (s *irqbalanceStep) undone(err error) {
	if err != nil {
		s.row.fail(&RollbackError{Step: s.row.Name(), Err: err})
		return
	}
	s.row.Result = ResultRolledBack
}

// strict: a ban half made is no state to place IRQs in.
func (s *irqbalanceStep) strict() bool { return true }

// errDaemonGone says the daemon a ban was sent to no longer runs: its
// run-time bans went with it.
var errDaemonGone = errors.New("irqbalance restarted or stopped since: the ban went with it")

// sameDaemon checks that the daemon v names still runs: the same PID,
// name and start time. errDaemonGone when not.
func sameDaemon(fsys kfile.FS, v *savedIrqbalanceSocket) error {
	task, err := proc.ReadTask(fsys, v.PID)
	switch {
	case errors.Is(err, proc.ErrNoProcess) || errors.Is(err, proc.ErrZombie):
		return fmt.Errorf("PID %d: %w", v.PID, errDaemonGone)
	case err != nil:
		return err
	case task.Comm != "irqbalance" || task.Start != v.Start:
		return fmt.Errorf("PID %d is %s started at %d, not irqbalance started at %d: %w", v.PID, task.Comm, task.Start, v.Start, errDaemonGone)
	}
	return nil
}

// takeOut takes a saved ban back out: over the socket, the daemon's list
// now less the IRQs the pin added (what it was, unless someone changed it
// since); in the file, the old bytes back, or the file removed.
func takeOut(fsys kfile.FS, sock irqbalance.Socket, v savedIrqbalance) error {
	if v.Way == IrqbalanceWaySocket {
		_, _, err := unbanSocket(fsys, sock, v.Socket)
		if errors.Is(err, errDaemonGone) {
			return nil // the ban went with the daemon
		}
		return err
	}
	_, err := restoreConfig(fsys, v.Config)
	return err
}

// unbanSocket sends the daemon's list without the IRQs the pin added and
// reads it back; it returns the list it found and the one it left, the
// same when none of them was on it.
func unbanSocket(fsys kfile.FS, sock irqbalance.Socket, v *savedIrqbalanceSocket) (found, left []int, err error) {
	if err := sameDaemon(fsys, v); err != nil {
		return nil, nil, err
	}
	rt, err := sock.Setup(fsys, v.PID)
	if err != nil {
		return nil, nil, err
	}
	rest := slices.DeleteFunc(slices.Clone(rt.BannedIRQs), func(n int) bool { _, ok := slices.BinarySearch(v.Added, n); return ok })
	if len(rest) == len(rt.BannedIRQs) {
		return rt.BannedIRQs, rest, nil
	}
	if _, err := sock.BanIRQs(fsys, v.PID, rest); err != nil {
		return rt.BannedIRQs, nil, err
	}
	back, err := sock.Setup(fsys, v.PID)
	if err != nil {
		return rt.BannedIRQs, nil, fmt.Errorf("read back: %w", err)
	}
	if !slices.Equal(back.BannedIRQs, rest) {
		return rt.BannedIRQs, back.BannedIRQs, fmt.Errorf("read back: irqbalance bans %s, not %s", banList(back.BannedIRQs), banList(rest))
	}
	return rt.BannedIRQs, rest, nil
}

// restoreConfig puts an environment file back as it was, over what the
// pin wrote only; unchanged says it was back already.
func restoreConfig(fsys kfile.FS, c *savedIrqbalanceConfig) (unchanged bool, err error) {
	p := fsys.Path(c.Path)
	cur, err := fsys.ReadLimit(p, maxEnvFile)
	switch {
	case kfile.IsNotExist(err) && c.Absent:
		return true, nil
	case err == nil && !c.Absent && bytes.Equal(cur, c.Old):
		return true, nil
	case err != nil && !kfile.IsNotExist(err):
		return false, err
	}
	sum := sha256.Sum256(cur)
	if err != nil || hex.EncodeToString(sum[:]) != c.Written {
		return false, fmt.Errorf("%s changed since the pin wrote it: not put back; take %s out of its IRQBALANCE_ARGS by hand", c.Path, banirqs(c.Added))
	}
	if c.Absent {
		if err := fsys.Remove(p); err != nil {
			return false, err
		}
		return false, fsys.SyncDir(filepath.Dir(p))
	}
	return false, atomicfile.ReplaceIn(fsys, p, os.FileMode(c.Mode), func(w io.Writer) error {
		_, err := w.Write(c.Old)
		return err
	})
}

// unchangedSince checks that the file at the rooted path is still what
// was planned from (its bytes, or its absence).
func unchangedSince(fsys kfile.FS, path string, old []byte, absent bool) error {
	cur, err := fsys.ReadLimit(fsys.Path(path), maxEnvFile)
	switch {
	case kfile.IsNotExist(err) && absent:
		return nil
	case err == nil && !absent && bytes.Equal(cur, old):
		return nil
	case err != nil && !kfile.IsNotExist(err):
		return err
	}
	return fmt.Errorf("%s changed since the pin read it: not written", path)
}

// recordIrqbalance counts the ban when it was made and kept, and names it
// when it or its rollback failed.
func (res *PinResult) recordIrqbalance() {
	r := res.IrqbalanceBan
	if r == nil {
		return
	}
	var rb *RollbackError
	switch {
	case errors.As(r.err, &rb):
		res.RollbackFailed = append(res.RollbackFailed, rb.listed())
	case r.Result == ResultFailed:
		res.Failed = append(res.Failed, r.Name()+": "+r.Error)
	case r.Result == ResultChanged:
		res.Changed++
	case r.Result == ResultPlanned:
		r.Result = ResultUnchanged // a step before it failed
	}
}

// irqbalanceSteps is the transaction's ban step, if any.
func irqbalanceSteps(s *irqbalanceStep) []step {
	if s == nil {
		return nil
	}
	return []step{s}
}

// savedBan is the ban's part of the state file, nil without one.
func savedBan(s *irqbalanceStep) *savedIrqbalance {
	if s == nil {
		return nil
	}
	return &s.saved
}

// restoreIrqbalance takes a saved ban back out, after the IRQs and
// threads are back: a final step that is tried once. A daemon that
// restarted since forgot the ban: nothing is left to take out.
func (r *RestoreResult) restoreIrqbalance(fsys kfile.FS, v *savedIrqbalance) {
	if v == nil {
		return
	}
	row := &IrqbalanceRow{Way: v.Way, Result: ResultPlanned}
	var err error
	unchanged := false
	switch v.Way {
	case IrqbalanceWaySocket:
		s := v.Socket
		row.Where, row.IRQs = fmt.Sprintf("%s, PID %d", s.Address, s.PID), s.Added
		sock := irqbalance.Socket{}
		if irqbalanceSocket != nil {
			sock = *irqbalanceSocket
		} else if !fsys.Live() {
			err = errors.New("a host tree holds no irqbalance socket to ask")
		}
		if err == nil {
			var found, left []int
			found, left, err = unbanSocket(fsys, sock, s)
			row.From, row.To = banList(found), banList(left)
			unchanged = err == nil && len(found) == len(left)
		}
	case IrqbalanceWayConfig:
		c := v.Config
		row.Where, row.IRQs, row.To = c.Path, c.Added, argsIn(c.Old, c.Absent)
		if cur, rerr := fsys.ReadLimit(fsys.Path(c.Path), maxEnvFile); rerr == nil {
			row.From = argsIn(cur, false)
		}
		unchanged, err = restoreConfig(fsys, c)
	}
	switch {
	case errors.Is(err, errDaemonGone):
		row.Result, row.Error = ResultGone, err.Error()
		r.Notes = append(r.Notes, row.Name()+": "+err.Error()+"; nothing to take out")
	case err != nil:
		row.Result = ResultFailed
		row.fail(err)
		r.Failed = append(r.Failed, row.Name()+": "+row.Error)
	case unchanged:
		row.Result = ResultUnchanged
	default:
		row.Result = ResultChanged
	}
	r.IrqbalanceBan = row
}

// checkIrqbalance says why a state's irqbalance ban cannot be taken out:
// a version before 4, a way unknown or with the other way's part, a PID
// out of range, IRQ lists not ascending IRQ numbers, a file that is not
// one of irqbalance's environment files, a mode or digest not of their
// form.
func checkIrqbalance(s *pinState) error {
	v := s.Irqbalance
	if v == nil {
		return nil
	}
	if s.Version < stateVersionTune {
		return fmt.Errorf("version %d holds an irqbalance ban, which only version %d has", s.Version, stateVersionTune)
	}
	switch {
	case v.Way == IrqbalanceWaySocket && v.Socket != nil && v.Config == nil:
		c := v.Socket
		if c.PID <= 0 || c.PID > maxPID {
			return fmt.Errorf("irqbalance ban: pid %d: not a pid (1 to %d)", c.PID, maxPID)
		}
		if err := checkIRQList("banned_before", c.Before, false); err != nil {
			return err
		}
		return checkIRQList("added", c.Added, true)
	case v.Way == IrqbalanceWayConfig && v.Config != nil && v.Socket == nil:
		c := v.Config
		if !slices.Contains(irqbalance.EnvFiles(), c.Path) {
			return fmt.Errorf("irqbalance ban: path %q is not one of irqbalance's environment files (%s)", clip(c.Path), strings.Join(irqbalance.EnvFiles(), ", "))
		}
		if c.Absent && c.Old != nil {
			return fmt.Errorf("irqbalance ban: %s was absent, yet old bytes are saved", c.Path)
		}
		if !c.Absent && c.Old == nil {
			return fmt.Errorf("irqbalance ban: %s: neither absent nor old bytes saved", c.Path)
		}
		if len(c.Old) > maxEnvFile {
			return fmt.Errorf("irqbalance ban: %s: %d old bytes, over %d", c.Path, len(c.Old), maxEnvFile)
		}
		if c.Mode&^0o777 != 0 {
			return fmt.Errorf("irqbalance ban: %s: mode %#o: not permission bits", c.Path, c.Mode)
		}
		if b, err := hex.DecodeString(c.Written); err != nil || len(b) != sha256.Size || strings.ToLower(c.Written) != c.Written {
			return fmt.Errorf("irqbalance ban: %s: written_sha256 %q: not a SHA-256 in lower-case hex", c.Path, clip(c.Written))
		}
		return checkIRQList("added", c.Added, true)
	}
	return fmt.Errorf("irqbalance ban: way %q with socket %v and config %v: want socket or config, with its part only", clip(string(v.Way)), v.Socket != nil, v.Config != nil)
}

// checkIRQList checks a saved list of IRQs: ascending IRQ numbers, each
// once, and not empty when nonEmpty.
func checkIRQList(name string, irqs []int, nonEmpty bool) error {
	if nonEmpty && len(irqs) == 0 {
		return fmt.Errorf("irqbalance ban: %s: no IRQ", name)
	}
	for i, n := range irqs {
		if n < 0 || n > interrupts.MaxIRQ {
			return fmt.Errorf("irqbalance ban: %s: IRQ %d: not an IRQ number (0 to %d)", name, n, interrupts.MaxIRQ)
		}
		if i > 0 && n <= irqs[i-1] {
			return fmt.Errorf("irqbalance ban: %s: %d after %d: not ascending, each once", name, n, irqs[i-1])
		}
	}
	return nil
}

// banList is a list of banned IRQs as a row shows it: "37 38 39", or
// "none".
func banList(irqs []int) string {
	if len(irqs) == 0 {
		return "none"
	}
	return irqList(irqs)
}

// irqsText names IRQs in a sentence: "IRQ 37", "IRQs 37 38".
func irqsText(irqs []int) string {
	if len(irqs) == 1 {
		return "IRQ " + strconv.Itoa(irqs[0])
	}
	return "IRQs " + irqList(irqs)
}

// banirqs is the options that ban irqs: "--banirq=37 --banirq=38".
func banirqs(irqs []int) string {
	s := make([]string, len(irqs))
	for i, n := range irqs {
		s[i] = "--banirq=" + strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

// orNoIRQs is irqs, never nil, so JSON says [] rather than null.
func orNoIRQs(irqs []int) []int {
	if irqs == nil {
		return []int{}
	}
	return irqs
}

// savedBans is the saved ban as a list, to count it.
func savedBans(v *savedIrqbalance) []*savedIrqbalance {
	if v == nil {
		return nil
	}
	return []*savedIrqbalance{v}
}
