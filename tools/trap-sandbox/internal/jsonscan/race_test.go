//go:build race

package jsonscan_test

// raceDetector: -race makes sync.Pool drop what it is given now and then.
const raceDetector = true
