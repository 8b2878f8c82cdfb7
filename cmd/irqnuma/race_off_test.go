//go:build !race

package main

// raceBuild says the test binary has the race detector.
const raceBuild = false
