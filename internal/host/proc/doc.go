// Package proc reads the processes irqnuma watches, under a host root:
// a process's and each thread's allowed CPUs and memory nodes (status),
// where each thread last ran and how much CPU it used (stat), and where
// its memory sits (numa_maps). It parses these files itself, so an error
// names the file and a garbage line is refused rather than guessed at.
package proc
