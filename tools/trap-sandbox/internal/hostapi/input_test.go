package hostapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
)

// postInput posts body to computer traposID's …/input.
func postInput(t *testing.T, url, traposID, body string) answer {
	t.Helper()
	return call(t, http.MethodPost, url+"/trapos/computers/"+traposID+"/input", "application/json", []byte(body))
}

// TestALongInputIsTypedWholeThroughTheAPI: an input of several screen.input requests sent in
// one call of the API (…/input, what the web console, trap-sandbox screen and the stdio MCP
// bridge send through hostapi.HTTP) is typed whole: the gateway splits it and holds the
// computer's input turn over its requests, so another caller's screen.input sent while its
// first request is on the computer waits for the turn (here past its own timeoutMs: refused,
// nothing of it typed) instead of landing between its parts. The page sent each part as a
// call of its own, and another caller's keys landed in the middle of its text.
func TestALongInputIsTypedWholeThroughTheAPI(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	term := daemonfake.NewTerminal()
	d.Exec = term.Exec
	firstPart, otherDone := make(chan struct{}), make(chan struct{})
	var once sync.Once
	d.Before = func(ctx context.Context, _ int, typ string) error {
		first := false
		once.Do(func() { first = true })
		if typ != protocol.TypeScreenInput || !first {
			return nil
		}
		close(firstPart)
		select { // the first part waits on the computer until the other caller's call ended
		case <-otherDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	srv := serve(t, d)

	typed := strings.Repeat("a", 3*computer.MaxInputEvents)
	type result struct {
		queued int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		queued, _, err := computer.New(hostapi.HTTP{URL: srv.URL}).TypeInput(t.Context(), "7:", []computer.InputEvent{{Type: computer.InputChar, Text: typed}}, 0)
		done <- result{queued, err}
	}()
	<-firstPart
	other := post(t, srv, "7:", `{"type":"screen.input","payload":{"events":[{"type":"char","text":"z"}]},"timeoutMs":300}`)
	close(otherDone)
	assert.Equal(t, http.StatusGatewayTimeout, other.status, "the other caller's keys went through while the input was typed: %s", other.body)
	require.NotNil(t, other.decoded.Error, "%s", other.body)
	assert.True(t, strings.HasPrefix(other.decoded.Error.Message, "computer 7: was still typing another caller's input"), other.decoded.Error.Message)
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, 3*computer.MaxInputEvents, r.queued)
	var got strings.Builder
	for _, e := range term.Events() {
		got.WriteString(e["text"].(string))
	}
	assert.Equal(t, typed, got.String(), "the input whole, nothing between its parts")
	assert.Equal(t, []int{128, 128, 128}, term.Requests(), "in the requests the computer takes")

	a := postInput(t, srv.URL, "7:", `{"events":[{"type":"char","text":"z"}]}`)
	assert.Equal(t, http.StatusOK, a.status, "the turn is free once the input is typed: %s", a.body)
	assert.JSONEq(t, `{"ok":true,"payload":{"queued":1}}`, string(a.body))
}

// TestAnInputRefusedPartWaySaysWhatWasTyped: when the computer refuses a request of an input
// after its first, the requests after it are not sent (the input would go on with a hole in
// it), and the answer says how much of the input the computer queued before it (queued), the
// event it refused named by its place in the whole input, not in its request. Through
// hostapi.HTTP the error is a computer.PartlyTyped, as in-process.
func TestAnInputRefusedPartWaySaysWhatWasTyped(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	term := daemonfake.NewTerminal()
	var mu sync.Mutex
	inputs := 0
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		mu.Lock()
		defer mu.Unlock()
		if typ == protocol.TypeScreenInput {
			if inputs++; inputs%2 == 0 { // each input's second request: the computer has no key named so
				return nil, &daemonfake.Error{Code: string(protocol.CodeBadPayload), Message: `events[1]: unknown key name "ctrl"; nothing was queued`}
			}
		}
		return term.Exec(typ, p)
	}
	srv := serve(t, d)
	// The key a and 127 of the b's in the first request; the other 73 b's (events[1] still)
	// and the key ctrl (events[2], its request's events[1]) in the second.
	events := []computer.InputEvent{{Type: computer.InputKey, Name: "a"}, {Type: computer.InputChar, Text: strings.Repeat("b", 200)}, {Type: computer.InputKey, Name: "ctrl"}}
	body, err := json.Marshal(map[string]any{"events": events})
	require.NoError(t, err)

	a := postInput(t, srv.URL, "7:", string(body))
	assert.Equal(t, http.StatusOK, a.status, "the computer's refusal is the answer, as on …/requests: %s", a.body)
	assert.JSONEq(t, `{"ok":false,"error":{"code":"bad_payload","message":"events[2]: unknown key name \"ctrl\"; nothing was queued; did you mean \"leftCtrl\"?","hostWords":{"before":"events[2]","after":"; did you mean \"leftCtrl\"?"},"queued":128}}`, string(a.body),
		"the event's place in the whole input, and the key meant, are the gateway's words")
	assert.Equal(t, []int{128}, term.Requests(), "no request after the refused one")

	_, _, err = computer.New(hostapi.HTTP{URL: srv.URL}).TypeInput(t.Context(), "7:", events, 0)
	partly, ok := errors.AsType[*computer.PartlyTyped](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, 128, partly.Queued)
	assert.Equal(t, []computer.InputEvent{events[0], {Type: computer.InputChar, Text: strings.Repeat("b", 127)}}, computer.TypedPart(events, partly.Queued))
	pe, ok := errors.AsType[*protocol.Error](err)
	require.True(t, ok, "%v", err)
	assert.True(t, pe.ByComputer)
	assert.Equal(t, `bad_payload: events[2]: unknown key name "ctrl"; nothing was queued; did you mean "leftCtrl"?`, pe.Error())
	before, words, after := pe.Said()
	assert.Equal(t, []string{"events[2]", `: unknown key name "ctrl"; nothing was queued`, `; did you mean "leftCtrl"?`}, []string{before, words, after}, "read from hostWords")
}

// TestAnInputNamesTheKeyMeant: a key name the computer refuses in an input typed through the
// API (…/input) that is another keyboard's name, or CC's in another case, gets CC's name
// after the computer's words, as MCP's send_keys says it: the same refusal read "unknown key
// name \"ctrl\"" alone here, where send_keys added `did you mean "leftCtrl"?`.
func TestAnInputNamesTheKeyMeant(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		events, _ := p["events"].([]any)
		for i, e := range events {
			if name, ok := e.(map[string]any)["name"].(string); ok && name != "enter" {
				return nil, &daemonfake.Error{Code: string(protocol.CodeBadPayload), Message: fmt.Sprintf("events[%d]: unknown key name %q (CC's key name, as keys.getName gives it: enter, leftCtrl, a); nothing was queued", i, name)}
			}
		}
		return map[string]any{"queued": len(events)}, nil
	}
	srv := serve(t, d)
	for given, hint := range map[string]string{
		"ctrl":   `; did you mean "leftCtrl"?`,
		"Enter":  `; did you mean "enter"?`,
		"escape": "; CC has no Escape key (Minecraft keeps it): edit's and paint's menu is leftCtrl",
		"bogus":  "",
		"-":      `; did you mean "minus"? (a key's press types no character: type "-" as text, with MCP's send_text or the HTTP API's char event)`,
		"é":      `; "é" is a character, not a key's name: type it as text, with MCP's send_text or the HTTP API's char event`,
	} {
		body, err := json.Marshal(map[string]any{"events": []computer.InputEvent{{Type: computer.InputKey, Name: "enter"}, {Type: computer.InputKey, Name: given}}})
		require.NoError(t, err)
		a := postInput(t, srv.URL, "7:", string(body))
		require.Equal(t, http.StatusOK, a.status, "%s: %s", given, a.body)
		var got struct {
			Error struct {
				Message   string             `json:"message"`
				HostWords protocol.HostWords `json:"hostWords"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(a.body, &got), given)
		assert.Equal(t, fmt.Sprintf("events[1]: unknown key name %q (CC's key name, as keys.getName gives it: enter, leftCtrl, a); nothing was queued", given)+hint, got.Error.Message, given)
		assert.Equal(t, protocol.HostWords{Before: "events[1]", After: hint}, got.Error.HostWords, "%s: the place and the hint are the gateway's words", given)
	}
}

// TestAnInputBodyIsCheckedBeforeAnythingIsTyped: an input with no events, more than one call
// types, an unknown field or a timeoutMs out of bounds is refused, 400 naming the fix, and
// nothing reaches the computer.
func TestAnInputBodyIsCheckedBeforeAnythingIsTyped(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	d.Exec = daemonfake.NewTerminal().Exec
	srv := serve(t, d)
	tooMany, err := json.Marshal(map[string]any{"events": []computer.InputEvent{{Type: computer.InputChar, Text: strings.Repeat("x", computer.MaxTypedEvents+1)}}})
	require.NoError(t, err)
	for _, c := range []struct{ body, message string }{
		{`{}`, `the body needs "events", at least one screen.input event (e.g. {"type":"key","name":"enter"})`},
		{`{"events":[]}`, `the body needs "events", at least one screen.input event (e.g. {"type":"key","name":"enter"})`},
		{string(tooMany), "the input is 32769 events of the computer's queue (a character is one, a line break or a key press and release two); one input types 32768 at most: send it in several"},
		{`{"events":[{"type":"key","name":"a"}],"timeoutMs":0}`, `"timeoutMs" must be a whole number of milliseconds between 1 and 60000 (got 0)`},
		{`{"events":[{"type":"key","name":"a"}],"type":"screen.input"}`, ""},
		{`{"events":[{"type":"key","name":"a"}],"call":"` + strings.Repeat("c", 65) + `"}`, `"call" is 65 bytes; a call's name is 64 bytes at most`},
		{`{"events":[{"type":"key","name":"a"}],"call":"p.1","after":"p.1"}`, `"after" names this input's own call "p.1": an input goes after an earlier one`},
	} {
		a := postInput(t, srv.URL, "7:", c.body)
		assert.Equal(t, http.StatusBadRequest, a.status, "%s: %s", c.body, a.body)
		require.NotNil(t, a.decoded.Error, "%s", a.body)
		assert.Equal(t, protocol.CodeBadPayload, a.decoded.Error.Code)
		if c.message != "" {
			assert.Equal(t, c.message, a.decoded.Error.Message)
		}
	}
	assert.Empty(t, d.Types(), "nothing reached the computer")
}

// TestAnInputNamedAfterAnEarlierCallIsTypedAfterIt: an input named after a call (after) that
// reaches the gateway before that call (sent after it, on a faster connection: the web
// console's release sent as its page is left, beside the call still on its way that pressed
// the key) waits for it, and is typed once it has been: the press, then its release. An input
// naming a call that has ended goes at once.
func TestAnInputNamedAfterAnEarlierCallIsTypedAfterIt(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	term := daemonfake.NewTerminal()
	d.Exec = term.Exec
	srv := serve(t, d)
	awaiting := make(chan string, 1)
	t.Cleanup(hostapi.SetTestHookAwaitingCall(func(_, name string) { awaiting <- name }))

	released := make(chan answer, 1)
	go func() {
		released <- call(t, http.MethodPost, srv.URL+"/trapos/computers/7:/input", "application/json",
			[]byte(`{"events":[{"type":"key_up","name":"a"}],"call":"page.2","after":"page.1"}`))
	}()
	assert.Equal(t, "page.1", <-awaiting, "the release waits for the press's call")
	pressed := postInput(t, srv.URL, "7:", `{"events":[{"type":"key","name":"a"}],"call":"page.1"}`)
	assert.Equal(t, http.StatusOK, pressed.status, "%s", pressed.body)
	r := <-released
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var keys []string
	for _, e := range term.Events() {
		keys = append(keys, e["type"].(string)+" "+e["name"].(string))
	}
	assert.Equal(t, []string{"key a", "key_up a"}, keys, "the press, then its release")

	again := postInput(t, srv.URL, "7:", `{"events":[{"type":"key_up","name":"a"}],"after":"page.1"}`)
	assert.Equal(t, http.StatusOK, again.status, "%s", again.body)
	assert.Equal(t, "page.1", <-awaiting)
	assert.Len(t, term.Events(), 3, "an input after a call that ended goes at once")
}

// TestAnOlderGatewaysComputerIsTypedPartByPart: a gateway older than …/input answers it 404,
// in its API's shape (no API route at …) or, older still, net/http's plain text. The client
// (trap-sandbox screen, the stdio MCP bridge) then types the input itself on …/requests, part
// by part, as it did with such a gateway: the whole input reaches the computer, where it
// failed every key with the 404.
func TestAnOlderGatewaysComputerIsTypedPartByPart(t *testing.T) {
	for name, noRoute := range map[string]func(w http.ResponseWriter, r *http.Request){
		"the API's 404": func(w http.ResponseWriter, r *http.Request) {
			server.WriteError(w, http.StatusNotFound, protocol.CodeNotFound, server.NoRouteAnswer+r.URL.Path+" (docs/http-api.md lists them)")
		},
		"net/http's 404": http.NotFound,
	} {
		t.Run(name, func(t *testing.T) {
			d := daemonfake.NewLocal(nil)
			term := daemonfake.NewTerminal()
			d.Exec = term.Exec
			current := serve(t, d)
			target, err := url.Parse(current.URL)
			require.NoError(t, err)
			// No X-Forwarded-For (Rewrite adds none): the API trusts a loopback client.
			forward := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }}
			older := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/input") {
					noRoute(w, r)
					return
				}
				forward.ServeHTTP(w, r)
			}))
			defer older.Close()

			typed := strings.Repeat("a", 2*computer.MaxInputEvents+5)
			queued, _, err := computer.New(hostapi.HTTP{URL: older.URL}).TypeInput(t.Context(), "7:", []computer.InputEvent{{Type: computer.InputChar, Text: typed}}, 0)
			require.NoError(t, err)
			assert.Equal(t, len(typed), queued)
			var got strings.Builder
			for _, e := range term.Events() {
				got.WriteString(e["text"].(string))
			}
			assert.Equal(t, typed, got.String())
			assert.Equal(t, []int{128, 128, 5}, term.Requests(), "in the requests the computer takes, one after another")
		})
	}
}

// TestTextNeverSentIsNotSaidToBeSent: an input or a request to a computer that is not connected
// reaches no computer, nor does a file the gateway refuses before sending it (a path CC cannot
// hold, one naming a directory), so its warnings of characters CC cannot hold say what they
// would have been sent as, never that they were: they said "was sent as ?" of text that was
// never sent.
func TestTextNeverSentIsNotSaidToBeSent(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	d.Exec = daemonfake.NewTerminal().Exec
	srv := serve(t, d)
	for what, a := range map[string]answer{
		"input": postInput(t, srv.URL, "9:gone", `{"events":[{"type":"char","text":"a—b"}]}`),
		"request": call(t, http.MethodPost, srv.URL+"/trapos/computers/9:gone/requests", "application/json",
			[]byte(`{"type":"lua.exec","payload":{"code":"print('—')"}}`)),
		"a path CC cannot hold": call(t, http.MethodPut, srv.URL+"/trapos/computers/7:/files/door%E2%80%94.lua", "text/plain", []byte("print('—')")),
		"a path naming a dir":   call(t, http.MethodPut, srv.URL+"/trapos/computers/7:/files/new/", "text/plain", []byte("print('—')")),
	} {
		require.NotNil(t, a.decoded.Error, "%s", a.body)
		want := protocol.CodeNotConnected
		if what != "input" && what != "request" {
			want = protocol.CodeBadPayload
		}
		assert.Equal(t, want, a.decoded.Error.Code, "%s", a.body)
		require.Len(t, a.decoded.Warnings, 1, "%s", a.body)
		msg := a.decoded.Warnings[0].Message
		assert.NotContains(t, msg, "was sent", "nothing was sent")
		assert.Contains(t, msg, `is outside CC's character set and would have been sent as "?"`)
	}
	assert.Empty(t, d.Types(), "nothing reached a computer")
}
