//go:build race

package harness

// raceEnabled: the test binary runs with the race detector, so the gateway it builds does too.
const raceEnabled = true
