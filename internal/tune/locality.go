package tune

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// localitySentinel is ErrLocalityUnknown: unknown.ErrUnknown, and the
// user's to fix.
type localitySentinel struct{}

func (localitySentinel) Error() string { return "NUMA locality unknown" }
func (localitySentinel) Is(t error) bool {
	return t == unknown.ErrUnknown || t == usage.ErrUsage
}

// localityError is an error of ErrLocalityUnknown with its own message;
// user says whether it is the user's to fix.
type localityError struct {
	msg  string
	user bool
}

func (e *localityError) Error() string { return e.msg }
func (e *localityError) Is(t error) bool {
	return t == ErrLocalityUnknown || t == unknown.ErrUnknown || (e.user && t == usage.ErrUsage)
}

// localityErrorf is a localityError whose message is format's.
func localityErrorf(user bool, format string, args ...any) error {
	return &localityError{msg: fmt.Sprintf(format, args...), user: user}
}
