package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// EmptyPayload is the payload used whenever a frame has none, or one that is not an object.
var EmptyPayload = json.RawMessage(`{}`)

// ErrMalformed marks a frame that is not a usable protocol frame (bad JSON, not an object, a
// required field missing or of the wrong type). Receivers ignore such frames.
var ErrMalformed = errors.New("malformed frame")

// ErrUnknownEvent marks a well-formed frame whose event is not one of the four known events.
var ErrUnknownEvent = errors.New("unknown event")

// ErrFrameTooLarge is returned by EncodeFrame when the encoded frame exceeds MaxFrameBytes.
var ErrFrameTooLarge = errors.New("frame too large")

// Frame is one protocol frame in either direction, after decoding. Payload is always a JSON
// object (see NormalizePayload). OK and Error are meaningful only for response events; Error
// is set exactly when a response has OK false.
type Frame struct {
	Event Event
	// TraposSenderID is set on computer_* frames.
	TraposSenderID string
	// TraposReceiverID is set on gateway_* frames.
	TraposReceiverID string
	// MessageID is opaque: minted by the initiator, echoed by the reply, never parsed. It is the
	// decoded string, used as the key of pending maps.
	MessageID string
	// RawMessageID is the messageId exactly as it arrived (a JSON string token, escapes and
	// all). A reply built from a decoded frame echoes it byte for byte; EncodeFrame prefers it
	// to MessageID when set.
	RawMessageID json.RawMessage
	Type         string
	OK           bool
	Payload      json.RawMessage
	Error        *Error
}

// DecodeFrame parses one frame. It is tolerant of what CC: Tweaked's textutils.serializeJSON
// produces: a payload that is missing, null, an array ("[]" for an empty table sentinel) or
// any other non-object becomes {}; JSON null in any field counts as absent; an error given as a
// bare string becomes {code:"internal", message:<string>}. It returns an error wrapping
// ErrMalformed or ErrUnknownEvent for frames a receiver should ignore.
func DecodeFrame(data []byte) (Frame, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Frame{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if fields == nil { // the frame was the JSON literal null
		return Frame{}, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}

	var f Frame
	event, err := stringField(fields, "event")
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

	if _, present := fields["messageId"]; !present || isNull(fields["messageId"]) {
		return Frame{}, fmt.Errorf("%w: no messageId", ErrMalformed)
	}
	if f.MessageID, err = stringField(fields, "messageId"); err != nil {
		return Frame{}, err
	}
	f.RawMessageID = bytes.TrimSpace(fields["messageId"])
	if f.Type, err = stringField(fields, "type"); err != nil {
		return Frame{}, err
	}
	if f.TraposSenderID, err = stringField(fields, "traposSenderId"); err != nil {
		return Frame{}, err
	}
	if f.TraposReceiverID, err = stringField(fields, "traposReceiverId"); err != nil {
		return Frame{}, err
	}
	f.Payload = NormalizePayload(fields["payload"])

	if f.Event.IsResponse() {
		if f.OK, err = boolField(fields, "ok"); err != nil {
			return Frame{}, err
		}
		if !f.OK {
			f.Error = decodeError(fields["error"])
		}
	}
	return f, nil
}

// NormalizePayload applies the empty-payload rule: a JSON object is returned as it is; a
// missing, null, array or other non-object payload becomes {}.
func NormalizePayload(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return EmptyPayload
	}
	return trimmed
}

// EncodeFrame renders f as one JSON text, with traposSenderId on computer_* events and
// traposReceiverId on gateway_* events. Requests always carry a payload (at least {});
// responses carry ok, plus payload when OK and error when not. It fails with ErrFrameTooLarge
// (wrapped) rather than produce a frame CC: Tweaked would drop.
func EncodeFrame(f Frame) ([]byte, error) {
	if !f.Event.IsKnown() {
		return nil, fmt.Errorf("encode frame: unknown event %q", f.Event)
	}
	payload := f.Payload
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = EmptyPayload
	} else if !json.Valid(payload) {
		return nil, fmt.Errorf("encode frame: payload is not valid JSON")
	}
	w := wireFrame{Event: f.Event, MessageID: f.RawMessageID, Type: f.Type}
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

// wireFrame fixes the field order and presence of encoded frames.
type wireFrame struct {
	Event            Event           `json:"event"`
	TraposSenderID   *string         `json:"traposSenderId,omitempty"`
	TraposReceiverID *string         `json:"traposReceiverId,omitempty"`
	MessageID        json.RawMessage `json:"messageId"`
	Type             string          `json:"type"`
	OK               *bool           `json:"ok,omitempty"`
	Payload          json.RawMessage `json:"payload,omitempty"`
	Error            *Error          `json:"error,omitempty"`
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// stringField reads an optional string field; absent or null gives "".
func stringField(fields map[string]json.RawMessage, name string) (string, error) {
	raw, ok := fields[name]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %s must be a string", ErrMalformed, name)
	}
	return s, nil
}

// boolField reads an optional boolean field; absent or null gives false.
func boolField(fields map[string]json.RawMessage, name string) (bool, error) {
	raw, ok := fields[name]
	if !ok || isNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("%w: %s must be a boolean", ErrMalformed, name)
	}
	return b, nil
}

// decodeError reads the error of a failed response as leniently as possible: a failed
// response always yields an *Error, so a caller can rely on it.
func decodeError(raw json.RawMessage) *Error {
	if len(raw) == 0 || isNull(raw) {
		return &Error{Code: CodeInternal, Message: "the response has ok:false but no error"}
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return &Error{Code: CodeInternal, Message: text}
	}
	var obj struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return &Error{Code: CodeInternal, Message: "the response has an unreadable error"}
	}
	e := &Error{Code: CodeInternal}
	var code, message string
	if json.Unmarshal(obj.Code, &code) == nil && code != "" {
		e.Code = Code(code)
	}
	if json.Unmarshal(obj.Message, &message) == nil {
		e.Message = message
	}
	return e
}
