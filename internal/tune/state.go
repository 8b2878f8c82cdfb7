package tune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/atomicfile"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/units"
)

// stateVersion is the version of the state file format: 1 saves files
// only; 2 adds the NAPI threads a pin moved, and is what a pin that
// moved threads writes, so an irqnuma that cannot restore them refuses
// the file by its version; 3 adds the NIC steering a transaction changed
// (zc prepare), written only by one that changed steering.
const (
	stateVersion        = 1
	stateVersionThreads = 2
	stateVersionSteer   = 3
	// stateVersionTune adds the sysfs settings a tune changed (rps_cpus,
	// NAPI defaults, governors) and a steering step's per-NAPI settings
	// (savedStep.NAPI), written only by one that changed them.
	stateVersionTune = 4
)

// maxStateSize bounds a state file: a few hundred bytes per entry, and a
// host has at most a few tens of thousands of IRQs and queues.
const maxStateSize = 32 << 20

// ErrBadState is wrapped by every error that refuses a state file.
var ErrBadState = errors.New("invalid state file")

// ErrUnsaveable is wrapped by the error that stops a pin before any
// write because a value it would replace is one irq restore could not
// put back (a host tree's "0-1048575" on a 64-CPU host).
var ErrUnsaveable = errors.New("current value cannot be saved for restore")

// ErrLocked is wrapped by the error Lock returns when another pin or
// restore holds the lock of the same root.
var ErrLocked = errors.New("another irqnuma pin or restore is running on this root")

// pinState is what a pin saves before its first write: the value of every
// file it is about to change, as the kernel printed it, so that
// `irq restore` can put each back.
type pinState struct {
	// Schema is jsondoc.SchemaState; a file written before the envelope has
	// none, and reads the same.
	Schema  jsondoc.Schema `json:"schema,omitempty"`
	Version int            `json:"version"`
	Created time.Time      `json:"created"`
	// Root is the absolute host root the values were read under; a state
	// is only restored on the same root.
	Root    string       `json:"root"`
	Entries []savedValue `json:"entries"`
	// Threads are the NAPI kernel threads the pin moved, with the CPUs
	// each could run on before (version 2).
	Threads []savedThread `json:"threads,omitempty"`
	// Steer is the old value of each NIC steering step the transaction
	// made, in the order it made them (version 3); restore undoes them
	// newest first, before the IRQs (a driver moves its queue IRQs when the
	// channels change) and threads.
	Steer []savedStep `json:"steer,omitempty"`
	// Settings are the sysfs settings a tune changed, in the order it
	// changed them (version 4); restore puts them back newest first,
	// after the steering and before the IRQs.
	Settings []savedSetting `json:"settings,omitempty"`
	// Irqbalance is the irqbalance ban the pin made (version 4): restore
	// takes it out after the IRQs and threads.
	Irqbalance *savedIrqbalance `json:"irqbalance,omitempty"`
}

// savedThread is one kernel thread and the CPUs it could run on. Its pid,
// name and start time together name it: restore moves it back only if
// the pid is still that task.
type savedThread struct {
	PID   int    `json:"pid"`
	Comm  string `json:"comm"`
	Start uint64 `json:"start_time"` // /proc/PID/stat field 22
	CPUs  string `json:"cpus"`       // list form
	// What it was paired with, for the report.
	NIC   string `json:"nic"`
	NAPI  uint32 `json:"napi_id,omitempty"`
	Queue int    `json:"queue"`
	Dir   string `json:"dir,omitempty"`
	IRQ   int    `json:"irq"`
}

// savedValue is one file and the value it held.
type savedValue struct {
	Path  string `json:"path"`  // rooted path inside the host; see ParseTarget
	Value string `json:"value"` // without the final newline
}

// StateDir returns the folder of the default state files and of the lock:
// <root>/var/lib/irqnuma.
func StateDir(fsys kfile.FS) string { return fsys.Path("var/lib/irqnuma") }

// stateTimeFormat names state files so that names sort by time.
const stateTimeFormat = "20060102T150405.000000000Z"

// defaultStatePath returns <root>/var/lib/irqnuma/state-<UTC time>.json.
func defaultStatePath(fsys kfile.FS, now time.Time) string {
	return filepath.Join(StateDir(fsys), "state-"+now.UTC().Format(stateTimeFormat)+".json")
}

// newState returns an empty state for root, created now. It records the
// root's real path, so that the same tree restores whichever link to it
// is given as --root.
func newState(fsys kfile.FS, now time.Time) (*pinState, error) {
	real, err := realRoot(fsys)
	if err != nil {
		return nil, err
	}
	return &pinState{Schema: jsondoc.SchemaState, Version: stateVersion, Created: now.UTC(), Root: real}, nil
}

// realRoot returns root made absolute with every link followed.
func realRoot(fsys kfile.FS) (string, error) {
	root := fsys.Root()
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("root: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("root: %w", err)
	}
	return real, nil
}

// sameRoot reports whether a state saved for the root named saved may be
// restored on root: the same folder, named as it was or by its real path.
func sameRoot(saved, root string) bool {
	abs, err := filepath.Abs(root)
	if err != nil {
		return false
	}
	if saved == abs {
		return true
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	if saved == real {
		return true
	}
	savedReal, err := filepath.EvalSymlinks(saved)
	return err == nil && savedReal == real
}

// stateFS returns the file system a state file or the lock at p is made
// and read through, with p made absolute: the root's own (every link
// resolved inside the root, as every read of it is) when p is under
// root, which the default state files and the lock always are; the
// machine's when the user named a file elsewhere.
func stateFS(fsys kfile.FS, p string) (kfile.FS, string, error) {
	absRoot, err := filepath.Abs(fsys.Root())
	if err != nil {
		return kfile.FS{}, "", fmt.Errorf("root: %w", err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return kfile.FS{}, "", fmt.Errorf("state file: %w", err)
	}
	if under(abs, absRoot) {
		return fsys, abs, nil
	}
	// The root named through a link, the file through the real path.
	if real, err := filepath.EvalSymlinks(absRoot); err == nil && real != absRoot && under(abs, real) {
		return fsys, abs, nil
	}
	live, err := kfile.Open("/")
	return live, abs, err
}

// under reports whether the clean absolute path p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// Snapshot reads the current value of every path under fsys into the
// state. Each path must be one irqnuma writes.
func (s *pinState) Snapshot(fsys kfile.FS, paths []string) error {
	_, err := s.snapshot(fsys, paths)
	return err
}

// snapshot is Snapshot that also returns each file's bytes as read, which
// a rollback writes back exactly.
func (s *pinState) snapshot(fsys kfile.FS, paths []string) ([][]byte, error) {
	raws := make([][]byte, 0, len(paths))
	for _, p := range paths {
		raw, v, err := irq.ReadRaw(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("save current value: %w", err)
		}
		s.Entries = append(s.Entries, savedValue{Path: p, Value: v})
		raws = append(raws, raw)
	}
	return raws, nil
}

// Value returns the saved value of path.
func (s *pinState) Value(p string) (string, bool) {
	for _, e := range s.Entries {
		if e.Path == p {
			return e.Value, true
		}
	}
	return "", false
}

// Save writes the state to path under root durably: mode 0600, written
// to an unnamed file in the same folder, fsynced, linked into place and
// the folder fsynced, every folder on the way resolved inside root
// (stateFS). An existing file at path is never overwritten. The names
// from the host in it (NICs in paths, thread names) are escaped as in
// every JSON irqnuma writes (safetext.JSON).
func (s *pinState) Save(fsys kfile.FS, path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	b = append(safetext.JSON(b), '\n')
	fsys, path, err = stateFS(fsys, path)
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := fsys.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	err = atomicfile.CreateIn(fsys, path, 0o600, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("save state: %s already exists", path)
	}
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// loadState reads a state file and validates it against root (see
// Validate). Every refusal wraps ErrBadState.
func loadState(fsys kfile.FS, path string) (*pinState, error) {
	st, bad, err := loadStateEntries(fsys, path)
	if err != nil {
		return nil, err
	}
	for i := range st.Entries {
		if err := bad[i]; err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return st, nil
}

// loadStateEntries is loadState that refuses only what refuses the whole
// file, and returns the entries restore cannot write by index (see
// check).
func loadStateEntries(fsys kfile.FS, path string) (*pinState, map[int]error, error) {
	sfs, abs, err := stateFS(fsys, path)
	if err != nil {
		return nil, nil, fmt.Errorf("read state: %w", err)
	}
	b, err := sfs.ReadLimit(abs, maxStateSize)
	if err != nil {
		return nil, nil, fmt.Errorf("read state: %w", err)
	}
	s, err := parseState(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	bad, err := s.check(fsys)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, bad, nil
}

// parseState decodes a state file strictly: unknown fields and trailing
// data are refused. Its errors never quote the file, which may be any
// file the user named (irq restore /etc/shadow).
func parseState(b []byte) (*pinState, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s pinState
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrBadState, decodeError(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrBadState)
	}
	if s.Schema != "" && s.Schema != jsondoc.SchemaState {
		return nil, fmt.Errorf("%w: its schema is not %q", ErrBadState, jsondoc.SchemaState)
	}
	return &s, nil
}

// decodeError says where and how a state file is not one, without a byte
// of its content.
func decodeError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not a JSON state file (syntax error at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("not a state file: field %q holds a JSON %s at byte %d, want %s", typ.Field, typ.Value, typ.Offset, typ.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "not a JSON state file (empty or cut short)"
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return "not a state file: unknown field, one irqnuma does not write"
	}
	return "not a JSON state file"
}

// Validate checks a state before anything is written from it: the
// version is known, it was saved for this root, and every entry is valid
// (see check). Errors wrap ErrBadState. Whether each IRQ still exists is
// Gone's question: a vanished one does not stop the others' restore.
func (s *pinState) Validate(fsys kfile.FS) error {
	bad, err := s.check(fsys)
	if err != nil {
		return err
	}
	for i := range s.Entries {
		if err := bad[i]; err != nil {
			return err
		}
	}
	return nil
}

// check validates a state for root. The error refuses the whole file:
// an unknown version, another root, no entries, or a path irqnuma never
// writes (a file irqnuma did not make, or one tampered with). An entry
// whose value restore cannot write (see entryError) is returned in bad,
// by index, so the other entries are still restored. An entry repeating
// an earlier one's path and value (what a pin naming a NIC twice saved)
// is dropped; one repeating its path with another value is bad.
// Everything wraps ErrBadState.
func (s *pinState) check(fsys kfile.FS) (bad map[int]error, err error) {
	root := fsys.Root()
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadState, fmt.Sprintf(format, args...))
	}
	if s.Version < stateVersion || s.Version > stateVersionTune {
		return nil, refuse("version %d, want %d to %d", s.Version, stateVersion, stateVersionTune)
	}
	if len(s.Settings) > 0 && s.Version < stateVersionTune {
		return nil, refuse("version %d holds settings, which only version %d has", s.Version, stateVersionTune)
	}
	if len(s.Steer) > 0 && s.Version < stateVersionSteer {
		return nil, refuse("version %d holds NIC steering, which only version %d has", s.Version, stateVersionSteer)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	if !sameRoot(s.Root, abs) {
		return nil, refuse("saved for root %q, not %q", s.Root, abs)
	}
	if len(s.Entries) == 0 && len(s.Threads) == 0 && len(s.Steer) == 0 && len(s.Settings) == 0 && s.Irqbalance == nil {
		return nil, refuse("no entries")
	}
	if err := checkSteer(s.Steer, s.Version); err != nil {
		return nil, refuse("%v", err)
	}
	if err := checkSettings(fsys, s.Settings); err != nil {
		return nil, refuse("%v", err)
	}
	if err := checkIrqbalance(s); err != nil {
		return nil, refuse("%v", err)
	}
	for i, e := range s.Entries {
		if _, err := irq.ParseTarget(e.Path); err != nil {
			return nil, refuse("entry %d: %v", i, err)
		}
	}
	possible, hasPossible, err := possibleCPUs(fsys)
	if err != nil {
		return nil, fmt.Errorf("validate state: %w", err)
	}
	if err := checkThreads(s.Threads, possible, hasPossible); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadState, err)
	}
	bad = map[int]error{}
	first := make(map[string]int, len(s.Entries))
	kept := s.Entries[:0:0]
	for _, e := range s.Entries {
		if j, ok := first[e.Path]; ok {
			if kept[j].Value != e.Value {
				bad[j] = fmt.Errorf("%w: %s appears twice, with values %q and %q", ErrBadState, e.Path, clip(kept[j].Value), clip(e.Value))
			}
			continue
		}
		first[e.Path] = len(kept)
		kept = append(kept, e)
	}
	s.Entries = kept
	for i, e := range s.Entries {
		if bad[i] != nil {
			continue
		}
		if err := entryError(e, possible, hasPossible); err != nil {
			bad[i] = fmt.Errorf("%w: %w", ErrBadState, err)
		}
	}
	return bad, nil
}

// possibleCPUs reads the CPUs the host can have; absent in some
// captures, then unchecked (has is false).
func possibleCPUs(fsys kfile.FS) (set cpuset.Set, has bool, err error) {
	possible, err := fsys.List(fsys.Path("sys/devices/system/cpu/possible"))
	if kfile.IsNotExist(err) {
		return cpuset.Set{}, false, nil
	}
	return possible, err == nil, err
}

// entryError says why restore cannot write a saved value, nil when it
// can: the value parses in its file's form, names only CPUs the host can
// have, and (for an IRQ) is not empty. Pin asks it of every value before
// it saves them, so it never saves one restore would refuse.
func entryError(e savedValue, possible cpuset.Set, hasPossible bool) error {
	t, err := irq.ParseTarget(e.Path)
	if err != nil {
		return err
	}
	set, err := irq.ParseValue(t, strings.TrimSpace(e.Value))
	if err != nil {
		return fmt.Errorf("%s: value %q: %v", entryName(t), clip(e.Value), err)
	}
	if t.File != irq.FileXPS && set.IsEmpty() {
		return fmt.Errorf("%s: value %q: empty affinity", entryName(t), clip(e.Value))
	}
	if extra := set.Difference(possible); hasPossible && !extra.IsEmpty() {
		return fmt.Errorf("%s: value %q: %s %s %s on this host (possible: %s)", entryName(t), clip(e.Value), units.Choose(extra.Len(), "CPU", "CPUs"), clip(extra.String()), units.Choose(extra.Len(), "does not exist", "do not exist"), possible)
	}
	return nil
}

// entryName names a saved value's file as rows do: "IRQ 284" or
// "eth0 tx-3 xps_cpus".
func entryName(t irq.Target) string {
	if t.File == irq.FileXPS {
		return fmt.Sprintf("%s tx-%d xps_cpus", t.NIC, t.Queue.Or(-1))
	}
	return "IRQ " + strconv.Itoa(t.IRQ.Or(-1))
}

// clip shortens a value for a message: a mask of 10,000 groups is not
// quoted whole.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Gone returns the entries whose IRQ or tx queue no longer exists under
// root (a driver reloaded, a device removed), by index, with what says
// so. Restore writes the others and reports these.
func (s *pinState) Gone(fsys kfile.FS) (map[int]error, error) {
	gone := map[int]error{}
	for i, e := range s.Entries {
		t, err := irq.ParseTarget(e.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrBadState, i, err)
		}
		var dir string
		if t.File == irq.FileXPS {
			dir = filepath.Dir(t.Path)
		} else {
			dir = "/proc/irq/" + strconv.Itoa(t.IRQ.Or(-1))
		}
		_, err = fsys.Stat(fsys.Path(dir))
		switch {
		case err == nil:
		case kfile.IsNotExist(err) && t.File == irq.FileXPS:
			gone[i] = fmt.Errorf("NIC %s has no tx queue %s now", t.NIC, t.Queue)
		case kfile.IsNotExist(err):
			gone[i] = fmt.Errorf("IRQ %s no longer exists", t.IRQ)
		default:
			return nil, fmt.Errorf("entry %d (%s): %w", i, e.Path, err)
		}
	}
	return gone, nil
}

// newestState returns the newest state file under root's state folder:
// the greatest "state-*.json" name, as names sort by creation time.
// errNoState is wrapped by newestState's error when the root's state
// folder holds no state file.
var errNoState = errors.New("no state file")

func newestState(fsys kfile.FS) (string, error) {
	fsys, dir, err := stateFS(fsys, StateDir(fsys))
	if err != nil {
		return "", err
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		if kfile.IsNotExist(err) {
			return "", fmt.Errorf("%w: %s does not exist (nothing was pinned on this root)", errNoState, dir)
		}
		return "", fmt.Errorf("find state file: %w", err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, "state-") && strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("%w in %s (nothing left to restore)", errNoState, dir)
	}
	return filepath.Join(dir, slices.Max(names)), nil
}

// retire renames a state file that is no longer current to path+suffix
// (".restored", ".rolled-back"), so that NewestState finds the one before.
func retire(fsys kfile.FS, path, suffix string) (string, error) {
	fsys, abs, err := stateFS(fsys, path)
	if err != nil {
		return "", fmt.Errorf("retire state file: %w", err)
	}
	to := path + suffix
	if err := fsys.Rename(abs, abs+suffix, false); err != nil {
		return "", fmt.Errorf("retire state file: %w", err)
	}
	return to, nil
}

// Lock is the per-root lock that lets one pin or restore run at a time.
type Lock struct {
	f    *os.File
	root string // the absolute root it locks
}

// lockPath returns <root>/var/lib/irqnuma/lock, next to the default state
// files.
func lockPath(fsys kfile.FS) string { return filepath.Join(StateDir(fsys), "lock") }

// AcquireLock takes the root's lock without waiting (flock, so a crashed
// run leaves no stale lock). It fails wrapping ErrLocked when another
// process holds it. The lock and its folder are made inside the root
// (a link planted on the way is followed inside it, a link or a hard
// link at the lock itself is refused), and once it is held the
// temporary files a killed run left in the folder are removed.
func AcquireLock(fsys kfile.FS) (*Lock, error) {
	root := fsys.Root()
	fsys, p, err := stateFS(fsys, lockPath(fsys))
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := fsys.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	f, err := fsys.CreateFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock: stat %s: %w", p, err)
	}
	if st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("lock %s: has %d names (a hard link): not a lock irqnuma made; remove it", p, st.Nlink)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := fsys.String(p)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if holder = strings.TrimSpace(holder); holder != "" {
				return nil, fmt.Errorf("%w (lock %s held by pid %s)", ErrLocked, p, holder)
			}
			return nil, fmt.Errorf("%w (lock %s)", ErrLocked, p)
		}
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	// The pid is for people reading the file; flock is the lock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err := atomicfile.RemoveTemps(fsys, filepath.Dir(p)); err != nil {
		f.Truncate(0)
		f.Close()
		return nil, fmt.Errorf("lock: remove what a killed run left: %w", err)
	}
	abs, _ := filepath.Abs(root)
	return &Lock{f: f, root: abs}, nil
}

// held checks that l is a lock taken and not released on root, for a
// caller that holds it across several pins and restores.
func (l *Lock) held(fsys kfile.FS) error {
	root := fsys.Root()
	abs, err := filepath.Abs(root)
	switch {
	case err != nil:
		return fmt.Errorf("root: %w", err)
	case l.f == nil:
		return errors.New("lock: already released")
	case l.root != abs:
		return fmt.Errorf("lock: held for root %s, not %s", l.root, abs)
	}
	return nil
}

// Release frees the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	// Unlock before closing: the flock belongs to the open file, which a
	// child forked meanwhile (bench's command, a test's) holds a copy of
	// until it execs; closing this descriptor alone would leave the lock
	// held for that moment, and a restore right after refused.
	name := l.f.Name()
	uerr := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	err := l.f.Close()
	l.f = nil
	if err == nil && uerr != nil {
		err = fmt.Errorf("unlock %s: %w", name, uerr)
	}
	return err
}

// maxPID is the kernel's PID_MAX_LIMIT (4M on 64-bit hosts).
const maxPID = 1 << 22

// checkThreads says why the saved threads cannot be restored, nil when
// every one can: a pid in the kernel's range, once; a NAPI thread's name
// of the NIC it is saved for; CPUs in list form, not empty, that the
// host can have. Any one refuses the whole file, before anything is
// written: a state naming another task, or a set the kernel would not
// take, is not a file a pin wrote.
func checkThreads(threads []savedThread, possible cpuset.Set, hasPossible bool) error {
	seen := map[int]bool{}
	for i, t := range threads {
		if err := threadError(t, possible, hasPossible); err != nil {
			return fmt.Errorf("thread %d: %w", i, err)
		}
		if seen[t.PID] {
			return fmt.Errorf("thread %d: pid %d appears twice", i, t.PID)
		}
		seen[t.PID] = true
	}
	return nil
}

// threadError says why one saved thread cannot be restored, nil when it
// can. Pin asks it of every thread before it saves them.
func threadError(t savedThread, possible cpuset.Set, hasPossible bool) error {
	if t.PID <= 0 || t.PID > maxPID {
		return fmt.Errorf("pid %d: not a pid (1 to %d)", t.PID, maxPID)
	}
	if _, ok := napiIDOf(t.Comm, t.NIC); !ok || !isNAPIComm(t.Comm) {
		return fmt.Errorf("pid %d: %q is not a NAPI thread of NIC %q (napi/NIC-ID)", t.PID, clip(t.Comm), clip(t.NIC))
	}
	if t.Queue < -1 || t.IRQ < -1 {
		return fmt.Errorf("%s (pid %d): queue %d, IRQ %d: want -1 or more", t.Comm, t.PID, t.Queue, t.IRQ)
	}
	set, err := cpuset.ParseList(t.CPUs)
	if err != nil {
		return fmt.Errorf("%s (pid %d): cpus %q: %v", t.Comm, t.PID, clip(t.CPUs), err)
	}
	if set.IsEmpty() {
		return fmt.Errorf("%s (pid %d): cpus %q: empty", t.Comm, t.PID, clip(t.CPUs))
	}
	if extra := set.Difference(possible); hasPossible && !extra.IsEmpty() {
		return fmt.Errorf("%s (pid %d): cpus %q: %s %s %s on this host (possible: %s)", t.Comm, t.PID, clip(t.CPUs),
			units.Choose(extra.Len(), "CPU", "CPUs"), clip(extra.String()), units.Choose(extra.Len(), "does not exist", "do not exist"), possible)
	}
	return nil
}
