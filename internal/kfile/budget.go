package kfile

import (
	"errors"
	"fmt"
	"sync"
)

// ErrBudget is what every error for a read past a Budget's bound Is.
var ErrBudget = errors.New("read budget exceeded")

// Budget bounds what the reads through an FS may cost together: the bytes
// of the files read, and the files, counted as every path opened (a
// read, a listing, a stat, a link read) and every entry a listing
// returns. A piece of work on a tree it does not trust (a scrape of the
// exporter) gives itself a Budget and reads through WithBudget's FS, so
// that a tree claiming more than any host holds costs that piece of work
// and no more. The operation that passes a bound, and every one after it,
// fails with an error that Is ErrBudget and says which bound; Err says so
// afterwards, whatever the readers made of their errors. Bytes read
// through a file OpenFile returned are the caller's to bound (its open is
// counted). A Budget is safe for concurrent use, and spent, never
// refilled.
type Budget struct {
	maxBytes, maxFiles int64 // 0: no bound

	mu           sync.Mutex
	bytes, files int64
	reason       error // the bound passed, once one is
	first        error // the operation that passed it
}

// NewBudget returns a budget of maxBytes bytes and maxFiles files; 0 (or
// less) leaves that one unbounded.
func NewBudget(maxBytes, maxFiles int64) *Budget {
	return &Budget{maxBytes: max(maxBytes, 0), maxFiles: max(maxFiles, 0)}
}

// WithBudget returns f charging every operation to b (nil: to none); f
// itself, and the root they share, are not changed.
func (f FS) WithBudget(b *Budget) FS {
	f.budget = b
	return f
}

// Used returns the bytes and files spent so far.
func (b *Budget) Used() (bytes, files int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes, b.files
}

// Err is nil while every operation stayed within the budget; after one
// did not, it is that operation's error, naming its file and the bound.
func (b *Budget) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.first
}

// charge spends bytes and files on the operation op of path p. Past a
// bound, or once one was passed, it returns why (the caller names p).
func (b *Budget) charge(op, p string, bytes, files int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reason != nil {
		return b.reason
	}
	b.bytes += bytes
	b.files += files
	switch {
	case b.maxFiles > 0 && b.files > b.maxFiles:
		b.reason = fmt.Errorf("%w: more than %d files (paths opened and folder entries listed)", ErrBudget, b.maxFiles)
	case b.maxBytes > 0 && b.bytes > b.maxBytes:
		b.reason = fmt.Errorf("%w: more than %d bytes read", ErrBudget, b.maxBytes)
	default:
		return nil
	}
	b.first = fmt.Errorf("%s %s: %w", op, p, b.reason)
	return b.reason
}

// readLimit returns the bound of one read of at most limit bytes through
// f, and whether the budget rather than limit sets it.
func (f FS) readLimit(limit int64) (int64, bool) {
	if f.budget == nil || f.budget.maxBytes == 0 {
		return limit, false
	}
	f.budget.mu.Lock()
	left := max(f.budget.maxBytes-f.budget.bytes, 0)
	f.budget.mu.Unlock()
	if left < limit {
		return left, true
	}
	return limit, false
}
