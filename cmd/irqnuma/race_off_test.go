//go:build !race

package main

// Without the race detector the hostile bounds hold as written.
const raceCPUScale, raceRSSScale = 1, 1
