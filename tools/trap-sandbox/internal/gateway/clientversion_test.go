package gateway

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

func TestOlderVersion(t *testing.T) {
	for _, c := range []struct {
		have, want string
		older      bool
	}{
		{"0.1.0", "0.2.0", true}, {"0.2.0", "0.2.0", false}, {"0.10.0", "0.9.9", false},
		{"1.0.0", "0.9.0", false}, {"0.2.1", "0.2.10", true}, {"", "0.2.0", true},
		{"x", "0.2.0", true}, {"0.1", "0.2.0", true}, {"0.1.0", "", false},
	} {
		if got := olderVersion(c.have, c.want); got != c.older {
			t.Errorf("olderVersion(%q, %q) = %v", c.have, c.want, got)
		}
	}
}

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
			comp := h.dial(t, id)
			hello := map[string]any{"traposId": id, "secret": ""}
			if c.version != "" {
				hello["clientVersion"] = c.version
			}
			comp.request("hello-1", TypeHello, hello)
			require.True(t, comp.read().OK)
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
		})
	}
}
