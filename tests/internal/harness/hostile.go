package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// helloWait bounds how long a hostile gateway waits for a new socket's hello.
const helloWait = 30 * time.Second

// floodPrefix starts the messageId of each request Flood sends.
const floodPrefix = "flood-"

// HostileGateway is a WebSocket server on loopback that answers a computer's hello as the
// gateway does and then does what its test tells it, including what the protocol forbids:
// floods of requests, frames nested too deep, requests followed at once by a close. It
// stands in for a broken or hostile gateway in tests of the Lua daemon's defences; the real
// gateway binary never does these things.
type HostileGateway struct {
	srv      *httptest.Server
	accepted chan *GatewaySide
	// HelloAnswer, when set before a computer connects, is the whole frame that answers its
	// hello (not a link session's), in place of the gateway's ok:true answer: the test's
	// hostile or broken answers. It is given the hello's messageId and traposId.
	HelloAnswer func(messageID, traposID string) any
	// ProveAnswer, when set before a computer connects, answers a socket's first frame when
	// it is a prove (a computer whose gateway proved itself there asks for it before its
	// hello) with the whole frame it returns, then the socket's next frame is read as its
	// hello; unset, a prove is answered as a hello is (no proof: the computer says no hello).
	// Proves counts the proves read.
	ProveAnswer func(prove Frame) any
	proves      int

	mu      sync.Mutex // guards sides, count, proves and closing
	sides   []*GatewaySide
	count   int
	closing bool
	wg      sync.WaitGroup // one per socket being served
}

// StartHostileGateway starts a hostile gateway on 127.0.0.1; the test's cleanup drops every
// socket and waits for their goroutines.
func StartHostileGateway(t testing.TB) *HostileGateway {
	t.Helper()
	h := &HostileGateway{accepted: make(chan *GatewaySide, 16)}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(func() {
		h.mu.Lock()
		h.closing = true
		sides := h.sides
		h.mu.Unlock()
		for _, s := range sides {
			_ = s.conn.Close()
		}
		h.srv.Close()
		h.wg.Wait()
	})
	return h
}

// URL is the address a computer's sandbox.url names.
func (h *HostileGateway) URL() string {
	return "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/trapos/ws"
}

// Connections is how many sockets have said hello so far.
func (h *HostileGateway) Connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// Proves is how many proves ProveAnswer has answered so far.
func (h *HostileGateway) Proves() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.proves
}

// Accept waits for the next socket whose hello was answered ok.
func (h *HostileGateway) Accept(ctx context.Context) (*GatewaySide, error) {
	select {
	case s := <-h.accepted:
		return s, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("no computer said hello: %w", ctx.Err())
	}
}

func (h *HostileGateway) serve(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{WriteBufferSize: writeBufferSize, CheckOrigin: func(*http.Request) bool { return true }}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	s := &GatewaySide{conn: conn, closed: make(chan struct{}), changed: make(chan struct{})}
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return
	}
	h.wg.Add(1)
	defer h.wg.Done()
	h.sides = append(h.sides, s)
	h.mu.Unlock()
	if err := s.answerHello(h.HelloAnswer, h.answerProve); err != nil {
		return
	}
	h.mu.Lock()
	h.count++
	h.mu.Unlock()
	select {
	case h.accepted <- s:
	default: // nobody asked for this one: it is counted, and read below all the same
	}
	s.read()
}

// GatewaySide is the gateway's end of one computer's socket.
type GatewaySide struct {
	// TraposID is the id the computer said hello with.
	TraposID string
	conn     *websocket.Conn
	writeMu  sync.Mutex // one writer at a time (gorilla)

	mu       sync.Mutex // guards answers, flooded, requests and changed (closed at each)
	answers  []Frame    // computer_responses, in order, but those to Flood's requests
	flooded  int        // computer_responses to Flood's requests, only counted
	requests []Frame    // computer_requests, in order: a hostile gateway answers none
	changed  chan struct{}
	closed   chan struct{} // closed once reading fails: the computer dropped the socket
}

// answerProve is ProveAnswer's answer to prove, counted, or nil when it is unset.
func (h *HostileGateway) answerProve(prove Frame) any {
	if h.ProveAnswer == nil {
		return nil
	}
	h.mu.Lock()
	h.proves++
	h.mu.Unlock()
	return h.ProveAnswer(prove)
}

func (s *GatewaySide) answerHello(custom func(messageID, traposID string) any, answerProve func(Frame) any) error {
	if err := s.conn.SetReadDeadline(time.Now().Add(helloWait)); err != nil {
		return err
	}
	var hello Frame
	if err := s.conn.ReadJSON(&hello); err != nil {
		return err
	}
	if hello.Type == typeProve {
		if answer := answerProve(hello); answer != nil {
			if err := s.WriteJSON(answer); err != nil {
				return err
			}
			hello = Frame{}
			if err := s.conn.ReadJSON(&hello); err != nil {
				return err
			}
		}
	}
	if err := s.conn.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	var p struct {
		TraposID string `json:"traposId"`
		Link     bool   `json:"link"`
	}
	_ = json.Unmarshal(hello.Payload, &p)
	s.TraposID = p.TraposID
	if custom != nil && !p.Link {
		return s.WriteJSON(custom(hello.MessageID, p.TraposID))
	}
	answer := map[string]any{"accountId": "local"}
	if p.Link {
		// A link session (sandbox link): its requests are the test's to answer.
		answer = map[string]any{"accountId": "", "link": true}
	}
	return s.WriteJSON(map[string]any{"event": EventGatewayResponse, "traposReceiverId": p.TraposID,
		"messageId": hello.MessageID, "type": TypeHello, "ok": true, "payload": answer})
}

// read keeps the computer's answers and requests until the socket ends.
func (s *GatewaySide) read() {
	defer close(s.closed)
	for {
		var f Frame
		if err := s.conn.ReadJSON(&f); err != nil {
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				continue
			}
			return
		}
		if f.Event != EventComputerResponse && f.Event != EventComputerRequest {
			continue
		}
		s.mu.Lock()
		if f.Event == EventComputerRequest {
			s.requests = append(s.requests, f)
		} else if strings.HasPrefix(f.MessageID, floodPrefix) {
			s.flooded++
		} else {
			s.answers = append(s.answers, f)
		}
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
}

// Closed is closed once the computer has dropped the socket.
func (s *GatewaySide) Closed() <-chan struct{} { return s.closed }

// FloodAnswers is how many of Flood's requests the computer has answered.
func (s *GatewaySide) FloodAnswers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flooded
}

// Answers are the computer_responses read so far, but those to Flood's requests.
func (s *GatewaySide) Answers() []Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Frame(nil), s.answers...)
}

// Respond answers the computer's request with payload (err nil) or err: a gateway_response.
func (s *GatewaySide) Respond(request Frame, payload any, err *Error) error {
	frame := map[string]any{"event": EventGatewayResponse, "traposReceiverId": s.TraposID,
		"messageId": request.MessageID, "type": request.Type, "ok": err == nil}
	if err == nil {
		frame["payload"] = payload
	} else {
		frame["error"] = err
	}
	return s.WriteJSON(frame)
}

// Requests waits until at least n computer_requests (the computer's own: its programs'),
// which this gateway never answers, have been read, and returns all read so far.
func (s *GatewaySide) Requests(ctx context.Context, n int) ([]Frame, error) {
	for {
		s.mu.Lock()
		if len(s.requests) >= n {
			defer s.mu.Unlock()
			return append([]Frame(nil), s.requests...), nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-s.closed:
			return nil, fmt.Errorf("fewer than %d requests: the computer dropped the socket", n)
		case <-ctx.Done():
			return nil, fmt.Errorf("fewer than %d requests: %w", n, ctx.Err())
		}
	}
}

// Answer waits for the computer_response to messageID.
func (s *GatewaySide) Answer(ctx context.Context, messageID string) (Frame, error) {
	for {
		s.mu.Lock()
		for _, f := range s.answers {
			if f.MessageID == messageID {
				s.mu.Unlock()
				return f, nil
			}
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-s.closed:
			return Frame{}, fmt.Errorf("no answer to %s: the computer dropped the socket", messageID)
		case <-ctx.Done():
			return Frame{}, fmt.Errorf("no answer to %s: %w", messageID, ctx.Err())
		}
	}
}

// WriteText sends s as one text frame.
func (s *GatewaySide) WriteText(text string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.conn.SetWriteDeadline(time.Now().Add(WriteTimeout)); err != nil {
		return err
	}
	return s.conn.WriteMessage(websocket.TextMessage, []byte(text))
}

// WriteJSON sends v, JSON-encoded, as one text frame.
func (s *GatewaySide) WriteJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	return s.WriteText(string(data))
}

// Request sends a gateway_request of type typ with messageID and payload.
func (s *GatewaySide) Request(messageID, typ string, payload any) error {
	return s.WriteJSON(map[string]any{"event": EventGatewayRequest, "traposReceiverId": s.TraposID,
		"messageId": messageID, "type": typ, "payload": payload})
}

// Flood sends ping requests as fast as the socket takes them, without waiting for answers,
// until limit are sent, the computer drops the socket (a write fails, or reading ended) or ctx
// ends. It returns how many it sent.
func (s *GatewaySide) Flood(ctx context.Context, limit int) int {
	for i := range limit {
		select {
		case <-s.closed:
			return i
		case <-ctx.Done():
			return i
		default:
		}
		if err := s.Request(fmt.Sprintf("%s%d", floodPrefix, i), TypePing, map[string]any{}); err != nil {
			return i
		}
	}
	return limit
}

// CloseWith sends a close frame with code and reason, as the gateway closes a socket, and
// leaves the TCP connection for the computer to drop (CC drops it without answering).
func (s *GatewaySide) CloseWith(code int, reason string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason),
		time.Now().Add(WriteTimeout))
}
