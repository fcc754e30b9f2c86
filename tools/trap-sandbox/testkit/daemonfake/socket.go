package daemonfake

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"trap-sandbox/internal/protocol"
)

// Connect connects the daemon to a gateway as a computer does: it dials wsURL (a ws:// or
// http:// URL of the gateway's socket path), says hello with secret, and answers every
// gateway_request in the background until the socket closes. It returns once the gateway
// has accepted the hello; stop closes the socket and waits for the answering goroutine.
func (d *Daemon) Connect(ctx context.Context, wsURL, secret string) (stop func(), err error) {
	wsURL = "ws" + strings.TrimPrefix(strings.TrimPrefix(wsURL, "ws"), "http")
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", wsURL, err)
	}
	_ = resp.Body.Close()
	if err := d.hello(ctx, conn, secret); err != nil {
		_ = conn.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.serve(conn)
	}()
	return func() { _ = conn.Close(); <-done }, nil
}

func (d *Daemon) hello(ctx context.Context, conn *websocket.Conn, secret string) error {
	hello := map[string]any{"traposId": d.TraposID(), "secret": secret}
	if d.ClientVersion != "" {
		hello["clientVersion"] = d.ClientVersion
	}
	payload, _ := json.Marshal(hello)
	if err := send(conn, protocol.Frame{Event: protocol.EventComputerRequest, TraposSenderID: d.TraposID(),
		MessageID: "hello", Type: protocol.TypeHello, Payload: payload}); err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(deadline)
		defer func() { _ = conn.SetReadDeadline(time.Time{}) }()
	}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return fmt.Errorf("hello: %w", err)
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil || f.Event != protocol.EventGatewayResponse || f.Type != protocol.TypeHello {
			continue
		}
		if !f.OK {
			return fmt.Errorf("hello refused: %s", f.Error.Message)
		}
		return nil
	}
}

// serve answers gateway_requests until reading or writing fails.
func (d *Daemon) serve(conn *websocket.Conn) {
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil || f.Event != protocol.EventGatewayRequest {
			continue
		}
		r := d.Answer(f.Type, f.Payload)
		answer := protocol.Frame{Event: protocol.EventComputerResponse, TraposSenderID: d.TraposID(),
			RawMessageID: f.RawMessageID, MessageID: f.MessageID, Type: f.Type, OK: r.Error == nil}
		if r.Error != nil {
			answer.Error = &protocol.Error{Code: protocol.Code(r.Error.Code), Message: r.Error.Message}
		} else if answer.Payload, err = json.Marshal(r.Payload); err != nil {
			panic(err) // the stand-in's own answers always encode
		}
		if send(conn, answer) != nil {
			return
		}
	}
}

func send(conn *websocket.Conn, f protocol.Frame) error {
	data, err := protocol.EncodeFrame(f)
	if err != nil {
		return err
	}
	return conn.WriteMessage(websocket.TextMessage, data)
}
