//go:build race

package bench

// raceBuild says the test binary has the race detector, whose
// instrumentation costs 5-10x the memory: the memory bound of the
// hostile-output test is the shipped binary's, so make test runs it
// again without -race.
const raceBuild = true
