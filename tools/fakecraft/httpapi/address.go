package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"fakecraft/ccstr"
)

// Failure texts CC puts in websocket_failure / http_failure / http_check events.
const (
	msgURLMalformed       = "URL malformed"
	msgUnknownHost        = "Unknown host"
	msgDomainNotPermitted = "Domain not permitted"
	msgTimedOut           = "Timed out"
	msgCouldNotConnect    = "Could not connect"
	msgNoSecureConnection = "Could not create a secure connection"
	msgMustSpecifyHTTP    = "Must specify http or https"
	msgConnectionClosed   = "Connection closed"
	msgMessageTooLarge    = "Message is too large"
)

// errDenied is a lookup that an address rule refused.
var errDenied = errors.New(msgDomainNotPermitted)

// errUnknownHost is a lookup that found no address.
var errUnknownHost = errors.New(msgUnknownHost)

// parseWebsocketURL turns the URL string given to http.websocket into a ws/wss URL, the
// way CC does: when the string has no host it is tried again with "ws://" in front, so
// "localhost:8080" works; any other scheme is rejected by its name as written.
func parseWebsocketURL(raw string) (*url.URL, string) {
	u, err := parseText(raw)
	if err != nil || u.Hostname() == "" || !javaURIChars(raw) {
		u, err = parseText("ws://" + raw)
		if err != nil || u.Hostname() == "" || !javaURIChars("ws://"+raw) {
			return nil, msgURLMalformed
		}
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		// url.Parse lowercases the scheme; CC quotes it as the user wrote it.
		return nil, "Invalid scheme '" + originalScheme(raw, u.Scheme) + "'"
	}
	return u, ""
}

// parseHTTPURL checks a URL for http.request and http.checkURL as CC does.
func parseHTTPURL(raw string) (*url.URL, string) {
	u, err := parseText(raw)
	if err != nil || !javaURIChars(raw) {
		return nil, msgURLMalformed
	}
	if u.Scheme == "" {
		return nil, msgMustSpecifyHTTP
	}
	if u.Hostname() == "" {
		return nil, msgURLMalformed
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "Invalid protocol '" + u.Scheme + "'"
	}
	return u, ""
}

// originalScheme returns the scheme as it is spelled at the start of raw.
func originalScheme(raw, lower string) string {
	if len(raw) >= len(lower) && strings.EqualFold(raw[:len(lower)], lower) {
		return raw[:len(lower)]
	}
	return lower
}

// defaultPort is the port implied by a scheme.
func defaultPort(scheme string) string {
	switch scheme {
	case "wss", "https":
		return "443"
	default:
		return "80"
	}
}

// resolve looks host up and applies the address rules to the first address, as CC checks
// the address Java's resolver returns first. It returns errUnknownHost or errDenied.
func (a *API) resolve(ctx context.Context, host string) (netip.Addr, error) {
	var addr netip.Addr
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addr = ip
	} else {
		addrs, err := a.opts.Resolver.LookupIPAddr(ctx, host)
		if err != nil || len(addrs) == 0 {
			if ctx.Err() != nil {
				return netip.Addr{}, ctx.Err()
			}
			return netip.Addr{}, errUnknownHost
		}
		ip, ok := netip.AddrFromSlice(addrs[0].IP)
		if !ok {
			return netip.Addr{}, errUnknownHost
		}
		addr = ip
	}
	addr = addr.Unmap()
	if !a.opts.AllowPrivate && isPrivate(addr) {
		return netip.Addr{}, errDenied
	}
	return addr, nil
}

// privatePrefixes are the ranges of CC's "$private" rule that netip has no predicate for.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fec0::/10"),     // IPv6 site-local (deprecated, still in Java's isSiteLocal)
	netip.MustParsePrefix("fd00::/8"),      // unique local, as CC writes it (not all of fc00::/7)
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.192/32"),
}

// isPrivate reports whether CC's default "$private" deny rule matches addr.
func isPrivate(addr netip.Addr) bool {
	if addr.IsUnspecified() || addr.IsLoopback() || addr.IsLinkLocalUnicast() || addr.IsMulticast() {
		return true
	}
	for _, p := range privatePrefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// friendlyDialError maps a connection error to CC's text.
func friendlyDialError(err error) string {
	switch {
	case errors.Is(err, errUnknownHost):
		return msgUnknownHost
	case errors.Is(err, errDenied):
		return msgDomainNotPermitted
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return msgTimedOut
	}
	var hs *handshakeError
	if errors.As(err, &hs) {
		return hs.msg
	}
	var tlsErr *tlsFailure
	if errors.As(err, &tlsErr) {
		return msgNoSecureConnection
	}
	return msgCouldNotConnect
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// tlsFailure wraps an error from the TLS handshake.
type tlsFailure struct{ err error }

func (e *tlsFailure) Error() string { return "tls handshake: " + e.err.Error() }
func (e *tlsFailure) Unwrap() error { return e.err }

// handshakeTLS runs the client side of TLS over conn with the API's settings, checking
// the certificate against serverName unless those settings name another. A failed
// handshake is a tlsFailure, or the context's error when that ended it.
func (a *API) handshakeTLS(ctx context.Context, conn net.Conn, serverName string, nextProtos []string) (*tls.Conn, error) {
	cfg := &tls.Config{}
	if a.opts.TLSConfig != nil {
		cfg = a.opts.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = serverName
	}
	if nextProtos != nil {
		cfg.NextProtos = nextProtos
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &tlsFailure{err: err}
	}
	return tc, nil
}

// parseText parses a URL as CC's Java side holds it: each byte the character of that code
// point (ccstr.ToText), so a byte past ASCII goes out as that character's UTF-8, which is
// what Netty writes. A path holding one keeps it as written in Opaque (Java's getRawPath),
// where Go would escape it (%FC): the request line carries Opaque, and the rest of the URL
// (host, query, resolving a redirect) is as url.Parse made it.
func parseText(raw string) (*url.URL, error) {
	text := ccstr.ToText(raw)
	u, err := url.Parse(text)
	if err != nil || text == raw {
		return u, err
	}
	rest := text
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
		j := strings.IndexAny(rest, "/?#")
		if j < 0 {
			return u, nil
		}
		rest = rest[j:]
	}
	if j := strings.IndexAny(rest, "?#"); j >= 0 {
		rest = rest[:j]
	}
	if strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "//") && rest != u.EscapedPath() {
		u.Opaque = rest
	}
	return u, nil
}

// requestPath is the path a request line carries: as written when parseText kept it.
func requestPath(u *url.URL) string {
	if u.Opaque != "" {
		return u.Opaque
	}
	return u.EscapedPath()
}

// javaURIChars rejects what java.net.URI refuses but Go's url.Parse lets through in the
// part after the authority: characters outside RFC 2396 and stray '%'.
func javaURIChars(raw string) bool {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[j:]
		} else {
			rest = ""
		}
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		// 0x80-0x9F are ISO controls and 0xA0 a space to Java, which takes other bytes
		// past ASCII (as the characters U+00A1-U+00FF) in a URI.
		case c <= ' ' || c >= 0x7F && c <= 0xA0 || strings.IndexByte("\"<>[]\\^`{|}", c) >= 0:
			return false
		case c == '%':
			if i+2 >= len(rest) || !isHex(rest[i+1]) || !isHex(rest[i+2]) {
				return false
			}
		}
	}
	return true
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
