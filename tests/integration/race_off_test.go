//go:build !race

package integration

// raceEnabled: this test binary runs without the race detector.
const raceEnabled = false
