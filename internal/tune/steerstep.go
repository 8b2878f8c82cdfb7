package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// A transaction may change NICs' steering before it places IRQs (zc
// prepare's channels, RSS table, ntuple rule and rings): each change is a
// SteerStep, its old value is saved to the state file with the IRQs'
// before the first write, a failure or a stop undoes the steps made
// newest first, and irq restore undoes them all newest first (so the
// table goes back before the channels shrink), then the IRQs: with a
// channel change the affinity of every IRQ of the NIC is saved too,
// since the driver may set it when the channels change.

// SteerStep is one change of a NIC's steering. Exactly one of Channels,
// RSS, Rings, Rule and NAPI is set.
type SteerStep struct {
	NIC      string
	Channels *nicset.ChannelCounts
	RSS      *nicset.RSSSetting
	Rings    *nicset.RingSetting
	Rule     *nicset.RuleSpec
	NAPI     *NAPIStep
}

// Name says what the step sets: "eth2 channels combined 4".
func (s SteerStep) Name() string {
	switch {
	case s.Channels != nil:
		return s.NIC + " channels" + channelsText(fromCounts(*s.Channels))
	case s.RSS != nil:
		return s.NIC + " rss " + rssText(s.RSS.Default, s.RSS.Table, s.RSS.Key != nil)
	case s.Rings != nil:
		return s.NIC + " rings" + ringsText(savedRings{TCPDataSplit: s.Rings.TCPDataSplit, HDSThresh: s.Rings.HDSThresh})
	case s.Rule != nil:
		return fmt.Sprintf("%s ntuple flow-type %s dst-port %d action %d", s.NIC, s.Rule.FlowType, s.Rule.DstPort, s.Rule.Queue)
	case s.NAPI != nil:
		return fmt.Sprintf("%s napi %d%s", s.NIC, s.NAPI.ID, napiText(fromNAPIStep(*s.NAPI)))
	}
	return s.NIC + " (nothing)"
}

// SteerChange is the steering a Pin changes before its IRQs.
type SteerChange struct {
	Setter nicset.Setter
	Steps  []SteerStep
}

// stepFault, when set, is called before steering step i of a
// transaction (and with len(Steps) before its IRQ writes); an error it
// returns fails the transaction there. Tests set it, and the lab's guest
// binary through SetLabFault (fault_lab.go, built only with the labfault
// tag); nothing in the shipped binary can.
var stepFault func(i int) error

// SteerRow is what became of one steering step of a pin or a restore.
type SteerRow struct {
	NIC    string `json:"nic"`
	Step   string `json:"step"`
	From   string `json:"from"`
	To     string `json:"to"`
	Result Result `json:"result"`
	Error  string `json:"error"`
	// err is the error Error says when the step failed or its rollback
	// did (a *RollbackError).
	err error
}

// Err returns the error the row's Error says when the step failed or its
// rollback did (a *RollbackError), nil when it did neither.
func (r SteerRow) Err() error { return r.err }

// fail records err as the row's error.
func (r *SteerRow) fail(err error) { r.err, r.Error = err, err.Error() }

// savedStep is one steering step's old value in a state file (version
// 3; a NAPI step's, version 4): what irq restore writes back. Exactly
// one part is set.
type savedStep struct {
	NIC      string         `json:"nic"`
	Channels *savedChannels `json:"channels,omitempty"`
	RSS      *savedRSS      `json:"rss,omitempty"`
	Rings    *savedRings    `json:"rings,omitempty"`
	Rule     *savedRule     `json:"rule_added,omitempty"`
	NAPI     *savedNAPI     `json:"napi,omitempty"`
}

type savedChannels struct {
	RX       *uint32 `json:"rx,omitempty"`
	TX       *uint32 `json:"tx,omitempty"`
	Other    *uint32 `json:"other,omitempty"`
	Combined *uint32 `json:"combined,omitempty"`
}

// savedRSS is context 0's table as it was: the driver's default
// (restored as ethtool -X IF default does, so the driver spreads it
// again when the channels change back) or the table itself; and the key
// when the step changed it.
type savedRSS struct {
	Default bool      `json:"default"`
	Table   []uint32  `json:"table,omitempty"`
	Key     steer.Key `json:"key,omitempty"`
}

type savedRings struct {
	TCPDataSplit *nicset.DataSplit `json:"tcp_data_split,omitempty"`
	HDSThresh    *uint32           `json:"hds_thresh,omitempty"`
}

// savedRule is a rule the pin added: restore deletes the rule matching
// it at a location no rule held before.
type savedRule struct {
	Spec   nicset.RuleSpec `json:"spec"`
	Before []uint32        `json:"locations_before"`
}

func fromCounts(c nicset.ChannelCounts) savedChannels {
	return savedChannels{RX: c.RX, TX: c.TX, Other: c.Other, Combined: c.Combined}
}

func (c savedChannels) counts() nicset.ChannelCounts {
	return nicset.ChannelCounts{RX: c.RX, TX: c.TX, Other: c.Other, Combined: c.Combined}
}

func channelsText(c savedChannels) string {
	var b strings.Builder
	for _, f := range []struct {
		name string
		v    *uint32
	}{{"rx", c.RX}, {"tx", c.TX}, {"other", c.Other}, {"combined", c.Combined}} {
		if f.v != nil {
			fmt.Fprintf(&b, " %s %d", f.name, *f.v)
		}
	}
	return b.String()
}

func rssText(def bool, table []uint32, key bool) string {
	s := "table default"
	if !def {
		s = "table " + tableText(table)
	}
	if key {
		s += " and key"
	}
	return s
}

// tableText shows a table by the queues it names: "over 0,2,3 (128)".
func tableText(t []uint32) string {
	var qs []int
	for _, q := range t {
		if !slices.Contains(qs, int(q)) {
			qs = append(qs, int(q))
		}
	}
	slices.Sort(qs)
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = strconv.Itoa(q)
	}
	return fmt.Sprintf("over %s (%d entries)", strings.Join(parts, ","), len(t))
}

func ringsText(r savedRings) string {
	var s string
	if r.TCPDataSplit != nil {
		s += " tcp-data-split " + string(*r.TCPDataSplit)
	}
	if r.HDSThresh != nil {
		s += " hds-thresh " + strconv.FormatUint(uint64(*r.HDSThresh), 10)
	}
	return s
}

// saveSteer reads each step's NIC and returns the old value of what the
// step changes. A value that is unknown cannot be put back, so it stops
// the transaction before anything is written.
func saveSteer(set nicset.Setter, steps []SteerStep) ([]savedStep, error) {
	read := map[string]*steer.NIC{}
	var out []savedStep
	for _, s := range steps {
		n, ok := read[s.NIC]
		if !ok {
			var err error
			if n, err = set.Read(s.NIC); err != nil {
				return nil, fmt.Errorf("save %s's steering: %w", s.NIC, err)
			}
			read[s.NIC] = n
		}
		v, err := saveStep(n, s)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w; irq restore could not put it back, so nothing was written", ErrUnsaveable, s.Name(), err)
		}
		out = append(out, v)
	}
	return out, nil
}

func saveStep(n *steer.NIC, s SteerStep) (savedStep, error) {
	v := savedStep{NIC: s.NIC}
	var err error
	switch {
	case s.Channels != nil:
		v.Channels, err = saveChannels(n, *s.Channels)
	case s.RSS != nil:
		v.RSS, err = saveRSS(n, *s.RSS)
	case s.Rings != nil:
		v.Rings, err = saveRings(n, *s.Rings)
	case s.Rule != nil:
		v.Rule, err = saveRule(n, *s.Rule)
	case s.NAPI != nil:
		v.NAPI, err = saveNAPI(n, *s.NAPI)
	default:
		err = errors.New("a step that changes nothing")
	}
	return v, err
}

// unknownNow says a part's current value is unknown, and why.
func unknownNow(n *steer.NIC, p steer.Part) error {
	return fmt.Errorf("its current value is unknown (%s)", n.Unknown[p])
}

func saveChannels(n *steer.NIC, c nicset.ChannelCounts) (*savedChannels, error) {
	if n.Channels == nil {
		return nil, unknownNow(n, steer.PartChannels)
	}
	keep := func(want *uint32, cur uint32) *uint32 {
		if want == nil {
			return nil
		}
		return &cur
	}
	return &savedChannels{RX: keep(c.RX, n.Channels.RX), TX: keep(c.TX, n.Channels.TX),
		Other: keep(c.Other, n.Channels.Other), Combined: keep(c.Combined, n.Channels.Combined)}, nil
}

func saveRSS(n *steer.NIC, r nicset.RSSSetting) (*savedRSS, error) {
	if n.RSS == nil || len(n.RSS.Table) == 0 {
		return nil, unknownNow(n, steer.PartRSSTable)
	}
	old := savedRSS{Default: nicset.IsDefaultTable(n.RSS.Table, n.RSS.Rings)}
	if !old.Default {
		old.Table = slices.Clone(n.RSS.Table)
	}
	if r.Key != nil {
		if len(n.RSS.Key) == 0 {
			return nil, unknownNow(n, steer.PartRSSKey)
		}
		old.Key = slices.Clone(n.RSS.Key)
	}
	return &old, nil
}

func saveRings(n *steer.NIC, r nicset.RingSetting) (*savedRings, error) {
	if n.Rings == nil {
		return nil, unknownNow(n, steer.PartRings)
	}
	old := savedRings{}
	if r.TCPDataSplit != nil {
		was := nicset.DataSplitDefault
		if s, ok := n.Rings.TCPDataSplit.Get(); ok {
			was = nicset.DataSplit(s)
		} else if n.Rings.TCPDataSplit.Why() != steer.DataSplitNA {
			return nil, errors.New("the driver reports no tcp-data-split")
		}
		old.TCPDataSplit = &was
	}
	if r.HDSThresh != nil {
		if old.HDSThresh = n.Rings.HDSThresh; old.HDSThresh == nil {
			return nil, errors.New("the driver reports no hds-thresh")
		}
	}
	return &old, nil
}

func saveRule(n *steer.NIC, r nicset.RuleSpec) (*savedRule, error) {
	if n.Rules == nil {
		return nil, unknownNow(n, steer.PartRules)
	}
	old := savedRule{Spec: r, Before: []uint32{}}
	for _, got := range n.Rules.Rules {
		old.Before = append(old.Before, got.Location)
	}
	return &old, nil
}

// steerRows are the rows of a steering change's steps, planned.
func steerRows(ch *SteerChange, saved []savedStep) []SteerRow {
	rows := make([]SteerRow, len(ch.Steps))
	for i, s := range ch.Steps {
		rows[i] = SteerRow{NIC: s.NIC, Step: s.Name(), From: savedText(saved[i]), To: stepTo(s), Result: ResultPlanned}
	}
	return rows
}

// steerSteps are the transaction's steps of a steering change, each
// recording into its row; with the fault hook set (tests, the lab's
// fault run), one more after them that fails when the hook says so
// before the first IRQ is written.
func steerSteps(ch *SteerChange, saved []savedStep, rows []SteerRow) []step {
	var steps []step
	for i := range ch.Steps {
		steps = append(steps, &steerStep{set: ch.Setter, i: i, s: &ch.Steps[i], saved: &saved[i], row: &rows[i]})
	}
	if stepFault != nil {
		steps = append(steps, faultStep(len(ch.Steps)))
	}
	return steps
}

// steerStep is one change of a NIC's steering; its undo puts the saved
// value back.
type steerStep struct {
	set   nicset.Setter
	i     int // the step's place in the change, for the fault hook
	s     *SteerStep
	saved *savedStep
	row   *SteerRow
}

func (s *steerStep) do() error {
	if stepFault != nil {
		if err := stepFault(s.i); err != nil {
			return err
		}
	}
	return applyStep(s.set, *s.s, s.saved)
}

func (s *steerStep) done(err error) bool { return s.row.record(err) }

// record puts a steering step's outcome in its row: changed, or failed
// with err; it reports the failure.
func (r *SteerRow) record(err error) (failed bool) {
	if err != nil {
		r.Result = ResultFailed
		r.fail(err)
		return true
	}
	r.Result = ResultChanged
	return false
}

func (s *steerStep) undo() error { return undoStep(s.set, *s.saved) }

func (s *steerStep) undone(err error) {
	if err != nil {
		s.row.fail(&RollbackError{Step: s.row.Step, Err: err})
		return
	}
	s.row.Result = ResultRolledBack
}

// strict: a NIC half changed is no state to go on from.
func (s *steerStep) strict() bool { return true }

// faultStep is the fault hook's step after the steering: it changes
// nothing and fails the transaction when the hook returns an error.
type faultStep int

func (f faultStep) do() error           { return stepFault(int(f)) }
func (f faultStep) done(err error) bool { return err != nil }
func (faultStep) undo() error           { return nil }
func (faultStep) undone(error)          {}
func (faultStep) strict() bool          { return true }

func markUnchanged(rows []SteerRow) {
	for i := range rows {
		if rows[i].Result == ResultPlanned {
			rows[i].Result = ResultUnchanged
		}
	}
}

func applyStep(set nicset.Setter, s SteerStep, saved *savedStep) error {
	switch {
	case s.Channels != nil:
		return set.SetChannels(s.NIC, *s.Channels)
	case s.RSS != nil:
		return set.SetRSS(s.NIC, *s.RSS)
	case s.Rings != nil:
		return set.SetRings(s.NIC, *s.Rings)
	case s.Rule != nil:
		_, err := set.InsertRule(s.NIC, *s.Rule)
		return err
	case s.NAPI != nil:
		return set.SetNAPI(s.NIC, s.NAPI.ID, s.NAPI.NAPISetting)
	}
	return errors.New("a step that changes nothing")
}

// respreadUndone sets the default RSS table once more on each NIC whose
// channels were put back (see respread); rows (as many as saved) get a
// *RollbackError for a write that fails.
func respreadUndone(set nicset.Setter, saved []savedStep, rows []SteerRow) {
	for _, i := range respread(saved) {
		if err := undoStep(set, saved[i]); err != nil && rows[i].Error == "" {
			rows[i].Result = ResultFailed
			rows[i].fail(&RollbackError{Step: rows[i].Step, Err: err})
		}
	}
}

// respread returns the saved default tables of NICs whose channels were
// also put back: those are set to the default once more after the
// channels, since a kernel may leave the default table of the old
// channel count in place when they change (virtio_net on 6.1), and
// ethtool -x would not read as before. On a kernel that spreads it
// again itself, the second write is the same table.
func respread(saved []savedStep) []int {
	var out []int
	for i, v := range saved {
		if v.RSS == nil || !v.RSS.Default {
			continue
		}
		if slices.ContainsFunc(saved, func(c savedStep) bool { return c.NIC == v.NIC && c.Channels != nil }) {
			out = append(out, i)
		}
	}
	return out
}

// undoStep writes one saved value back.
func undoStep(set nicset.Setter, v savedStep) error {
	switch {
	case v.Channels != nil:
		return set.SetChannels(v.NIC, v.Channels.counts())
	case v.RSS != nil:
		return set.SetRSS(v.NIC, nicset.RSSSetting{Default: v.RSS.Default, Table: v.RSS.Table, Key: v.RSS.Key})
	case v.Rings != nil:
		return set.SetRings(v.NIC, nicset.RingSetting{TCPDataSplit: v.Rings.TCPDataSplit, HDSThresh: v.Rings.HDSThresh})
	case v.Rule != nil:
		return deleteAdded(set, v.NIC, *v.Rule)
	case v.NAPI != nil:
		return set.SetNAPI(v.NIC, v.NAPI.ID, v.NAPI.setting())
	}
	return errors.New("a saved step that holds nothing")
}

// deleteAdded deletes the rules matching the saved rule's spec at a
// location no rule held before it was added.
func deleteAdded(set nicset.Setter, nic string, r savedRule) error {
	n, err := set.Read(nic)
	if err != nil {
		return err
	}
	if n.Rules == nil {
		return fmt.Errorf("%s ntuple: the rules are unknown (%s)", nic, n.Unknown[steer.PartRules])
	}
	for _, got := range n.Rules.Rules {
		if r.Spec.Matches(got) && !slices.Contains(r.Before, got.Location) {
			if err := set.DeleteRule(nic, got.Location); err != nil {
				return err
			}
		}
	}
	return nil
}

func savedText(v savedStep) string {
	switch {
	case v.Channels != nil:
		return strings.TrimSpace(channelsText(*v.Channels))
	case v.RSS != nil:
		return rssText(v.RSS.Default, v.RSS.Table, v.RSS.Key != nil)
	case v.Rings != nil:
		return strings.TrimSpace(ringsText(*v.Rings))
	case v.Rule != nil:
		return "no such rule"
	case v.NAPI != nil:
		return strings.TrimSpace(napiText(*v.NAPI))
	}
	return ""
}

func stepTo(s SteerStep) string {
	switch {
	case s.Channels != nil:
		return strings.TrimSpace(channelsText(fromCounts(*s.Channels)))
	case s.RSS != nil:
		return rssText(s.RSS.Default, s.RSS.Table, s.RSS.Key != nil)
	case s.Rings != nil:
		return strings.TrimSpace(ringsText(savedRings{TCPDataSplit: s.Rings.TCPDataSplit, HDSThresh: s.Rings.HDSThresh}))
	case s.Rule != nil:
		return fmt.Sprintf("flow-type %s dst-port %d action %d", s.Rule.FlowType, s.Rule.DstPort, s.Rule.Queue)
	case s.NAPI != nil:
		return strings.TrimSpace(napiText(fromNAPIStep(*s.NAPI)))
	}
	return ""
}

// openSetter opens the Setter irq restore undoes steering steps with; a
// test replaces it.
var openSetter = nicset.OpenSetter

// restoreSteer puts back the state's steering steps newest first, then
// the tables a channel change respread, as one final txn: each is tried
// whatever the others did, and none is undone. A captured root cannot
// change steering: every step fails, saying so.
func (r *RestoreResult) restoreSteer(ctx context.Context, fsys kfile.FS, saved []savedStep) {
	if len(saved) == 0 {
		return
	}
	set, err := openSetter(fsys)
	if err == nil {
		defer set.Close()
	}
	var rows []SteerRow
	var order []int
	for i := len(saved) - 1; i >= 0; i-- {
		v := saved[i]
		row := SteerRow{NIC: v.NIC, Step: v.NIC + " " + savedKind(v), To: savedText(v), Result: ResultPlanned}
		if v.Rule != nil {
			row.To = "deleted"
		}
		rows, order = append(rows, row), append(order, i)
	}
	for _, i := range respread(saved) {
		v := saved[i]
		rows = append(rows, SteerRow{NIC: v.NIC, Step: v.NIC + " rss (again, after the channels)", To: savedText(v), Result: ResultPlanned})
		order = append(order, i)
	}
	tx := txn{final: true}
	for k, i := range order {
		tx.steps = append(tx.steps, &steerBackStep{set: set, openErr: err, saved: saved[i], row: &rows[k]})
	}
	tx.run(ctx)
	for _, row := range rows {
		if row.Result == ResultFailed {
			r.Failed = append(r.Failed, row.Step+": "+row.Error)
		}
	}
	r.Steer = append(r.Steer, rows...)
}

// steerBackStep is a restore's step that puts one saved steering value
// back; openErr, when set, is why no steering can be written at all.
type steerBackStep struct {
	finalStep
	set     nicset.Setter
	openErr error
	saved   savedStep
	row     *SteerRow
}

func (s *steerBackStep) do() error {
	if s.openErr != nil {
		return s.openErr
	}
	return undoStep(s.set, s.saved)
}

func (s *steerBackStep) done(err error) bool { return s.row.record(err) }

func savedKind(v savedStep) string {
	switch {
	case v.Channels != nil:
		return "channels"
	case v.RSS != nil:
		return "rss"
	case v.Rings != nil:
		return "rings"
	case v.Rule != nil:
		return fmt.Sprintf("ntuple flow-type %s dst-port %d action %d", v.Rule.Spec.FlowType, v.Rule.Spec.DstPort, v.Rule.Spec.Queue)
	case v.NAPI != nil:
		return fmt.Sprintf("napi %d", v.NAPI.ID)
	}
	return "nothing"
}

// checkSteer says why the steering steps of a state of version version
// cannot be restored: a NIC name the kernel would not have, a step
// holding nothing or more than one part, or a part that is wrong (see
// checkSavedNAPI).
func checkSteer(steps []savedStep, version int) error {
	for i, v := range steps {
		if v.NIC == "" || len(v.NIC) >= 16 || strings.ContainsAny(v.NIC, "/: \t\n") || v.NIC == "." || v.NIC == ".." {
			return fmt.Errorf("steering step %d: %q is not an interface name", i, clip(v.NIC))
		}
		parts := 0
		for _, set := range []bool{v.Channels != nil, v.RSS != nil, v.Rings != nil, v.Rule != nil, v.NAPI != nil} {
			if set {
				parts++
			}
		}
		if parts != 1 {
			return fmt.Errorf("steering step %d (%s): holds %d parts, want 1", i, v.NIC, parts)
		}
		if v.RSS != nil && v.RSS.Default == (len(v.RSS.Table) > 0) {
			return fmt.Errorf("steering step %d (%s): an RSS table must be either the default or a table", i, v.NIC)
		}
		if v.Rule != nil && v.Rule.Spec.FlowType != "tcp4" && v.Rule.Spec.FlowType != "tcp6" {
			return fmt.Errorf("steering step %d (%s): rule flow type %q: want tcp4 or tcp6", i, v.NIC, clip(string(v.Rule.Spec.FlowType)))
		}
		if v.NAPI != nil {
			if err := checkSavedNAPI(*v.NAPI, version); err != nil {
				return fmt.Errorf("steering step %d (%s): %w", i, v.NIC, err)
			}
		}
	}
	return nil
}

// recordSteer counts the steering steps kept and names those whose
// write or rollback failed.
func (res *PinResult) recordSteer() {
	for _, r := range res.Steer {
		var rb *RollbackError
		switch {
		case errors.As(r.err, &rb):
			res.RollbackFailed = append(res.RollbackFailed, rb.listed())
		case r.Result == ResultFailed:
			res.Failed = append(res.Failed, r.Step+": "+r.Error)
		case r.Result == ResultChanged:
			res.Changed++
		}
	}
}

// aroundFiles are the affinity files of the IRQs of each NIC whose
// channels the transaction changes, other than those it writes itself:
// a driver may set its queue IRQs' affinity when the channels change
// (virtio_net does), so their values are saved with the others, put back
// after a rollback, and written back by irq restore after the channels.
func aroundFiles(req PinRequest, t *irq.Table, changes []Change) ([]string, error) {
	if req.Steer == nil {
		return nil, nil
	}
	var out []string
	for _, s := range req.Steer.Steps {
		if s.Channels == nil {
			continue
		}
		for _, q := range t.ForNIC(s.NIC) {
			if !q.Affinity.Known() || unknown.Is(q.Managed, true) {
				continue
			}
			p, err := irq.AffinityFile(req.Root, q.IRQ)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, p) && !slices.ContainsFunc(changes, func(c Change) bool { return c.Path == p }) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// putBack writes back, after a rollback, every saved affinity that is
// not what its file says now: those around a channel change, and those
// of the IRQs the pin places, which the driver may have moved before the
// pin wrote them.
func (res *PinResult) putBack(ctx context.Context, req PinRequest, saved []Change) {
	var changes []Change
	for _, c := range saved {
		if cur, err := irq.ReadValue(req.Root, c.Path); err != nil || cur != c.To {
			changes = append(changes, Change{Path: c.Path, From: cur, To: c.To})
		}
	}
	applied := putBackAll(ctx, req.Writer, req.Root, changes)
	for i, r := range applied {
		if r.Err != nil {
			res.RollbackFailed = append(res.RollbackFailed, changes[i].Path+": "+r.Err.Error())
		}
	}
}
