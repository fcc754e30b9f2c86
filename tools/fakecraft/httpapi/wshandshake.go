package httpapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
)

// CC's websocket pipeline reads the server's answer to the upgrade with Netty's
// HttpClientCodec and an HttpObjectAggregator(8192), and Netty's WebSocketClientHandshaker13
// checks it (CC 1.113.1 pins Netty 4.1.97; read from both sources). What Lua sees of a
// refused upgrade follows from them: the status as Netty prints it, Java's "null" for a
// missing header, "Message is too large" for an answer the aggregator cannot hold.
const (
	// maxInitialLine is HttpObjectDecoder's limit on the status line: a longer one makes an
	// invalid message.
	maxInitialLine = 4096
	// maxAggregatedBody is the body CC's HttpObjectAggregator holds; one byte more fails
	// the handshake with a TooLongFrameException.
	maxAggregatedBody = 8192
	// unknownStatus is HttpResponseDecoder's status for an answer whose first line is not
	// HTTP's (Netty's invalid message), which verify then refuses.
	unknownStatus = "999 Unknown"
)

// httpVersionWord is the form HttpVersion.valueOf accepts (after trimming, upper-cased).
var httpVersionWord = regexp.MustCompile(`^\S+/\d+\.\d+$`)

// handshakeResponse is the server's answer as Netty's decoder hands it to the handshaker.
type handshakeResponse struct {
	code   int
	status string // HttpResponseStatus.toString: the code, a space, the reason as sent
	header http.Header
}

// readHandshakeResponse reads the answer to the upgrade request: the status line and headers,
// and for an answer that is not a switch the body the aggregator would gather, so that an
// answer too long to hold fails as CC's does. A connection closed before any status line
// ends it as CC's WebsocketHandler does ("Connection closed").
func readHandshakeResponse(br *bufio.Reader) (*handshakeResponse, error) {
	line, err := readStatusLine(br)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &handshakeError{msg: msgConnectionClosed}
		}
		return nil, err
	}
	resp, ok := parseStatusLine(line)
	if !ok {
		// Netty skips the rest of the stream and hands on an empty answer.
		return &handshakeResponse{code: 999, status: unknownStatus, header: http.Header{}}, nil
	}
	// A header block cut short or malformed is still handed on, with the headers before the
	// fault (Netty's invalid message keeps them); verify judges what there is.
	mime, err := textproto.NewReader(br).ReadMIMEHeader()
	if isNetworkError(err) {
		return nil, err
	}
	resp.header = http.Header(mime)
	if resp.header == nil {
		resp.header = http.Header{}
	}
	if err != nil || !resp.hasBody() {
		return resp, nil
	}
	if err := resp.readBody(br); err != nil {
		return nil, err
	}
	return resp, nil
}

// readStatusLine skips what Netty skips before a message (control characters and white
// space) and reads one line, without its line end.
func readStatusLine(br *bufio.Reader) (string, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		if b > ' ' && b != 0x7f {
			_ = br.UnreadByte()
			break
		}
	}
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxInitialLine+2 {
			return string(line), nil // too long: parseStatusLine refuses it, as Netty does
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return "", err
		}
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// parseStatusLine splits the line as HttpObjectDecoder.splitInitialLine does (runs of
// spaces, tabs, CR, VT and FF between the version and the code; the reason is the rest,
// trimmed) and builds the status as HttpResponseDecoder would, or says it cannot.
func parseStatusLine(line string) (*handshakeResponse, bool) {
	if len(line) > maxInitialLine {
		return nil, false
	}
	isSP := func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\v' || r == '\f' }
	rest := strings.TrimLeftFunc(line, isSP)
	version, rest := cutFunc(rest, isSP)
	code, rest := cutFunc(strings.TrimLeftFunc(rest, isSP), isSP)
	reason := strings.TrimSpace(strings.TrimLeftFunc(rest, isSP))
	if !httpVersionWord.MatchString(strings.TrimSpace(version)) {
		return nil, false
	}
	n, err := strconv.Atoi(code)
	if err != nil || n < 0 {
		return nil, false
	}
	return &handshakeResponse{code: n, status: strconv.Itoa(n) + " " + reason}, true
}

// cutFunc splits s at the first rune f matches.
func cutFunc(s string, f func(rune) bool) (before, after string) {
	if i := strings.IndexFunc(s, f); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// hasBody says whether Netty reads a body after this head (HttpObjectDecoder's
// isContentAlwaysEmpty): none for 1xx but an old Hixie-76 switch (Upgrade without an accept
// key), 204 and 304.
func (r *handshakeResponse) hasBody() bool {
	switch {
	case r.code >= 100 && r.code < 200:
		return r.code == http.StatusSwitchingProtocols && r.header.Get("Sec-WebSocket-Accept") == "" &&
			headerHasToken(strings.Join(r.header.Values("Upgrade"), ","), "websocket")
	case r.code == http.StatusNoContent, r.code == http.StatusNotModified:
		return false
	}
	return true
}

// readBody gathers the body as CC's aggregator does: chunked, of a Content-Length, or to the
// connection's end; past maxAggregatedBody it fails with "Message is too large" (at once for
// a longer Content-Length). A body cut short ends the answer as it is.
func (r *handshakeResponse) readBody(br *bufio.Reader) error {
	var body io.Reader = br
	switch {
	case headerHasToken(strings.Join(r.header.Values("Transfer-Encoding"), ","), "chunked"):
		body = httputil.NewChunkedReader(br)
	case r.header.Get("Content-Length") != "":
		n, err := strconv.ParseInt(strings.TrimSpace(r.header.Get("Content-Length")), 10, 64)
		if err != nil || n < 0 {
			return nil // Netty's invalid message: the status alone is judged
		}
		if n > maxAggregatedBody {
			return &handshakeError{msg: msgMessageTooLarge}
		}
		body = io.LimitReader(br, n)
	}
	read, err := io.Copy(io.Discard, io.LimitReader(body, maxAggregatedBody+1))
	if read > maxAggregatedBody {
		return &handshakeError{msg: msgMessageTooLarge}
	}
	if isNetworkError(err) {
		return err
	}
	return nil // the end of the body or of the connection, or a malformed chunk
}

// isNetworkError says whether err is the connection's own failure (a reset, a timeout),
// which fails the handshake as such in CC too (an exception in the pipeline), rather than
// an answer that ended early or broke HTTP's form.
func isNetworkError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// verifyHandshake checks the answer as WebSocketClientHandshaker13.verify and then
// finishHandshake's subprotocol check do, in their order and words. protocol is the
// Sec-WebSocket-Protocol the program asked for, if it asked (asked).
func verifyHandshake(r *handshakeResponse, key, protocol string, asked bool) error {
	refuse := func(format string, args ...any) error {
		return &handshakeError{msg: fmt.Sprintf(format, args...)}
	}
	if r.code != http.StatusSwitchingProtocols {
		return refuse("Invalid handshake response getStatus: %s", r.status)
	}
	if up, ok := javaHeader(r.header, "Upgrade"); !ok || !strings.EqualFold(up, "websocket") {
		return refuse("Invalid handshake response upgrade: %s", javaString(up, ok))
	}
	if !headerHasToken(strings.Join(r.header.Values("Connection"), ","), "upgrade") {
		c, ok := javaHeader(r.header, "Connection")
		return refuse("Invalid handshake response connection: %s", javaString(c, ok))
	}
	expected := acceptKey(key)
	if got, ok := javaHeader(r.header, "Sec-WebSocket-Accept"); !ok || got != expected {
		return refuse("Invalid challenge. Actual: %s. Expected: %s", javaString(got, ok), expected)
	}
	received, hasReceived := javaHeader(r.header, "Sec-WebSocket-Protocol")
	received = strings.TrimSpace(received)
	valid := protocol == "" && !hasReceived
	if protocol != "" && hasReceived && received != "" {
		for _, p := range strings.Split(protocol, ",") {
			if strings.TrimSpace(p) == received {
				valid = true
				break
			}
		}
	}
	if !valid {
		return refuse("Invalid subprotocol. Actual: %s. Expected one of: %s",
			javaString(received, hasReceived), javaString(protocol, asked))
	}
	return nil
}

// javaHeader is HttpHeaders.get: the first value of name, and whether there is one.
func javaHeader(h http.Header, name string) (string, bool) {
	values := h.Values(name)
	if len(values) == 0 {
		return "", false
	}
	return values[0], true
}

// javaString is how Java's string concatenation and %s print a String that may be null.
func javaString(s string, present bool) string {
	if !present {
		return "null"
	}
	return s
}
