package harness

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain is the TestMain of a package whose tests run the real gateway: it builds the
// binary once into a temporary directory (with -race when the tests have it), stores its
// path in *bin, runs the tests, and then fails the run if a goroutine outlived them (every
// gateway process and computer has been waited for in its test's cleanup by then).
func TestMain(m *testing.M, bin *string) int { return TestMainWith(m, bin, nil) }

// TestMainWith is TestMain with one more build step, build (if not nil), run with the same
// temporary directory before the tests (e.g. BuildNATSServer).
func TestMainWith(m *testing.M, bin *string, build func(dir string) error) int {
	dir, err := os.MkdirTemp("", "trap-sandbox-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin, err = BuildGateway(context.Background(), dir, raceEnabled)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if build != nil {
		if err := build(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}
