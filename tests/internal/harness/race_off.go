//go:build !race

package harness

// raceEnabled: the test binary runs without the race detector, and so does the gateway.
const raceEnabled = false
