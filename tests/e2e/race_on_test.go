//go:build race

package e2e

// raceEnabled: this test binary runs with the race detector, so the gateway gets it too.
const raceEnabled = true
