package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/testkit"
)

func TestParseTrustedProxies(t *testing.T) {
	for list, want := range map[string]string{
		"":                               "",
		" , ":                            "",
		"127.0.0.1":                      "127.0.0.1/32",
		"10.1.2.3/8, ::1":                "10.0.0.0/8,::1/128",
		"2001:db8::/32,192.0.2.0/24":     "2001:db8::/32,192.0.2.0/24",
		"::ffff:10.0.0.1":                "10.0.0.1/32",
		"::ffff:10.0.0.0/104,172.16.0.9": "10.0.0.0/8,172.16.0.9/32",
	} {
		got, err := ParseTrustedProxies(list)
		require.NoError(t, err, list)
		assert.Equal(t, want, got.String(), list)
	}
	for list, why := range map[string]string{
		"nginx":          `"nginx" is no IP address or CIDR prefix (e.g. 127.0.0.1, 10.0.0.0/8, ::1)`,
		"127.0.0.1,10/8": `"10/8" is no IP address or CIDR prefix`,
		"10.0.0.0/33":    `"10.0.0.0/33" is no IP address`,
		"fe80::1%eth0":   `"fe80::1%eth0" is no IP address`,
		"::ffff:0:0/90":  `"::ffff:0:0/90" mixes IPv6 and IPv4-mapped addresses: give the IPv4 prefix`,
	} {
		_, err := ParseTrustedProxies(list)
		require.Error(t, err, list)
		assert.Contains(t, err.Error(), why, list)
	}
	all, err := ParseTrustedProxies("127.0.0.1,0.0.0.0/0")
	require.NoError(t, err)
	assert.True(t, all.TrustsEveryone())
	some, err := ParseTrustedProxies("127.0.0.1,10.0.0.0/8")
	require.NoError(t, err)
	assert.False(t, some.TrustsEveryone())
}

// TestTheClientIsTheRightmostAddressNoTrustedProxyWrote: each proxy appends its peer to
// X-Forwarded-For (nginx's $proxy_add_x_forwarded_for), so walking from the right past the
// trusted proxies reaches the address the outermost one saw; whatever lies left of it the
// client wrote itself. A peer that is no trusted proxy is the client whatever it writes.
func TestTheClientIsTheRightmostAddressNoTrustedProxyWrote(t *testing.T) {
	proxies, err := ParseTrustedProxies("127.0.0.1, 10.0.0.0/8, 2001:db8:1::/48")
	require.NoError(t, err)
	cases := []struct {
		name, peer string
		header     []string // X-Forwarded-For's lines; nil: none
		want, why  string
	}{
		{"an untrusted peer's header is ignored", "192.0.2.7:5555", []string{"198.51.100.7"}, "192.0.2.7:5555", ""},
		{"an untrusted peer that writes a trusted address", "192.0.2.7:5555", []string{"127.0.0.1"}, "192.0.2.7:5555", ""},
		{"an untrusted loopback peer", "127.0.0.2:5555", []string{"198.51.100.7"}, "127.0.0.2:5555", ""},
		{"the proxy's client", "127.0.0.1:5555", []string{"198.51.100.7"}, "198.51.100.7", ""},
		{"the client's own claims are left of it", "127.0.0.1:5555", []string{"6.6.6.6, 127.0.0.1, 198.51.100.7"}, "198.51.100.7", ""},
		{"a client's garbage left of it", "127.0.0.1:5555", []string{"<script>, , 198.51.100.7"}, "198.51.100.7", ""},
		{"past a chain of trusted proxies", "127.0.0.1:5555", []string{"6.6.6.6, 198.51.100.7, 10.0.0.2,10.9.9.9"}, "198.51.100.7", ""},
		{"header lines are one list", "127.0.0.1:5555", []string{"6.6.6.6", "198.51.100.7, 10.0.0.2"}, "198.51.100.7", ""},
		{"the last line's client wins", "127.0.0.1:5555", []string{"10.0.0.3", "198.51.100.7"}, "198.51.100.7", ""},
		{"IPv6", "[::ffff:127.0.0.1]:5555", []string{"2001:db8:2::7, 2001:db8:1::1"}, "2001:db8:2::7", ""},
		{"an IPv4-mapped client", "127.0.0.1:5555", []string{"::ffff:198.51.100.7"}, "198.51.100.7", ""},
		{"with a port", "127.0.0.1:5555", []string{"198.51.100.7:4000"}, "198.51.100.7", ""},
		{"IPv6 with a port", "127.0.0.1:5555", []string{"[2001:db8:2::7]:4000"}, "2001:db8:2::7", ""},
		{"IPv6 in brackets", "127.0.0.1:5555", []string{"[2001:db8:2::7]"}, "2001:db8:2::7", ""},
		{"no header: a client beside the proxy", "127.0.0.1:5555", nil, "127.0.0.1:5555", ""},
		{"an empty header", "127.0.0.1:5555", []string{""}, "127.0.0.1:5555", forwardedMalformed},
		{"the proxy wrote no address", "127.0.0.1:5555", []string{"198.51.100.7, unknown"}, "127.0.0.1:5555", forwardedMalformed},
		{"an empty entry the walk reaches", "127.0.0.1:5555", []string{"198.51.100.7,"}, "127.0.0.1:5555", forwardedMalformed},
		{"a zone", "127.0.0.1:5555", []string{"fe80::1%eth0"}, "127.0.0.1:5555", forwardedMalformed},
		{"every entry trusted", "127.0.0.1:5555", []string{"10.0.0.2, 127.0.0.1"}, "127.0.0.1:5555", forwardedAllTrusted},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/trapos/ws", nil)
		r.RemoteAddr = c.peer
		for _, line := range c.header {
			r.Header.Add("X-Forwarded-For", line)
		}
		got, why, _ := clientOf(r, proxies)
		assert.Equal(t, c.want, got, c.name)
		assert.Equal(t, c.why, why, c.name)
	}
}

// clientAddrModule answers ClientAddr on an open route and an API route.
type clientAddrModule struct{}

func (clientAddrModule) Name() string { return "clientaddr" }

func (clientAddrModule) Mount(routes *Routes) {
	routes.HandleFunc("GET /open/client", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, ClientAddr(r)) })
	routes.HandleAPIFunc("GET /api/client", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, ClientAddr(r)) })
}

// getFrom asks srv for path from the local address ip with X-Forwarded-For (none when ""),
// over a real socket.
func getFrom(t *testing.T, srv *httptest.Server, ip, path, forwardedFor, token string) (int, string) {
	t.Helper()
	transport := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestTrustedProxiesNameTheClientOnTheirSocketsOnly: on a server with --trusted-proxies, a
// request from a trusted proxy is its client's, one from anyone else on the same port its
// peer's whatever it writes; a request that names no client is logged once a minute. What
// the API trusts stays on the socket: a proxied request from loopback is refused without a
// token though its proxy is trusted.
func TestTrustedProxiesNameTheClientOnTheirSocketsOnly(t *testing.T) {
	proxies, err := ParseTrustedProxies("127.0.0.1")
	require.NoError(t, err)
	logs := &testkit.SyncBuffer{}
	s := New(slog.New(slog.NewTextHandler(logs, nil)), Config{TrustedProxies: proxies}, clientAddrModule{})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	code, body := getFrom(t, srv, "127.0.0.1", "/open/client", "6.6.6.6, 198.51.100.7", "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "198.51.100.7", body, "the trusted proxy's client")
	code, body = getFrom(t, srv, "127.0.0.2", "/open/client", "198.51.100.7", "")
	require.Equal(t, http.StatusOK, code, body)
	assert.True(t, strings.HasPrefix(body, "127.0.0.2:"), "an untrusted peer's header does not count: %s", body)
	code, body = getFrom(t, srv, "127.0.0.1", "/open/client", "", "")
	require.Equal(t, http.StatusOK, code, body)
	assert.True(t, strings.HasPrefix(body, "127.0.0.1:"), "no header: the peer: %s", body)
	assert.NotContains(t, logs.String(), "X-Forwarded-For", "a client beside the proxy is no fault")

	for range 3 {
		code, body = getFrom(t, srv, "127.0.0.1", "/open/client", "198.51.100.7, unknown", "")
		require.Equal(t, http.StatusOK, code, body)
		assert.True(t, strings.HasPrefix(body, "127.0.0.1:"), "a malformed header: the peer: %s", body)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "holds an entry that is no IP address"), "once a minute:\n%s", logs)
	assert.Contains(t, logs.String(), "entry=unknown")
	code, body = getFrom(t, srv, "127.0.0.1", "/open/client", "127.0.0.1", "")
	require.Equal(t, http.StatusOK, code, body)
	assert.True(t, strings.HasPrefix(body, "127.0.0.1:"), "all trusted: the peer: %s", body)
	assert.Contains(t, logs.String(), "is itself in --trusted-proxies")

	code, body = getFrom(t, srv, "127.0.0.1", "/api/client", "198.51.100.7", "")
	assert.Equal(t, http.StatusForbidden, code, "the API's loopback trust is the socket's, not the header's")
	assert.Contains(t, body, "this request came through a proxy (X-Forwarded-For)")
	assert.Regexp(t, `msg="host API request refused: [^"]*" reason=not_loopback remote=198\.51\.100\.7 proxy=127\.0\.0\.1:\d+ method=GET`, logs.String(),
		"the refusal names the client and the proxy it came through")
	code, body = getFrom(t, srv, "127.0.0.1", "/api/client", "", "")
	assert.Equal(t, http.StatusOK, code, "the host's own tools beside the proxy")
	assert.True(t, strings.HasPrefix(body, "127.0.0.1:"), body)
}

// TestATokensUseIsRecordedAtTheProxiedClientsAddress: an account token's audit (its
// remoteAddr) names the client a trusted proxy forwarded, not the proxy.
func TestATokensUseIsRecordedAtTheProxiedClientsAddress(t *testing.T) {
	ctx := context.Background()
	accounts := account.New(account.NewMemory(), clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	plain, tok, err := accounts.IssueToken(ctx, "alice", "laptop", 0)
	require.NoError(t, err)
	proxies, err := ParseTrustedProxies("127.0.0.1")
	require.NoError(t, err)
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{Accounts: accounts, TrustedProxies: proxies}, clientAddrModule{}).Handler())
	t.Cleanup(srv.Close)

	code, body := getFrom(t, srv, "127.0.0.1", "/api/client", "198.51.100.7", plain)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "198.51.100.7", body)
	seen, err := accounts.Store().Token(ctx, tok.Selector)
	require.NoError(t, err)
	assert.Equal(t, "198.51.100.7", seen.RemoteAddr)
}
