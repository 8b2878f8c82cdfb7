// Package unknown is the one way irqnuma says a fact is not known: a
// Value holds what was read, or the Reason it could not be, and in JSON
// an unknown value is null with its reason beside it, under the field's
// name and "_unknown" ("numa_node": null, "numa_node_unknown":
// {"reason": "not reported by the host", "detail": "numa_node is -1"}).
//
// Readers build Values, judges branch on Get, renderers print String or
// encode the Value; nothing downstream invents a -1, a companion bool or a
// free-text why of its own.
package unknown

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
)

// Kind is why a fact is not known: one of the constants below. It reads
// as the words the text output prints.
type Kind string

// The kinds of unknown.
const (
	// KindDriver: the driver does not implement it (EOPNOTSUPP).
	KindDriver Kind = "not supported by the driver"
	// KindKernel: this kernel has no such file, netlink family, command or
	// attribute.
	KindKernel Kind = "not supported by this kernel"
	// KindPermission: the kernel refused the read (EPERM, EACCES).
	KindPermission Kind = "not permitted"
	// KindNotCaptured: a captured root (a tree, a snapshot, a sosreport)
	// does not hold it.
	KindNotCaptured Kind = "not captured"
	// KindMalformed: it was read, and what was read is not in the kernel's
	// format; Detail says what is wrong.
	KindMalformed Kind = "malformed"
	// KindNotReported: the host was asked and says it does not know (a
	// numa_node of -1, a speed of -1 with the link down, an offline
	// CPU's topology).
	KindNotReported Kind = "not reported by the host"
	// KindNotApplicable: the fact has no meaning for this thing (the queue
	// of an interrupt that serves no queue).
	KindNotApplicable Kind = "not applicable"
	// KindFailed: the read failed for another reason; Detail names it.
	KindFailed Kind = "failed"
	// KindNotRead: nobody set the Value (its zero Reason). Output that shows
	// it shows a reader that forgot to say why.
	KindNotRead Kind = "not read"
)

// Kinds are every Kind, in the order the constants are declared.
var Kinds = []Kind{KindDriver, KindKernel, KindPermission, KindNotCaptured, KindMalformed, KindNotReported, KindNotApplicable, KindFailed, KindNotRead}

// Reason is why one fact is unknown, with its evidence: the errno, the
// file that was missing, or what was wrong with it.
type Reason struct {
	Kind   Kind   `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// Because returns the Reason of kind k with detail.
func Because(k Kind, detail string) Reason { return Reason{Kind: k, Detail: detail} }

// String is the kind, and the detail in parentheses when there is one:
// "not captured (no sys/class/net/eth0/speed)".
func (r Reason) String() string {
	k := r.Kind
	if k == "" {
		k = KindNotRead
	}
	if r.Detail == "" {
		return string(k)
	}
	return string(k) + " (" + r.Detail + ")"
}

// Value is a fact of type T that is known, or the Reason it is not. The
// zero Value is unknown, with the reason "not read": a Value nobody set
// is never mistaken for a known zero.
type Value[T any] struct {
	v     T
	known bool
	why   Reason
}

// Of returns the known value v.
func Of[T any](v T) Value[T] { return Value[T]{v: v, known: true} }

// Not returns a Value of T that is unknown for r.
func Not[T any](r Reason) Value[T] { return Value[T]{why: r} }

// NotAs returns a Value of T that is unknown, of kind k with detail.
func NotAs[T any](k Kind, detail string) Value[T] { return Not[T](Because(k, detail)) }

// Get returns the value and true when it is known; the zero T and false
// when it is not.
func (x Value[T]) Get() (T, bool) { return x.v, x.known }

// Known reports whether the value is known.
func (x Value[T]) Known() bool { return x.known }

// Or returns the value when it is known, else d.
func (x Value[T]) Or(d T) T {
	if x.known {
		return x.v
	}
	return d
}

// Why returns why the value is unknown (the zero Reason when it is
// known, NotRead when it is unknown and nobody said why).
func (x Value[T]) Why() Reason {
	if !x.known && x.why.Kind == "" {
		return Reason{Kind: KindNotRead, Detail: x.why.Detail}
	}
	return x.why
}

// Is reports whether the value is known and equal to v.
func Is[T comparable](x Value[T], v T) bool { return x.known && x.v == v }

// Same reports whether a and b are both known and equal.
func Same[T comparable](a, b Value[T]) bool { return a.known && b.known && a.v == b.v }

// String formats a known value as fmt's %v would for strings, numbers,
// booleans and fmt.Stringers (a named string type prints its string, not
// a quoted one), and an unknown one as "unknown".
func (x Value[T]) String() string {
	if !x.known {
		return "unknown"
	}
	if v, ok := any(x.v).(interface{ String() string }); ok {
		return v.String()
	}
	switch r := reflect.ValueOf(x.v); r.Kind() {
	case reflect.String:
		return r.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(r.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(r.Uint(), 10)
	case reflect.Bool:
		return strconv.FormatBool(r.Bool())
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(r.Float(), 'g', -1, 64)
	}
	b, err := json.Marshal(x.v)
	if err != nil {
		return "?"
	}
	return string(b)
}

// MarshalJSON encodes a known value as T encodes and an unknown one as
// null; the struct holding it writes the reason beside it (MarshalObject).
func (x Value[T]) MarshalJSON() ([]byte, error) {
	if !x.known {
		return []byte("null"), nil
	}
	return json.Marshal(x.v)
}

// UnmarshalJSON decodes null as unknown (the struct holding it restores
// the reason, UnmarshalObject) and anything else as T decodes it.
func (x *Value[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Value[T]{why: Because(KindNotCaptured, "null in the document")}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*x = Of(v)
	return nil
}

// reasoned is what MarshalObject and UnmarshalObject see of a Value of
// any T.
type reasoned interface {
	unknownReason() (Reason, bool)
}

type settable interface {
	setReason(Reason)
}

func (x Value[T]) unknownReason() (Reason, bool) { return x.Why(), !x.known }

func (x *Value[T]) setReason(r Reason) {
	if x.known {
		return
	}
	if r.Kind == KindNotRead {
		r.Kind = ""
	}
	x.why = r
}

// ErrUnknown is what an error about a fact that was needed and is
// unknown is (tune.ErrLocalityUnknown): a caller tests
// errors.Is(err, ErrUnknown).
var ErrUnknown = errors.New("unknown")
