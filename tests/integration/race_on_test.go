//go:build race

package integration

// raceEnabled: this test binary runs with the race detector, so the gateway gets it too.
const raceEnabled = true
