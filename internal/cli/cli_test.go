package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/topology"
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
