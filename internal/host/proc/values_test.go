package proc

import (
	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// cmpDiff is cmp.Diff that compares unknown.Values, their reasons too.
func cmpDiff(x, y any, opts ...cmp.Option) string {
	return cmp.Diff(x, y, append(opts, cmp.AllowUnexported(unknown.Value[cpuset.Set]{}, unknown.Value[int]{}, unknown.Value[bool]{}, unknown.Value[Partition]{}, unknown.Value[NumaStat]{}))...)
}
