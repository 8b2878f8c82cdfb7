package jsondoc

import (
	"bytes"
	"testing"
)

func TestWrite(t *testing.T) {
	v := map[string]any{"nic": "eth0\u202e<x>", "irqs": []int{1, 2}}
	tests := []struct {
		give bool // indent
		want string
	}{
		{false, `{"schema":"topology","version":2,"irqs":[1,2],"nic":"eth0\u202e\u003cx\u003e"}` + "\n"},
		{true, "{\n  \"schema\": \"topology\",\n  \"version\": 2,\n  \"irqs\": [\n    1,\n    2\n  ],\n" +
			"  \"nic\": \"eth0\\u202e\\u003cx\\u003e\"\n}\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := Write(&b, SchemaTopology, v, tt.give); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("Write(indent %v) = %q, want %q", tt.give, b.String(), tt.want)
		}
	}
	var b bytes.Buffer
	if err := Write(&b, SchemaMap, struct{}{}, false); err != nil || b.String() != `{"schema":"map","version":2}`+"\n" {
		t.Errorf("Write of an empty object = %q, %v", b.String(), err)
	}
	for _, bad := range []any{func() {}, []int{1}, 3} {
		if err := Write(&bytes.Buffer{}, SchemaMap, bad, false); err == nil {
			t.Errorf("Write(%T) gave no error", bad)
		}
	}
}
