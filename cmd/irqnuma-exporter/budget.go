package main

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
)

// What one scrape may cost, by default. A synthetic host of 1,152 CPUs,
// 8 NICs of 144 queues and 3,200 IRQs is read in 42 MB and 24,000 files
// with a heap of 60 MiB; the committed trees and the real captures in
// 5 MB and 10,000 files at most. The memory limit leaves room under the
// DaemonSet's 128 MiB for what Go does not count; the bytes are what a
// scrape reading to its budget can hold under that limit (a read holds
// up to half again what it reads while it grows its buffer).
const (
	defaultMemoryLimit = 100 << 20
	defaultMaxBytes    = 64 << 20
	defaultMaxFiles    = 200_000
)

// freeAfter is how much a scrape may read and leave for the garbage
// collector to find in its own time. Past it, or past its budget, the
// scrape ends with a collection that gives the memory back
// (debug.FreeOSMemory): the soft limit lets a large allocation come
// before the collection it calls for, so the next scrape's reading would
// otherwise come on top of this one's garbage, twice the budget at once.
const freeAfter = 16 << 20

// budget is what one scrape may read through the root: 0 is no bound.
type budget struct {
	bytes int64 // --scrape-max-bytes
	files int64 // --scrape-max-files
}

// sizeFlag is a size in bytes: a whole number with an optional unit, B,
// KiB, MiB, GiB or TiB, the units GOMEMLIMIT takes ("100MiB").
type sizeFlag struct{ v *int64 }

var sizeUnits = []struct {
	name  string
	shift uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

func (s sizeFlag) String() string {
	if s.v == nil {
		return ""
	}
	return formatSize(*s.v)
}

func (s sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s.v = n
	return nil
}

func (sizeFlag) Type() string { return "bytes" }

// parseSize reads a sizeFlag's value.
func parseSize(v string) (int64, error) {
	num, shift := v, uint(0)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(v, u.name); ok {
			num, shift = rest, u.shift
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 63)
	if err != nil {
		return 0, errors.New("want a whole number of bytes, with B, KiB, MiB, GiB or TiB after it or none")
	}
	if n > math.MaxInt64>>shift {
		return 0, errors.New("too large")
	}
	return int64(n) << shift, nil
}

// formatSize writes n in the largest unit that holds it whole.
func formatSize(n int64) string {
	for _, u := range sizeUnits[:len(sizeUnits)-1] {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// setMemoryLimit sets the Go runtime's soft memory limit for the run
// (debug.SetMemoryLimit): --memory-limit when it was given (0: none),
// else the runtime's own when GOMEMLIMIT sets one, else the default. It
// returns what puts the limit back as it was.
func setMemoryLimit(o *options, getenv func(string) string) (restore func()) {
	limit := o.memoryLimit
	switch {
	case o.memoryLimitSet && limit == 0:
		limit = math.MaxInt64
	case !o.memoryLimitSet && getenv("GOMEMLIMIT") != "":
		return func() {}
	}
	old := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(old) }
}

// budgetError is the error of a scrape stopped by its budget, err (the
// read that passed it), naming the flags that set it.
func budgetError(b budget, err error) error {
	return fmt.Errorf("over its read budget (--scrape-max-bytes %s, --scrape-max-files %d): %w",
		formatSize(b.bytes), b.files, err)
}
