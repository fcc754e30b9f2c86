package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// WriteAnswer writes a successful answer without reflection; the bytes, status and headers
// are exactly what WriteJSON writes for the same Answer, whatever the payload holds (spaces
// to compact, HTML characters left as they are, escapes kept), and an answer that is not
// plain success goes through WriteJSON itself.
func TestWriteAnswerWritesWhatWriteJSONWrites(t *testing.T) {
	for _, a := range []Answer{
		{OK: true, Payload: json.RawMessage(`{"traposId":"7:"}`)},
		{OK: true, Payload: json.RawMessage(" {\n \"a\" : [1, 2 ,\"<b>&\"], \"\\u00e9\":\"\\n\" } ")},
		{OK: true, Payload: json.RawMessage(`{"unicode":"é☃"}`)},
		{OK: true, Payload: json.RawMessage(`{"broken":`)},
		{OK: true},
		{OK: true, Payload: json.RawMessage(`{}`), Warnings: []cctext.Replacement{{}}},
		{Error: &protocol.Error{Code: protocol.CodeBusy, Message: "later"}},
	} {
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		WriteAnswer(got, http.StatusOK, a)
		if a.Error != nil && a.Error.Code == protocol.CodeBusy {
			want.Header().Set("Retry-After", BusyRetryAfter)
		}
		WriteJSON(want, http.StatusOK, a)
		assert.Equal(t, want.Code, got.Code, string(a.Payload))
		assert.Equal(t, want.Header(), got.Header(), string(a.Payload))
		assert.Equal(t, want.Body.String(), got.Body.String(), string(a.Payload))
	}
}

// Every JSON answer's Content-Type is one shared slice (no allocation an answer), which a
// handler adding to one answer's header must not change in any other answer's: an Add copies
// it. An answer still allocates nothing for its Content-Type.
func TestAnAnswersContentTypeIsItsOwnToAddTo(t *testing.T) {
	first, second := httptest.NewRecorder(), httptest.NewRecorder()
	WriteAnswer(first, http.StatusOK, Answer{OK: true, Payload: json.RawMessage(`{}`)})
	WriteJSON(second, http.StatusOK, Answer{OK: true})
	first.Header().Add("Content-Type", "text/plain")
	second.Header().Add("Content-Type", "text/html")
	assert.Equal(t, []string{"application/json", "text/plain"}, first.Header()["Content-Type"])
	assert.Equal(t, []string{"application/json", "text/html"}, second.Header()["Content-Type"])
	assert.Equal(t, []string{"application/json"}, jsonContentType)

	h := http.Header{}
	assert.Zero(t, testing.AllocsPerRun(100, func() { setJSONContentType(h) }))
}
