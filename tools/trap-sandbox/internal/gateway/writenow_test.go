package gateway

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// A host's caller writes its request's frame itself only when the write cannot wait
// (enqueueRequest): to a computer that stopped reading, every request still ends at its own
// timeout, and busy once the send queue is full, never in a write that lasts until the write
// timeout (here an hour). The frames are small enough to be written by the caller.
func TestAHostsCallerNeverWaitsOnAComputerThatDoesNotRead(t *testing.T) {
	const budget = 16 << 10
	h := newHarness(t, Config{SendQueueBytes: budget, WriteTimeout: time.Hour}, nil)
	c := h.connect(t, "7:", "")
	s := h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: "7:"})
	require.NotNil(t, s)
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

// The caller's check: a socket whose peer has acknowledged everything has an empty send
// buffer; one whose peer stopped reading keeps bytes unacknowledged once its window is full.
func TestSendBufferEmptyTellsAPeerThatStoppedReading(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, _ := l.Accept()
		accepted <- conn
	}()
	peer, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer peer.Close()
	conn := <-accepted
	require.NotNil(t, conn)
	defer conn.Close()
	if !sendBufferEmpty(conn) {
		t.Skip("this system cannot tell (not Linux): every frame goes through a writer goroutine")
	}
	require.NoError(t, peer.(*net.TCPConn).SetReadBuffer(4096))
	chunk := make([]byte, 64<<10)
	for i := 0; ; i++ {
		require.Less(t, i, 1_000, "the peer's window never filled")
		_ = conn.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := conn.Write(chunk); err != nil {
			break // the send buffer is full
		}
	}
	assert.False(t, sendBufferEmpty(conn))
}
