package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// A relabelled computer says bye before CC's close(), which sends no close frame: the gateway
// closes the socket itself (1000 relabelled), its log names the new traposId, and a request
// waiting on the old socket hears where the computer went.
func TestAByeRelabelledClosesTheSocketWith1000(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:old", "")
	session := h.session(t, "7:old")
	waiting := asyncRequest(h.gw, context.Background(), "7:old", TypePing, nil)
	require.Equal(t, TypePing, c.read().Type) // reached the computer, never answered

	c.request("bye-1", TypeBye, map[string]any{"reason": "relabelled", "traposId": "7:new"})
	answer := c.read()
	assert.Equal(t, "bye-1", answer.MessageID)
	assert.True(t, answer.OK, "%+v", answer.Error)
	c.expectClose(CloseBye, ByeRelabelled)

	r := awaitResult(t, waiting)
	var pe *protocol.Error
	require.True(t, errors.As(r.err, &pe), "%v", r.err)
	assert.Equal(t, protocol.CodeNotConnected, pe.Code)
	assert.Equal(t, "computer 7:old was relabelled: it is 7:new now; ask it by that id", pe.Message)
	assert.Equal(t, "7:new", pe.RelabelledTo, "for a view that follows it")
	// The socket's cause, which a screen watched under the old id ends with (screen.computerGone).
	cause, ok := errors.AsType[*protocol.Error](context.Cause(session.ctx))
	require.True(t, ok, "%v", context.Cause(session.ctx))
	assert.Equal(t, pe.Message, cause.Message)
	require.Eventually(t, func() bool {
		return strings.Contains(h.logs.String(), "traposId=7:old code=1000 byGateway=true reason=relabelled relabelledTo=7:new")
	}, waitLimit, testkit.Poll, "the disconnect line naming the relabel")
	assert.NotContains(t, h.logs.String(), "code=1006")
}

// CC's daemon drops the connection right behind its bye: the close is still the gateway's
// 1000, not the 1006 the dropped TCP connection would be.
func TestAByeFollowedByADroppedConnectionIsLoggedAsTheRelabel(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:old", "")
	c.request("bye-1", TypeBye, map[string]any{"reason": "relabelled", "traposId": "7:"})
	require.NoError(t, c.conn.NetConn().Close())
	require.Eventually(t, func() bool {
		return strings.Contains(h.logs.String(), "traposId=7:old code=1000 byGateway=true reason=relabelled relabelledTo=7:")
	}, waitLimit, testkit.Poll, "the disconnect line naming the relabel")
	assert.NotContains(t, h.logs.String(), "code=1006")
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll, "the computer to leave the registry")
}

func TestAByeThatNamesNoUsableTraposIDStillClosesAsARelabel(t *testing.T) {
	for name, to := range map[string]any{
		"another computer id": "8:new",
		"the same traposId":   "7:old",
		"a control character": "7:new\n",
		"not a string":        7,
		"none":                nil,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Config{}, nil)
			c := h.connect(t, "7:old", "")
			waiting := asyncRequest(h.gw, context.Background(), "7:old", TypePing, nil)
			require.Equal(t, TypePing, c.read().Type)
			c.request("bye-1", TypeBye, map[string]any{"reason": "relabelled", "traposId": to})
			assert.True(t, c.read().OK)
			c.expectClose(CloseBye, ByeRelabelled)
			r := awaitResult(t, waiting)
			require.Error(t, r.err)
			assert.Contains(t, r.err.Error(), "computer 7:old was relabelled: it says hello under its new label")
			require.Eventually(t, func() bool {
				return strings.Contains(h.logs.String(), "traposId=7:old code=1000 byGateway=true reason=relabelled\n")
			}, waitLimit, testkit.Poll, "the disconnect line without relabelledTo")
		})
	}
}

// A reason the gateway does not know closes with 1000 "bye": the computer's own words never
// become the close frame's.
func TestAByeForAnotherReasonClosesWith1000Bye(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:old", "")
	c.request("bye-1", TypeBye, map[string]any{"reason": "going\nfishing"})
	assert.True(t, c.read().OK)
	c.expectClose(CloseBye, "bye")
	require.Eventually(t, func() bool {
		return strings.Contains(h.logs.String(), "traposId=7:old code=1000 byGateway=true reason=bye\n")
	}, waitLimit, testkit.Poll, "the disconnect line")
}

// Before hello a bye is refused like any other request, and the socket stays open.
func TestAByeBeforeHelloIsRefused(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "7:old")
	c.request("bye-1", TypeBye, map[string]any{"reason": "relabelled", "traposId": "7:new"})
	answer := c.read()
	require.False(t, answer.OK)
	assert.Equal(t, protocol.CodeNotAuthenticated, answer.Error.Code)
	assert.True(t, c.hello("").OK, "the socket is still open")
}

// A player's sandbox stop and sandbox reconnect say bye too: the log names them, and a request
// waiting on the socket hears why it ended.
func TestAByeForStopOrReconnectNamesIt(t *testing.T) {
	for reason, message := range map[string]string{
		ByeStopped:      "computer 7:old was stopped by its player (sandbox stop; sandbox reconnect on it starts it again)",
		ByeReconnecting: "computer 7:old is reconnecting (sandbox reconnect, or a changed setting on it): ask it again in a moment",
	} {
		t.Run(reason, func(t *testing.T) {
			h := newHarness(t, Config{}, nil)
			c := h.connect(t, "7:old", "")
			waiting := asyncRequest(h.gw, context.Background(), "7:old", TypePing, nil)
			require.Equal(t, TypePing, c.read().Type)
			c.request("bye-1", TypeBye, map[string]any{"reason": reason})
			assert.True(t, c.read().OK)
			c.expectClose(CloseBye, reason)
			r := awaitResult(t, waiting)
			var pe *protocol.Error
			require.True(t, errors.As(r.err, &pe), "%v", r.err)
			assert.Equal(t, message, pe.Message)
			assert.Empty(t, pe.RelabelledTo)
			require.Eventually(t, func() bool {
				return strings.Contains(h.logs.String(), "traposId=7:old code=1000 byGateway=true reason="+reason+"\n")
			}, waitLimit, testkit.Poll, "the disconnect line")
		})
	}
}

// "revoked" is the gateway's own word for a computer it cut off (LeftRevoked), never a
// computer's: a bye that says it closed 1000 "revoked", and told the host's callers, a screen's
// viewers and (with replicas) the other replicas that the computer's credential was revoked,
// so that trap-sandbox screen and the web console stopped waiting for a computer whose
// credential still opens its account. It is a reason the gateway does not know.
func TestAByeCannotSayItsCredentialWasRevoked(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:old", "")
	session := h.session(t, "7:old")
	waiting := asyncRequest(h.gw, context.Background(), "7:old", TypePing, nil)
	require.Equal(t, TypePing, c.read().Type)
	c.request("bye-1", TypeBye, map[string]any{"reason": LeftRevoked})
	assert.True(t, c.read().OK)
	c.expectClose(CloseBye, byeReasonOther)
	r := awaitResult(t, waiting)
	require.Error(t, r.err)
	assert.False(t, WasCutOff(r.err), "%v", r.err)
	assert.False(t, WasCutOff(context.Cause(session.ctx)), "%v", context.Cause(session.ctx))
	assert.Equal(t, Bye{}, session.saidBye(), "nothing the other replicas are told")
}
