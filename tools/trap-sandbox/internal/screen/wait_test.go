package screen

import "time"

// Bounds of require.Eventually's polling of a condition (not timed assertions).
const (
	testWait = 5 * time.Second
	testTick = time.Millisecond
)
