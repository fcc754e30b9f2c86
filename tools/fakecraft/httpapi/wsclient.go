package httpapi

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// The client speaks RFC 6455 itself instead of using gorilla's Conn, because CC's Netty
// pipeline works frame by frame: it has no aggregator, so a fragmented message reaches Lua
// as its first fragment only and the size limit applies to each frame. gorilla only exposes
// whole messages.

// Frame opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// websocketGUID is the fixed GUID of the Sec-WebSocket-Accept computation (RFC 6455 §1.3).
const websocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// maxControlPayload is the largest payload a control frame may carry (RFC 6455 §5.5).
const maxControlPayload = 125

// errFrameTooLarge is returned by readFrame when a data frame exceeds the read limit.
var errFrameTooLarge = errors.New("frame too large")

// errProtocol marks a frame that breaks RFC 6455.
var errProtocol = errors.New("websocket protocol error")

// handshakeError is a rejected upgrade; its text is what Lua sees in websocket_failure.
type handshakeError struct{ msg string }

func (e *handshakeError) Error() string { return e.msg }

// wsConn is one client websocket after the handshake. Reads happen on one goroutine only;
// writes are serialised by writeMu.
type wsConn struct {
	conn net.Conn
	br   *bufio.Reader

	writeMu sync.Mutex
}

// frame is one received frame.
type frame struct {
	fin     bool
	opcode  byte
	payload []byte
}

// clientHandshake performs the opening handshake on conn for u with the given extra headers.
// The checks and messages follow Netty 4.1's WebSocketClientHandshaker13, which CC uses.
func clientHandshake(conn net.Conn, u *url.URL, headers http.Header) (*wsConn, error) {
	var keyBytes [16]byte
	if _, err := rand.Read(keyBytes[:]); err != nil {
		return nil, fmt.Errorf("make websocket key: %w", err)
	}
	key := base64.StdEncoding.EncodeToString(keyBytes[:])

	path := requestPath(u)
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}

	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\n", path)
	fmt.Fprintf(&b, "Host: %s\r\n", hostHeader(u))
	b.WriteString("Upgrade: websocket\r\nConnection: Upgrade\r\n")
	fmt.Fprintf(&b, "Sec-WebSocket-Key: %s\r\n", key)
	b.WriteString("Sec-WebSocket-Version: 13\r\n")
	for name, values := range headers {
		switch strings.ToLower(name) {
		case "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version":
			continue // the handshake owns these
		}
		for _, v := range values {
			fmt.Fprintf(&b, "%s: %s\r\n", name, sanitizeHeader(v))
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, fmt.Errorf("write handshake: %w", err)
	}

	br := bufio.NewReader(conn)
	resp, err := readHandshakeResponse(br)
	if err != nil {
		return nil, err
	}
	protocol, asked := headerValue(headers, "Sec-WebSocket-Protocol")
	if err := verifyHandshake(resp, key, protocol, asked); err != nil {
		return nil, err
	}
	return &wsConn{conn: conn, br: br}, nil
}

// hostHeader is the Host header for u: the port is left out when it is the scheme default.
func hostHeader(u *url.URL) string {
	port := u.Port()
	if port == "" || (port == "80" && u.Scheme == "ws") || (port == "443" && u.Scheme == "wss") {
		return u.Hostname()
	}
	return u.Host
}

// sanitizeHeader strips CR and LF so a Lua string cannot inject header lines.
func sanitizeHeader(v string) string {
	return strings.NewReplacer("\r", "", "\n", "").Replace(v)
}

// headerHasToken reports whether a comma-separated header value contains token.
func headerHasToken(value, token string) bool {
	for _, part := range strings.Split(value, ",") {
		if strings.EqualFold(strings.TrimSpace(part), token) {
			return true
		}
	}
	return false
}

// acceptKey computes Sec-WebSocket-Accept for key.
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + websocketGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// readFrame reads the next frame. Data frames whose payload is longer than limit fail with
// errFrameTooLarge before the payload is read.
func (c *wsConn) readFrame(limit int) (frame, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c.br, hdr[:]); err != nil {
		return frame{}, err
	}
	f := frame{fin: hdr[0]&0x80 != 0, opcode: hdr[0] & 0x0F}
	if hdr[0]&0x70 != 0 {
		return frame{}, fmt.Errorf("%w: reserved bits set", errProtocol)
	}
	if hdr[1]&0x80 != 0 {
		return frame{}, fmt.Errorf("%w: masked server frame", errProtocol)
	}
	n := uint64(hdr[1] & 0x7F)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(c.br, ext[:]); err != nil {
			return frame{}, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(c.br, ext[:]); err != nil {
			return frame{}, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	if f.opcode >= opClose {
		if n > maxControlPayload || !f.fin {
			return frame{}, fmt.Errorf("%w: bad control frame", errProtocol)
		}
	} else if n > uint64(limit) {
		return frame{}, errFrameTooLarge
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, f.payload); err != nil {
		return frame{}, err
	}
	return f, nil
}

// writeFrame writes one complete, masked frame. Safe for concurrent use.
func (c *wsConn) writeFrame(opcode byte, payload []byte) error {
	var mask [4]byte
	if _, err := rand.Read(mask[:]); err != nil {
		return fmt.Errorf("make mask: %w", err)
	}
	buf := make([]byte, 0, 14+len(payload))
	buf = append(buf, 0x80|opcode)
	switch n := len(payload); {
	case n < 126:
		buf = append(buf, 0x80|byte(n))
	case n <= 0xFFFF:
		buf = append(buf, 0x80|126)
		buf = binary.BigEndian.AppendUint16(buf, uint16(n))
	default:
		buf = append(buf, 0x80|127)
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	}
	buf = append(buf, mask[:]...)
	for i, b := range payload {
		buf = append(buf, b^mask[i%4])
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.conn.Write(buf)
	return err
}

// parseClose splits a Close frame payload into its code (-1 when absent) and reason.
func parseClose(payload []byte) (int, string) {
	if len(payload) < 2 {
		return -1, ""
	}
	return int(binary.BigEndian.Uint16(payload[:2])), string(payload[2:])
}
