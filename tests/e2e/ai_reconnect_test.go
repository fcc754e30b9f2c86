package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// flakyGateway is a WebSocket proxy between a computer and the real gateway. Drop closes the
// sockets through it (the gateway ends the computer's turn with its socket) and makes the next
// socket pass the gateway's first frame, the hello's answer, then close: a gateway that takes
// the hello and dies at once, as one that restarts twice does.
type flakyGateway struct {
	URL string // ws:// of the proxy, the computer's sandbox.url

	target   string
	handlers sync.WaitGroup // each socket's handler, waited for at the test's end

	mu            sync.Mutex
	open          map[*websocket.Conn]struct{} // both ends of each socket through the proxy
	dieAfterHello bool                         // the next socket closes after the gateway's answer to its hello
}

// startFlakyGateway runs a proxy to g until the test ends.
func startFlakyGateway(t *testing.T, g *harness.Gateway) *flakyGateway {
	t.Helper()
	p := &flakyGateway{target: g.WebSocketURL(), open: map[*websocket.Conn]struct{}{}}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = "ws" + strings.TrimPrefix(srv.URL, "http")
	t.Cleanup(func() {
		srv.Close() // no new sockets; a hijacked one is not waited for, so:
		p.closeAll()
		p.handlers.Wait()
	})
	return p
}

// Drop closes the sockets through the proxy and arms the next one to die after its hello.
func (p *flakyGateway) Drop() {
	p.mu.Lock()
	p.dieAfterHello = true
	p.mu.Unlock()
	p.closeAll()
}

func (p *flakyGateway) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.open {
		_ = c.Close()
	}
}

// track records c as open (or, with open false, forgets it).
func (p *flakyGateway) track(c *websocket.Conn, open bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if open {
		p.open[c] = struct{}{}
	} else {
		delete(p.open, c)
	}
}

// serve relays one socket both ways until either end closes (or, armed, until the gateway's
// first frame has gone to the computer).
func (p *flakyGateway) serve(w http.ResponseWriter, r *http.Request) {
	p.handlers.Add(1)
	defer p.handlers.Done()
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	computerSide, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer computerSide.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	gatewaySide, resp, err := websocket.DefaultDialer.DialContext(ctx, p.target, nil)
	cancel()
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return
	}
	defer gatewaySide.Close()
	p.mu.Lock()
	die := p.dieAfterHello
	p.dieAfterHello = false
	p.mu.Unlock()
	p.track(computerSide, true)
	p.track(gatewaySide, true)
	defer p.track(computerSide, false)
	defer p.track(gatewaySide, false)

	var toGateway sync.WaitGroup
	toGateway.Add(1)
	go func() {
		defer toGateway.Done()
		defer gatewaySide.Close()
		for {
			kind, msg, err := computerSide.ReadMessage()
			if err != nil || gatewaySide.WriteMessage(kind, msg) != nil {
				return
			}
		}
	}()
	for {
		kind, msg, err := gatewaySide.ReadMessage()
		if err != nil || computerSide.WriteMessage(kind, msg) != nil || (die && answersHello(msg)) {
			break
		}
	}
	_ = computerSide.Close()
	toGateway.Wait()
}

// TestAISaysTheAnswerLostWhenTheGatewayBackDiesAtOnce: the computer loses the gateway in the
// middle of an answer, its daemon gets it back, and that socket closes right after the hello.
// The turn ended with the first socket: ai says the answer is lost. It said only why the daemon
// was not connected, "…; the daemon retries in 11 s", as if the answer could still come then.
func TestAISaysTheAnswerLostWhenTheGatewayBackDiesAtOnce(t *testing.T) {
	ctx := testContext(t)
	w := newAIWorld(t)
	g := w.gateway(t, harness.Options{})
	proxy := startFlakyGateway(t, g)
	opts := desk(t, g, t.TempDir(), nil, "/ask.lua")
	opts.Settings["sandbox.url"] = proxy.URL
	opts.Files["/ask.lua"] = askAfterChurnProgram
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	require.NoError(t, g.WaitLog(ctx, `msg="computer connected"`))
	c.QueueString("e2e_ask")
	require.Eventually(t, func() bool { return aiTurnsRunning(t, g) == 1 && w.agent.Running() == 1 }, testTimeout, pollInterval,
		"the turn to reach the model")
	proxy.Drop()

	c.WaitFor(ctx, "e2e: after ai")
	out := strings.Join(lines(c.Output()), " ")
	assert.Contains(t, out, "The answer is lost: ask again once reconnected", c.Output())
	assert.NotContains(t, out, "The gateway lost the answer", c.Output())
	require.Eventually(t, func() bool { return aiTurnsRunning(t, g) == 0 }, testTimeout, pollInterval,
		"the gateway ends the turn with the socket that asked it")
}

// answersHello reports whether a gateway's frame is its answer to a hello: a computer whose
// gateway proved itself asks it to again (prove) before its hello, and that answer comes first.
func answersHello(msg []byte) bool {
	var f struct {
		Event, Type string
	}
	return json.Unmarshal(msg, &f) == nil && f.Event == harness.EventGatewayResponse && f.Type == harness.TypeHello
}
