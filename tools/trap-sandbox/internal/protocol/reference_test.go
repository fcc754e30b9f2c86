package protocol

// This file keeps DecodeFrame, EncodeFrame and their helpers as they were before they were
// rewritten for speed, unchanged but for the names (decodeError, which the rewrite kept, is
// shared). They are the oracle of the differential tests: the fast versions must behave
// exactly like these, errors included.

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// referenceDecodeFrame is DecodeFrame before the rewrite.
func referenceDecodeFrame(data []byte) (Frame, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Frame{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if fields == nil { // the frame was the JSON literal null
		return Frame{}, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}

	var f Frame
	event, err := referenceStringField(fields, "event")
	if err != nil {
		return Frame{}, err
	}
	if event == "" {
		return Frame{}, fmt.Errorf("%w: no event", ErrMalformed)
	}
	f.Event = Event(event)
	if !f.Event.IsKnown() {
		return Frame{}, fmt.Errorf("%w %q", ErrUnknownEvent, event)
	}

	if _, present := fields["messageId"]; !present || referenceIsNull(fields["messageId"]) {
		return Frame{}, fmt.Errorf("%w: no messageId", ErrMalformed)
	}
	if f.MessageID, err = referenceStringField(fields, "messageId"); err != nil {
		return Frame{}, err
	}
	f.RawMessageID = bytes.TrimSpace(fields["messageId"])
	if f.Type, err = referenceStringField(fields, "type"); err != nil {
		return Frame{}, err
	}
	if f.TraposSenderID, err = referenceStringField(fields, "traposSenderId"); err != nil {
		return Frame{}, err
	}
	if f.TraposReceiverID, err = referenceStringField(fields, "traposReceiverId"); err != nil {
		return Frame{}, err
	}
	f.Payload = referenceNormalizePayload(fields["payload"])

	if f.Event.IsResponse() {
		if f.OK, err = referenceBoolField(fields, "ok"); err != nil {
			return Frame{}, err
		}
		if !f.OK {
			f.Error = decodeError(fields["error"])
		}
	}
	return f, nil
}

// referenceNormalizePayload applies the empty-payload rule: a JSON object is returned as it is; a
// missing, null, array or other non-object payload becomes {}.
func referenceNormalizePayload(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return EmptyPayload
	}
	return trimmed
}

// referenceEncodeFrame renders f as one JSON text, with traposSenderId on computer_* events and
// traposReceiverId on gateway_* events. Requests always carry a payload (at least {});
// responses carry ok, plus payload when OK and error when not. It fails with ErrFrameTooLarge
// (wrapped) rather than produce a frame CC: Tweaked would drop.
func referenceEncodeFrame(f Frame) ([]byte, error) {
	if !f.Event.IsKnown() {
		return nil, fmt.Errorf("encode frame: unknown event %q", f.Event)
	}
	payload := f.Payload
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = EmptyPayload
	} else if !json.Valid(payload) {
		return nil, fmt.Errorf("encode frame: payload is not valid JSON")
	}
	w := referenceWireFrame{Event: f.Event, MessageID: f.RawMessageID, Type: f.Type}
	if len(w.MessageID) == 0 {
		id, err := json.Marshal(f.MessageID)
		if err != nil {
			return nil, fmt.Errorf("encode frame: messageId: %w", err)
		}
		w.MessageID = id
	}
	if f.Event.FromComputer() {
		w.TraposSenderID = &f.TraposSenderID
	} else {
		w.TraposReceiverID = &f.TraposReceiverID
	}
	switch {
	case !f.Event.IsResponse():
		w.Payload = payload
	case f.OK:
		ok := true
		w.OK, w.Payload = &ok, payload
	default:
		ok := false
		w.OK, w.Error = &ok, f.Error
		if w.Error == nil {
			w.Error = &Error{Code: CodeInternal, Message: "no error given"}
		}
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Keep <, > and & as they are: nothing here is embedded in HTML, and CC compares bytes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("encode frame: %w", err)
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(out) > MaxFrameBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrFrameTooLarge, len(out), MaxFrameBytes)
	}
	return out, nil
}

// referenceWireFrame fixes the field order and presence of encoded frames.
type referenceWireFrame struct {
	Event            Event           `json:"event"`
	TraposSenderID   *string         `json:"traposSenderId,omitempty"`
	TraposReceiverID *string         `json:"traposReceiverId,omitempty"`
	MessageID        json.RawMessage `json:"messageId"`
	Type             string          `json:"type"`
	OK               *bool           `json:"ok,omitempty"`
	Payload          json.RawMessage `json:"payload,omitempty"`
	Error            *Error          `json:"error,omitempty"`
}

func referenceIsNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// referenceStringField reads an optional string field; absent or null gives "".
func referenceStringField(fields map[string]json.RawMessage, name string) (string, error) {
	raw, ok := fields[name]
	if !ok || referenceIsNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %s must be a string", ErrMalformed, name)
	}
	return s, nil
}

// referenceBoolField reads an optional boolean field; absent or null gives false.
func referenceBoolField(fields map[string]json.RawMessage, name string) (bool, error) {
	raw, ok := fields[name]
	if !ok || referenceIsNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("%w: %s must be a boolean", ErrMalformed, name)
	}
	return b, nil
}
