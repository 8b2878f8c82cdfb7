//go:build race

package main

// raceScale is how many times the hostile bounds are widened in a race
// build: Go documents the race detector's cost as 2-20x the CPU time and
// 5-10x the memory, and gzip (snapshot) is at the top of that range. The
// bounds proper are held without it: make test runs the hostile tests
// again without -race.
const raceCPUScale, raceRSSScale = 20, 5
