package conformance

import (
	"context"
	"os"
	"testing"
	"time"
)

// BenchmarkConformance runs CC: Tweaked's whole test-rom, which is not in the repository:
// set FAKECRAFT_TEST_ROM to its directory (see docs/conformance.md).
func BenchmarkConformance(b *testing.B) {
	dir := os.Getenv("FAKECRAFT_TEST_ROM")
	if dir == "" {
		b.Skip("FAKECRAFT_TEST_ROM is not set")
	}
	for b.Loop() {
		rep, err := Run(context.Background(), Options{TestROM: dir})
		if err != nil {
			b.Fatal(err)
		}
		passed, _, _ := rep.Count()
		b.ReportMetric(float64(passed), "passed")
	}
}

// BenchmarkConformanceFakeROM is the runner's own cost: the fake mcfly of the tests.
func BenchmarkConformanceFakeROM(b *testing.B) {
	for b.Loop() {
		if _, err := Run(context.Background(), Options{TestROM: "testdata/fake-rom", TestTimeout: 200 * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
}
