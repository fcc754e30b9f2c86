// Package e2e boots the real trapos Lua in fakecraft, with the trapos-sandbox package's
// autostart daemon, and runs the `sandbox` command against the real gateway binary.
package e2e

import (
	"os"
	"testing"

	"tests/internal/harness"
)

// gatewayBin is the gateway binary TestMain builds once (with -race when these tests run with it).
var gatewayBin string

func TestMain(m *testing.M) {
	os.Exit(harness.TestMain(m, &gatewayBin))
}
