package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"
)

func TestUnknownType(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	c.request("u1", "teleport", map[string]any{"to": "nether"})
	resp := c.read()
	assert.Equal(t, "u1", resp.MessageID)
	assert.Equal(t, "teleport", resp.Type)
	assert.Equal(t, "7:", resp.TraposReceiverID)
	assert.False(t, resp.OK)
	require.NotNil(t, resp.Error)
	assert.Equal(t, protocol.CodeUnknownType, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "probe_gateway")

	c.request("u2", "", nil) // an empty type
	assert.Equal(t, protocol.CodeUnknownType, c.read().Error.Code)

	c.sendText(`{"event":"computer_request","traposSenderId":"7:","messageId":"u3"}`) // no type at all
	resp = c.read()
	assert.Equal(t, "u3", resp.MessageID)
	assert.Equal(t, "", resp.Type)
	assert.Equal(t, protocol.CodeUnknownType, resp.Error.Code)
}

// The gateway keeps no record of a computer's messageIds: they are the computer's to mint, and
// one used twice, even while the first request is still in flight, is answered twice.
func TestAMessageIDUsedTwiceIsAnsweredTwice(t *testing.T) {
	started, release := make(chan struct{}, 2), make(chan struct{})
	h := newHarness(t, Config{}, nil, func(g *Gateway) {
		g.Handle("wait", func(ctx context.Context, _ protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return payload, nil
		})
	})
	c := h.connect(t, "7:", "")
	c.request("same", "wait", map[string]any{"n": 1})
	c.request("same", "wait", map[string]any{"n": 2})
	for range 2 {
		select {
		case <-started:
		case <-time.After(waitLimit):
			t.Fatal("the two requests were not both in flight")
		}
	}
	close(release)
	var answered []string
	for range 2 {
		resp := c.read()
		require.True(t, resp.OK, "%+v", resp.Error)
		assert.Equal(t, "same", resp.MessageID)
		answered = append(answered, string(resp.Payload))
	}
	assert.ElementsMatch(t, []string{`{"n":1}`, `{"n":2}`}, answered)
}

func TestComputerRequestPayloadForms(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	for i, payload := range []string{`{}`, `[]`, ``, `null`, `"str"`, `3`} {
		text := `{"event":"computer_request","traposSenderId":"7:","messageId":"m` + string(rune('0'+i)) + `","type":"probe_gateway"`
		if payload != "" {
			text += `,"payload":` + payload
		}
		c.sendText(text + `}`)
		resp := c.read()
		assert.True(t, resp.OK, "payload %q", payload)
		assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":true}`, string(resp.Payload))
	}
}

func TestMessageIDEchoedVerbatim(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	// CC escapes every byte >= 0x80 as \u00XX; the reply carries the same token back.
	c.sendText(`{"event":"computer_request","traposSenderId":"7:","messageId":"id-\u00C3\u00A9-\/","type":"probe_gateway","payload":[]}`)
	text, err := c.readText()
	require.NoError(t, err)
	assert.Contains(t, text, `"messageId":"id-\u00C3\u00A9-\/"`)
}

func TestIgnoredFramesKeepTheSocket(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	junk := []string{
		`{"event":`,
		`not json at all`,
		`null`,
		`[]`,
		`{"event":"computer_request","type":"probe_gateway"}`,
		`{"event":"teleport","messageId":"x"}`,
		`{"event":"gateway_request","traposReceiverId":"7:","messageId":"x","type":"ping","payload":{}}`,
		`{"event":"gateway_response","traposReceiverId":"7:","messageId":"x","type":"ping","ok":true}`,
		`{"event":"computer_response","traposSenderId":"7:","messageId":"nobody-asked","type":"ping","ok":true}`,
		// Invalid JSON too, though a lenient parser would read a request in each.
		"\xef\xbb\xbf" + `{"event":"computer_request","traposSenderId":"7:","messageId":"bom","type":"probe_gateway"}`,
		`{"event":"computer_request","traposSenderId":"7:","messageId":"trailing","type":"probe_gateway"} {}`,
		`{"event":"computer_request","traposSenderId":"7:","messageId":"trailing","type":"probe_gateway"}x`,
	}
	for _, text := range junk {
		c.sendText(text)
	}
	require.NoError(t, c.conn.WriteMessage(websocket.BinaryMessage, []byte{0xff, 0x00, 0x13}))

	// None of the junk got an answer: the next frame is the reply to this request.
	c.request("after-junk", protocol.TypeProbeGateway, nil)
	resp := c.read()
	assert.Equal(t, "after-junk", resp.MessageID)
	assert.True(t, resp.OK)
	logs := h.logs.String()
	assert.Contains(t, logs, "ignored frame")
	assert.Contains(t, logs, "must not send")
	assert.NotContains(t, logs, "level=ERROR")
}

func TestOversizedFrameCloses1009(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	bystander := h.connect(t, "1:", "")
	big := h.connect(t, "2:", "")

	payload := strings.Repeat("x", protocol.MaxFrameBytes+1)
	require.NoError(t, big.conn.WriteMessage(websocket.TextMessage, []byte(payload)))
	big.expectClose(websocket.CloseMessageTooBig, "frame too big")
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 1 }, waitLimit, testkit.Poll, "the big computer to leave")

	// The other computer keeps working in both directions.
	bystander.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, bystander.read().OK)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	pending := asyncRequest(h.gw, ctx, "1:", TypePing, nil)
	bystander.answerNext(func(protocol.Frame) map[string]any { return map[string]any{"ok": true} })
	assert.NoError(t, awaitResult(t, pending).err)
}

func TestFrameAtTheLimitIsAccepted(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	head := `{"event":"computer_request","traposSenderId":"7:","messageId":"big","type":"probe_gateway","payload":{"pad":"`
	tail := `"}}`
	text := head + strings.Repeat("x", protocol.MaxFrameBytes-len(head)-len(tail)) + tail
	require.Len(t, text, protocol.MaxFrameBytes)
	c.sendText(text)
	resp := c.read()
	assert.Equal(t, "big", resp.MessageID)
	assert.True(t, resp.OK)
}

func TestProbeGatewayStates(t *testing.T) {
	const password = "hunter2-secret"
	// probeTimeout bounds the hanging case alone; an opencode that answers gets the default
	// bound (5 s), so a loaded machine never turns its answer into "no answer within 200ms".
	const probeTimeout = 200 * time.Millisecond
	cases := []struct {
		name   string
		url    func(t *testing.T) string
		cfg    opencode.ProberConfig
		ok     bool
		detail string
	}{
		{
			name: "healthy",
			url:  func(t *testing.T) string { return opencodefake.Start(t, opencodefake.Options{Password: password}).URL },
			cfg:  opencode.ProberConfig{Password: password},
			ok:   true,
		},
		{
			name:   "refused",
			url:    func(t *testing.T) string { return opencodefake.ClosedPortURL(t) },
			detail: ": connection refused",
		},
		{
			name:   "401 wrong credentials",
			url:    func(t *testing.T) string { return opencodefake.Start(t, opencodefake.Options{Password: "other"}).URL },
			cfg:    opencode.ProberConfig{Password: password},
			detail: ": answered 401, refusing the gateway's credentials: its operator must give the gateway opencode's server password",
		},
		{
			name:   "401 missing credentials",
			url:    func(t *testing.T) string { return opencodefake.Start(t, opencodefake.Options{Password: "other"}).URL },
			detail: ": answered 401, wanting a password the gateway does not send",
		},
		{
			name:   "HTML answer",
			url:    func(t *testing.T) string { return opencodefake.Start(t, opencodefake.Options{}).URL + "/app" },
			detail: ": answered 200 text/html, not an opencode health response (wrong URL?)",
		},
		{
			name: "status 500",
			url: func(t *testing.T) string {
				return opencodefake.StartFailing(t, http.StatusInternalServerError).URL
			},
			detail: ": answered status 500",
		},
		{
			name:   "hanging",
			url:    func(t *testing.T) string { return opencodefake.StartStalled(t).URL },
			cfg:    opencode.ProberConfig{Timeout: probeTimeout},
			detail: ": no answer within 200ms",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.URL = tc.url(t)
			prober, err := opencode.NewProber(cfg)
			require.NoError(t, err)
			t.Cleanup(prober.Close)
			h := newHarness(t, Config{}, prober)
			c := h.connect(t, "7:", "")

			// The hanging opencode never answers: that an answer comes at all (within read's
			// bound), with a detail naming the probe's timeout, shows the probe bound it.
			c.request("probe", protocol.TypeProbeGateway, []any{})
			resp := c.read()

			assert.Equal(t, protocol.TypeProbeGateway, resp.Type)
			assert.True(t, resp.OK, "the probe itself always succeeds")
			var got struct {
				SandboxOK      *bool   `json:"sandboxOk"`
				OpencodeOK     *bool   `json:"opencodeOk"`
				OpencodeDetail *string `json:"opencodeDetail"`
			}
			require.NoError(t, json.Unmarshal(resp.Payload, &got))
			require.NotNil(t, got.SandboxOK)
			require.NotNil(t, got.OpencodeOK)
			assert.True(t, *got.SandboxOK)
			assert.Equal(t, tc.ok, *got.OpencodeOK)
			if tc.ok {
				assert.Nil(t, got.OpencodeDetail, "no detail when healthy")
			} else {
				require.NotNil(t, got.OpencodeDetail)
				assert.Contains(t, *got.OpencodeDetail, "opencode at "+strings.TrimSuffix(cfg.URL, "/app"))
				assert.Contains(t, *got.OpencodeDetail, tc.detail)
				assert.NotContains(t, *got.OpencodeDetail, password)
			}
			assert.NotContains(t, h.logs.String(), password)
		})
	}
}

func TestProbeDoesNotBlockTheSocket(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, Config{}, blockingProber{release: release})
	c := h.connect(t, "7:", "")
	c.request("slow", protocol.TypeProbeGateway, nil)

	// While the probe runs, the socket still reads: a gateway request round-trips.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	c.answerNext(func(protocol.Frame) map[string]any { return map[string]any{"ok": true} })
	assert.NoError(t, awaitResult(t, pending).err)

	close(release)
	resp := c.read()
	assert.Equal(t, "slow", resp.MessageID)
	assert.True(t, resp.OK)
}

// blockingProber answers only once release is closed (or the socket ends).
type blockingProber struct{ release chan struct{} }

func (p blockingProber) Probe(ctx context.Context) opencode.Health {
	select {
	case <-p.release:
		return opencode.Health{OK: true}
	case <-ctx.Done():
		return opencode.Health{Detail: "abandoned"}
	}
}

func TestTooManyRequestsInFlight(t *testing.T) {
	release := make(chan struct{})
	m := newMetrics()
	h := newHarness(t, Config{Metrics: m}, blockingProber{release: release})
	c := h.connect(t, "7:", "")
	for i := range maxRequestsInFlight {
		c.request("p"+string(rune('a'+i)), protocol.TypeProbeGateway, nil)
	}
	c.request("one-too-many", protocol.TypeProbeGateway, nil)
	resp := c.read()
	assert.Equal(t, "one-too-many", resp.MessageID)
	assert.Equal(t, protocol.CodeInternal, resp.Error.Code)
	assert.Equal(t, 1.0, testutil.ToFloat64(m.limits.WithLabelValues(limitRequestsInFlight)))
	close(release)
	for range maxRequestsInFlight {
		assert.True(t, c.read().OK)
	}
}

func TestShutdownClosesSocketsWith1001(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	waiting := h.dial(t, "8:") // no hello yet: closed too
	// The dial returns when the client's handshake is done, which can be before the gateway
	// has counted the socket: the count in the log below would then say 1.
	require.Eventually(t, func() bool { return len(sessionsOf(h.gw)) == 2 }, waitLimit, testkit.Poll,
		"the gateway to hold both sockets")

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	c.read()

	require.NoError(t, h.gw.Shutdown(ctx))
	r := awaitResult(t, pending)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(r.err))
	assert.Contains(t, r.err.Error(), "shutting down")
	c.expectClose(websocket.CloseGoingAway, "going away")
	waiting.expectClose(websocket.CloseGoingAway, "going away")
	assert.Empty(t, h.gw.Computers())
	// One line for them all at Info; each computer's own only at Debug (thousands close at
	// once, and their lines cost a stopping replica half its CPU).
	logs := h.logs.String()
	assert.Contains(t, logs, `level=INFO msg="closed every socket: going away" module=trapos-cloud-gateway sockets=2`)
	assert.Regexp(t, `level=DEBUG msg="computer disconnected" .*traposId=7: code=1001 byGateway=true reason="going away"`, logs)
	assert.NotContains(t, logs, `level=INFO msg="computer disconnected"`)

	_, resp, err := websocket.DefaultDialer.DialContext(ctx, h.wsURL(), nil)
	require.Error(t, err, "no new sockets after shutdown")
	require.NotNil(t, resp)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

// TestShutdownTellsTheSocketsHandlersWhy: the context a handler gets ends with its socket;
// when Shutdown closed the socket, its cause is ErrShuttingDown (a screen watch's viewers hear
// that the gateway stopped, not that the computer left); a computer that left gives none.
func TestShutdownTellsTheSocketsHandlersWhy(t *testing.T) {
	started, causes := make(chan struct{}, 2), make(chan error, 2)
	h := newHarness(t, Config{}, nil, func(g *Gateway) {
		g.Handle("wait", func(ctx context.Context, _ protocol.Requester, _ json.RawMessage) (json.RawMessage, error) {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		})
	})
	next := func(what string) error {
		t.Helper()
		select {
		case err := <-causes:
			return err
		case <-time.After(waitLimit):
			t.Fatalf("no handler ended: %s", what)
			return nil
		}
	}
	leaving, staying := h.connect(t, "7:", ""), h.connect(t, "8:", "")
	leaving.request("w", "wait", nil)
	staying.request("w", "wait", nil)
	for range 2 {
		select {
		case <-started:
		case <-time.After(waitLimit):
			t.Fatal("the two handlers did not both start")
		}
	}

	require.NoError(t, leaving.conn.Close())
	assert.Equal(t, context.Canceled, next("the computer left"), "the computer left: no reason of the gateway's")

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, h.gw.Shutdown(ctx))
	cause := next("the gateway shut down")
	assert.Same(t, ErrShuttingDown, cause)
	assert.Equal(t, "not_connected: the gateway is shutting down", cause.Error())
}

func TestShutdownIsBoundedWhenPeersDoNotAnswer(t *testing.T) {
	h := newHarness(t, Config{CloseGrace: time.Hour}, nil)
	h.connect(t, "7:", "") // never reads, so never answers the close frame

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := h.gw.Shutdown(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Minute, "ctx's deadline ends Shutdown, not the hour's close grace")
}

// A type registered with HandleQuick is answered on the reader when its quick handler can:
// it takes no request slot (answered with all 16 taken by slow requests), its answers leave
// in the order the requests came, and when it cannot answer without blocking (ErrWouldBlock)
// the type's handler answers in a goroutine, within the slots as every other request.
func TestAQuickAnswerTakesNoSlotAndKeepsOrder(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, Config{}, nil, func(g *Gateway) {
		g.Handle("slow", func(ctx context.Context, _ protocol.Requester, _ json.RawMessage) (json.RawMessage, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		})
		g.HandleQuick("quick", func(from protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
			switch string(payload) {
			case `{"block":true}`:
				return nil, protocol.ErrWouldBlock
			case `{"fail":true}`:
				return nil, protocol.Errorf(protocol.CodeBadPayload, "no")
			}
			return json.Marshal(map[string]string{"from": from.TraposID})
		}, func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"served":true}`), nil
		})
	})
	c := h.connect(t, "7:", "")
	for i := range maxRequestsInFlight {
		c.request(fmt.Sprint("slow", i), "slow", nil)
	}
	const n = 20
	for i := range n {
		c.request(fmt.Sprint("q", i), "quick", nil)
	}
	for i := range n {
		resp := c.read()
		require.Equal(t, fmt.Sprint("q", i), resp.MessageID, "quick answers in request order, before the slow ones")
		require.True(t, resp.OK)
		assert.JSONEq(t, `{"from":"7:"}`, string(resp.Payload))
	}
	c.request("failed", "quick", map[string]bool{"fail": true})
	resp := c.read()
	assert.Equal(t, "failed", resp.MessageID)
	assert.Equal(t, protocol.CodeBadPayload, resp.Error.Code, "a quick handler's error is the answer")

	c.request("blocked", "quick", map[string]bool{"block": true})
	resp = c.read()
	assert.Equal(t, "blocked", resp.MessageID)
	assert.Equal(t, protocol.CodeInternal, resp.Error.Code, "no quick answer: it waits for a slot like any request")

	close(release)
	for range maxRequestsInFlight {
		assert.True(t, c.read().OK)
	}
	c.request("served", "quick", map[string]bool{"block": true})
	resp = c.read()
	assert.Equal(t, "served", resp.MessageID)
	assert.JSONEq(t, `{"served":true}`, string(resp.Payload))
}
