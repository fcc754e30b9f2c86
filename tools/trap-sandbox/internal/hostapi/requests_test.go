package hostapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/protocol"
)

// The size pre-check encodes a frame only when it may exceed the limit: whatever mayExceedFrame
// lets through without encoding fits, however much its strings grow when escaped.
func TestOnlyAFrameThatMayExceedTheLimitIsEncoded(t *testing.T) {
	payload := func(n int) json.RawMessage { return json.RawMessage(`{"s":"` + strings.Repeat("a", n) + `"}`) }
	for _, tc := range []struct {
		traposID, typ string
		payload       json.RawMessage
	}{
		{"7:", "ping", payload(10)},
		{"7:" + strings.Repeat("\x01", 200), strings.Repeat("<", 200), payload(1000)}, // 6 bytes a byte escaped
		{"7:", "x", payload(protocol.MaxFrameBytes - 300)},
		{"7:", "x", payload(protocol.MaxFrameBytes - 100)},
		{"7:", "x", payload(protocol.MaxFrameBytes)},
	} {
		if !mayExceedFrame(tc.traposID, tc.typ, tc.payload) {
			assert.False(t, frameTooLarge(tc.traposID, tc.typ, tc.payload), "%d-byte payload", len(tc.payload))
		}
	}
	assert.False(t, mayExceedFrame("7:", "ping", payload(10)), "a small request is not encoded twice")
	assert.True(t, mayExceedFrame("7:", "x", payload(protocol.MaxFrameBytes-200)))
	assert.False(t, frameTooLarge("7:", "x", payload(protocol.MaxFrameBytes-200)), "a may is checked, not assumed")
	assert.True(t, frameTooLarge("7:", "x", payload(protocol.MaxFrameBytes)))
}
