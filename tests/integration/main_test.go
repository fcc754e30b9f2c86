// Package integration runs the real trap-sandbox gateway binary and drives it with raw
// WebSocket computers, checking the wire contract of the seed spec end to end over real sockets.
package integration

import (
	"os"
	"testing"

	"tests/internal/harness"
)

// gatewayBin is the gateway binary built once by TestMain for every test; it is built with
// the race detector when these tests are (go test -race).
var gatewayBin string

func TestMain(m *testing.M) {
	os.Exit(harness.TestMain(m, &gatewayBin))
}
