//go:build !race

package e2e

// raceEnabled: this test binary runs without the race detector.
const raceEnabled = false
