package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"trap-sandbox/internal/jsonscan"
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
// object (the empty-payload rule, see DecodeFrame). OK and Error are meaningful only for
// response events; Error is set exactly when a response has OK false.
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
//
// DecodeFrame runs for every frame, so it validates the frame once and then only walks its
// top level (see frameFields); it behaves exactly as json.Unmarshal into a
// map[string]json.RawMessage followed by a json.Unmarshal of each field would.
func DecodeFrame(data []byte) (Frame, error) {
	if !jsonscan.Valid(data) || data[jsonscan.SkipSpace(data, 0)] != '{' { // not JSON, or JSON but not an object
		return Frame{}, notAnObjectError(data)
	}
	fields := topLevelFields(data)

	var f Frame
	var err error
	if f.Event, err = eventField(fields.event); err != nil {
		return Frame{}, err
	}
	if f.Event == "" {
		return Frame{}, fmt.Errorf("%w: no event", ErrMalformed)
	}
	if !f.Event.IsKnown() {
		return Frame{}, fmt.Errorf("%w %q", ErrUnknownEvent, string(f.Event))
	}

	if len(fields.messageID) == 0 || isNull(fields.messageID) {
		return Frame{}, fmt.Errorf("%w: no messageId", ErrMalformed)
	}
	if f.MessageID, err = stringField(fields.messageID, "messageId"); err != nil {
		return Frame{}, err
	}
	if f.Type, err = stringField(fields.typ, "type"); err != nil {
		return Frame{}, err
	}
	if f.TraposSenderID, err = stringField(fields.senderID, "traposSenderId"); err != nil {
		return Frame{}, err
	}
	if f.TraposReceiverID, err = stringField(fields.receiverID, "traposReceiverId"); err != nil {
		return Frame{}, err
	}
	f.RawMessageID, f.Payload = copyRawFields(fields.messageID, fields.payload)

	if f.Event.IsResponse() {
		if f.OK, err = boolField(fields.ok, "ok"); err != nil {
			return Frame{}, err
		}
		if !f.OK {
			f.Error = decodeError(fields.errorValue)
		}
	}
	return f, nil
}

// notAnObjectError explains why data, which is not valid JSON or not an object, is no frame,
// in the very words of json.Unmarshal. It is the slow path of DecodeFrame.
func notAnObjectError(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return fmt.Errorf("%w: not a JSON object", ErrMalformed) // the frame was the JSON literal null
}

// frameFields holds the raw value of each top-level key DecodeFrame reads, as json.Unmarshal
// would have handed it to a json.RawMessage: the value's own bytes, without surrounding space.
// An empty slice means the key is absent (a present value is never empty).
type frameFields struct {
	event, messageID, typ, senderID, receiverID, payload, ok, errorValue []byte
}

// topLevelFields collects the frameFields of data, a valid JSON object (jsonscan.Valid already
// said so, which is why the walk checks nothing: it only finds where keys and values end).
// Like the keys of a Go map, keys match exactly, after their escapes are decoded, and a later
// duplicate key wins. The values are slices of data.
func topLevelFields(data []byte) frameFields {
	var fields frameFields
	i := jsonscan.SkipSpace(data, jsonscan.SkipSpace(data, 0)+1) // past '{'
	for data[i] != '}' {
		keyEnd := stringEnd(data, i)
		slot := fields.slot(data[i:keyEnd])
		i = jsonscan.SkipSpace(data, jsonscan.SkipSpace(data, keyEnd)+1) // past ':'
		valueEnd := valueEnd(data, i)
		if slot != nil {
			*slot = data[i:valueEnd]
		}
		i = jsonscan.SkipSpace(data, valueEnd)
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return fields
}

// slot returns where the value of the key rawKey (a JSON string token) goes, or nil for a key
// DecodeFrame ignores.
func (fields *frameFields) slot(rawKey []byte) *[]byte {
	key := rawKey[1 : len(rawKey)-1]
	// A key with invalid UTF-8 needs no decoding here: json.Unmarshal would only turn the
	// bad bytes into U+FFFD, and either way the key matches none of the ASCII names below.
	if bytes.IndexByte(key, '\\') >= 0 {
		key = []byte(decodeString(rawKey))
	}
	switch string(key) {
	case "event":
		return &fields.event
	case "messageId":
		return &fields.messageID
	case "type":
		return &fields.typ
	case "traposSenderId":
		return &fields.senderID
	case "traposReceiverId":
		return &fields.receiverID
	case "payload":
		return &fields.payload
	case "ok":
		return &fields.ok
	case "error":
		return &fields.errorValue
	}
	return nil
}

// copyRawFields returns the frame's RawMessageID and Payload in fresh memory (one allocation),
// as json.Unmarshal would: callers may keep them while data is a reused read buffer. A payload
// that is not an object becomes EmptyPayload.
func copyRawFields(rawMessageID, payload []byte) (json.RawMessage, json.RawMessage) {
	if len(payload) == 0 || payload[0] != '{' { // no need to validate it: the whole frame is valid
		payload = nil
	}
	both := make([]byte, len(rawMessageID)+len(payload))
	n := copy(both, rawMessageID)
	copy(both[n:], payload)
	if payload == nil {
		return both, EmptyPayload
	}
	return both[:n:n], both[n:]
}

// knownEvents are the events eventField can return without allocating.
var knownEvents = [...]Event{EventComputerRequest, EventComputerResponse, EventGatewayRequest, EventGatewayResponse}

// eventField reads the event like stringField, but returns one of the Event constants when
// the raw string spells one without escapes, so the usual frame costs no allocation here.
func eventField(raw []byte) (Event, error) {
	if len(raw) > 0 && raw[0] == '"' {
		if body, ok := plainString(raw); ok {
			for _, event := range knownEvents {
				if string(body) == string(event) {
					return event, nil
				}
			}
		}
	}
	event, err := stringField(raw, "event")
	return Event(event), err
}

// EncodeFrame renders f as one JSON text, with traposSenderId on computer_* events and
// traposReceiverId on gateway_* events. Requests always carry a payload (at least {});
// responses carry ok, plus payload when OK and error when not. It fails with ErrFrameTooLarge
// (wrapped) rather than produce a frame CC: Tweaked would drop.
//
// It writes, into one buffer, the very bytes json.Encoder (with SetEscapeHTML(false)) writes
// for a struct with the fields event, traposSenderId or traposReceiverId, messageId (a
// json.RawMessage), type, ok, payload (a json.RawMessage) and error, in that order; the tests
// compare the two (reference_test.go).
func EncodeFrame(f Frame) ([]byte, error) { return AppendFrame(nil, f) }

// noErrorGiven is what a failure response without an Error sends.
var noErrorGiven = &Error{Code: CodeInternal, Message: "no error given"}

// AppendFrame is EncodeFrame appending the frame to dst (reallocated when it is too small),
// so that a caller that writes the frame at once can encode every frame into one reused
// buffer. On an error it returns dst unchanged.
func AppendFrame(dst []byte, f Frame) ([]byte, error) {
	if !f.Event.IsKnown() {
		return dst, fmt.Errorf("encode frame: unknown event %q", f.Event)
	}
	payload := f.Payload
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = EmptyPayload
	}
	sendsPayload := !f.Event.IsResponse() || f.OK
	// A failure response does not send its payload, but one that is not JSON is still refused.
	if !sendsPayload && !jsonscan.Valid(payload) {
		return dst, errInvalidPayload()
	}
	failure := f.Error // what a failure response sends as its error
	if failure == nil {
		failure = noErrorGiven
	}

	buf := bytes.NewBuffer(dst)
	buf.Grow(encodedSizeHint(f, payload, failure))
	buf.WriteString(`{"event":`)
	writeJSONString(buf, string(f.Event), false)
	if f.Event.FromComputer() {
		buf.WriteString(`,"traposSenderId":`)
		writeJSONString(buf, f.TraposSenderID, false)
	} else {
		buf.WriteString(`,"traposReceiverId":`)
		writeJSONString(buf, f.TraposReceiverID, false)
	}
	buf.WriteString(`,"messageId":`)
	messageIDErr := writeMessageID(buf, f)
	buf.WriteString(`,"type":`)
	writeJSONString(buf, f.Type, false)
	switch {
	case !f.Event.IsResponse():
		buf.WriteString(`,"payload":`)
	case f.OK:
		buf.WriteString(`,"ok":true,"payload":`)
	default:
		buf.WriteString(`,"ok":false,"error":{"code":`)
		writeJSONString(buf, string(failure.Code), false)
		buf.WriteString(`,"message":`)
		writeJSONString(buf, failure.Message, false)
		if failure.Proof != "" {
			buf.WriteString(`,"proof":`)
			writeJSONString(buf, failure.Proof, false)
		}
		buf.WriteByte('}')
	}
	// Compacting validates too, so a sent payload is read once. Its error comes before
	// messageId's, as it did when the payload was checked up front.
	if sendsPayload && json.Compact(buf, payload) != nil {
		return dst, errInvalidPayload()
	}
	buf.WriteByte('}')
	if messageIDErr != nil {
		return dst, fmt.Errorf("encode frame: %w", messageIDErr)
	}

	out := buf.Bytes()
	if size := len(out) - len(dst); size > MaxFrameBytes {
		return dst, fmt.Errorf("%w: %d bytes, the limit is %d", ErrFrameTooLarge, size, MaxFrameBytes)
	}
	return out, nil
}

// errInvalidPayload is EncodeFrame's error for a payload that is not JSON.
func errInvalidPayload() error {
	return fmt.Errorf("encode frame: payload is not valid JSON")
}

// encodedSizeHint is a close upper bound of the encoded frame's size when nothing needs
// escaping, so the buffer is allocated once.
func encodedSizeHint(f Frame, payload json.RawMessage, failure *Error) int {
	const fixed = len(`{"event":"computer_response","traposReceiverId":"","messageId":"","type":"","ok":false,"payload":,"error":{"code":"","message":""}}`)
	return fixed + len(f.TraposSenderID) + len(f.TraposReceiverID) + max(len(f.RawMessageID), len(f.MessageID)) +
		len(f.Type) + len(payload) + len(failure.Code) + len(failure.Message) + len(failure.Proof)
}

// writeMessageID writes the messageId: RawMessageID compacted, as json.Encoder wrote a
// json.RawMessage field, or else MessageID as json.Marshal quotes it (escaping <, > and &,
// unlike the other strings). An invalid RawMessageID writes nothing and gives the error
// json.Encoder gave.
func writeMessageID(buf *bytes.Buffer, f Frame) error {
	if len(f.RawMessageID) == 0 {
		writeJSONString(buf, f.MessageID, true)
		return nil
	}
	if isPlainStringToken(f.RawMessageID) { // the usual echo of a decoded messageId
		buf.Write(f.RawMessageID)
		return nil
	}
	if err := json.Compact(buf, f.RawMessageID); err != nil {
		return &json.MarshalerError{Type: reflect.TypeFor[json.RawMessage](), Err: err}
	}
	return nil
}

// isPlainStringToken reports whether raw is a JSON string token that json.Compact would copy
// as it is: quotes at both ends and, between them, no quote, backslash or control character.
func isPlainStringToken(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '"' || c == '\\' || c < ' ' {
			return false
		}
	}
	return true
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// stringField reads an optional string field from its raw value; absent or null gives "".
func stringField(raw []byte, name string) (string, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	if raw[0] != '"' {
		return "", fmt.Errorf("%w: %s must be a string", ErrMalformed, name)
	}
	return decodeString(raw), nil
}

// boolField reads an optional boolean field from its raw value; absent or null gives false.
func boolField(raw []byte, name string) (bool, error) {
	switch string(raw) {
	case "", "null", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("%w: %s must be a boolean", ErrMalformed, name)
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
	if e.Code == CodeInternal && e.Message == "" {
		// Neither a code nor a message to pass on: say what the computer got wrong, rather
		// than show the host an internal error with no words at all.
		e.Message = "the response's error has no code (a non-empty string) and no message"
	}
	return e
}
