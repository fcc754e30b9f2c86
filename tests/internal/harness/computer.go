package harness

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"trap-sandbox/testkit/daemonfake"
)

// Protocol names, as on the wire (the seed's contract; the harness does not import the
// gateway's packages, so a rename on either side shows up as a failing test).
const (
	EventComputerRequest  = "computer_request"
	EventComputerResponse = "computer_response"
	EventGatewayRequest   = "gateway_request"
	EventGatewayResponse  = "gateway_response"

	TypeHello        = "hello"
	TypeProbeGateway = "probe_gateway"
	TypePing         = "ping"
	typeProve        = "prove"
)

// Close codes the gateway sends.
const (
	CloseGoingAway    = websocket.CloseGoingAway     // 1001: gateway shutting down
	CloseTooBig       = websocket.CloseMessageTooBig // 1009: frame above MaxFrameBytes
	CloseUnauthorized = 4001                         // bad hello secret
	CloseNoHello      = 4008                         // no hello within the hello timeout
	CloseReplaced     = 4009                         // a newer socket said hello for the same traposId
)

// MaxFrameBytes is CC: Tweaked's default max_websocket_message, the protocol's frame cap.
const MaxFrameBytes = 128 << 10

// Client-side limits of the raw computer.
const (
	// DialTimeout bounds the TCP connect plus WebSocket handshake.
	DialTimeout = 5 * time.Second
	// WriteTimeout bounds writing one frame.
	WriteTimeout = 5 * time.Second
	// writeBufferSize exceeds MaxFrameBytes so every message leaves as a single frame, as CC
	// sends it (gorilla's client would otherwise fragment at its buffer size).
	writeBufferSize = 2 * MaxFrameBytes
)

// Error is a response's error object.
type Error = daemonfake.Error

// Frame is any protocol frame, decoded loosely so tests can see exactly what was sent.
type Frame struct {
	Event            string          `json:"event"`
	TraposSenderID   string          `json:"traposSenderId,omitempty"`
	TraposReceiverID string          `json:"traposReceiverId,omitempty"`
	MessageID        string          `json:"messageId"`
	Type             string          `json:"type"`
	OK               *bool           `json:"ok,omitempty"`
	Payload          json.RawMessage `json:"payload,omitempty"`
	Error            *Error          `json:"error,omitempty"`
}

// Computer is a raw WebSocket computer: it sends and reads JSON frames and nothing else.
// It is used by one goroutine at a time.
type Computer struct {
	// TraposID is the id this computer says hello with.
	TraposID string
	conn     *websocket.Conn
	// writing makes the writes safe for concurrent use (gorilla allows one writer at a time):
	// a test answers the gateway's requests in a goroutine and sends frames of its own.
	writing sync.Mutex
}

// Dial opens a socket to url for a computer that will call itself traposID.
func Dial(ctx context.Context, url, traposID string) (*Computer, error) {
	return dial(ctx, url, traposID, websocket.Dialer{})
}

// DialFrom is Dial from the local IP address ip: on loopback any of 127.0.0.0/8, so that one
// machine plays computers at many addresses (the gateway counts its limits per address).
func DialFrom(ctx context.Context, url, traposID, ip string) (*Computer, error) {
	local := net.ParseIP(ip)
	if local == nil {
		return nil, fmt.Errorf("dial from %q: not an IP address", ip)
	}
	return dial(ctx, url, traposID, websocket.Dialer{NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}).DialContext})
}

func dial(ctx context.Context, url, traposID string, d websocket.Dialer) (*Computer, error) {
	d.HandshakeTimeout, d.WriteBufferSize = DialTimeout, writeBufferSize
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	conn, resp, err := d.DialContext(ctx, url, nil)
	status := 0
	if resp != nil && resp.Body != nil {
		status = resp.StatusCode
		_ = resp.Body.Close()
	}
	if err != nil && status != 0 {
		return nil, fmt.Errorf("dial %s: %w (HTTP %d)", url, err, status)
	}
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	return &Computer{TraposID: traposID, conn: conn}, nil
}

// Close drops the TCP connection without a close handshake, as CC's close() does.
func (c *Computer) Close() error { return c.conn.Close() }

// NewMessageID mints a random message id.
func NewMessageID() string { return "msg-" + rand.Text() }

// WriteRaw sends one message of the given gorilla type (websocket.TextMessage, BinaryMessage).
// It is safe for concurrent use.
func (c *Computer) WriteRaw(messageType int, data []byte) error {
	c.writing.Lock()
	defer c.writing.Unlock()
	if err := c.conn.SetWriteDeadline(time.Now().Add(WriteTimeout)); err != nil {
		return fmt.Errorf("set write deadline: %w", err)
	}
	if err := c.conn.WriteMessage(messageType, data); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// WriteText sends s as one text frame.
func (c *Computer) WriteText(s string) error { return c.WriteRaw(websocket.TextMessage, []byte(s)) }

// WriteJSON sends v, JSON-encoded, as one text frame.
func (c *Computer) WriteJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	return c.WriteRaw(websocket.TextMessage, data)
}

// Next reads the next frame. A ctx without a deadline is an error: every read is bounded.
// After a timeout the connection is unusable (gorilla), so tests read only what must come.
func (c *Computer) Next(ctx context.Context) (Frame, error) {
	var f Frame
	deadline, ok := ctx.Deadline()
	if !ok {
		return f, errors.New("read frame: context has no deadline")
	}
	if err := c.conn.SetReadDeadline(deadline); err != nil {
		return f, fmt.Errorf("set read deadline: %w", err)
	}
	mt, data, err := c.conn.ReadMessage()
	if err != nil {
		return f, fmt.Errorf("read frame: %w", err)
	}
	if mt != websocket.TextMessage {
		return f, fmt.Errorf("read frame: message type %d, want text", mt)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("decode frame %q: %w", data, err)
	}
	return f, nil
}

// Request sends a computer_request with a fresh messageId and returns the next frame, which
// must be the gateway_response to it. payload is sent as is; pass Omit to leave it out.
func (c *Computer) Request(ctx context.Context, typ string, payload any) (Frame, error) {
	id := NewMessageID()
	msg := map[string]any{
		"event":          EventComputerRequest,
		"traposSenderId": c.TraposID,
		"messageId":      id,
		"type":           typ,
	}
	if payload != Omit {
		msg["payload"] = payload
	}
	if err := c.WriteJSON(msg); err != nil {
		return Frame{}, err
	}
	return c.expectResponse(ctx, id, typ)
}

// Omit, passed as a payload, leaves the payload key out of the frame.
var Omit any = omitted{}

type omitted struct{}

func (c *Computer) expectResponse(ctx context.Context, id, typ string) (Frame, error) {
	f, err := c.Next(ctx)
	if err != nil {
		return f, err
	}
	if f.Event != EventGatewayResponse || f.MessageID != id || f.Type != typ {
		return f, fmt.Errorf("got %s %s (messageId %q), want gateway_response %s (messageId %q)",
			f.Event, f.Type, f.MessageID, typ, id)
	}
	return f, nil
}

// Hello sends the hello handshake with secret and returns the gateway's response.
func (c *Computer) Hello(ctx context.Context, secret string) (Frame, error) {
	return c.Request(ctx, TypeHello, map[string]any{"traposId": c.TraposID, "secret": secret})
}

// MustHello says hello and fails unless the gateway answers ok.
func (c *Computer) MustHello(ctx context.Context, secret string) error {
	f, err := c.Hello(ctx, secret)
	if err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if f.OK == nil || !*f.OK {
		return fmt.Errorf("hello refused: %+v", f.Error)
	}
	return nil
}

// ExpectClose reads until the gateway closes the socket and returns its close frame. Any data
// frame read first is an error: a close was what the test expected.
func (c *Computer) ExpectClose(ctx context.Context) (*websocket.CloseError, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil, errors.New("expect close: context has no deadline")
	}
	if err := c.conn.SetReadDeadline(deadline); err != nil {
		return nil, fmt.Errorf("set read deadline: %w", err)
	}
	_, data, err := c.conn.ReadMessage()
	if err == nil {
		return nil, fmt.Errorf("expect close: got frame %q", data)
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return ce, nil
	}
	return nil, fmt.Errorf("expect close: %w", err)
}
