package topology

import (
	"errors"

	"github.com/irqnuma/irqnuma/cpuset"
)

func isSyntax(err error) bool { return errors.Is(err, cpuset.ErrSyntax) }
