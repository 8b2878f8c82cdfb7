// Package audit decides what is wrong with where a host's NICs, their
// queue interrupts and watched processes sit: it reads the host (Read,
// with a Selection of NICs and processes), runs every check (Run) and
// returns findings, each with its severity, numbers and fix. It also
// says where an IRQ lands relative to its device (Place), the one answer
// the audit, the map and the exporter share. It never writes and never
// renders: report draws findings, exporter exports them.
package audit
