package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// malformedFrames are frames the gateway must ignore without answering or closing. The test
// proves "no answer" without waiting on a timer: a valid request sent after them must be
// answered by the very next frame the computer reads.
var malformedFrames = []string{
	`not json at all`,
	`{"event":`,
	`[]`,
	`[1,2,3]`,
	`"computer_request"`,
	`42`,
	`null`,
	`{}`,
	`{"event":"bogus","messageId":"m1","type":"probe_gateway"}`,
	`{"event":123,"messageId":"m2","type":"probe_gateway"}`,
	// Misdirected: events only the gateway sends.
	`{"event":"gateway_request","traposReceiverId":"13:","messageId":"m3","type":"ping","payload":{}}`,
	`{"event":"gateway_response","traposReceiverId":"13:","messageId":"m4","type":"hello","ok":true}`,
	// A response to a request the gateway never made.
	`{"event":"computer_response","traposSenderId":"13:","messageId":"never-sent","type":"ping","ok":true,"payload":{}}`,
	`{"event":"computer_response","traposSenderId":"13:","messageId":"never-sent-2","type":"ping","ok":"yes"}`,
}

func TestMalformedFramesAreIgnored(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "13:")
	for _, frame := range malformedFrames {
		require.NoError(t, c.WriteText(frame), "write %s", frame)
	}
	require.NoError(t, c.WriteRaw(websocket.BinaryMessage, []byte{0xff, 0x00, 0x7b}))

	f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err, "a malformed frame was answered, or the socket closed")
	requireOK(t, f)
}

func TestMalformedFramesBeforeHelloAreIgnored(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := dial(ctx, t, g, "13:")
	for _, frame := range malformedFrames {
		require.NoError(t, c.WriteText(frame), "write %s", frame)
	}
	require.NoError(t, c.MustHello(ctx, sandboxPassword), "a malformed frame was answered, or the socket closed")
}

func TestMessageIDIsEchoedVerbatim(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "14:")
	for _, id := range []string{"1764531234567-1", "0b9f7c7e-4a8e-4c61-9a25-1c4d6f1f0e11", "ünïcode id with spaces", strings.Repeat("x", 512)} {
		require.NoError(t, c.WriteJSON(map[string]any{
			"event": harness.EventComputerRequest, "traposSenderId": "14:", "messageId": id,
			"type": harness.TypeProbeGateway, "payload": map[string]any{},
		}))
		f, err := c.Next(ctx)
		require.NoError(t, err)
		assert.Equal(t, harness.EventGatewayResponse, f.Event)
		assert.Equal(t, id, f.MessageID)
	}
}

func TestNewestSocketWins(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	older := connect(ctx, t, g, "15:miner")
	bystander := connect(ctx, t, g, "16:miner") // same label, other computer id

	newer := connect(ctx, t, g, "15:miner")
	reason := requireClose(ctx, t, older, harness.CloseReplaced)
	assert.Equal(t, "replaced", reason)

	for name, c := range map[string]*harness.Computer{"newer": newer, "bystander": bystander} {
		f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
		require.NoError(t, err, name)
		requireOK(t, f)
	}
}

func TestOversizeFrameClosesOnlyThatSocket(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	big := connect(ctx, t, g, "17:")
	other := connect(ctx, t, g, "18:")

	// A frame of exactly the cap is still served.
	atCap, id := paddedFrame(t, "17:", harness.MaxFrameBytes)
	require.NoError(t, big.WriteJSON(atCap))
	f, err := big.Next(ctx)
	require.NoError(t, err, "a frame of exactly %d bytes must be accepted", harness.MaxFrameBytes)
	assert.Equal(t, id, f.MessageID)
	requireOK(t, f)

	// One byte more closes the socket with 1009. The write may race the gateway's close, so
	// only the close code is asserted.
	overCap, _ := paddedFrame(t, "17:", harness.MaxFrameBytes+1)
	_ = big.WriteJSON(overCap)
	requireClose(ctx, t, big, harness.CloseTooBig)

	f, err = other.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err, "another computer must keep working")
	requireOK(t, f)
	// And the oversize computer can come back.
	connect(ctx, t, g, "17:")
}

// paddedFrame builds a probe_gateway request whose JSON encoding is exactly size bytes, and
// returns it with its messageId.
func paddedFrame(t *testing.T, traposID string, size int) (map[string]any, string) {
	t.Helper()
	id := harness.NewMessageID()
	msg := map[string]any{
		"event": harness.EventComputerRequest, "traposSenderId": traposID, "messageId": id,
		"type": harness.TypeProbeGateway, "payload": map[string]any{"pad": ""},
	}
	base, err := json.Marshal(msg)
	require.NoError(t, err)
	require.Less(t, len(base), size)
	msg["payload"] = map[string]any{"pad": strings.Repeat("a", size-len(base))}
	out, err := json.Marshal(msg)
	require.NoError(t, err)
	require.Len(t, out, size)
	return msg, id
}
