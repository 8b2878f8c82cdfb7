package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// line is one result line; see package lab's labLine.
type line struct {
	Kind     string  `json:"kind"`
	Scenario string  `json:"scenario,omitempty"`
	Check    string  `json:"check,omitempty"`
	OK       bool    `json:"ok"`
	Detail   string  `json:"detail,omitempty"`
	Name     string  `json:"name,omitempty"`
	Data     string  `json:"data,omitempty"`
	Uptime   float64 `json:"uptime,omitempty"`
}

var (
	out     *os.File = os.Stdout
	outMu   sync.Mutex
	current string // the scenario running
)

// abort ends the current scenario after a failed must check.
type abort struct{}

func emit(l line) {
	b, _ := json.Marshal(l)
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Fprintf(out, "LAB %s\n", b)
	if out != os.Stdout {
		fmt.Printf("[%s] %s %s ok=%v %.300s\n", l.Kind, l.Scenario, l.Check, l.OK, l.Detail)
	}
}

// check reports one comparison of the current scenario.
func check(name string, ok bool, format string, args ...any) bool {
	emit(line{Kind: "check", Scenario: current, Check: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	return ok
}

// must is check that ends the scenario when it fails: what follows
// depends on it.
func must(name string, ok bool, format string, args ...any) {
	if !check(name, ok, format, args...) {
		panic(abort{})
	}
}

// info reports a fact measured, for the log.
func info(name, format string, args ...any) {
	emit(line{Kind: "info", Scenario: current, Check: name, Detail: fmt.Sprintf(format, args...)})
}
