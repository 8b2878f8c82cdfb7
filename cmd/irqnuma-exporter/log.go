package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/irqnuma/irqnuma/internal/safetext"
)

// logLines is a log whose writes are lines, each written whole (as the
// exporter package, the collector and promhttp's error log write them),
// each logged as one message of l: escaped by safetext, as a scrape's
// errors name files and values of a tree that may be hostile (the JSON
// format would pass a terminal's escapes as they are), with its
// "irqnuma: " or "irqnuma-exporter: " prefix trimmed. A scrape's failure
// ("scrape: ...") and the lines of a panic's stack (indented) are
// errors; the rest, the pods' notes and a series left out, warnings.
type logLines struct{ l *slog.Logger }

func (w logLines) Write(p []byte) (int, error) {
	line := strings.TrimSuffix(string(p), "\n")
	for _, prefix := range []string{"irqnuma: ", "irqnuma-exporter: "} {
		line = strings.TrimPrefix(line, prefix)
	}
	level := slog.LevelWarn
	if strings.HasPrefix(line, "scrape:") || strings.HasPrefix(line, " ") {
		level = slog.LevelError
	}
	w.l.Log(context.Background(), level, safetext.Escape(line))
	return len(p), nil
}
