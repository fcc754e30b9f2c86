package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/daemonfake"

	"tests/internal/harness"
)

// monitorComputer is a computer (a raw socket, client 0.5.31) that answers screen.watch with
// an id naming the monitor asked for (watched gets each payload's monitor, "" for its own
// screen), screen.unwatch (unwatched gets each one's watch id) and screen.read of its own
// screen (blank, its monitor top attached), and sends the screen.update
// requests it is given, one at a time, as a computer does (answers gets the gateway's answers).
type monitorComputer struct {
	*harness.Computer
	watched   chan string
	unwatched chan string
	answers   chan harness.Frame
	mu        sync.Mutex
	ids       map[string]string // by monitor: the watch id it answered
}

func startMonitorComputer(ctx context.Context, t *testing.T, g *harness.Gateway, traposID, secret string) *monitorComputer {
	t.Helper()
	c := &monitorComputer{Computer: dial(ctx, t, g, traposID), watched: make(chan string, 8), unwatched: make(chan string, 8), answers: make(chan harness.Frame, 8), ids: map[string]string{}}
	f, err := c.Request(ctx, harness.TypeHello, map[string]any{"traposId": traposID, "secret": secret, "clientVersion": "0.5.31"})
	require.NoError(t, err)
	requireOK(t, f)
	go func() {
		_ = c.AnswerSeeing(ctx, func(f harness.Frame) *harness.Reply {
			switch f.Type {
			case "screen.watch":
				var p struct {
					Monitor string `json:"monitor"`
				}
				_ = json.Unmarshal(f.Payload, &p)
				id := "watch-" + p.Monitor
				c.mu.Lock()
				c.ids[p.Monitor] = id
				c.mu.Unlock()
				c.watched <- p.Monitor
				return &harness.Reply{Payload: map[string]any{"watchId": id}}
			case "screen.read":
				// Its own screen, blank, naming the one monitor attached (the watched ones are
				// read through their watch).
				return &harness.Reply{Payload: map[string]any{"width": 5, "height": 1, "colour": true, "cursor": map[string]any{"x": 1, "y": 1},
					"rows": []any{map[string]any{"text": "     ", "fg": "00000", "bg": "fffff"}}, "monitors": []string{"top"}}}
			case "screen.unwatch":
				var p struct {
					WatchID string `json:"watchId"`
				}
				_ = json.Unmarshal(f.Payload, &p)
				select {
				case c.unwatched <- p.WatchID:
				default: // a test that does not look
				}
				return &harness.Reply{Payload: map[string]any{}}
			}
			return &harness.Reply{Error: &daemonfake.Error{Code: "unknown_type", Message: f.Type}}
		}, func(f harness.Frame) {
			if f.Event == harness.EventGatewayResponse {
				c.answers <- f
			}
		})
	}()
	return c
}

// update sends monitor's screen.update (its watch's id), one row of text, and returns the
// gateway's answer once it came: as a computer, it sends a watch's next update only then (the
// gateway merges the updates it has at once in any order).
func (c *monitorComputer) update(t *testing.T, monitor string, seq int, text string) harness.Frame {
	t.Helper()
	c.mu.Lock()
	id := c.ids[monitor]
	c.mu.Unlock()
	messageID := harness.NewMessageID()
	require.NoError(t, c.WriteJSON(map[string]any{"event": harness.EventComputerRequest, "traposSenderId": c.TraposID,
		"messageId": messageID, "type": "screen.update", "payload": map[string]any{
			"watchId": id, "seq": seq, "monitor": monitor, "textScale": 1, "width": 5, "height": 1, "colour": true,
			"cursor": map[string]any{"x": 1, "y": 1}, "rows": map[string]any{"1": map[string]any{"text": text, "fg": "00000", "bg": "fffff"}}}}))
	for {
		select {
		case f := <-c.answers:
			if f.MessageID == messageID {
				return f
			}
		case <-time.After(testTimeout): // a hang guard only
			t.Fatal("the gateway never answered the screen.update")
		}
	}
}

// openStream opens the API's live view at path with token; the caller closes the body.
func openStream(ctx context.Context, t *testing.T, g *harness.Gateway, token, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL(path), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	return resp
}

// nextEvent reads the stream's next event (keep-alive comments skipped): its name and data.
func nextEvent(t *testing.T, r *bufio.Reader) (name, data string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && name != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

// TestAMonitorsLiveViewIsAuthorizedAsTheScreens: the stream's ?monitor= gets the screen's own
// authorization on a real gateway with accounts. Bob's token asking for alice's computer's
// monitor top is answered as for a computer that is not connected (as without ?monitor=, word
// for word), and the computer is asked nothing; a name %-escaped with a "/" or a "#" reaches
// the computer as that name. Alice's stream of her monitor ends, unauthorized, once her token is
// revoked (tokens revoke on the data directory, beside the running gateway), with no frame of
// what the monitor showed after.
func TestAMonitorsLiveViewIsAuthorizedAsTheScreens(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	g := startGateway(t, dir)
	c := startMonitorComputer(ctx, t, g, "7:desk", aliceCred)

	get := func(token, path string) (int, string) {
		resp := openStream(ctx, t, g, token, path)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	ownStatus, ownBody := get(bob, "/trapos/computers/7:desk/screen")
	monStatus, monBody := get(bob, "/trapos/computers/7:desk/screen?monitor=top")
	assert.Equal(t, http.StatusNotFound, monStatus, monBody)
	assert.Equal(t, ownStatus, monStatus)
	// The one field more names the monitor bob asked for (the stream's error names its
	// monitor), nothing of alice's computer.
	var own, mon struct{ Error map[string]any }
	require.NoError(t, json.Unmarshal([]byte(ownBody), &own), ownBody)
	require.NoError(t, json.Unmarshal([]byte(monBody), &mon), monBody)
	assert.Equal(t, "top", mon.Error["monitor"])
	delete(mon.Error, "monitor")
	assert.Equal(t, own, mon, "bob learns nothing more of alice's computer through a monitor")
	assert.Contains(t, monBody, "its token reaches that account's computers only")
	select {
	case m := <-c.watched:
		t.Fatalf("alice's computer was asked to watch %q for bob", m)
	default:
	}

	resp := openStream(ctx, t, g, alice, "/trapos/computers/7:desk/screen?monitor=a%2Fb%23c")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "a/b#c", <-c.watched, "the %-escaped name whole")
	resp.Body.Close()

	resp = openStream(ctx, t, g, alice, "/trapos/computers/7:desk/screen?monitor=top")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for m := <-c.watched; m != "top"; m = <-c.watched { // a/b#c's watch, asked again before its unwatch
	}
	c.update(t, "top", 1, "hello")
	r := bufio.NewReader(resp.Body)
	name, data := nextEvent(t, r)
	require.Equal(t, "frame", name, data)
	assert.Contains(t, data, `"text":"hello"`)
	assert.Contains(t, data, `"monitor":"top"`)

	id := strings.SplitN(alice, "_", 3)[1]
	_, errOut, code := runCLI(ctx, t, nil, "tokens", "revoke", dir, id)
	require.Equal(t, 0, code, errOut)
	c.update(t, "top", 2, "PIN42")
	name, data = nextEvent(t, r)
	assert.Equal(t, "end", name, "no frame for a revoked token: %s", data)
	assert.Contains(t, data, `"code":"unauthorized"`)
	assert.Contains(t, data, "revoked")
	assert.NotContains(t, data, "PIN42")
}
