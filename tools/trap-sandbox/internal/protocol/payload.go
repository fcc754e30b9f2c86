package protocol

import (
	"bytes"
	"encoding/json"

	"trap-sandbox/internal/jsonscan"
)

// ObjectPayload applies the empty-payload rule to what the gateway sends: nothing, null or
// [] become {}; an object passes; anything else is a caller error (internal).
func ObjectPayload(payload json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(payload)
	switch {
	case len(trimmed) == 0, bytes.Equal(trimmed, []byte("null")):
		return EmptyPayload, nil
	case !jsonscan.Valid(trimmed):
		return nil, Errorf(CodeInternal, "the payload is not valid JSON")
	case trimmed[0] == '{':
		return trimmed, nil
	case trimmed[0] == '[' && bytes.Equal(compact(trimmed), []byte("[]")):
		return EmptyPayload, nil
	default:
		return nil, Errorf(CodeInternal, "the payload must be a JSON object")
	}
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
