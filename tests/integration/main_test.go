// Package integration runs the real trap-sandbox gateway binary and drives it with raw
// WebSocket computers, checking the wire contract of the seed spec end to end over real sockets.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"tests/internal/harness"
)

// gatewayBin is the gateway binary built once by TestMain for every test; it is built with
// the race detector when these tests are (go test -race).
var gatewayBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "trap-sandbox-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	gatewayBin, err = harness.BuildGateway(context.Background(), dir, raceEnabled)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	// Every gateway process has been waited for by now, so exec's goroutines are gone too.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}
