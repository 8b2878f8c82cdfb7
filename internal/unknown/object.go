package unknown

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Suffix follows a field's JSON name in the key that holds its reason.
const Suffix = "_unknown"

// field is one Value field of a struct: where it is and its JSON name.
type field struct {
	index int
	name  string
}

var fieldCache sync.Map // reflect.Type → []field

// valueFields returns the direct fields of struct type t that hold a
// Value, with the names encoding/json gives them.
func valueFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	rt := reflect.TypeFor[reasoned]()
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() || !sf.Type.Implements(rt) {
			continue
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		fs = append(fs, field{index: i, name: name})
	}
	fieldCache.Store(t, fs)
	return fs
}

// MarshalObject encodes the struct v as encoding/json does, and beside
// every Value field that is unknown writes its reason under the field's
// name and Suffix. v is a struct of a type without its own MarshalJSON,
// so a type T holding Values encodes itself as
//
//	func (x T) MarshalJSON() ([]byte, error) {
//		type plain T
//		return unknown.MarshalObject(plain(x))
//	}
func MarshalObject(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("unknown.MarshalObject: %s is not a struct", rv.Type())
	}
	fs := valueFields(rv.Type())
	if len(fs) == 0 || len(b) < 2 || b[len(b)-1] != '}' {
		return b, nil
	}
	var extra []byte
	for _, f := range fs {
		r, isUnknown := rv.Field(f.index).Interface().(reasoned).unknownReason()
		if !isUnknown {
			continue
		}
		rb, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		extra = append(extra, ',', '"')
		extra = append(extra, f.name...)
		extra = append(extra, Suffix...)
		extra = append(extra, '"', ':')
		extra = append(extra, rb...)
	}
	if extra == nil {
		return b, nil
	}
	out := make([]byte, 0, len(b)+len(extra))
	out = append(out, b[:len(b)-1]...)
	if len(b) == 2 { // {}: no field before the first reason
		extra = extra[1:]
	}
	out = append(out, extra...)
	return append(out, '}'), nil
}

// UnmarshalObject decodes b into the struct v points to as
// encoding/json does, and gives each unknown Value field the reason
// written beside it; the counterpart of MarshalObject.
func UnmarshalObject(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("unknown.UnmarshalObject: %T is not a pointer to a struct", v)
	}
	rv = rv.Elem()
	fs := valueFields(rv.Type())
	if len(fs) == 0 {
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	for _, f := range fs {
		raw, ok := keys[f.name+Suffix]
		if !ok {
			continue
		}
		var r Reason
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("%s%s: %w", f.name, Suffix, err)
		}
		rv.Field(f.index).Addr().Interface().(settable).setReason(r)
	}
	return nil
}
