// Package e2e boots the real trapos Lua in fakecraft, with the trapos-sandbox package's
// autostart daemon, and runs the `sandbox` command against the real gateway binary.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"tests/internal/harness"
)

// gatewayBin is the gateway binary TestMain builds once (with -race when these tests run with it).
var gatewayBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "trap-sandbox-e2e-")
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
	// Every computer and gateway process has been waited for in its test's cleanup.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}
