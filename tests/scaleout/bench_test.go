package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// hopComputers is how many computers BenchmarkPingThroughASecondReplica connects (issue 25:
// the NATS hop measured at 10 000 computers).
const hopComputers = 10000

// BenchmarkPingThroughASecondReplica measures a host's ping through the HTTP API with 10 000
// computers connected to replica a of two real gateway binaries on one real nats-server:
// "direct" asks a, which holds the sockets; "routed" asks b, which sends each request over
// NATS to a. One request at a time, cycling through every computer. Run it alone, once (it
// needs about 2 × 10 000 open files, the test binary's and a's):
//
//	go test -run '^$' -bench PingThroughASecondReplica -benchtime 5000x ./tests/scaleout
func BenchmarkPingThroughASecondReplica(b *testing.B) {
	nats := harness.StartNATS(b, natsBin)
	start := func(name string) *harness.Gateway {
		return harness.Start(b, gatewayBin, harness.Options{
			Args: append([]string{"--nats", nats.URL, "--replica", name}, replicaFlags...),
			// Every computer dials from 127.0.0.1: the bench measures the hop, not admission.
			Env: []string{"SANDBOX_UPGRADE_RATE=-1"},
		})
	}
	a, routed := start("a"), start("b")

	conns := make([]*websocket.Conn, hopComputers)
	errs := make([]error, hopComputers)
	var dials sync.WaitGroup
	inFlight := make(chan struct{}, 200)
	for i := range conns {
		inFlight <- struct{}{}
		dials.Go(func() {
			defer func() { <-inFlight }()
			conns[i], errs[i] = dialAndHello(a.WebSocketURL(), hopID(i))
		})
	}
	var answering sync.WaitGroup
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.Close()
			}
		}
		answering.Wait()
	}()
	dials.Wait()
	require.NoError(b, errors.Join(errs...))
	for i, c := range conns {
		answering.Go(func() { answerPings(c, hopID(i)) })
	}
	require.Eventually(b, func() bool { return len(listComputers(b, routed)) == hopComputers }, time.Minute, testkit.Poll,
		"b to list a's computers")

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}
	for _, via := range []struct {
		name string
		gw   *harness.Gateway
	}{{"direct", a}, {"routed", routed}} {
		b.Run(via.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				id := hopID(i % hopComputers)
				i++
				resp, err := client.Post(via.gw.URL("/trapos/computers/"+id+"/requests"), "application/json",
					bytes.NewReader([]byte(`{"type":"ping","timeoutMs":10000}`)))
				require.NoError(b, err)
				body, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				require.NoError(b, err)
				require.Equal(b, http.StatusOK, resp.StatusCode, "%s", body)
			}
		})
	}
	client.CloseIdleConnections()
}

func hopID(i int) string { return fmt.Sprintf("%d:hop", i) }

// dialAndHello opens a computer's socket and says hello.
func dialAndHello(wsURL, id string) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, resp, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", id, err)
	}
	hello, _ := json.Marshal(map[string]any{"event": "computer_request", "traposSenderId": id, "messageId": "hello",
		"type": "hello", "payload": map[string]string{"traposId": id, "secret": ""}})
	_ = c.SetWriteDeadline(time.Now().Add(waitLimit))
	_ = c.SetReadDeadline(time.Now().Add(waitLimit))
	if err := c.WriteMessage(websocket.TextMessage, hello); err != nil {
		return c, fmt.Errorf("hello %s: %w", id, err)
	}
	var answer struct {
		OK bool `json:"ok"`
	}
	if _, data, err := c.ReadMessage(); err != nil || json.Unmarshal(data, &answer) != nil || !answer.OK {
		return c, fmt.Errorf("hello %s: %v %s", id, err, data)
	}
	_ = c.SetReadDeadline(time.Time{})
	_ = c.SetWriteDeadline(time.Time{}) // its answers may come long after: connecting 10 000 takes a while
	return c, nil
}

// answerPings answers every gateway_request on c with the computer's id until c closes.
func answerPings(c *websocket.Conn, id string) {
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		var req struct {
			Event     string `json:"event"`
			MessageID string `json:"messageId"`
			Type      string `json:"type"`
		}
		if json.Unmarshal(data, &req) != nil || req.Event != "gateway_request" {
			continue
		}
		out, _ := json.Marshal(map[string]any{"event": "computer_response", "traposSenderId": id, "messageId": req.MessageID,
			"type": req.Type, "ok": true, "payload": map[string]string{"traposId": id}})
		if c.WriteMessage(websocket.TextMessage, out) != nil {
			return
		}
	}
}
