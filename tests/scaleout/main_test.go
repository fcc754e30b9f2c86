// Package scaleout runs several real gateway binaries on one real nats-server process (both
// built by TestMain) and checks that they act as one gateway (docs/scale-out.md).
package scaleout

import (
	"context"
	"fmt"
	"os"
	"testing"

	"tests/internal/harness"
)

// gatewayBin and natsBin are built once by TestMain.
var gatewayBin, natsBin string

func TestMain(m *testing.M) {
	os.Exit(harness.TestMainWith(m, &gatewayBin, func(dir string) error {
		var err error
		natsBin, err = harness.BuildNATSServer(context.Background(), dir)
		if err != nil {
			return fmt.Errorf("build nats-server: %w", err)
		}
		return nil
	}))
}
