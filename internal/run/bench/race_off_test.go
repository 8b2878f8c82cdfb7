//go:build !race

package bench

// raceBuild says the test binary has the race detector.
const raceBuild = false
