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

// A body the API cannot use is answered in the API's terms: the field and what it needs,
// never the Go type it is decoded into (before: "json: cannot unmarshal number 1.5 into Go
// struct field RequestBody.timeoutMs of type int64").
func TestABadBodyIsToldInTheAPIsTerms(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"ping","timeoutMs":1.5}`: `"timeoutMs" must be a whole number of milliseconds between 1 and 60000 (got a number 1.5)`,
		`{"type":"ping","timeoutMs":"5"}`: `"timeoutMs" must be a whole number of milliseconds between 1 and 60000 (got a string)`,
		`{"type":5}`:                      `"type" must be a string, the request's type (got a number)`,
		`[]`:                              `the body must be a JSON object {"type":..., "payload":{...}, "timeoutMs":...} (got a JSON array)`,
		``:                                `the body is empty: send a JSON object {"type":..., "payload":{...}, "timeoutMs":...}`,
		`{"type":"ping",`:                 `the body ends before its JSON does: send a whole JSON object {"type":..., "payload":{...}, "timeoutMs":...}`,
		`{"type":"ping" x}`:               `the body is not valid JSON (invalid character 'x' after object key:value pair, at byte 16): send a JSON object {"type":..., "payload":{...}, "timeoutMs":...}`,
		`{"type":"ping","timeout":30000}`: `the body has a field the route does not take, "timeout": send a JSON object {"type":..., "payload":{...}, "timeoutMs":...}`,
	} {
		_, _, msg := parseRequestBody([]byte(body))
		assert.Equal(t, want, msg, body)
		assert.NotContains(t, msg, "Go ", body)
		assert.NotContains(t, msg, "RequestBody", body)
	}
}
