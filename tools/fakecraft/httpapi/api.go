// Package httpapi is fakecraft's `http` global: HTTP requests and websockets over real
// sockets, with CC: Tweaked 1.113's call forms, events, limits, error texts and default
// address rules (loopback and private networks denied).
//
// The blocking wrappers (http.get, http.websocket, ws.receive, …) are a small embedded Lua
// file, because they must yield like CC's do; the native parts are Go. Network work runs on
// goroutines started through host.Go; results reach Lua only as queued events, and handles
// are built on the Lua goroutine through host.Do.
package httpapi

import (
	"context"
	"crypto/tls"
	_ "embed"
	"net"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"fakecraft/host"
)

// Limits and defaults, as in CC: Tweaked 1.113.1's default configuration.
const (
	// DefaultMaxWebsocketMessage is the largest websocket frame, in bytes, in either direction.
	DefaultMaxWebsocketMessage = 131072
	// unlimitedWebsocketMessage is CC's ceiling when the limit is configured as unlimited.
	unlimitedWebsocketMessage = 1 << 30
	// DefaultMaxWebsockets is how many websockets one computer may have open.
	DefaultMaxWebsockets = 4
	// maxPendingSends is how many websocket writes may be in flight per socket.
	maxPendingSends = 512
	// defaultTimeout is the connect and handshake timeout of a websocket, and the connect,
	// TLS handshake and read timeout of an http request (never a whole-request one).
	defaultTimeout = 30 * time.Second
	// maxTimeoutSeconds is the largest timeout a Lua caller may ask for.
	maxTimeoutSeconds = 60
	// maxUpload is CC's default max_upload: the largest request body.
	maxUpload = 4 * 1024 * 1024
	// maxDownload is CC's default max_download: the largest response body.
	maxDownload = 16 * 1024 * 1024
	// maxRedirects bounds redirect chains of http.request.
	maxRedirects = 16
	// DefaultUserAgent is the User-Agent CC sends when the program sets none.
	DefaultUserAgent = "computercraft/1.113.1"
)

// Resolver looks host names up; *net.Resolver satisfies it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// DialFunc opens a TCP connection; (*net.Dialer).DialContext satisfies it.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Options configures the http API of one computer. The zero value is CC's default
// configuration.
type Options struct {
	// AllowPrivate lifts CC's default "$private" deny rule. When false, loopback, private,
	// link-local, CGNAT and multicast addresses fail with "Domain not permitted".
	AllowPrivate bool
	// Disabled leaves the `http` global out altogether, as CC does when http is disabled.
	Disabled bool
	// WebsocketsDisabled makes http.websocket raise "Websocket connections are disabled".
	WebsocketsDisabled bool
	// MaxWebsocketMessage is the frame size limit in bytes: 0 means
	// DefaultMaxWebsocketMessage, negative means CC's "unlimited" (2^30).
	MaxWebsocketMessage int
	// MaxWebsockets is the open-socket limit: 0 means DefaultMaxWebsockets, negative means
	// unlimited.
	MaxWebsockets int
	// UserAgent is sent when the program sets none; empty means DefaultUserAgent.
	UserAgent string
	// Dial opens TCP connections; nil means a net.Dialer.
	Dial DialFunc
	// Resolver looks host names up; nil means net.DefaultResolver.
	Resolver Resolver
	// TLSConfig is used for wss:// and https://; nil means the system defaults.
	TLSConfig *tls.Config
}

// API is the http API of one computer. Install it into exactly one Lua state.
type API struct {
	opts Options

	refuse atomic.Bool
	delay  atomic.Int64 // time.Duration

	// mu guards sockets and h.
	mu      sync.Mutex
	sockets map[*socket]struct{}
	h       host.Host

	// receiveFactory is the wrapper's make_receive(url, start, is_closed); Lua goroutine only.
	receiveFactory lua.LValue

	// ctx is cancelled when the computer shuts down.
	ctx    context.Context
	cancel context.CancelFunc
}

//go:embed http.lua
var wrapperSource string

// wrapperChunkName names the embedded wrapper file in error positions and tracebacks.
const wrapperChunkName = "/rom/apis/http/http.lua"

// wrapperProto is the wrapper compiled once per process: gopher-lua's prototypes never
// change once compiled, so every computer's http API shares it (parsing it anew cost about
// a tenth of each boot).
var wrapperProto = sync.OnceValues(func() (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(stringReader(wrapperSource), wrapperChunkName)
	if err != nil {
		return nil, err
	}
	return lua.Compile(chunk, wrapperChunkName)
})

// New makes an http API with opts, filling in defaults.
func New(opts Options) *API {
	if opts.MaxWebsocketMessage == 0 {
		opts.MaxWebsocketMessage = DefaultMaxWebsocketMessage
	} else if opts.MaxWebsocketMessage < 0 {
		opts.MaxWebsocketMessage = unlimitedWebsocketMessage
	}
	if opts.MaxWebsockets == 0 {
		opts.MaxWebsockets = DefaultMaxWebsockets
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if opts.Dial == nil {
		opts.Dial = (&net.Dialer{}).DialContext
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &API{opts: opts, sockets: map[*socket]struct{}{}, ctx: ctx, cancel: cancel}
}

// Install sets the global `http` in L, which must belong to h. It does nothing when the
// API is disabled. It raises a Lua error only if the embedded wrapper fails to load, which
// is a build defect.
func (a *API) Install(L *lua.LState, h host.Host) {
	if a.opts.Disabled {
		return
	}
	a.mu.Lock()
	a.h = h
	a.mu.Unlock()
	// Shutting down closes every socket, which ends their goroutines.
	h.AtShutdown(a.shutdown)

	native := L.NewTable()
	L.SetFuncs(native, map[string]lua.LGFunction{
		"websocket": a.luaWebsocket,
		"request":   a.luaRequest,
		"checkURL":  a.luaCheckURL,
	})
	proto, err := wrapperProto()
	if err != nil {
		L.RaiseError("load http wrapper: %v", err)
	}
	L.Push(L.NewFunctionFromProto(proto))
	L.Push(native)
	L.Call(1, 2)
	httpTable := L.Get(-2)
	a.receiveFactory = L.Get(-1)
	L.Pop(2)
	L.SetGlobal("http", httpTable)
}

// DropAll drops the TCP connection of every open websocket, as if its server had died:
// each gets websocket_closed(url, "Connection closed", nil), or websocket_failure if it
// was still connecting.
func (a *API) DropAll() {
	for _, s := range a.snapshot() {
		s.drop()
	}
}

// Refuse makes new connections (websocket and http) fail with "Could not connect" while on.
func (a *API) Refuse(on bool) { a.refuse.Store(on) }

// SetDelay delays the delivery of every connection result and incoming message by d.
func (a *API) SetDelay(d time.Duration) { a.delay.Store(int64(d)) }

// OpenWebsockets is how many websocket slots are in use: sockets that are connecting or
// open and not yet closed.
func (a *API) OpenWebsockets() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sockets)
}

// snapshot copies the set of live sockets.
func (a *API) snapshot() []*socket {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*socket, 0, len(a.sockets))
	for s := range a.sockets {
		out = append(out, s)
	}
	return out
}

// shutdown closes everything when the computer stops; no events are queued. An open
// socket's writer first sends the messages the computer sent before it stopped, as CC's
// Netty does with the writes queued before its close (a lua.exec's answer sent by code that
// then turned the computer off gets out), then drops the connection.
func (a *API) shutdown() {
	a.cancel()
	for _, s := range a.snapshot() {
		s.closeOnce(false)
	}
}

// wait sleeps for the injected delay; it returns false if the computer shut down meanwhile.
func (a *API) wait(stop <-chan struct{}) bool {
	d := time.Duration(a.delay.Load())
	if d <= 0 {
		select {
		case <-a.ctx.Done():
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a.ctx.Done():
		return false
	case <-stop:
		return false
	}
}
