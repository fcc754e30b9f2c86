package hostapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/jsonscan"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// RequestBody is the body of POST /trapos/computers/{traposId}/requests.
type RequestBody struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
	// TimeoutMs bounds the whole request (1 … computer.MaxTimeout); absent:
	// computer.DefaultTimeout.
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
}

// probeMessageID has the length of the v4 UUID the gateway mints, for the size pre-check.
const probeMessageID = "00000000-0000-0000-0000-000000000000"

func (m *Module) serveComputers(w http.ResponseWriter, r *http.Request) {
	cs, partial, err := m.client.ComputersNoted(r.Context())
	if err != nil {
		writeError(w, err, nil)
		return
	}
	if partial != "" {
		// A header, not a field: the body stays the array every client parses.
		w.Header().Set(PartialListHeader, partial)
	}
	server.WriteJSON(w, http.StatusOK, cs)
}

func (m *Module) serveRequest(w http.ResponseWriter, r *http.Request) {
	traposID := cctext.TraposID(r.PathValue("traposId"))
	buf := requestBodies.Get().(*bytes.Buffer)
	defer putRequestBody(buf)
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxRequestBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			server.WriteBodyTooLarge(w, &server.BodyTooLarge{Limit: maxRequestBodyBytes,
				Why: fmt.Sprintf("a gateway_request frame may not exceed %d bytes, 128 KiB", protocol.MaxFrameBytes)})
			return
		}
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, server.ReadBodyError(err))
		return
	}
	// Read to its end: closing it now spares net/http's copy of "the rest" to io.Discard
	// after the handler (a reader and a pooled buffer per request, for nothing).
	_ = r.Body.Close()
	req, timeout, msg := parseRequestBody(buf.Bytes()) // copies what it keeps
	if msg != "" {
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, msg)
		return
	}
	payload, err := protocol.ObjectPayload(req.Payload)
	if err != nil {
		// The gateway's own code for it is internal (a frame it cannot send); here it is
		// the client's body, and the API's code for that is bad_payload.
		msg := err.Error()
		if pe, ok := errors.AsType[*protocol.Error](err); ok {
			msg = pe.Message
		}
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, msg)
		return
	}
	// Refuse an oversized frame before sending (and before looking the computer up).
	if mayExceedFrame(traposID, req.Type, payload) && frameTooLarge(traposID, req.Type, payload) {
		server.WriteError(w, http.StatusRequestEntityTooLarge, protocol.CodeBadPayload, protocol.FrameTooLargeMessage)
		return
	}
	answer, warnings, err := m.client.Request(r.Context(), traposID, req.Type, payload, timeout)
	// errors.AsType, not errors.As(err, &pe): the pointer errors.As is given escapes, one
	// allocation for every request, answered or not.
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.ByComputer {
		// The computer answered: its ok:false is the request's answer, not an HTTP failure.
		server.WriteAnswer(w, http.StatusOK, server.Answer{Error: onTheWire(pe), Warnings: warnings})
		return
	}
	if err != nil {
		writeError(w, runTimeoutHint(err, req.Type, payload, timeout), warnings)
		return
	}
	if len(answer) == 0 {
		answer = protocol.EmptyPayload
	}
	server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: answer, Warnings: warnings})
}

// computerRunTimeout is how long a lua.exec or shell.run runs on the computer when its payload
// names no timeoutMs (DEFAULT_TIMEOUT_MS in trapos/apis/libsandboxexec.lua).
const computerRunTimeout = 5 * time.Second

// runTimeoutHint adds the fix to the gateway's timeout of a lua.exec or shell.run whose run
// on the computer (payload.timeoutMs, 5000 ms when absent) was not shorter than the request:
// the gateway gave up before the computer's own timeout answer, with the run's screen, could
// come. The CLI and MCP send the run's time themselves; a raw /requests body must.
func runTimeoutHint(err error, typ string, payload json.RawMessage, timeout time.Duration) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.ByComputer || pe.Code != protocol.CodeTimeout || (typ != protocol.TypeLuaExec && typ != protocol.TypeShellRun) {
		return err
	}
	var p struct {
		TimeoutMs *float64 `json:"timeoutMs"`
	}
	run, field := computerRunTimeout, "payload.timeoutMs, absent"
	if json.Unmarshal(payload, &p) == nil && p.TimeoutMs != nil {
		run, field = time.Duration(*p.TimeoutMs*float64(time.Millisecond)), "payload.timeoutMs"
	}
	if run < timeout {
		return err
	}
	return pe.WithMessage(fmt.Sprintf("%s; the run on the computer may take %d ms (%s), not less than this request's timeoutMs of %d: "+
		"send payload.timeoutMs below it, so the computer's own timeout answer, with its screen, comes first",
		pe.Message, run.Milliseconds(), field, timeout.Milliseconds()))
}

// requestBodies recycles the buffers /requests bodies are read into.
var requestBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putRequestBody returns buf to requestBodies, unless a big body grew it.
func putRequestBody(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		buf.Reset()
		requestBodies.Put(buf)
	}
}

// frameOverhead bounds what a gateway_request frame holds besides its escaped traposId and
// type and its payload: the keys, the event and the messageId.
const frameOverhead = 256

// mayExceedFrame reports whether the gateway_request could exceed protocol.MaxFrameBytes: a
// string encodes to at most 6 bytes a byte (\u00XX), a payload compacted to at most its own
// length. Only a frame that may is worth encoding to find out (frameTooLarge). A traposId
// longer than any computer's (cctext.NoComputerHas) makes no frame: no socket holds it, and
// not_connected says so, where a 600 KB name was told to send a smaller payload.
func mayExceedFrame(traposID, typ string, payload json.RawMessage) bool {
	return frameOverhead+6*(len(traposID)+len(typ))+len(payload) > protocol.MaxFrameBytes && !cctext.NoComputerHas(traposID)
}

// frameTooLarge encodes the gateway_request, with a messageId as long as the gateway's, to
// see whether it exceeds protocol.MaxFrameBytes.
func frameTooLarge(traposID, typ string, payload json.RawMessage) bool {
	_, err := protocol.EncodeFrame(protocol.Frame{Event: protocol.EventGatewayRequest, TraposReceiverID: traposID,
		MessageID: probeMessageID, Type: typ, Payload: payload})
	return errors.Is(err, protocol.ErrFrameTooLarge)
}

// parseRequestBody validates a /requests body; msg is non-empty when it is unusable.
func parseRequestBody(body []byte) (req RequestBody, timeout time.Duration, msg string) {
	// The body every client sends is read without reflection (parsePlainBody); any other
	// (escapes in its type or keys, a field of another name) by the Decoder, whose errors are
	// the ones the API has always answered with (a first object followed by more is refused
	// by server.RestOfBody). A field the body does not have is refused, as …/input's is: a
	// "timeout" for timeoutMs was ignored, and the request ran for the default 10 s.
	if plain, ok := parsePlainBody(body); ok {
		req = plain
	} else if req, msg = decodeRequestBody(body); msg != "" {
		return req, 0, msg
	}
	// Valid JSON by now. Its fields are read with case folded, the payload's keys as they are.
	if rep, repeated := jsonscan.RepeatedKey(body, 1); repeated {
		return req, 0, server.RepeatedKeyError(rep)
	}
	if req.Type == "" {
		return req, 0, "the body needs a non-empty \"type\""
	}
	timeout, msg = bodyTimeout(req.TimeoutMs)
	return req, timeout, msg
}

// decodeRequestBody is parseRequestBody's reading of a body that is not plain, by the Decoder.
// It is a function of its own so that only this path's RequestBody escapes to the heap (the
// Decoder is given its address), not the one of every request.
func decodeRequestBody(body []byte) (req RequestBody, msg string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, server.BodyError(err, bodyShape, bodyWants)
	}
	if err := server.RestOfBody(dec); err != nil {
		return req, err.Error()
	}
	return req, ""
}

// bodyTimeout reads a body's timeoutMs (…/requests', …/input's): absent,
// computer.DefaultTimeout; out of 1 … computer.MaxTimeout, msg says so.
func bodyTimeout(timeoutMs *int64) (timeout time.Duration, msg string) {
	if timeoutMs == nil {
		return computer.DefaultTimeout, ""
	}
	ms := *timeoutMs
	if ms <= 0 || ms > computer.MaxTimeout.Milliseconds() {
		return 0, server.FieldError("timeoutMs", bodyWants["timeoutMs"], strconv.FormatInt(ms, 10))
	}
	return time.Duration(ms) * time.Millisecond, ""
}

// bodyShape is the /requests body, as the API's error messages show it.
const bodyShape = `{"type":..., "payload":{...}, "timeoutMs":...}`

// bodyWants says what the /requests fields must be, where their JSON kind says too little.
var bodyWants = map[string]string{
	"type":      "a string, the request's type",
	"timeoutMs": fmt.Sprintf("a whole number of milliseconds between 1 and %d", computer.MaxTimeout.Milliseconds()),
}

// writeError answers err in the API's shape, with the status of its code (StatusOf) and the
// warnings of the text sent.
// onTheWire is pe as the API answers it: its fields with a JSON name (the code, the message and
// what a client reads instead of the message's words: accounts, relabelledTo, absent, left,
// meant, hint, waitingMessage, unlinked, queued, and a computer's answer's hostWords), not who answered
// (ByComputer, Attributed: json "-").
func onTheWire(pe *protocol.Error) *protocol.Error {
	out := *pe.ToTheAPI()
	out.ByComputer, out.Attributed, out.RetryAfter = false, false, 0
	return &out
}

func writeError(w http.ResponseWriter, err error, warnings []cctext.Replacement) {
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		pe = protocol.Errorf(protocol.CodeInternal, "%v", err)
	}
	status := StatusOf(pe)
	server.WriteAnswer(w, status, server.Answer{Error: onTheWire(pe), Warnings: warnings})
}
