package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
)

// TrustedProxies are the reverse proxies whose X-Forwarded-For the gateway believes
// (--trusted-proxies): a request from one of them is counted by the client the proxy names,
// not by the proxy's own address. Empty: no proxy is believed, every request is its TCP peer.
type TrustedProxies []netip.Prefix

// ParseTrustedProxies reads --trusted-proxies: addresses and CIDR prefixes, comma-separated
// (127.0.0.1, 10.0.0.0/8, ::1). "" is none.
func ParseTrustedProxies(list string) (TrustedProxies, error) {
	var proxies TrustedProxies
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(item)
		if err != nil {
			ip, ipErr := netip.ParseAddr(item)
			if ipErr != nil || ip.Zone() != "" {
				return nil, fmt.Errorf("%q is no IP address or CIDR prefix (e.g. 127.0.0.1, 10.0.0.0/8, ::1)", cctext.Clip(item, maxLoggedPath))
			}
			prefix = netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())
		}
		if prefix.Addr().Is4In6() {
			// ::ffff:10.0.0.0/104 is 10.0.0.0/8: the peers it names are matched unmapped.
			if prefix.Bits() < 96 {
				return nil, fmt.Errorf("%q mixes IPv6 and IPv4-mapped addresses: give the IPv4 prefix", item)
			}
			prefix = netip.PrefixFrom(prefix.Addr().Unmap(), prefix.Bits()-96)
		}
		proxies = append(proxies, prefix.Masked())
	}
	return proxies, nil
}

// TrustsEveryone reports whether the set holds every address of a family (0.0.0.0/0, ::/0):
// any client could then name any address it likes.
func (p TrustedProxies) TrustsEveryone() bool {
	for _, prefix := range p {
		if prefix.Bits() == 0 {
			return true
		}
	}
	return false
}

func (p TrustedProxies) trusts(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, prefix := range p {
		if prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// String is the set as --trusted-proxies takes it.
func (p TrustedProxies) String() string {
	items := make([]string, len(p))
	for i, prefix := range p {
		items[i] = prefix.String()
	}
	return strings.Join(items, ",")
}

// clientAddrKey is the request context's key of the client's address (ClientAddr).
type clientAddrKey struct{}

// ClientAddr is the address of the client of r, the one home of it for everything the gateway
// counts or shows per client (the per-address limits, the computers' REMOTE, a link code's
// address, the connect lines, an API token's last use): the TCP peer (r.RemoteAddr,
// host:port), or, when the peer is one of --trusted-proxies, the client the proxy names in
// X-Forwarded-For (an IP address, no port). Trust decisions stay on the peer: a loopback
// client of the host API (IsLoopback(r.RemoteAddr), ForwardedBy) and a computer on the API's
// port (gateway) are the socket's, never a header's.
func ClientAddr(r *http.Request) string {
	if addr, ok := r.Context().Value(clientAddrKey{}).(string); ok {
		return addr
	}
	return r.RemoteAddr
}

// forwardedFor is what the gateway reads the client from; Forwarded and X-Real-IP are
// not read (ForwardedBy still marks a request carrying them as forwarded).
const forwardedFor = "X-Forwarded-For"

// Why a trusted proxy's request is counted by the proxy's own address.
const (
	// forwardedMalformed: an entry the walk reached is no IP address (the proxy wrote it, or
	// one it trusts did: entries a client wrote lie left of the one naming the client).
	forwardedMalformed = "a trusted proxy's X-Forwarded-For holds an entry that is no IP address: the request is counted by the proxy's own address (its per-address limits, the computers' REMOTE); the proxy must append its client's address (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for)"
	// forwardedAllTrusted: every entry is a trusted proxy, so no client is named.
	forwardedAllTrusted = "every address in a trusted proxy's X-Forwarded-For is itself in --trusted-proxies: the request is counted by the proxy's own address; a client at an address of --trusted-proxies is taken for a proxy (narrow the setting to the proxies' own addresses)"
)

// clientOf resolves r's client for proxies (ClientAddr): the rightmost X-Forwarded-For entry
// that is no trusted proxy (each proxy appends its own peer, as nginx's
// $proxy_add_x_forwarded_for does; what lies left of the client's entry the client wrote
// itself, and is never read). The peer itself, with why ("" when nothing is amiss), when the
// peer is not trusted, sends no X-Forwarded-For (a client on the proxy's host connecting
// directly), or names no client: an entry the walk reaches that is no IP address
// (forwardedMalformed, with it), or only trusted proxies (forwardedAllTrusted).
func clientOf(r *http.Request, proxies TrustedProxies) (addr, why, entry string) {
	peer, err := netip.ParseAddr(HostOf(r.RemoteAddr))
	if err != nil || !proxies.trusts(peer) {
		return r.RemoteAddr, "", ""
	}
	values := r.Header.Values(forwardedFor)
	if len(values) == 0 {
		return r.RemoteAddr, "", ""
	}
	// Several header lines are one comma-separated list, in order (RFC 9110 §5.3).
	for i := len(values) - 1; i >= 0; i-- {
		rest := values[i]
		for {
			cut := strings.LastIndexByte(rest, ',')
			item := strings.TrimSpace(rest[cut+1:])
			ip, ok := forwardedIP(item)
			if !ok {
				return r.RemoteAddr, forwardedMalformed, item
			}
			if !proxies.trusts(ip) {
				return ip.String(), "", ""
			}
			if cut < 0 {
				break
			}
			rest = rest[:cut]
		}
	}
	return r.RemoteAddr, forwardedAllTrusted, ""
}

// forwardedIP reads one X-Forwarded-For entry: an IP address, an IPv6 one in brackets or
// either with a port (some proxies add it); an IPv4-mapped one as its IPv4 address.
func forwardedIP(item string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(item, "["), "]")); err == nil && ip.Zone() == "" {
		return ip.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(item); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// HostOf is the host of a host:port address (the whole string without a port: a proxied
// client's ClientAddr).
func HostOf(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// AddressKey is what every per-address limit and log budget counts a client by, the one home
// of that rule: its IPv4 address, or the /64 of an IPv6 one (one host usually owns a whole
// /64, and would otherwise get a budget per address of it); an IPv4-mapped IPv6 address
// counts as its IPv4 address. remoteAddr is a ClientAddr (host:port, or a proxied client's
// IP); a host that is no IP address is its own key.
func AddressKey(remoteAddr string) string {
	host := HostOf(remoteAddr)
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if ip = ip.Unmap().WithZone(""); ip.Is4() {
		return ip.String()
	}
	prefix, _ := ip.Prefix(64)
	return prefix.String()
}

// withClientAddr puts each request's ClientAddr in its context, for proxies, and says in the
// log, once a minute per proxy and cause, when a trusted proxy's request names no client.
func withClientAddr(logger *slog.Logger, proxies TrustedProxies, next http.Handler) http.Handler {
	if len(proxies) == 0 {
		return next
	}
	warns := logthrottle.New(logger, clock.Real{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, why, entry := clientOf(r, proxies)
		if why != "" {
			attrs := []any{"remote", r.RemoteAddr, "path", cctext.Clip(r.URL.Path, maxLoggedPath)}
			if why == forwardedMalformed {
				attrs = append(attrs, "entry", cctext.Clip(entry, maxLoggedEntry))
			}
			warns.Log(slog.LevelWarn, why+" "+AddressKey(r.RemoteAddr), why, attrs...)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, addr)))
	})
}

// maxLoggedEntry bounds a malformed X-Forwarded-For entry in the log line.
const maxLoggedEntry = 64
