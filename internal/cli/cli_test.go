package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/spf13/pflag"
)

func TestCode(t *testing.T) {
	bg := context.Background()
	stopped, cancel := context.WithCancelCause(bg)
	cancel(shutdown.Cause(syscall.SIGTERM))
	for _, tt := range []struct {
		name   string
		ctx    context.Context
		err    error
		code   int
		stderr string
	}{
		{"success", bg, nil, 0, ""},
		{"plain error", bg, errors.New("read /proc/interrupts: boom"), 1, "irqnuma: read /proc/interrupts: boom\n"},
		{"usage", bg, Usagef("--count %d: want at least 1", 0), 2, "irqnuma: --count 0: want at least 1\n"},
		{"wrapped usage", bg, fmt.Errorf("pin: %w", Usage(errors.New("bad"))), 2, "irqnuma: pin: bad\n"},
		{"unknown NIC", bg, fmt.Errorf("%w %q", topology.ErrUnknownNIC, "eth9"), 2, "irqnuma: unknown NIC \"eth9\"\n"},
		{"cobra arguments", bg, errors.New(`accepts at most 1 arg(s), received 2`), 2, "irqnuma: accepts at most 1 arg(s), received 2\n"},
		{"exit with nothing to say", bg, Exit(3, nil), 3, ""},
		{"exit with a word", bg, Exit(126, errors.New("start x: permission denied")), 126, "irqnuma: start x: permission denied\n"},
		{"broken pipe is silent", bg, fmt.Errorf("write: %w", syscall.EPIPE), 141, ""},
		{"stopped and cancelled", stopped, context.Canceled, 143, ""},
		{"stopped mid-read", stopped, errors.New("read: interrupted"), 143, "irqnuma: read: interrupted\n"},
		{"stopped cleanly", stopped, nil, 143, ""},
		{"joined errors, a line each", bg, errors.Join(errors.New("write a"), errors.New("write b")), 1, "irqnuma: write a\nirqnuma: write b\n"},
		{"a hostile name is escaped", bg, fmt.Errorf("%w \"x\" (this host has: e\x1b]0;pw\a\u202eZ)", topology.ErrUnknownNIC), 2,
			"irqnuma: unknown NIC \"x\" (this host has: e\\x1b]0;pw\\x07\\u202eZ)\n"},
		{"exit beats the signal", stopped, Exit(1, errors.New("rollback incomplete")), 1, "irqnuma: rollback incomplete\n"},
	} {
		var b bytes.Buffer
		if code := Code(tt.ctx, tt.err, &b); code != tt.code || b.String() != tt.stderr {
			t.Errorf("%s: code %d, stderr %q; want %d, %q", tt.name, code, b.String(), tt.code, tt.stderr)
		}
	}
	if Exit(3, nil).Error() != "exit 3" {
		t.Errorf("Exit(3, nil) says %q", Exit(3, nil))
	}
}

func TestFlagError(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Int("count", 0, "")
	fs.Duration("interval", 0, "")
	fs.Bool("all", false, "")
	for _, tt := range []struct{ args, want string }{
		{"--count=x", `--count "x": want a whole number`},
		{"--interval=soon", `--interval "soon": want a duration such as 1s or 200ms`},
		{"--all=maybe", `--all: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"--nope", "unknown flag: --nope"},
		// A long value is quoted cut, saying how much is left out.
		{"--count=" + strings.Repeat("x", 114000), `--count "` + strings.Repeat("x", 64) + `"... (113936 more bytes): want a whole number`},
		{"--interval=" + strings.Repeat("é", 100), `--interval "` + strings.Repeat("é", 32) + `"... (136 more bytes): want a duration such as 1s or 200ms`},
	} {
		err := FlagError(fs.Parse([]string{tt.args}))
		var b bytes.Buffer
		if code := Code(context.Background(), err, &b); code != ExitUsage || b.String() != "irqnuma: "+tt.want+"\n" {
			t.Errorf("%s: exit %d, %q; want 2, %q", tt.args, code, b.String(), tt.want)
		}
	}
}
