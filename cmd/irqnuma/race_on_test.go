//go:build race

package main

// raceBuild says the test binary has the race detector. Its
// instrumentation costs 2-20x the CPU and 5-10x the memory, so the
// hostile tests, whose bounds are the shipped binary's, do not run in
// it: make test runs them again without -race.
const raceBuild = true
