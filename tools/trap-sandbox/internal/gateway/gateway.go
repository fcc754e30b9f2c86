// Package gateway is the trapos-cloud-gateway sandbox module: sockets, sessions and the
// registry. It serves the WebSocket that trapos computers keep open (GET /trapos/ws), keeps
// the registry of connected computers, answers computer→gateway requests from its handler
// table (hello built in, other types registered by modules with Handle), and sends
// gateway→computer requests with Request. The host's API on top of it (the computer list,
// /requests, the file routes) is the hostapi module; the vocabulary's calls are
// internal/computer's. With several replicas (docs/scale-out.md) the registry tells a Cluster
// which computers this replica holds, and asks it for the others' (registry.go).
//
// Each socket is one Session. Its reader runs in a goroutine started by the HTTP handler that
// upgraded it (serveWebSocket returns at once, so net/http lets go of the connection's
// buffers); frames leave through a bounded queue whose writer exists only while frames wait,
// and its liveness clocks run on one timer that holds no goroutine: an idle computer costs
// one parked goroutine. A computer→gateway request runs its handler in a goroutine of its own
// (at most 16 per socket), which also writes its answer when no writer runs; a host's Request
// runs in the caller's goroutine and waits on the pending table for the reader to hand it the
// answer.
package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/server"
)

// ModuleName is the sandbox module's name.
const ModuleName = "trapos-cloud-gateway"

// WebSocketPath is where computers connect.
const WebSocketPath = "/trapos/ws"

// Defaults for Config; each is also documented in docs/protocol.md.
const (
	// DefaultHelloTimeout is how long a new socket may stay silent before its hello; then 4008.
	DefaultHelloTimeout = 10 * time.Second
	// DefaultRequestTimeout bounds a gateway→computer request whose context has no deadline.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds one frame write; a peer that does not read in that time is gone.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultCloseGrace is how long to wait for the peer's close frame after sending ours. CC
	// never answers one (it just drops TCP), so this stays short.
	DefaultCloseGrace = time.Second
	// DefaultSendQueueBytes is how many bytes of outbound frames may wait per socket after
	// hello. Answers to the computer's own requests that do not fit beside its other answers
	// mean it does not read: it is dropped (close 1013). Gateway requests that do not fit
	// beside everything queued are the host's burst: the caller gets busy and the computer
	// stays (sendQueue).
	DefaultSendQueueBytes = 1 << 20
	// DefaultMaxGatewayRequestsInFlight caps gateway→computer requests awaiting an answer per
	// computer: what the Lua daemon takes (docs/protocol.md). One of them is kept for the
	// gateway's idle probe; past the other 31, Request fails with busy (HTTP 429 on the API).
	DefaultMaxGatewayRequestsInFlight = 32

	// DefaultPingPeriod is how often the session sends a WebSocket ping. CC's Java side answers
	// pings by itself, so this detects dead TCP peers (a vanished server or network), not a
	// crashed Lua daemon (see DefaultIdleProbeAfter).
	DefaultPingPeriod = 30 * time.Second
	// pongWaitFactor makes the default PongWait twice the ping period: one lost pong is
	// tolerated, two are not.
	pongWaitFactor = 2
	// DefaultIdleProbeAfter is how long a computer may send nothing at all (no frame of any
	// kind) before the gateway sends it a gateway_request ping. No computer_response within
	// the request timeout means the Lua daemon is gone: close 4010.
	DefaultIdleProbeAfter = 60 * time.Second

	// DefaultMaxConnections caps open sockets (before and after hello). When it is reached, a
	// new socket evicts a socket that has not said hello (admission.go); only when every open
	// socket is an authenticated computer is an upgrade refused, with HTTP 503.
	DefaultMaxConnections = 20000
	// accountShareDivisor: an account other than local holds at most MaxConnections divided by
	// it in registered sockets (Config.maxAccountConnections). A credential says hello under
	// any label of its computer id (one set by hand, under any id), each a socket that is
	// never evicted, and an account's token makes credentials: without a share, one account
	// filled the cap from one script, and every other account's computers got 503.
	accountShareDivisor = 2
	// DefaultMaxUnauthenticated caps the gateway's sockets that have not said a good hello yet,
	// whatever their address: beyond it a new socket evicts the oldest. So sockets without
	// credentials hold at most this share of the gateway's memory, and never keep a computer
	// with the password out.
	DefaultMaxUnauthenticated = 8192
	// DefaultMaxUnauthenticatedPerAddress caps one address's sockets without a good hello yet
	// (those waiting for a delayed wrong-secret answer included); beyond it a new socket from
	// the address evicts the address's oldest. A computer says hello within a round trip of
	// opening and is evicted only once this many newer sockets came from its address: with
	// the 2 000 computers of a restart storm all at once beside a loop opening 2 400 sockets a
	// second, each still has 870 ms.
	DefaultMaxUnauthenticatedPerAddress = 4096
	// DefaultUpgradeRate and DefaultUpgradeBurst shape the per-address token bucket of
	// WebSocket upgrades. Past it, an address is under pressure: its new sockets get
	// PressureHelloTimeout. Nothing is refused for it, since the computers of a Minecraft
	// server share its address with whatever loop a player runs there. The bucket is sized
	// for a restart storm, the expected load: 2 000 computers of one server come back within
	// the same second (the daemon waits 5 s + 0-1 s).
	DefaultUpgradeRate  = 200.0
	DefaultUpgradeBurst = 2000
	// DefaultPressureHelloTimeout is the hello deadline of a socket admitted under pressure
	// (its address over its upgrade rate, or the gateway's sockets before hello at half
	// their cap). A computer says hello as soon as its socket opens; 3 s leaves room for a
	// lagging server and a slow network.
	DefaultPressureHelloTimeout = 3 * time.Second
	// DefaultFailedHelloRate and DefaultFailedHelloBurst shape the per-address bucket of
	// wrong-secret hellos: past the burst, each wrong-secret answer (and its 4001 close) waits
	// for a token, at most maxFailedHelloDelay. A good secret never waits.
	DefaultFailedHelloRate  = 1.0
	DefaultFailedHelloBurst = 10
	// DefaultFailedHelloGlobalRate and DefaultFailedHelloGlobalBurst shape the gateway-wide
	// bucket of wrong-secret hellos, all addresses together: a wrong-secret answer waits for
	// a token of both buckets. 40 addresses, each within its own budget, got 70-76 answers a
	// second before it; now the gateway gives 5. The burst lets a password change's computers
	// (each sends one wrong secret, then stops) mostly hear at once. A good secret never waits.
	DefaultFailedHelloGlobalRate  = 5.0
	DefaultFailedHelloGlobalBurst = 50
	// DefaultConnectionLinesRate and DefaultConnectionLinesBurst shape the per-address bucket
	// of "computer connected" and "computer disconnected" lines (and the older-client line;
	// connLines says which line spends what): past it they are left out and counted in a WARN
	// a minute. A hello needs only the shared password, which any player reads in a computer's
	// .settings, and one loop saying hello under ever new ids wrote 4 000 lines (700 KB) a
	// second. The burst takes a restart storm of 2 000 computers whole, both lines each (a
	// connect line spends 2); the rate is far above a server's churn of computers whose chunks
	// load and unload.
	DefaultConnectionLinesRate  = 5.0
	DefaultConnectionLinesBurst = 4096
)

// Budgets of a socket before its hello succeeds: a hello is tiny, and nothing else is
// answered but not_authenticated, so a socket with no credentials holds little memory.
const (
	// MaxFrameBytesBeforeHello is the read limit until hello succeeds (then
	// protocol.MaxFrameBytes); a bigger frame closes the socket with 1009.
	MaxFrameBytesBeforeHello = 8 << 10
	// preHelloQueueBytes is the send queue's budget until hello succeeds; overflow closes 1013.
	preHelloQueueBytes = 4 * MaxFrameBytesBeforeHello
	// maxPingsBeforeHello is how many WebSocket pings are answered before hello; one more
	// closes the socket with 1008.
	maxPingsBeforeHello = 8
)

// maxFailedHelloDelay caps how long a wrong-secret answer is held back; a budget's debt never
// grows past it (reserveWithin), so wrong secrets wait at most this long after a flood ends.
// The hold slows a guesser who waits for answers. One who takes silence for "wrong" (a right
// secret is answered at once) is bounded by how fast it opens sockets instead
// (docs/protocol.md, Known limitations).
const maxFailedHelloDelay = 5 * time.Minute

// maxOtherHellosOnASocket caps the hellos on a registered socket that are not the one it
// registered with (another secret, another traposId): each asks the account store, and a
// computer alternating two of its own good credentials did it as fast as it wrote frames.
// Past it they are refused (not_authenticated) without the store; the client never sends one
// (a new secret or label says hello on a new socket).
const maxOtherHellosOnASocket = 4

// maxRequestsInFlight caps concurrently running computer→gateway requests per socket (a probe
// can take seconds); beyond it a request is answered at once with code internal.
const maxRequestsInFlight = 16

// Close codes the gateway sends (docs/protocol.md has the table and the reconnect advice).
const (
	// CloseChecked: the answer to a hello with check:true (a password check) has been sent;
	// the socket was never registered. Nothing to reconnect.
	CloseChecked = websocket.CloseNormalClosure // 1000
	// CloseGoingAway: the gateway is shutting down. Reconnect.
	CloseGoingAway = websocket.CloseGoingAway // 1001
	// CloseTooBig: a frame above the read limit arrived (MaxFrameBytesBeforeHello, then
	// protocol.MaxFrameBytes), reason "frame too big"; sent by the reader (refuseTooBig).
	CloseTooBig = websocket.CloseMessageTooBig // 1009
	// CloseTryAgainLater: a slow consumer: the socket's send queue overflowed, or a frame
	// waited WriteTimeout for the peer to read it. Reconnect.
	CloseTryAgainLater = websocket.CloseTryAgainLater // 1013
	// CloseInternalError: the gateway failed while reading this socket's frames (a bug, logged
	// with its stack); this socket ends, every other one goes on. Reconnect.
	CloseInternalError = websocket.CloseInternalServerErr // 1011
	// CloseUnauthorized: hello had a wrong secret. Do not reconnect until the secret changes.
	CloseUnauthorized = 4001
	// CloseNoHello: no hello within the hello timeout. Reconnect.
	CloseNoHello = 4008
	// CloseReplaced: a newer socket said hello for the same computer. Do not reconnect from here.
	CloseReplaced = 4009
	// CloseUnresponsive: the computer did not answer an idle-probe ping in time (its TCP
	// connection is alive but its daemon is not). Reconnect.
	CloseUnresponsive = 4010
	// CloseRevoked: the computer's credential was revoked (at hello, or while connected). Do
	// not reconnect: the credential will not open the gateway again; link the computer anew.
	CloseRevoked = 4003
	// CloseTooManyRequests is the computer's, never the gateway's: it drops the gateway when
	// more of its frames waited at once than it may have in flight (CC's close() sends no
	// close frame, so usually 1006 arrives; a client that can send codes sends this one).
	CloseTooManyRequests = 4429
)

// Config holds the gateway's settings. Zero durations and sizes mean the defaults above.
type Config struct {
	// Password is SANDBOX_PASSWORD, the secret a hello must carry. Empty disables the check.
	Password string
	// PasswordProofV1Off refuses a computer's prove of the password's version 1 proof, whose
	// fast key lets whoever asks test password guesses offline (prove.go): for once every
	// computer runs client 0.5.34 or newer, which asks for version 2 (--password-proofs v2).
	PasswordProofV1Off bool
	// Accounts checks computers' own credentials (tsc_…) at hello; nil: only Password.
	Accounts *account.Accounts
	// HelloTimeout, RequestTimeout, WriteTimeout and CloseGrace: see the Default* constants.
	HelloTimeout   time.Duration
	RequestTimeout time.Duration
	WriteTimeout   time.Duration
	CloseGrace     time.Duration
	// SendQueueBytes is the per-socket outbound queue budget after hello.
	SendQueueBytes int
	// MaxGatewayRequestsInFlight caps unanswered gateway→computer requests per computer, the
	// gateway's idle probe included: hosts get one fewer. At least 2 (1 becomes 2).
	MaxGatewayRequestsInFlight int
	// PingPeriod is how often a WebSocket ping is sent; PongWait (if not above PingPeriod,
	// including zero, it becomes twice PingPeriod) is how long the socket may stay without any frame or pong before it
	// is dropped. IdleProbeAfter: see DefaultIdleProbeAfter.
	PingPeriod     time.Duration
	PongWait       time.Duration
	IdleProbeAfter time.Duration
	// MaxConnections caps open sockets (admission.go: evictions, then HTTP 503).
	MaxConnections int
	// MaxUnauthenticated caps sockets before a good hello, all addresses together.
	MaxUnauthenticated int
	// UpgradeRate (upgrades per second, per remote address) and UpgradeBurst shape the rate
	// past which an address is under pressure (PressureHelloTimeout). A negative UpgradeRate
	// turns it off.
	UpgradeRate  float64
	UpgradeBurst int
	// PressureHelloTimeout is the hello deadline of a socket admitted under pressure.
	PressureHelloTimeout time.Duration
	// ClientVersion is the trapos-sandbox version the gateway serves (its installer); a
	// computer whose hello names an older one is logged once. Empty disables the check.
	ClientVersion string
	// ClientName is the name of the package the gateway serves (trapos-sandbox). With
	// ClientVersion, a good hello's answer names them (servedClient) so that the daemon can tell
	// its player that a newer client is served.
	ClientName string
	// LoopbackAPI says that the host API answers loopback clients without a token
	// (SANDBOX_API_TOKEN unset). A computer's hello from this machine then means that the
	// Minecraft server runs here, and every program on its computers is such a client: the
	// first such hello of a run is logged as a WARN naming the fix.
	LoopbackAPI bool
	// ComputersPort says that computers have a port of their own (--computers-listen): one
	// from this machine on the API's port then came by the wrong one, and the warning says so.
	ComputersPort bool
	// MaxUnauthenticatedPerAddress caps sockets per address before a good hello.
	MaxUnauthenticatedPerAddress int
	// FailedHelloRate (per second, per address) and FailedHelloBurst shape the wrong-secret
	// slow-down of an address; FailedHelloGlobalRate and FailedHelloGlobalBurst that of the
	// whole gateway.
	FailedHelloRate        float64
	FailedHelloBurst       int
	FailedHelloGlobalRate  float64
	FailedHelloGlobalBurst int
	// ConnectionLinesRate (lines per second, per address) and ConnectionLinesBurst shape the
	// connect and disconnect lines an address may write (connLines); a negative rate turns
	// the bound off.
	ConnectionLinesRate  float64
	ConnectionLinesBurst int
	// Clock drives liveness (hello timeout, pings, pong wait, idle probe), the default
	// request timeout, rate limits and the times in listings; nil means the wall clock.
	Clock clock.Clock
	// Metrics records the gateway's Prometheus metrics (on the server's shared registry, which
	// the server serves on /metrics); nil records nothing.
	Metrics *Metrics
	// Replica names this gateway among several replicas sharing their computers over NATS
	// (docs/scale-out.md); it is each local computer's Replica in listings. Empty in a single
	// process.
	Replica string
}

// Liveness is the longest a live gateway stays silent on an authenticated socket: when either
// side has sent nothing for IdleProbeAfter, the gateway sends an idle-probe ping, so it is
// silent IdleProbeAfter at most, however late the computer's answers come; RequestTimeout is
// slack on top. A hello's answer announces it (livenessMs), so that the daemon notices a
// gateway that vanished without closing TCP. Call it on a Config with defaults applied.
func (c Config) Liveness() time.Duration { return c.IdleProbeAfter + c.RequestTimeout }

// maxAccountConnections is the most registered sockets an account other than local holds
// here (accountShareDivisor); local's computers, every player's on the shared password, are
// bounded by the cap alone.
func (c Config) maxAccountConnections() int {
	return max(1, c.MaxConnections/accountShareDivisor)
}

func (c Config) withDefaults() Config {
	if c.HelloTimeout <= 0 {
		c.HelloTimeout = DefaultHelloTimeout
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.CloseGrace <= 0 {
		c.CloseGrace = DefaultCloseGrace
	}
	if c.SendQueueBytes <= 0 {
		c.SendQueueBytes = DefaultSendQueueBytes
	}
	if c.MaxGatewayRequestsInFlight <= 0 {
		c.MaxGatewayRequestsInFlight = DefaultMaxGatewayRequestsInFlight
	}
	// One slot is the idle probe's: with fewer than 2, hosts would get none.
	c.MaxGatewayRequestsInFlight = max(c.MaxGatewayRequestsInFlight, 2)
	if c.PingPeriod <= 0 {
		c.PingPeriod = DefaultPingPeriod
	}
	if c.PongWait <= c.PingPeriod {
		// A pong wait not above the ping period would drop healthy peers between two pings.
		c.PongWait = pongWaitFactor * c.PingPeriod
	}
	if c.IdleProbeAfter <= 0 {
		c.IdleProbeAfter = DefaultIdleProbeAfter
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.UpgradeRate == 0 {
		c.UpgradeRate = DefaultUpgradeRate
	}
	if c.UpgradeBurst <= 0 {
		c.UpgradeBurst = DefaultUpgradeBurst
	}
	if c.MaxUnauthenticated <= 0 {
		c.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	if c.MaxUnauthenticatedPerAddress <= 0 {
		c.MaxUnauthenticatedPerAddress = DefaultMaxUnauthenticatedPerAddress
	}
	if c.PressureHelloTimeout <= 0 {
		c.PressureHelloTimeout = DefaultPressureHelloTimeout
	}
	if c.FailedHelloRate <= 0 {
		c.FailedHelloRate = DefaultFailedHelloRate
	}
	if c.FailedHelloBurst <= 0 {
		c.FailedHelloBurst = DefaultFailedHelloBurst
	}
	if c.FailedHelloGlobalRate <= 0 {
		c.FailedHelloGlobalRate = DefaultFailedHelloGlobalRate
	}
	if c.FailedHelloGlobalBurst <= 0 {
		c.FailedHelloGlobalBurst = DefaultFailedHelloGlobalBurst
	}
	if c.ConnectionLinesRate == 0 {
		c.ConnectionLinesRate = DefaultConnectionLinesRate
	}
	if c.ConnectionLinesBurst <= 0 {
		c.ConnectionLinesBurst = DefaultConnectionLinesBurst
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c
}

// Gateway is the trapos-cloud-gateway module. Create it with New, mount it with Mount, and
// call Shutdown before the process exits.
type Gateway struct {
	cfg      Config
	log      *slog.Logger
	registry *registry          // the sockets held here, and the cluster of replicas (nil: none)
	handlers map[string]handler // written by Handle before Mount, read-only after
	mounted  bool
	// started is when New made it (Uptime).
	started  time.Time
	upgrader websocket.Upgrader

	limits *limiter   // admission (connection and pre-hello slots) and wrong-secret budgets
	lines  *connLines // the connect and disconnect lines each address may write

	sockets atomic.Uint64 // the last Session.socket given

	// testHookBeforeDisconnectLine, set by a test before any socket connects, runs as a session
	// has ended, just before its disconnect line is written (the time its last steps took).
	testHookBeforeDisconnectLine func()
	// testHookBeforeRegister, set by a test before any socket connects, runs on a good hello
	// after its account's share of the connection cap was checked, just before its socket is
	// registered (on the socket's reader).
	testHookBeforeRegister func(Key)
	// testHookAfterRefusedHello, set by a test before any socket connects, runs on a registered
	// socket's hello as another computer, once its refusal is answered, before the hello ends
	// (on the socket's reader).
	testHookAfterRefusedHello func()

	versions clientVersions
	// linkedAnswers keeps ComputerCredentials's answers (linkedAnswerLife).
	linkedMu      sync.Mutex
	linkedAnswers map[string]linkedAnswer
	// cohostWarned is set once a computer's hello from this machine was logged (LoopbackAPI).
	cohostWarned atomic.Bool
	// revocations counts the revocations made or heard here (revokeCredentials,
	// revocationHeard), each counted before the sockets are walked: a hello that sees it
	// change while its credential is checked asks the store again (revokedDuringHello).
	revocations atomic.Uint64
	// recentRevocations are the credentials revoked or heard revoked here lately: a hello
	// with one reads it again through the store's latest read (revokedDuringHello), as its
	// own read may not see the revocation yet (a NATS cluster's follower that lags).
	recentRevocations recentRevocations
	// revocationChecks keeps a revocation heard on the bus to one store read at a time for
	// each credential (revocationHeard).
	revocationChecks revocationChecks

	mu       sync.Mutex // guards sessions and closing
	sessions map[*Session]struct{}
	closing  bool
	// running counts live sessions; Shutdown waits for it.
	running sync.WaitGroup
}

// New returns a Gateway that answers hello only; modules add request types with Handle.
// cluster is the other replicas that share their computers with this one (docs/scale-out.md);
// nil for a single process.
func New(cfg Config, logger *slog.Logger, cluster Cluster) *Gateway {
	cfg = cfg.withDefaults()
	registry := newRegistry(cluster, cfg.Clock)
	g := &Gateway{
		cfg:      cfg,
		log:      logger.With("module", ModuleName),
		registry: registry,
		sessions: make(map[*Session]struct{}),
		upgrader: websocket.Upgrader{
			// CC: Tweaked sends no Origin header, and a browser sends one on every upgrade:
			// serveWebSocket refuses a web page's, and says why, before this runs.
			CheckOrigin: func(r *http.Request) bool { return r.Header.Get("Origin") == "" },
			// Compression stays off: gorilla's compressed writer may split a message into
			// several frames, and CC keeps only the first frame of a fragmented message.
			EnableCompression: false,
			// Write buffers are borrowed per message: an idle computer holds none.
			WriteBufferPool: &writeBuffers,
			// Each socket keeps its read buffer for life; a small one is enough for what a
			// computer sends most (requests and answers of a few hundred bytes), and a bigger
			// frame is read past it straight into a pooled frame buffer (readLoop).
			ReadBufferSize: readBufferBytes,
			Error:          upgradeRefused,
		},
	}
	g.started = g.cfg.Clock.Now()
	g.limits = newLimiter(g.cfg, g.log)
	g.lines = newConnLines(g.cfg)
	g.handlers = map[string]handler{}
	if cluster != nil {
		cluster.Attach(local{g})
	}
	g.cfg.Metrics.registerConnected(registry, g.cfg.ClientVersion)
	g.cfg.Metrics.registerAdmission(g.limits)
	return g
}

// Uptime is how long this gateway has run (since New, on its clock): its computers reconnect
// in the seconds after a restart, and a not_connected with none connected yet says so
// (hostcomputer.Uptimer).
func (g *Gateway) Uptime() time.Duration { return g.cfg.Clock.Now().Sub(g.started) }

// Name implements the server's Module interface.
func (g *Gateway) Name() string { return ModuleName }

// Mount registers the gateway's one route, the WebSocket (it authenticates in-band with
// hello).
func (g *Gateway) Mount(routes *server.Routes) {
	g.mounted = true
	routes.HandleFunc("GET "+WebSocketPath, g.serveWebSocket)
	if g.cfg.Accounts != nil {
		routes.HandleAPIFunc("POST "+RevokePattern, g.serveRevoke)
	}
}

// Computers returns a snapshot of the connected (hello-completed) computers, this replica's
// and (with a Cluster) the other replicas', sorted by account and traposId.
func (g *Gateway) Computers() []Computer {
	sessions := g.registry.Sessions()
	remote := g.registry.Remote()
	out := make([]Computer, 0, len(sessions)+len(remote))
	for _, s := range sessions {
		out = append(out, s.Computer())
	}
	out = append(out, remote...)
	sortComputers(out)
	return out
}

// HealthReporter is implemented by a Cluster that has a state worth showing on /healthz (the
// NATS router: whether NATS is connected).
type HealthReporter interface {
	// HealthDetail is one line for /healthz's body, without a newline.
	HealthDetail() string
}

// PartialLister is implemented by a Cluster whose computer list can leave some out (the NATS
// router, cut off from NATS, knows only the sockets it holds).
type PartialLister interface {
	// PartialList is one line saying why the list is not whole, or "" when it is.
	PartialList() string
}

// Leaver is implemented by a Cluster that says goodbye for all its computers at once when
// the replica stops (the NATS router): Shutdown calls Leave before it closes any socket, and
// the Releases that follow withdraw nothing one by one.
type Leaver interface {
	Leave()
	// Leaving reports whether the replica has begun to leave: Leave was called, or the
	// cluster gave the replica up and it is about to stop (a replica of the same name is the
	// older). From then on it announces no computer, so the gateway takes none on.
	Leaving() bool
}

// Connected reports whether computer traposID of accountID is connected to this replica or
// (with a Cluster) another: a lookup by key, no walk over the computers.
func (g *Gateway) Connected(accountID, traposID string) bool {
	return g.registry.connected(Key{AccountID: accountID, TraposID: traposID})
}

// ConnectedComputer returns computer traposID of accountID when its socket is held, here or
// by another live replica (as its claim says it), and false when it is not: map lookups,
// cheap enough for a request a link session may send as often as it likes (the link module's
// own budget of codes for a connected computer, whose daemon and link session a load balancer
// may send to two replicas).
func (g *Gateway) ConnectedComputer(accountID, traposID string) (Computer, bool) {
	k := Key{AccountID: accountID, TraposID: traposID}
	if s := g.registry.Lookup(k); s != nil {
		return s.Computer(), true
	}
	if g.registry.cluster != nil {
		return g.registry.cluster.RemoteComputer(k)
	}
	return Computer{}, false
}

// Socket returns a context that ends when the socket of computer traposID of accountID,
// held on this replica, closes (its cause, as a handler's context's: why the gateway closed
// it, ErrShuttingDown at shutdown), or nil when this replica holds none: how a module ties
// what it keeps for a computer (the screen module's watch) to its socket before the
// computer sends it anything.
func (g *Gateway) Socket(accountID, traposID string) context.Context {
	if s := g.registry.Lookup(Key{AccountID: accountID, TraposID: traposID}); s != nil {
		return s.ctx
	}
	return nil
}

// ComputerCredentials reports what accountID holds of computer credentials (account.Holding):
// without one that is not revoked no computer of the account can connect. HoldsOne without an
// account store, where no computer needs one.
// An answer is kept linkedAnswerLife: a not_connected of an account with none of its
// computers connected asks it, the web console asks again every 2 s while it waits, and on the
// replicas' NATS store each ask lists every credential of the bucket.
func (g *Gateway) ComputerCredentials(ctx context.Context, accountID string) (account.Holding, error) {
	if g.cfg.Accounts == nil {
		return account.HoldsOne, nil
	}
	now := g.cfg.Clock.Now()
	g.linkedMu.Lock()
	kept, ok := g.linkedAnswers[accountID]
	g.linkedMu.Unlock()
	if ok && now.Sub(kept.at) < linkedAnswerLife {
		return kept.holding, nil
	}
	creds, err := g.cfg.Accounts.Store().Credentials(ctx, accountID)
	if err != nil {
		return account.HoldsOne, err
	}
	holding := account.HoldingOf(creds)
	g.linkedMu.Lock()
	defer g.linkedMu.Unlock()
	if g.linkedAnswers == nil || len(g.linkedAnswers) >= maxLinkedAnswers {
		g.linkedAnswers = map[string]linkedAnswer{} // the accounts that ask at once are few
	}
	g.linkedAnswers[accountID] = linkedAnswer{holding: holding, at: now}
	return holding, nil
}

// linkedAnswer is one ComputerCredentials answer and when it was read.
type linkedAnswer struct {
	holding account.Holding
	at      time.Time
}

const (
	// linkedAnswerLife is how long ComputerCredentials's answer for an account stands: a
	// computer linked within it is told, for that long, that its account has none, which
	// only words a not_connected (the hint says how to link one instead of to wait).
	linkedAnswerLife = 5 * time.Second
	// maxLinkedAnswers bounds the answers kept; past it they are dropped together.
	maxLinkedAnswers = 4096
)

// ConnectedAlone reports whether computer traposID is connected in account accountID and in
// no other, on this replica or (with a Cluster) another: Connected and no other account's, in
// one lookup, without a walk over the computers.
func (g *Gateway) ConnectedAlone(accountID, traposID string) bool {
	return g.registry.connectedAlone(accountID, traposID)
}

// AccountsOf returns the accounts in which computer traposID is connected, on this replica or
// (with a Cluster) another, sorted; it walks this replica's own sockets only.
func (g *Gateway) AccountsOf(traposID string) []string {
	out := g.registry.accountsOf(traposID)
	slices.Sort(out)
	return out
}

// RelabelledIn returns the accounts in which computer traposID, connected in none, was
// relabelled within RelabelFollowWindow (here, or on another replica that said so), sorted:
// an admin naming it is answered from the one account that has it, as for a connected one.
func (g *Gateway) RelabelledIn(traposID string) []string {
	out := g.registry.relabels.accountsOf(traposID)
	slices.Sort(out)
	return out
}

// isClosing reports whether Shutdown has begun.
func (g *Gateway) isClosing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closing
}

// stopping reports whether the gateway takes no computer on any more: Shutdown has begun, or
// its replica is leaving the cluster (Leaver.Leaving).
func (g *Gateway) stopping() bool {
	if g.isClosing() {
		return true
	}
	l, ok := g.registry.cluster.(Leaver)
	return ok && l.Leaving()
}

// HealthDetail implements the server's health detail hook: the registry's line, or "" when it
// has none.
func (g *Gateway) HealthDetail() string {
	if h, ok := g.registry.cluster.(HealthReporter); ok {
		return h.HealthDetail()
	}
	return ""
}

// PartialList is why Computers may leave computers out (PartialLister), or "" when it is
// the whole list.
func (g *Gateway) PartialList() string {
	if p, ok := g.registry.cluster.(PartialLister); ok {
		return p.PartialList()
	}
	return ""
}

// Shutdown closes every socket with 1001 (going away), fails their pending requests with
// not_connected, refuses new sockets, and waits for every socket goroutine to end. If ctx
// ends first, remaining connections are cut without a close handshake. A Cluster that is a
// Leaver is told first.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	g.closing = true
	sessions := make([]*Session, 0, len(g.sessions))
	for s := range g.sessions {
		sessions = append(sessions, s)
	}
	g.mu.Unlock()

	if l, ok := g.registry.cluster.(Leaver); ok {
		l.Leave()
	}
	for _, s := range sessions {
		s.closeForShutdown()
	}
	done := make(chan struct{})
	go func() {
		g.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		g.stopWarnTimers()
		g.log.Info("closed every socket: going away", "sockets", len(sessions))
		return nil
	case <-ctx.Done():
	}
	for _, s := range sessions {
		_ = s.conn.Close() // unblocks the reader and writer at once
	}
	<-done
	g.stopWarnTimers()
	return fmt.Errorf("gateway shutdown: cut %d socket(s) without a close handshake: %w", len(sessions), ctx.Err())
}

// stopWarnTimers stops the warnings' end-of-minute timers (warnBurst's), writing their counts
// now: one wrote its line up to a minute after the gateway's last ("stopped"), or never, its
// count lost, when the process ended first. Called once every socket has ended, as no further
// burst line can come.
func (g *Gateway) stopWarnTimers() { g.limits.warns.t.Stop() }

// notAWebSocket answers a request to the WebSocket's path that is no WebSocket: the address an
// operator opens in a browser from the "computers connect here" line, which said only "Bad
// Request".
const notAWebSocket = "this is trap-sandbox's WebSocket for in-game computers, not a web page: a computer connects here once its client is installed (wget run http://<this gateway>/trapos/install, docs/user-guide.md); the web console is at /console/"

// upgradeLost answers, and is the warning about, a computer's WebSocket handshake that reached
// the gateway without its Upgrade or Connection: upgrade header (Sec-WebSocket-Key came, so a
// client asked for a WebSocket): both are hop-by-hop, and a reverse proxy in front passes them
// on only when told to, nginx not by default. Every computer behind it is refused, and CC shows
// its player only "400 Bad Request".
const upgradeLost = "a WebSocket handshake reached the gateway without its Upgrade or Connection: upgrade header: a reverse proxy in front of the gateway dropped them, as nginx does unless told; pass them on (nginx: proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection $connection_upgrade; docs/reverse-proxy.md)"

// upgradeWasLost reports whether r asked for a WebSocket (Sec-WebSocket-Key) without the headers
// that make it an upgrade.
func upgradeWasLost(r *http.Request) bool {
	return r.Header.Get("Sec-Websocket-Key") != "" && !websocket.IsWebSocketUpgrade(r)
}

// webPageRefused is the answer to a WebSocket upgrade with an Origin header: a browser's.
func webPageRefused(origin string) string {
	return "a web page cannot connect as a computer (Origin " + clip(origin) + "): computers send no Origin header " +
		"(a program that opens this socket with http.websocket must not set one)"
}

// upgradeRefused is the Upgrader's answer to a request it cannot upgrade, gorilla's own
// (the status, Sec-WebSocket-Version) with what to do when it was no WebSocket at all.
func upgradeRefused(w http.ResponseWriter, r *http.Request, status int, reason error) {
	w.Header().Set("Sec-Websocket-Version", "13")
	text := http.StatusText(status)
	switch {
	case upgradeWasLost(r):
		text += ": " + upgradeLost
	case !websocket.IsWebSocketUpgrade(r):
		text += ": " + notAWebSocket
	}
	http.Error(w, text, status)
}

// readBufferBytes is a socket's read buffer (gorilla's default, net/http's 4 KiB, was the
// largest thing an idle computer held).
const readBufferBytes = 512

// writeBuffers is the Upgrader's WriteBufferPool (one pool per write buffer size, the default).
var writeBuffers sync.Pool

// serveWebSocket upgrades one computer's connection and serves it, in a goroutine of its own,
// until it closes. The handler returns at once so that net/http drops the buffers and the
// response it keeps for a connection while its handler runs (~10 KiB per idle computer).
func (g *Gateway) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if g.stopping() {
		http.Error(w, "the gateway is shutting down", http.StatusServiceUnavailable)
		return
	}
	// The client's address (behind a trusted proxy, the one it names) is what the limits
	// count and the computers list shows; the trust checks below stay on the TCP peer.
	remote := server.ClientAddr(r)
	if origin := r.Header.Get("Origin"); origin != "" {
		// A page in the host user's browser (or a player's) reaches this socket as well as a
		// computer does; on a gateway without a password it would take the place of the
		// player's computer of the same id and answer the host for it. It takes no connection
		// slot: refused before one.
		g.limits.warns.warn("refused a computer socket opened by a web page: computers send no Origin header, browsers always do",
			remote, "origin", clip(origin))
		http.Error(w, webPageRefused(origin), http.StatusForbidden)
		return
	}
	if upgradeWasLost(r) {
		g.limits.warns.warn(upgradeLost, remote)
	}
	slot := g.limits.admit(remote)
	if slot == nil {
		http.Error(w, fmt.Sprintf("the gateway is full (%d connections); retry later", g.cfg.MaxConnections),
			http.StatusServiceUnavailable)
		return
	}
	conn, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		// The upgrader has already answered with an HTTP error.
		g.log.Debug("websocket upgrade failed", "remote", remote, "err", clip(err.Error()))
		g.limits.release(slot)
		return
	}
	s := newSession(g, conn, remote, slot)
	// A reverse proxy on this machine connects from loopback for clients anywhere: its
	// sockets say nothing of where the Minecraft server runs (and the API refuses what it
	// forwards). A socket through the computers-only port reached no API.
	s.loopbackOnAPIPort = server.IsLoopback(r.RemoteAddr) && server.ForwardedBy(r) == "" && !server.ViaComputersPort(r)

	g.mu.Lock()
	if g.closing || !g.limits.bind(slot, s) {
		code, reason, timeout := CloseGoingAway, "going away", g.cfg.WriteTimeout
		if !g.closing {
			code, reason, timeout = CloseNoHello, evictReason, evictCloseTimeout // evicted while its upgrade ran
		}
		g.mu.Unlock()
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(timeout))
		_ = conn.Close()
		g.limits.release(slot)
		return
	}
	g.sessions[s] = struct{}{}
	g.running.Add(1)
	g.mu.Unlock()

	go func() {
		defer g.running.Done()
		defer g.socketEnded(s)
		s.run()
	}()
}

// socketEnded gives back what the socket's slot holds and forgets its session.
func (g *Gateway) socketEnded(s *Session) {
	g.limits.release(s.slot)
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.sessions, s)
}
