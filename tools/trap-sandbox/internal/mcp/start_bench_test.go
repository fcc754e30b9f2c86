package mcp

import (
	"testing"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/testkit/daemonfake"
)

// BenchmarkNew builds the MCP module as every gateway start does (and the stdio bridge's
// NewServer within it): its tools, their schemas, resources and prompts.
func BenchmarkNew(b *testing.B) {
	c := computer.New(daemonfake.NewLocal(nil))
	b.ReportAllocs()
	for b.Loop() {
		New(c, nil, clock.Real{}, nil)
	}
}
