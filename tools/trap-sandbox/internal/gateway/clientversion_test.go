package gateway

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// The gateway tells each computer once that its client is older, and what it remembers for
// that stays bounded however many labels computers say hello with.
func TestClientVersionsRememberABoundedNumberOfComputers(t *testing.T) {
	var v clientVersions
	assert.True(t, v.first(Key{TraposID: "1:"}))
	assert.False(t, v.first(Key{TraposID: "1:"}), "told once")
	for i := range 3 * maxWarnedClients {
		v.first(Key{TraposID: "7:" + strconv.Itoa(i)})
	}
	assert.LessOrEqual(t, len(v.warned), maxWarnedClients)
}

// A type of the vocabulary that an older client answers unknown_type (screen.read before
// 0.4.0) names the fix, on every host surface alike: the install line on the computer. A
// program's type, and an up-to-date client's answer, stay the computer's own words.
func TestOlderClientsUnknownTypeNamesTheUpgrade(t *testing.T) {
	h := newHarness(t, Config{ClientVersion: "0.4.0"}, nil)
	unknown := func(req protocol.Frame) map[string]any {
		return map[string]any{"ok": false, "error": map[string]any{"code": "unknown_type",
			"message": "this computer does not handle requests of type " + req.Type}}
	}
	for _, c := range []struct {
		name, version, typ string
		hint               string
	}{
		{"older client, screen.read", "0.3.0", protocol.TypeScreenRead, "(its client, trapos-sandbox 0.3.0, is older than the 0.4.0 this gateway serves: run the gateway's install line on the computer to upgrade it, then reboot it)"},
		{"no version at all", "", protocol.TypeScreenWatch, "(its client, a trapos-sandbox that names no version, is older than the 0.4.0"},
		{"older client, a program's type", "0.3.0", "door.open", ""},
		{"up-to-date client", "0.4.0", protocol.TypeScreenRead, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "7:v" + strconv.Itoa(len(c.version)) + c.typ
			comp := h.dialAs(t, id, c.version)
			ch := asyncRequest(h.gw, context.Background(), id, c.typ, nil)
			comp.answerNext(unknown)
			r := awaitResult(t, ch)
			require.NoError(t, r.err)
			require.NotNil(t, r.resp.Error)
			assert.Equal(t, protocol.CodeUnknownType, r.resp.Error.Code)
			own := "this computer does not handle requests of type " + c.typ
			if c.hint == "" {
				assert.Equal(t, own, r.resp.Error.Message)
			} else {
				assert.True(t, strings.HasPrefix(r.resp.Error.Message, own+" "+c.hint), r.resp.Error.Message)
			}
			// The fix is the gateway's words, not the computer's (MCP's data note quotes
			// only these), as a host transport reads the answer: ByComputer.
			answered := *r.resp.Error
			answered.ByComputer = true
			_, words, _ := answered.Said()
			assert.Equal(t, own, words)
		})
	}
}

// A screen.input event type newer than the computer's client (a drag, sent to 0.5.20 by the web
// console of a newer gateway) is refused by the client as a type it does not know, as if the
// caller had made it up: the host reads when it came and the fix too, the event still named
// first by its place. Another type's refusal, another request's, and a client that has drag
// (or mouse_click and mouse_up, a press and a release apart) stay as sent.
func TestOlderClientsRefusedInputTypeNamesTheUpgrade(t *testing.T) {
	h := newHarness(t, Config{ClientVersion: "0.5.22"}, nil)
	const refusal = `events[2]: unknown input type "drag" (one of key, key_up, char, paste, click, scroll, terminate); nothing was queued`
	for i, c := range []struct {
		name, version, typ, sent, hint string
	}{
		{"0.5.20's drag", "0.5.20", protocol.TypeScreenInput, refusal, " (screen.input's drag came in trapos-sandbox 0.5.21, and this computer's client, trapos-sandbox 0.5.20, is older: run the gateway's install line on the computer to upgrade it, then reboot it)"},
		{"no version at all", "", protocol.TypeScreenInput, refusal, " (screen.input's drag came in trapos-sandbox 0.5.21, and this computer's client, a trapos-sandbox that names no version, is older:"},
		{"a type no client has", "0.5.20", protocol.TypeScreenInput, `events[0]: unknown input type "timer" (one of key); nothing was queued`, ""},
		{"a client that has drag", "0.5.21", protocol.TypeScreenInput, `events[0]: unknown input type "drag" (one of key); nothing was queued`, ""},
		{"another request", "0.5.20", "door.open", refusal, ""},
		// A drag's press and release apart came a version later: 0.5.21 takes drag, not them.
		{"0.5.21's mouse_up", "0.5.21", protocol.TypeScreenInput, `events[3]: unknown input type "mouse_up" (one of key, key_up, char, paste, click, drag, scroll, terminate); nothing was queued`,
			" (screen.input's mouse_up came in trapos-sandbox 0.5.22, and this computer's client, trapos-sandbox 0.5.21, is older: run the gateway's install line on the computer to upgrade it, then reboot it)"},
		{"0.5.20's mouse_click", "0.5.20", protocol.TypeScreenInput, `events[0]: unknown input type "mouse_click" (one of key); nothing was queued`,
			" (screen.input's mouse_click came in trapos-sandbox 0.5.22, and this computer's client, trapos-sandbox 0.5.20, is older:"},
		{"a client that has mouse_click", "0.5.22", protocol.TypeScreenInput, `events[0]: unknown input type "mouse_click" (one of key); nothing was queued`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "7:in" + strconv.Itoa(i)
			comp := h.dialAs(t, id, c.version)
			ch := asyncRequest(h.gw, context.Background(), id, c.typ, nil)
			comp.answerNext(func(protocol.Frame) map[string]any {
				return map[string]any{"ok": false, "error": map[string]any{"code": "bad_payload", "message": c.sent}}
			})
			r := awaitResult(t, ch)
			require.NoError(t, r.err)
			require.NotNil(t, r.resp.Error)
			assert.Equal(t, protocol.CodeBadPayload, r.resp.Error.Code)
			if c.hint == "" {
				assert.Equal(t, c.sent, r.resp.Error.Message)
			} else {
				assert.True(t, strings.HasPrefix(r.resp.Error.Message, c.sent+c.hint), r.resp.Error.Message)
			}
		})
	}
}

// On CC a client before 0.5.3 sent an fs_error with its library's line in front (CC places a
// native function's error raised under pcall at the nearest Lua code), its file named as
// Cobalt cuts a chunk's name ("...is/libsandboxfiles.lua:59: "; fakecraft wrote the whole
// path): the host reads CC's message alone, as from a current client. Only that position of that client's fs requests
// goes: a newer client's text, another file's position and another type's answer stay as sent.
func TestOlderClientsFSErrorLosesTheLibrarysPosition(t *testing.T) {
	h := newHarness(t, Config{ClientVersion: "0.5.3"}, nil)
	for i, c := range []struct {
		name, version, typ, code, sent, read string
	}{
		{"0.5.2's move onto a file, as CC names the library", "0.5.2", protocol.TypeFSMove, "fs_error", "...is/libsandboxfiles.lua:59: File exists", "File exists"},
		{"0.4.0's list, as CC names the library", "0.4.0", protocol.TypeFSList, "fs_error", "...is/libsandboxfiles.lua:55: /no/such: No such file", "/no/such: No such file"},
		{"0.5.2's move onto a file, as fakecraft named the library", "0.5.2", protocol.TypeFSMove, "fs_error", "/apis/libsandboxfiles.lua:59: File exists", "File exists"},
		{"0.4.0's list", "0.4.0", protocol.TypeFSList, "fs_error", "/apis/libsandboxfiles.lua:55: /no/such: No such file", "/no/such: No such file"},
		{"no version at all", "", protocol.TypeFSRead, "fs_error", "/apis/libsandboxfiles.lua:101: /a: No such file", "/a: No such file"},
		{"0.5.3 sends CC's words", "0.5.3", protocol.TypeFSMove, "fs_error", "/apis/libsandboxfiles.lua:59: File exists", "/apis/libsandboxfiles.lua:59: File exists"},
		{"a later client", "0.6.0", protocol.TypeFSMove, "fs_error", "/apis/libsandboxfiles.lua:59: File exists", "/apis/libsandboxfiles.lua:59: File exists"},
		{"another file's position", "0.5.2", protocol.TypeFSWrite, "fs_error", "/programs/p.lua:3: Out of space", "/programs/p.lua:3: Out of space"},
		{"a name that only ends like the library's", "0.5.2", protocol.TypeFSWrite, "fs_error", "/apis/my_libsandboxfiles.lua:3: x", "/apis/my_libsandboxfiles.lua:3: x"},
		{"another file's cut name", "0.5.2", protocol.TypeFSWrite, "fs_error", "...my_libsandboxfiles.lua:3: x", "...my_libsandboxfiles.lua:3: x"},
		{"0.5.3 sends CC's words, cut", "0.5.3", protocol.TypeFSMove, "fs_error", "...is/libsandboxfiles.lua:59: File exists", "...is/libsandboxfiles.lua:59: File exists"},
		{"no line", "0.5.2", protocol.TypeFSDelete, "fs_error", "/apis/libsandboxfiles.lua: Access denied", "/apis/libsandboxfiles.lua: Access denied"},
		{"another code", "0.5.2", protocol.TypeFSMakeDir, "internal", "/apis/libsandboxfiles.lua:9: attempt to index nil", "/apis/libsandboxfiles.lua:9: attempt to index nil"},
		{"a program's type", "0.5.2", "door.open", "fs_error", "/apis/libsandboxfiles.lua:59: jammed", "/apis/libsandboxfiles.lua:59: jammed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "7:fs" + strconv.Itoa(i)
			comp := h.dialAs(t, id, c.version)
			ch := asyncRequest(h.gw, context.Background(), id, c.typ, nil)
			comp.answerNext(func(protocol.Frame) map[string]any {
				return map[string]any{"ok": false, "error": map[string]any{"code": c.code, "message": c.sent}}
			})
			r := awaitResult(t, ch)
			require.NoError(t, r.err)
			require.NotNil(t, r.resp.Error)
			assert.Equal(t, protocol.Code(c.code), r.resp.Error.Code)
			assert.Equal(t, c.read, r.resp.Error.Message)
		})
	}
}

// dialAs connects a computer that says hello as a client of version ("": naming none).
func (h *harness) dialAs(t *testing.T, traposID, version string) *computer {
	comp := h.dial(t, traposID)
	hello := map[string]any{"traposId": traposID, "secret": ""}
	if version != "" {
		hello["clientVersion"] = version
	}
	comp.request("hello-1", TypeHello, hello)
	require.True(t, comp.read().OK)
	return comp
}

// A request naming a monitor (screen.read {monitor}) sent to a client older than 0.5.29, which
// ignores the field and would answer with the computer's own screen as if it were the
// monitor's, is refused before it is sent, naming the upgrade, and so is a watch of a monitor
// (screen.watch {monitor}) sent to a client older than 0.5.31, which refuses it; the computer gets the next
// request as the first. A current client gets it, and an older one a request without it.
func TestOlderClientsMonitorRequestIsRefusedBeforeItIsSent(t *testing.T) {
	h := newHarness(t, Config{ClientVersion: "0.5.29"}, nil)
	for i, c := range []struct {
		name, version, typ, payload, refusal string
	}{
		{"0.5.28's screen.read", "0.5.28", protocol.TypeScreenRead, `{"monitor":"top"}`,
			"screen.read's monitor came in trapos-sandbox 0.5.29, and this computer's client, trapos-sandbox 0.5.28, is older (it would answer with the computer's own screen): run the gateway's install line on the computer to upgrade it, then reboot it"},
		{"no version, screen.watch", "", protocol.TypeScreenWatch, `{"monitor":"top"}`,
			"screen.watch's monitor came in trapos-sandbox 0.5.31, and this computer's client, a trapos-sandbox that names no version, is older (it would answer with the computer's own screen)"},
		// 0.5.29 and 0.5.30 read a monitor, and refuse to watch one: said with the upgrade.
		{"0.5.30's screen.watch", "0.5.30", protocol.TypeScreenWatch, `{"monitor":"top"}`,
			"screen.watch's monitor came in trapos-sandbox 0.5.31, and this computer's client, trapos-sandbox 0.5.30, is older: run the gateway's install line on the computer to upgrade it, then reboot it"},
		{"0.5.30, its own screen's watch", "0.5.30", protocol.TypeScreenWatch, `{}`, ""},
		{"a client that watches a monitor", "0.5.31", protocol.TypeScreenWatch, `{"monitor":"top"}`, ""},
		{"an escaped key, screen.input", "0.5.28", protocol.TypeScreenInput, `{"events":[],"\u006donitor":null}`,
			"screen.input's monitor came in trapos-sandbox 0.5.29, and this computer's client, trapos-sandbox 0.5.28, is older"},
		{"0.5.28, its own screen", "0.5.28", protocol.TypeScreenRead, `{}`, ""},
		{"another key in another case", "0.5.28", protocol.TypeScreenRead, `{"Monitor":"top"}`, ""},
		{"a current client", "0.5.29", protocol.TypeScreenRead, `{"monitor":"top"}`, ""},
		{"another type", "0.5.28", "door.open", `{"monitor":"top"}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "7:mon" + strconv.Itoa(i)
			comp := h.dialAs(t, id, c.version)
			ch := asyncRequest(h.gw, context.Background(), id, c.typ, json.RawMessage(c.payload))
			if c.refusal != "" {
				r := awaitResult(t, ch)
				require.Error(t, r.err)
				assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(r.err))
				assert.True(t, strings.HasPrefix(r.err.(*protocol.Error).Message, c.refusal), r.err.Error())
				// Nothing reached the computer: the next request is the first it gets.
				ch = asyncRequest(h.gw, context.Background(), id, protocol.TypePing, nil)
			}
			sent := comp.answerNext(func(protocol.Frame) map[string]any { return map[string]any{"ok": true, "payload": map[string]any{}} })
			r := awaitResult(t, ch)
			require.NoError(t, r.err)
			if c.refusal != "" {
				assert.Equal(t, protocol.TypePing, sent.Type)
			} else {
				assert.Equal(t, c.typ, sent.Type)
				assert.JSONEq(t, c.payload, string(sent.Payload))
			}
		})
	}
}
