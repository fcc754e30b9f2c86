package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// A host's caller writes its request's frame itself only when it waits at least the write
// timeout (enqueueRequest): to a computer that stopped reading, a caller with a shorter
// timeout still gets its answer at that timeout, and busy once the send queue is full, never
// after a write that lasts until the write timeout (here an hour). The frames are small
// enough to be written by the caller.
func TestAHostsCallerNeverWaitsOnAComputerThatDoesNotRead(t *testing.T) {
	const budget = 16 << 10
	h := newHarness(t, Config{SendQueueBytes: budget, WriteTimeout: time.Hour}, nil)
	c := h.connect(t, "7:", "")
	s := h.session(t, "7:")
	// Small kernel buffers fill sooner; the computer never reads.
	require.NoError(t, c.conn.NetConn().(*net.TCPConn).SetReadBuffer(4096))
	require.NoError(t, s.conn.NetConn().(*net.TCPConn).SetWriteBuffer(4096))
	payload := json.RawMessage(`{"text":"` + strings.Repeat("x", 1500) + `"}`)
	busy := false
	for i := 0; !busy; i++ {
		require.Less(t, i, 5_000, "the send queue never filled")
		done := make(chan error, 1)
		go func() {
			_, err := h.gw.RequestWithin(context.Background(), LocalAccount, "7:", "dance", payload, 20*time.Millisecond)
			done <- err
		}()
		select {
		case err := <-done:
			busy = protocol.CodeOf(err) == protocol.CodeBusy
			if !busy {
				require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "request %d: %v", i, err)
			}
		case <-time.After(waitLimit):
			t.Fatalf("request %d: the host's caller is held by a computer that does not read", i)
		}
	}
	assert.Len(t, h.gw.Computers(), 1, "the computer stays: only its writer waits on it")
}

// A caller that waits at least the write timeout writes its frame itself; to a computer that
// stopped reading, the write that finds the kernel's buffers full ends at that timeout, as a
// writer's would: the caller gets its answer and the computer is dropped.
func TestACallerWritingItsOwnFrameIsBoundedByTheWriteTimeout(t *testing.T) {
	const wait = 150 * time.Millisecond
	h := newHarness(t, Config{WriteTimeout: wait}, nil)
	c := h.connect(t, "7:", "")
	s := h.session(t, "7:")
	require.NoError(t, c.conn.NetConn().(*net.TCPConn).SetReadBuffer(4096))
	require.NoError(t, s.conn.NetConn().(*net.TCPConn).SetWriteBuffer(4096))
	// Each request whose frame gets through waits out its timeout (the computer answers
	// nothing), so frames of 30 KB: a few fill the kernel's buffers, where frames of 1.5 KB
	// took some 27 requests, 4 s.
	payload := json.RawMessage(`{"text":"` + strings.Repeat("x", 30_000) + `"}`)
	for i := 0; !s.isClosed(); i++ {
		require.Less(t, i, 5_000, "the computer was never dropped")
		done := make(chan error, 1)
		go func() {
			_, err := h.gw.RequestWithin(context.Background(), LocalAccount, "7:", "dance", payload, wait)
			done <- err
		}()
		select {
		case err := <-done:
			code := protocol.CodeOf(err)
			require.True(t, code == protocol.CodeTimeout || code == protocol.CodeNotConnected, "request %d: %v", i, err)
		case <-time.After(waitLimit):
			t.Fatalf("request %d: the caller was held past the write timeout", i)
		}
	}
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll, "the computer to be dropped")
}

// A request's frame is encoded into a pooled buffer (requestUntil): one that the send queue
// keeps (a caller waiting less than the write timeout queues it for a writer goroutine) must
// not go back to the pool while it waits, or a later request's frame would overwrite it.
// Rounds of requests at once, half queued and half written by their callers, each reach the
// computer intact: it echoes every payload, and each caller gets its own back.
func TestQueuedRequestFramesAreNotOverwritten(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	const rounds = 20
	perRound := h.session(t, "7:").pending.hostLimit() // every request a host may have in flight
	for round := range rounds {
		results := make(chan error, perRound)
		for i := range perRound {
			timeout := DefaultWriteTimeout // the caller writes its frame when no writer runs
			if i%2 == 0 {
				timeout = DefaultWriteTimeout / 2 // queued for a writer goroutine
			}
			payload := json.RawMessage(fmt.Sprintf(`{"n":%d,"pad":%q}`, round*perRound+i, strings.Repeat("x", i*40)))
			go func() {
				resp, err := h.gw.RequestWithin(context.Background(), LocalAccount, "7:", "echo", payload, timeout)
				if err == nil && string(resp.Payload) != string(payload) {
					err = fmt.Errorf("sent %s, the computer's echo was %s", payload, resp.Payload)
				}
				results <- err
			}()
		}
		for range perRound {
			c.answerNext(func(req protocol.Frame) map[string]any {
				return map[string]any{"ok": true, "payload": req.Payload}
			})
		}
		for range perRound {
			require.NoError(t, <-results)
		}
	}
}
