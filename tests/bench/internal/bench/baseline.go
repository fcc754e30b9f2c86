package bench

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// BaselineListenEnv, when set in a process's environment, makes the bench binary serve the
// baseline on that address instead of benchmarking (the bench re-executes itself with it, so
// the baseline runs in its own process, like the gateway).
const BaselineListenEnv = "TRAPOS_BENCH_BASELINE_LISTEN"

// BaselineUUIDIDsEnv, when set to 1 beside BaselineListenEnv, makes the baseline mint its
// gateway_request message ids as random v4 UUIDs, 36 bytes like the gateway's (the protocol
// has the gateway use randomUUID()), instead of its own short counter (-baseline-uuid-ids).
const BaselineUUIDIDsEnv = "TRAPOS_BENCH_BASELINE_UUID_IDS"

// Limits of the baseline server.
const (
	// baselineRequestTimeout bounds one forwarded HTTP request, like the gateway's default.
	baselineRequestTimeout = 10 * time.Second
	// baselineBodyBytes bounds an HTTP request body.
	baselineBodyBytes = 64 << 10
)

// baseline is the bare reference server: gorilla/websocket with default buffers, one reader
// goroutine per socket, inline writes under a mutex, no registry, limits, metrics or logging.
// It answers every computer_request at once and forwards HTTP requests to a socket.
type baseline struct {
	upgrader websocket.Upgrader
	next     atomic.Int64
	uuidIDs  bool       // BaselineUUIDIDsEnv
	mu       sync.Mutex // guards conns
	conns    map[string]*baselineConn
}

type baselineConn struct {
	ws      *websocket.Conn
	wmu     sync.Mutex // serialises writes
	pmu     sync.Mutex // guards pending
	pending map[string]chan json.RawMessage
}

// wireFrame is the subset of a protocol frame both the baseline and the load clients read.
type wireFrame struct {
	Event            string          `json:"event"`
	TraposSenderID   string          `json:"traposSenderId,omitempty"`
	TraposReceiverID string          `json:"traposReceiverId,omitempty"`
	MessageID        string          `json:"messageId"`
	Type             string          `json:"type"`
	OK               *bool           `json:"ok,omitempty"`
	Payload          json.RawMessage `json:"payload,omitempty"`
}

// ServeBaseline serves the baseline on addr until ctx ends.
func ServeBaseline(ctx context.Context, addr string) error {
	if err := serveProfiles(); err != nil {
		return err
	}
	b := &baseline{conns: make(map[string]*baselineConn), uuidIDs: os.Getenv(BaselineUUIDIDsEnv) == "1",
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /trapos/ws", b.serveWS)
	mux.HandleFunc("POST /trapos/computers/{traposId}/requests", b.serveRequest)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("baseline listen: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: StartTimeout}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
		// Hijacked sockets are not closed by Close; the process exits right after.
		_ = srv.Close()
		<-errc
		return nil
	case err := <-errc:
		return fmt.Errorf("baseline serve: %w", err)
	}
}

func (b *baseline) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := b.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &baselineConn{ws: ws, pending: make(map[string]chan json.RawMessage)}
	var id string
	defer func() {
		b.mu.Lock()
		if id != "" && b.conns[id] == c {
			delete(b.conns, id)
		}
		b.mu.Unlock()
		_ = ws.Close()
	}()
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f wireFrame
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch f.Event {
		case "computer_request":
			payload := json.RawMessage(`{"sandboxOk":true,"opencodeOk":true}`)
			if f.Type == "hello" {
				id = f.TraposSenderID
				b.mu.Lock()
				b.conns[id] = c
				b.mu.Unlock()
				payload = json.RawMessage(`{"accountId":"local"}`)
			}
			ok := true
			if c.write(wireFrame{Event: "gateway_response", TraposReceiverID: f.TraposSenderID,
				MessageID: f.MessageID, Type: f.Type, OK: &ok, Payload: payload}) != nil {
				return
			}
		case "computer_response":
			c.pmu.Lock()
			ch := c.pending[f.MessageID]
			delete(c.pending, f.MessageID)
			c.pmu.Unlock()
			if ch != nil {
				ch <- f.Payload
			}
		}
	}
}

func (c *baselineConn) write(f wireFrame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, data)
}

func (b *baseline) serveRequest(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, baselineBodyBytes)).Decode(&req); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	id := r.PathValue("traposId")
	b.mu.Lock()
	c := b.conns[id]
	b.mu.Unlock()
	if c == nil {
		http.Error(w, "not connected", http.StatusNotFound)
		return
	}
	msgID := "b" + strconv.FormatInt(b.next.Add(1), 10)
	if b.uuidIDs {
		msgID = randomUUID()
	}
	ch := make(chan json.RawMessage, 1)
	c.pmu.Lock()
	c.pending[msgID] = ch
	c.pmu.Unlock()
	err := c.write(wireFrame{Event: "gateway_request", TraposReceiverID: id, MessageID: msgID, Type: req.Type, Payload: req.Payload})
	if err == nil {
		timer := time.NewTimer(baselineRequestTimeout)
		defer timer.Stop()
		select {
		case p := <-ch:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(struct {
				OK      bool            `json:"ok"`
				Payload json.RawMessage `json:"payload"`
			}{true, p})
			return
		case <-timer.C:
			err = errors.New("timeout")
		case <-r.Context().Done():
			err = r.Context().Err()
		}
	}
	c.pmu.Lock()
	delete(c.pending, msgID)
	c.pmu.Unlock()
	http.Error(w, err.Error(), http.StatusGatewayTimeout)
}

// randomUUID is a random v4 UUID in its 36-byte text form (RFC 9562).
func randomUUID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:36], b[10:16])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}
