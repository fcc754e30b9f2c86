package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// Answer is the JSON shape of every host API answer that is not a listing or a file:
// {ok, payload?, error?, warnings?} (docs/http-api.md). The auth check, the guard and the host
// API's routes all answer with it.
type Answer struct {
	OK      bool            `json:"ok"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   *protocol.Error `json:"error,omitempty"`
	// Warnings are the characters of the host's text that CC's charset could not hold (sent
	// as '?'), each with its place and the fix.
	Warnings []cctext.Replacement `json:"warnings,omitempty"`
}

// BusyRetry is how long a client waits after a busy answer before it asks again: requests
// in flight to a computer that reads end within its answer time, usually milliseconds.
const BusyRetry = time.Second

// BusyRetryAfter is BusyRetry as a busy answer's Retry-After header says it, in seconds.
var BusyRetryAfter = strconv.Itoa(int(BusyRetry / time.Second))

// WriteAnswer is the host API's one answer writer: a busy error gets Retry-After, so every
// route answers busy the same way, and the warnings of text an error says was never sent do
// not say it was (cctext.Unsent).
func WriteAnswer(w http.ResponseWriter, status int, a Answer) {
	if a.Error != nil && a.Error.Code == protocol.CodeBusy {
		w.Header().Set("Retry-After", BusyRetryAfter)
	}
	if a.Error != nil {
		a.Warnings = cctext.Unsent(a.Warnings, a.Error)
	}
	if a.OK && a.Error == nil && len(a.Warnings) == 0 && len(a.Payload) > 0 && writeOKAnswer(w, status, a.Payload) {
		return
	}
	WriteJSON(w, status, a)
}

// okAnswerBuffers recycles writeOKAnswer's buffers.
var okAnswerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeOKAnswer writes {"ok":true,"payload":...} the way WriteJSON writes that Answer, byte
// for byte (json.Encoder compacts a RawMessage and adds a newline), without reflection: the
// answer of every request that succeeds. False, with nothing written, when payload is not
// JSON (WriteJSON then answers as it always did).
func writeOKAnswer(w http.ResponseWriter, status int, payload json.RawMessage) bool {
	buf := okAnswerBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 64<<10 {
			buf.Reset()
			okAnswerBuffers.Put(buf)
		}
	}()
	buf.WriteString(`{"ok":true,"payload":`)
	if json.Compact(buf, payload) != nil {
		return false
	}
	buf.WriteString("}\n")
	setJSONContentType(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(cctext.ShowJSON(buf.Bytes()))
	return true
}

// jsonContentType is the Content-Type of every JSON answer, one slice for them all:
// Header.Set makes a new one for each answer, an allocation for every request. Its capacity
// is its length, so a handler's Add to it copies it; net/http copies the header's values as
// it writes them, and nothing writes into them.
var jsonContentType = []string{"application/json"}

// setJSONContentType sets h's Content-Type to jsonContentType.
func setJSONContentType(h http.Header) { h["Content-Type"] = jsonContentType[:1:1] }

// WriteError is WriteAnswer of an error alone.
func WriteError(w http.ResponseWriter, status int, code protocol.Code, message string) {
	WriteAnswer(w, status, Answer{Error: &protocol.Error{Code: code, Message: message}})
}

// WriteJSON answers v as JSON with status, without HTML escaping (a file name's '<' stays
// one byte), and with the characters a terminal acts on that Go's encoder leaves raw (DEL, C1,
// bidirectional controls) as JSON escapes (cctext.ShowJSON): the same value, but an operator
// reading the API with curl in a terminal gets no CSI (U+009B) of a computer's label or file
// name raw. Every JSON answer of the API is written here or by writeOKAnswer, which does the same.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	setJSONContentType(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(cctext.ShowJSON(buf.Bytes()))
}
