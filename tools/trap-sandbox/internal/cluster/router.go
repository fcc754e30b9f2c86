// Package cluster lets several gateway replicas behind one address act as one gateway: its
// Router is the gateway.Cluster that spans them over NATS (docs/scale-out.md).
//
// The seam with the gateway is narrow: the gateway keeps the sessions of its own sockets and
// tells the Router which computers it holds (Claim after a hello, Release when the socket
// closes, each with the hold number the gateway gave it); the Router never sees a session. What
// the Router asks of its replica goes through gateway.Local, by computer: answer a routed
// request (Serve), close a socket that a later claim elsewhere replaced (Evict, with the hold
// it judged, so a newer socket of the same computer here is left alone), and check a
// revocation heard on the bus (RevocationHeard). The Router calls Local without holding its
// own lock, since Evict ends in Release.
//
//   - Routing: each replica answers on its own subjects (trapos.replica.<replica>.>, see
//     subject.go). A host request on a replica that does not hold the computer's socket is a
//     NATS request to the holder's subject, the holder being named by the computer's claim;
//     the answer counts only if it names that replica. No live holder means not_connected at
//     once; a holder that dies while requests wait on it fails them at once (routing.go).
//   - Newest wins: each hello writes a claim into the JetStream key-value bucket
//     trapos_computers. The bucket's revision numbers give every write one total order, so of
//     two hellos for one computer on two replicas the one with the higher revision wins, and
//     the other replica closes its socket with 4009. A claim by a replica that is not alive
//     (no heartbeat) is not believed until it is.
//   - Presence: every replica writes a heartbeat into the bucket trapos_replicas; the computer
//     list is this replica's sessions plus the claims of replicas heard from within ReplicaTTL.
//     A heartbeat says the settings every replica must share; a replica logs and counts those
//     of the others that differ from its own (settings.go).
//
// The replicas trust whatever is written on those subjects and buckets: the NATS account
// fences them (docs/scale-out.md, Security). Without NATS a replica keeps serving the computers
// whose sockets it holds.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/protocol"
)

// Names of the JetStream key-value buckets; an operator may create them beforehand (e.g. with
// more stream replicas in a NATS cluster) and the router uses them as they are.
const (
	// ClaimsBucket maps <account>.<traposId> to the claim of the replica holding the socket.
	ClaimsBucket = "trapos_computers"
	// ReplicasBucket maps each replica's name to its latest heartbeat.
	ReplicasBucket = "trapos_replicas"
)

// Defaults for Config.
const (
	// DefaultHeartbeatInterval is how often a replica says it is alive.
	DefaultHeartbeatInterval = 5 * time.Second
	// DefaultReplicaTTL is how long a replica counts as alive after its last heartbeat: a dead
	// replica's computers drop out of every list within it. Three heartbeats fit in it, so one
	// or two lost ones do not drop a live replica.
	DefaultReplicaTTL = 15 * time.Second
	// DefaultOpTimeout bounds one key-value read or write (a claim in the hello path, a
	// heartbeat). A hello does not wait longer than this for NATS.
	DefaultOpTimeout = 2 * time.Second
	// DefaultMaxBusAnswers bounds the routed requests and relayed messages a replica answers
	// at once for the others, each in a goroutine of its own: whoever can publish on its
	// subjects made one for each message, as fast as NATS delivered them. Past it a message is
	// answered busy at once. The asking replicas' own hosts' requests are far fewer.
	DefaultMaxBusAnswers = 4096
)

// maxRevocationChecks bounds the revocations heard on the bus being checked at once (each
// may read the account store); the next waits on the subscription's goroutine, in NATS's
// pending buffer behind it, so none is dropped by the router.
const maxRevocationChecks = 8

// Config configures a Router. Zero durations mean the defaults.
type Config struct {
	// Replica is this replica's name; it must be unique among the replicas on one NATS.
	Replica string
	// HeartbeatInterval and ReplicaTTL: see the defaults. ReplicaTTL must be at least twice
	// HeartbeatInterval.
	HeartbeatInterval time.Duration
	ReplicaTTL        time.Duration
	// OpTimeout bounds one key-value operation (or request on NATS), on Clock.
	OpTimeout time.Duration
	// MaxBusAnswers bounds the routed requests and relayed messages answered at once (zero:
	// DefaultMaxBusAnswers).
	MaxBusAnswers int
	// Clock is the time of the liveness decisions (when a heartbeat arrived, whether it is
	// older than ReplicaTTL), of the heartbeat timer and of OpTimeout; nil means the wall
	// clock. It is the gateway's clock type (internal/clock): tests move it instead of
	// waiting, for NATS that does not answer too.
	Clock clock.Clock
	// Registerer receives the router's metrics (label them with the replica); nil: none.
	Registerer prometheus.Registerer
	// Settings are this replica's settings that every replica must share, as its heartbeat
	// says them (settings.go); the fields left empty are neither said nor judged.
	Settings Settings
}

func (c Config) withDefaults() (Config, error) {
	if c.Replica == "" {
		return c, errors.New("a replica needs a name")
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.ReplicaTTL <= 0 {
		c.ReplicaTTL = DefaultReplicaTTL
	}
	if c.ReplicaTTL < 2*c.HeartbeatInterval {
		return c, fmt.Errorf("the replica TTL (%s) must be at least twice the heartbeat interval (%s)", c.ReplicaTTL, c.HeartbeatInterval)
	}
	if c.OpTimeout <= 0 {
		c.OpTimeout = DefaultOpTimeout
	}
	if c.MaxBusAnswers <= 0 {
		c.MaxBusAnswers = DefaultMaxBusAnswers
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c, nil
}

// opContext is ctx bounded by OpTimeout on the router's clock, for one key-value operation or
// request on NATS, and ended, with errNATSLost (opError), if the NATS connection is lost
// meanwhile: its answer would have come on that connection, and nats.go keeps waiting for it
// after a reconnection. Without that, a heartbeat written as the connection dropped held
// beatMu for OpTimeout, and the reconnection's heartbeat, its rewatch and its claims written
// again waited behind it (TestAHeartbeatWrittenAsNATSIsLostEndsThen).
// On the wall clock the bound is context.WithTimeout; a test's clock ends it when the test
// moves it past OpTimeout. There it has no deadline, so JetStream bounds its own operations
// by its default too (5 s of the wall clock): one NATS never answers ends then if the test
// moves no clock. Call cancel when done.
func (r *Router) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	r.linkMu.Lock()
	link := r.link
	r.linkMu.Unlock()
	ctx, endWithLink := context.WithCancelCause(ctx)
	stopFollowing := context.AfterFunc(link, func() { endWithLink(context.Cause(link)) })
	ctx, cancel := clock.WithTimeout(ctx, r.cfg.Clock, r.cfg.OpTimeout)
	return ctx, func() {
		cancel()
		stopFollowing()
		endWithLink(context.Canceled)
	}
}

// errNATSLost ends the operations on NATS under way as the connection is lost (opContext).
var errNATSLost = errors.New("the NATS connection was lost before NATS answered")

// linkLost ends the operations on NATS under way (opContext): the connection they were sent
// on is lost. Those begun from here on wait for their answers on the next one.
func (r *Router) linkLost() {
	r.linkMu.Lock()
	defer r.linkMu.Unlock()
	r.dropLink(errNATSLost)
	r.link, r.dropLink = context.WithCancelCause(context.Background())
}

// opError is err, from an operation under ctx (opContext): errNATSLost when the operation
// ended because the NATS connection was lost, where nats.go says "context canceled".
func opError(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), errNATSLost) {
		return errNATSLost
	}
	return err
}

// held is a computer whose socket this replica holds, as the gateway claimed it.
type held struct {
	c          gateway.Computer // at its hello: what its claim says
	credential string
	// hold is the gateway's number for this socket (Claim): a later socket of the same
	// computer here has another, and Release or Evict of an older one leaves it alone.
	hold uint64
	// rev is the claim's revision in ClaimsBucket; 0 while the claim is being written or
	// could not be (NATS unreachable).
	rev uint64
	// gone: the claim of revision rev is no longer in ClaimsBucket (found missing, or another
	// claim found in its place, after a reconnection: reclaim), so every claim of the computer
	// there now was written after it. Revisions do not tell so when NATS has lost the bucket
	// (restarted without its store): the new one numbers its writes from 1 again. Cleared when
	// a claim of the socket's is written or found again (rev changes then).
	gone bool
	// unannounced: the claim could not be written, or checked after a reconnection, while NATS
	// was connected (JetStream over its limits, electing a leader), or the hello, made while
	// NATS was away, was found earlier than another replica's (offline); the other replicas may
	// not find the computer. It is tried again at every heartbeat tick (retryClaims) and
	// cleared once the claim is written or found (claimedAt).
	unannounced bool
	// over is the revision of the other replica's claim of the computer that this replica knew
	// of at the hello (0: none): a hello whose claim could not be written (rev 0, unannounced)
	// is later than that claim only, and any other claim of the computer was written after it.
	over uint64
	// offline: the hello came while NATS was unreachable, and its claim has not been written
	// since. Another replica may have served a later hello of the computer meanwhile, unknown
	// here, so the claim is written when NATS is back over the one the hello replaced only, or
	// over a claim of an earlier hello by hello time (claimOver); until then no claim closes the
	// socket. Cleared once the claim is written (claimedAt), or found earlier than another.
	offline bool
}

func (h *held) key() gateway.Key {
	return gateway.Key{AccountID: h.c.AccountID, TraposID: h.c.TraposID}
}

// claimedBefore reports whether h's claim was written before the claim of revision rev: h has
// a claim (not one being written), and it is the earlier revision, or gone from the bucket; or
// h's claim could not be written while NATS was connected, and rev is another claim than the
// one h's hello replaced. A hello made while NATS was away is ordered when its claim is written
// (claimOver), by hello time where revisions cannot.
func (h *held) claimedBefore(rev uint64) bool {
	if h.rev == 0 {
		return h.unannounced && !h.offline && rev != h.over
	}
	return h.gone || h.rev < rev
}

// claimedAt records rev as the revision of h's claim, written or found in the bucket now.
func (h *held) claimedAt(rev uint64) {
	h.rev, h.gone, h.unannounced, h.offline = rev, false, false, false
}

// Router is the gateway.Cluster of a replica among several. Create it with New, give it to
// gateway.New (which attaches the replica's gateway.Local), and Close it after the gateway's
// Shutdown.
type Router struct {
	cfg      Config
	log      *slog.Logger
	nc       *nats.Conn
	claims   jetstream.KeyValue
	js       jetstream.JetStream // for a claim's withdrawal that says why (withdrawClaimSaying)
	replicas jetstream.KeyValue
	metrics  *metrics
	started  time.Time          // by cfg.Clock; sweep counts a replica never heard from from here
	instance string             // this process's own id, in its heartbeat: a twin has another (twin.go)
	own      string             // replicaSubjects(cfg.Replica): the prefix of this replica's subjects
	sub      *nats.Subscription // this replica's subjects (serve); set by open
	revSub   *nats.Subscription // RevocationSubject (revocationHeard); set by open
	// applyClaim is claimChanged (newRouter: a test may hold it).
	applyClaim func(jetstream.KeyValueEntry)
	// failed is closed, once (failOnce), when the router gives up for good; failErr says why
	// (Failed, Err).
	failed   chan struct{}
	failOnce sync.Once
	failErr  error
	// relayHandlers are the modules' handlers of relayed messages, by module (relay.go);
	// guarded by mu.
	relayHandlers map[string]RelayHandler
	// twinsSeen counts the twins seen running under this replica's name, each of which gives
	// it up to this one, the older (twin.go; metrics).
	twinsSeen atomic.Int64
	// busyAnswers counts the messages from the bus answered busy: every answer slot was taken
	// (spawnAnswer; metrics).
	busyAnswers atomic.Int64

	// ctx ends the router's background work and the routed requests it serves.
	ctx    context.Context
	cancel context.CancelFunc
	// link ends, with errNATSLost, when the NATS connection is lost (linkLost), and with it
	// every operation on NATS begun before (opContext); dropLink ends it. Guarded by linkMu.
	linkMu   sync.Mutex
	link     context.Context
	dropLink context.CancelCauseFunc
	// work counts the router's goroutines: watchers, heartbeats, routed requests being
	// answered, claim deletes. Close waits for it.
	work sync.WaitGroup
	// answerSlots holds a token for each routed request or relayed message being answered
	// (cfg.MaxBusAnswers), revocationSlots one for each revocation being checked.
	answerSlots     chan struct{}
	revocationSlots chan struct{}

	watchMu  sync.Mutex // guards watchers; held while they are (re)started or stopped
	watchers []*watch
	// rewatchMu is held while a rewatch runs: a reconnection's and a heartbeat tick's
	// (rewatchIfUnwatched) one after the other, never interleaved, which would leave the
	// watchers the first started running unstopped.
	rewatchMu sync.Mutex

	beatMu sync.Mutex // held while the heartbeat is written or deleted (Leave)
	// tickMu is held while a heartbeat tick runs (heartbeatLoop): its heartbeat and the work
	// after it. A test that holds it (then beatMu) knows no tick is at work until it lets go.
	tickMu sync.Mutex
	// lastTick is when the last heartbeat tick began (zero before the first); guarded by tickMu.
	lastTick time.Time

	mu       sync.Mutex // guards the fields below
	closing  bool
	leaving  bool // the replica is stopping: Leave has said goodbye (presence.go)
	left     bool // Leave was called: computers' lifelines end with gateway.ErrShuttingDown
	ready    bool // the claims watcher has applied the bucket's contents at its start
	held     map[gateway.Key]*held
	remote   remoteSet            // the other replicas' computers (remote.go)
	lastSeen map[string]time.Time // replica name → when its last heartbeat arrived, or was deleted
	stopped  map[string]bool      // replicas whose last heartbeat was deleted (a clean stop, or a purge)
	older    map[string]bool      // replicas whose heartbeat lacks closesRemoved (presence.go): they ignore a removed account's credentials
	noRelays map[string]bool      // replicas whose heartbeat lacks relays (presence.go): they answer no relayed message
	// logged holds the other replicas last logged as alive, so that each one's coming, stop
	// and silence is one line of the log (presence.go).
	logged map[string]bool
	// lifelines are the contexts the router ends when a computer's socket on another replica,
	// or a replica, is gone (relay.go).
	lifelines map[*lifeline]struct{}
	// unreadable holds the names whose entry in ReplicasBucket is not a heartbeat (presence.go),
	// each logged once while it stays so.
	unreadable map[string]bool
	pending    map[uint64]*pendingRoute // routed requests this replica waits on, by id
	// answering holds the routed requests this replica answers, by their reply subject, so
	// that their asker can give them up (kindCancel).
	answering map[string]*answering
	nextID    uint64                // the last id given to a routed request
	probing   map[string]bool       // replicas being asked whether they are on NATS
	sweeping  bool                  // a sweep is running (presence.go)
	retrying  bool                  // claims not announced are being tried again (retryClaims)
	doubted   map[gateway.Key]doubt // later claims by replicas not alive (claims.go)
	markers   map[string]marker     // ClaimsBucket's delete markers by key, until purged (markers.go)
	local     gateway.Local         // the replica's gateway; nil until Attach
	// seenOwnBeat: this instance's own heartbeat has come back through the watcher; a heartbeat
	// under its name by another instance after that is a twin's (twin.go).
	seenOwnBeat bool
	twins       map[string]bool // the instances of the twins that yielded to this replica, each logged once
	// unwatched: the last rewatch failed, so the router watches neither bucket until one
	// succeeds (rewatchIfUnwatched, at each heartbeat tick); rewatching: a tick's is running.
	unwatched, rewatching bool
	// rechecking: the credentials held here are being checked against the account store for
	// revocations the replica missed (revocationsMissed); recheckAgain: a miss was reported
	// meanwhile, so another check follows; droppedChecked: what revSub.Dropped said as the
	// last check began (a drop since is a miss too).
	// recheckAway: one of those misses was the replica's time away from NATS, which the
	// check's end logs when it asked about any credential.
	rechecking     bool
	recheckAgain   bool
	recheckAway    bool
	droppedChecked int
	// dropsLogged writes revocationsDroppedLine once a minute: a flood makes NATS drop, and
	// a check start, again and again (played: 243 lines in 7 s).
	dropsLogged *logthrottle.Throttle
	// settingsOf holds the Settings of each other replica's last heartbeat, settingsLogged the
	// value of each of its settings last logged as differing from this replica's (settings.go).
	settingsOf     map[string]Settings
	settingsLogged map[loggedSetting]string
}

// New sets up the buckets (creating them when missing), starts watching them and writes the
// first heartbeat. The router owns nc from here on: Close closes it.
func New(ctx context.Context, nc *nats.Conn, cfg Config, logger *slog.Logger) (*Router, error) {
	return newRouter(ctx, nc, cfg, logger, nil)
}

// newRouter is New; beforeClaim, when set, runs before the watcher applies each claim (a test
// holds the claims' initial read with it).
func newRouter(ctx context.Context, nc *nats.Conn, cfg Config, logger *slog.Logger, beforeClaim func()) (*Router, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Router{
		cfg:       cfg,
		log:       logger.With("component", "cluster"),
		nc:        nc,
		started:   cfg.Clock.Now(),
		instance:  newInstanceID(),
		failed:    make(chan struct{}),
		own:       replicaSubjects(cfg.Replica),
		held:      make(map[gateway.Key]*held),
		remote:    newRemoteSet(),
		lastSeen:  make(map[string]time.Time),
		stopped:   make(map[string]bool),
		older:     make(map[string]bool),
		noRelays:  make(map[string]bool),
		logged:    make(map[string]bool),
		lifelines: make(map[*lifeline]struct{}),

		relayHandlers: make(map[string]RelayHandler),
		unreadable:    make(map[string]bool),
		pending:       make(map[uint64]*pendingRoute),
		answering:     make(map[string]*answering),
		probing:       make(map[string]bool),
		doubted:       make(map[gateway.Key]doubt),
		markers:       make(map[string]marker),
		twins:         make(map[string]bool),

		settingsOf:     make(map[string]Settings),
		settingsLogged: make(map[loggedSetting]string),

		answerSlots:     make(chan struct{}, cfg.MaxBusAnswers),
		revocationSlots: make(chan struct{}, maxRevocationChecks),
	}
	r.applyClaim = r.claimChanged
	r.dropsLogged = logthrottle.New(r.log, cfg.Clock) // before open starts the heartbeat ticks
	if beforeClaim != nil {
		r.applyClaim = func(e jetstream.KeyValueEntry) { beforeClaim(); r.claimChanged(e) }
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.link, r.dropLink = context.WithCancelCause(context.Background())
	if err := r.open(ctx); err != nil {
		r.cancel()
		return nil, err
	}
	r.metrics = newMetrics(cfg.Registerer, r)
	logErr := nc.ErrorHandler()
	nc.SetErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
		if sub != nil && sub == r.revSub && errors.Is(err, nats.ErrSlowConsumer) {
			// One line for the whole flood (revocationsMissed), not one for each time
			// NATS's buffer of the subscription overflows again.
			r.revocationsMissed(missDropped)
			return
		}
		if logErr != nil {
			logErr(nc, sub, err)
		}
	})
	nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) {
		if r.isClosing() {
			return // Close closed the connection: nothing was lost
		}
		r.log.Warn("NATS connection lost: serving only this replica's computers until it is back", "err", err)
		r.linkLost()
		r.failRoutesOnLostNATS()
	})
	nc.SetReconnectHandler(func(nc *nats.Conn) {
		r.log.Info("NATS connection back", "url", nc.ConnectedUrlRedacted())
		r.spawn(func() {
			r.ensureBuckets()
			if err := r.heartbeat(r.ctx); err != nil { // alive again at once, not at the next tick
				r.log.Debug("heartbeat failed", "err", err)
			}
			r.rewatch()
			r.reclaim()
			r.revocationsMissed(missAway)
		})
	})
	return r, nil
}

// open binds the buckets, answers on this replica's subjects, waits for the buckets' initial
// contents and announces the replica.
func (r *Router) open(ctx context.Context) error {
	if err := r.checkNameFree(ctx); err != nil {
		return err
	}
	if nameChecked != nil {
		nameChecked(r.cfg.Replica)
	}
	js, err := jetstream.New(r.nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	r.js = js
	claims, replicas := r.bucketConfigs()
	if r.claims, err = bucket(ctx, js, claims); err != nil {
		return err
	}
	if r.replicas, err = bucket(ctx, js, replicas); err != nil {
		return err
	}
	if r.sub, err = r.nc.Subscribe(r.own+">", r.serve); err != nil {
		return fmt.Errorf("subscribe %s>: %w", r.own, err)
	}
	if r.revSub, err = r.nc.Subscribe(RevocationSubject, r.revocationHeard); err != nil {
		_ = r.sub.Unsubscribe()
		return fmt.Errorf("subscribe %s: %w", RevocationSubject, err)
	}
	unsubscribe := func() {
		_ = r.sub.Unsubscribe()
		_ = r.revSub.Unsubscribe()
	}
	if err := r.startWatchers(ctx); err != nil {
		unsubscribe()
		return err
	}
	if err := r.heartbeat(ctx); err != nil {
		unsubscribe()
		r.stopWatchers()
		return err
	}
	r.spawn(r.heartbeatLoop)
	return nil
}

// checkNameFree makes sure that no running replica answers under this replica's name, before
// this one touches anything of that name. Two replicas of one name take each other's claims for
// their own: the newcomer would delete the running one's claims at once (claimChanged deletes
// those of a previous run), and each one's goodbye would take the other out of every list. A
// replica that crashed or was stopped answers nothing any more: NATS dropped its
// subscriptions with its connection, so it is restarted under its name at once. Two replicas
// of one name started at the same moment both pass this check: they find each other once
// running, and the newer stops then (twin.go).
func (r *Router) checkNameFree(ctx context.Context) error {
	ctx, cancel := r.opContext(ctx)
	defer cancel()
	_, err := r.nc.RequestWithContext(ctx, aliveSubject(r.cfg.Replica), nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil
	case err == nil:
		return fmt.Errorf("the replica name %q is taken: a running replica answers under it on NATS. "+nameFix, r.cfg.Replica)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("the replica name %q may be taken: a client listens under it on NATS but did not answer within %s (a hung replica of that name?). "+nameFix,
			r.cfg.Replica, r.cfg.OpTimeout)
	default:
		return fmt.Errorf("check that no running replica is named %q: %w", r.cfg.Replica, err)
	}
}

// bucketConfigs are the router's two buckets as it creates them.
func (r *Router) bucketConfigs() (claims, replicas jetstream.KeyValueConfig) {
	return jetstream.KeyValueConfig{Bucket: ClaimsBucket, History: 1,
			Description: "trap-sandbox: which gateway replica holds each computer's socket"},
		jetstream.KeyValueConfig{Bucket: ReplicasBucket, History: 1, TTL: r.cfg.ReplicaTTL,
			Description: "trap-sandbox: heartbeats of the gateway replicas"}
}

// ensureBuckets creates the router's buckets again if NATS lost them (restarted without its
// store, -sd): what they hold, the heartbeats and the claims, the replicas write again once
// reconnected (heartbeat, reclaim). The handles bound at start stay valid: a bucket is found
// by its name.
func (r *Router) ensureBuckets() {
	ctx, cancel := r.opContext(r.ctx)
	defer cancel()
	js, err := jetstream.New(r.nc)
	if err != nil {
		r.log.Warn("cannot check the NATS buckets after reconnecting", "err", err)
		return
	}
	claims, replicas := r.bucketConfigs()
	for _, cfg := range []jetstream.KeyValueConfig{claims, replicas} {
		if _, err := js.KeyValue(ctx, cfg.Bucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
			continue
		}
		if _, err := bucket(ctx, js, cfg); err != nil {
			r.log.Warn("cannot create a NATS bucket again after reconnecting", "bucket", cfg.Bucket, "err", err)
			continue
		}
		r.log.Warn("NATS had lost a bucket (restarted without its store?): created it again", "bucket", cfg.Bucket)
	}
}

// bucket binds the key-value bucket cfg names, creating it if it does not exist.
func bucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, cfg.Bucket) // another replica created it just now
		}
	}
	switch {
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrNoResponders): // nothing answers the JetStream API
		return nil, fmt.Errorf("the NATS server has no JetStream, which the replicas need for the %s bucket: start nats-server with -js", cfg.Bucket)
	case err != nil:
		return nil, fmt.Errorf("key-value bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// startWatchers watches both buckets. It waits until the heartbeats at the start have been
// applied, so that the live replicas are known, for as long as ctx lets it (--nats-setup-timeout
// at start, OpTimeout after a reconnection: rewatch); the claims, one per computer of the whole
// cluster (100 000 take tens of seconds to read on a busy host), are read in the background:
// the replica serves its own computers meanwhile, routes by reading a claim it does not know
// yet (holder), and lists the other replicas' computers as they arrive (/healthz says so).
func (r *Router) startWatchers(ctx context.Context) error {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if err := r.ctx.Err(); err != nil {
		return err // closing: Close has stopped, or is about to stop, the watchers
	}
	replicasReady := make(chan struct{})
	replicas, err := r.watch(ctx, r.replicas, r.heartbeatArrived, r.heartbeatsCheckEvery(), func() { close(replicasReady) })
	if err != nil {
		return err
	}
	select {
	case <-replicasReady:
	case <-ctx.Done():
		replicas.stop()
		return fmt.Errorf("read the %s bucket: %w", ReplicasBucket, opError(ctx, ctx.Err()))
	}
	start := time.Now()
	claims, err := r.watch(ctx, r.claims, r.applyClaim, r.cfg.HeartbeatInterval, func() {
		r.mu.Lock()
		r.ready = true
		n := r.remote.len()
		r.mu.Unlock()
		r.log.Info("read the other replicas' computers", "computers", n, "took", time.Since(start).Round(time.Millisecond))
	})
	if err != nil {
		replicas.stop()
		return err
	}
	r.watchers = []*watch{claims, replicas}
	return nil
}

// heartbeatsCheckEvery is how often the watch of ReplicasBucket checks whether it has read the
// heartbeats at its start (startRead), until it has: more often than the wait for them lasts
// after a reconnection (OpTimeout, rewatch), so that a check comes within it. Checked each
// heartbeat interval (5 s), it came after that wait (2 s) had given up, and the replica then
// watched neither bucket until its next reconnection. The read needs the check only when the
// stream's last entries as the watch begins are removed before the server sends them, which
// the bucket's own rules hardly ever do: nothing purges it, a heartbeat replaced brings its
// newer one, and its TTL removes the oldest first, so the newest must be ReplicaTTL old (every
// replica silent, this one's heartbeat after reconnecting failed).
// TestAReplicaReadsTheHeartbeatsAgainWithinItsWaitAfterReconnecting provokes it. A check is
// one small read of NATS; a read that ends as the heartbeats come needs none.
func (r *Router) heartbeatsCheckEvery() time.Duration {
	return min(r.cfg.HeartbeatInterval, r.cfg.OpTimeout/2)
}

// rewatch starts the watchers anew after a reconnection: the server may have lost their
// consumers (a restarted NATS), and the library would notice only after missing heartbeats for
// ten seconds. The claims are read again from the start, so a withdrawal missed meanwhile
// does not linger. When it fails, the router watches neither bucket: the heartbeat ticks try
// again (rewatchIfUnwatched).
func (r *Router) rewatch() {
	r.rewatchMu.Lock()
	defer r.rewatchMu.Unlock()
	r.rewatchLocked()
}

// rewatchLocked is rewatch with rewatchMu held.
func (r *Router) rewatchLocked() {
	r.watchMu.Lock()
	r.stopWatchersLocked()
	r.watchMu.Unlock()
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	r.remote = newRemoteSet()
	r.mu.Unlock()
	// On the router's clock, as the watch's checks are (heartbeatsCheckEvery): the wait outlasts one.
	ctx, cancel := r.opContext(r.ctx)
	defer cancel()
	err := r.startWatchers(ctx)
	r.mu.Lock()
	failedBefore := r.unwatched
	r.unwatched = err != nil && !r.closing
	r.mu.Unlock()
	switch {
	case err != nil && r.ctx.Err() != nil: // closing
	case err != nil && failedBefore:
		r.log.Debug("cannot watch the NATS buckets again yet", "err", err)
	case err != nil:
		r.log.Warn(unwatchedLine, "err", err)
	case failedBefore:
		r.log.Info(rewatchedLine)
	}
}

// Log lines of a rewatch that failed, and of the one that then succeeded: between them the
// replica sees none of the other replicas' heartbeats and claims.
const (
	unwatchedLine = "cannot watch the NATS buckets again after reconnecting: until it does, this replica lists only its own computers " +
		"and hears no other replica's heartbeat (it takes them for dead after --nats-replica-ttl); trying again at every heartbeat"
	rewatchedLine = "watching the NATS buckets again: the other replicas' heartbeats and computers reach this replica"
)

// rewatchIfUnwatched runs at every heartbeat tick: after a rewatch that failed (NATS slow to
// answer as the replica reconnected, its JetStream not ready yet, a bucket lost), it tries
// again, in a goroutine of its own (a try waits up to OpTimeout), checking the buckets first
// as a reconnection does. The router watched neither bucket until its next reconnection: the
// others' heartbeats never came, so it took every other replica for dead, and their later
// claims of its computers closed none of its sockets. A try that finds the buckets watched
// when its turn comes (a reconnection's rewatch ran first and succeeded) does nothing: a
// second rewatch would stop the watchers just started and read every claim again, the other
// replicas' computers missing from the lists until it had.
func (r *Router) rewatchIfUnwatched() {
	r.mu.Lock()
	if !r.unwatched || r.rewatching {
		r.mu.Unlock()
		return
	}
	r.rewatching = true
	r.mu.Unlock()
	done := func() {
		r.mu.Lock()
		r.rewatching = false
		r.mu.Unlock()
	}
	if !r.spawn(func() {
		defer done()
		if rewatchRetrying != nil {
			rewatchRetrying(r.cfg.Replica)
		}
		r.rewatchMu.Lock()
		defer r.rewatchMu.Unlock()
		r.mu.Lock()
		unwatched := r.unwatched
		r.mu.Unlock()
		if !unwatched {
			return
		}
		r.ensureBuckets()
		r.rewatchLocked()
	}) {
		done()
	}
}

// rewatchRetrying, when a test sets it, runs as a heartbeat tick's try to watch the buckets
// again begins (rewatchIfUnwatched), with the replica's name; nil otherwise.
var rewatchRetrying func(replica string)

// watchersStopping, when a test sets it, is told each time a router stops its watchers (with
// the replica's name and whether its NATS connection is closed by then); nil otherwise.
var watchersStopping func(replica string, connClosed bool)

func (r *Router) stopWatchersLocked() {
	if watchersStopping != nil {
		watchersStopping(r.cfg.Replica, r.nc.IsClosed())
	}
	for _, w := range r.watchers {
		w.stop()
	}
	r.watchers = nil
}

// watch is one bucket watcher and the goroutine that applies its changes.
type watch struct {
	w    jetstream.KeyWatcher
	done chan struct{}
}

// stop ends the watcher and waits for its goroutine.
func (w *watch) stop() {
	_ = w.w.Stop()
	<-w.done
}

// watch feeds every change of kv to apply, in revision order, from a goroutine of its own.
// ready runs once the bucket's contents at the start have been applied: at nats.go's word, at
// the first change past them, or at the latest checkEvery after the last of them (startRead,
// checked every checkEvery until then: one small read of NATS).
func (r *Router) watch(ctx context.Context, kv jetstream.KeyValue, apply func(jetstream.KeyValueEntry), checkEvery time.Duration, ready func()) (*watch, error) {
	start, err := r.startOf(ctx, kv)
	if err != nil {
		return nil, err
	}
	w, err := kv.WatchAll(r.ctx) // the watch lives as long as the router: its context ends it
	if err != nil {
		return nil, fmt.Errorf("watch the %s bucket: %w", kv.Bucket(), err)
	}
	wt := &watch{w: w, done: make(chan struct{})}
	go func() {
		defer close(wt.done)
		check := r.cfg.Clock.NewTimer(checkEvery)
		defer check.Stop()
		checks := check.C()
		read := func() {
			ready()
			checks = nil // read: no more checks
		}
		var applied uint64 // the revision of the last change applied
		for {
			select {
			case e, ok := <-w.Updates():
				switch {
				case !ok:
					return
				case e == nil: // nats.go's word that the start is read
					if checks != nil {
						read()
					}
					continue
				}
				apply(e)
				applied = e.Revision()
				if checks != nil && applied >= start.last {
					read()
				}
			case <-checks:
				if r.startRead(start, applied) {
					read()
					continue
				}
				check.Reset(checkEvery)
			}
		}
	}()
	return wt, nil
}

// watchStart is a bucket as a watch of it began: its stream, and the stream's last sequence
// then. The watch has read the bucket's contents at its start once it has applied the
// changes up to that sequence.
type watchStart struct {
	stream   jetstream.Stream
	subjects string // the stream's subjects of the bucket's keys
	last     uint64
}

// startOf reads kv's stream before a watch of it begins.
func (r *Router) startOf(ctx context.Context, kv jetstream.KeyValue) (watchStart, error) {
	stream, err := r.js.Stream(ctx, "KV_"+kv.Bucket())
	if err != nil {
		return watchStart{}, fmt.Errorf("read the %s bucket's stream: %w", kv.Bucket(), err)
	}
	return watchStart{stream: stream, subjects: "$KV." + kv.Bucket() + ".>", last: stream.CachedInfo().State.LastSeq}, nil
}

// startRead reports whether a watch that began at start and has applied the changes up to
// revision applied has read the bucket's contents at its start: the stream holds no message
// of the bucket after applied up to start.last (the messages it holds come in order, so one
// after start.last means the rest was removed). nats.go's own word for it (a nil entry) counts
// the entries the consumer had pending at its creation, and each entry says how many are
// still pending as the server sends it: when the last entries of the start are purged after
// the entry before them was sent (purgeMarkers, while the server waits on the watcher's flow
// control) neither count ever comes true, and the word waited for as many later changes
// (TestAReplicaReadsTheClaimsWhenMarkersArePurgedAsItReadsThem provokes it). An answer from a
// stream replica that lags (a NATS cluster, direct get) may call the start read a moment
// early; only /healthz's line and the log say so. A bucket kept with a history of more than
// one revision holds older ones the watch never gets: its start is read by nats.go's word.
func (r *Router) startRead(start watchStart, applied uint64) bool {
	ctx, cancel := r.opContext(r.ctx)
	defer cancel()
	m, err := start.stream.GetMsg(ctx, applied+1, jetstream.WithGetMsgSubject(start.subjects))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return true
	case err != nil:
		r.log.Debug("cannot check whether a bucket watch has read the bucket", "err", err)
		return false // checked again at the watch's next check
	}
	return m.Sequence > start.last
}

func (r *Router) stopWatchers() {
	r.watchMu.Lock()
	r.stopWatchersLocked()
	r.watchMu.Unlock()
	r.cancel()
	r.work.Wait()
}

func (r *Router) isClosing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closing
}

// spawnAnswer is spawn for an answer to a message from the bus (a routed request, a relayed
// message), holding one of answerSlots while f runs. It reports whether f runs, and if not
// the error to answer with: busy while every slot is taken, not_connected once closing.
func (r *Router) spawnAnswer(f func()) *protocol.Error {
	select {
	case r.answerSlots <- struct{}{}:
	default:
		r.busyAnswers.Add(1)
		return protocol.Errorf(protocol.CodeBusy, "replica %s answers %d messages from the bus at once already; try again", r.cfg.Replica, r.cfg.MaxBusAnswers)
	}
	if !r.spawn(func() {
		defer func() { <-r.answerSlots }()
		f()
	}) {
		<-r.answerSlots
		return protocol.Errorf(protocol.CodeNotConnected, "replica %s is shutting down", r.cfg.Replica)
	}
	return nil
}

// spawn runs f in a goroutine that Close waits for; once closing, f does not run.
func (r *Router) spawn(f func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return false
	}
	r.work.Add(1)
	go func() {
		defer r.work.Done()
		f()
	}()
	return true
}

// Close stops the router after the gateway's Shutdown (which said goodbye, Leave, and ended
// every session): it stops serving routed requests, fails those it waits on, says goodbye if
// Shutdown did not, waits for its goroutines, and closes the NATS connection.
func (r *Router) Close() {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	r.closing = true
	for id := range r.pending {
		r.settleLocked(id, routedResponse{}, protocol.Errorf(protocol.CodeNotConnected, "replica %s is shutting down", r.cfg.Replica))
	}
	r.allLifelinesEndLocked("is shutting down")
	r.mu.Unlock()
	_ = r.sub.Unsubscribe()
	_ = r.revSub.Unsubscribe()
	r.cancel() // routed requests still being answered end now
	r.Leave()
	if !r.nc.IsConnected() {
		// Stopping a watcher deletes its consumer on the server, and while NATS is away that
		// waits out the JetStream API's timeout (seconds, per watcher). Closing the connection
		// first ends the watchers at once; the server drops their consumers by itself.
		r.nc.Close()
	}
	r.watchMu.Lock()
	r.stopWatchersLocked()
	r.watchMu.Unlock()
	r.work.Wait()
	r.nc.Close()
}

// Attach implements gateway.Cluster.
func (r *Router) Attach(local gateway.Local) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.local = local
}

// attached is the replica's gateway.Local (nil before Attach).
func (r *Router) attached() gateway.Local {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.local
}

// Claim implements gateway.Cluster: from now on routed requests for c are answered here, and
// the claim written into ClaimsBucket orders this hello among the replicas. The claim of a
// newer socket of the computer here (a higher hold) is kept: two hellos at once may have
// their claims arrive in either order.
func (r *Router) Claim(c gateway.Computer, credential string, hold uint64) {
	h := &held{c: c, credential: credential, hold: hold}
	r.mu.Lock()
	if cur := r.held[h.key()]; cur != nil && cur.hold > hold {
		r.mu.Unlock()
		return
	}
	if known, ok := r.remote.get(h.key()); ok {
		h.over = known.rev
	}
	r.held[h.key()] = h
	r.mu.Unlock()
	r.writeClaim(h)
}

// Release implements gateway.Cluster: if hold is still the computer's claim here, the replica
// stops answering for it and withdraws the claim (unless a newer one replaced it); once the
// replica is leaving, the claim is left for the others' sweep (Leave). The withdrawal of a
// computer that said bye says it (withdrawal), so that the other replicas tell a live
// screen's viewers what a single gateway tells them.
func (r *Router) Release(k gateway.Key, hold uint64, bye gateway.Bye) {
	r.mu.Lock()
	h := r.held[k]
	if h == nil || h.hold != hold {
		r.mu.Unlock()
		return
	}
	delete(r.held, k)
	rev, gone, leaving := h.rev, h.gone, r.leaving
	r.mu.Unlock()
	// A claim gone from the bucket is not withdrawn: after NATS lost the bucket, its revision
	// may be another claim's in the new one.
	if rev == 0 || gone || leaving {
		return
	}
	r.deleteClaim(claimKey(k), rev, bye)
}

// holds reports whether this replica holds k's socket, as its gateway claimed it.
func (r *Router) holds(k gateway.Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held[k] != nil
}

// Remote implements gateway.Cluster: the computers of the other live replicas. Their
// LastFrameAt is the time of their hello: frames are not announced across replicas. While
// this replica cannot reach NATS there are none: a request for one answers not_connected at
// once (notConnectedWithoutNATS), and the list says it holds only this replica's computers
// (PartialList), so the claims read before the link dropped are kept for its return but not
// listed (played: replica c cut off listed 5:küche of replica a for --nats-replica-ttl, under
// a header saying it listed only its own, and a ping of it answered not_connected).
func (r *Router) Remote() []gateway.Computer {
	if !r.nc.IsConnected() {
		return nil
	}
	return r.liveRemote()
}

// liveRemote is the computers the claims of the other live replicas name, as this replica
// last read them.
func (r *Router) liveRemote() []gateway.Computer {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]gateway.Computer, 0, r.remote.len())
	r.remote.all(func(traposID string, c remoteClaim) {
		if r.aliveLocked(c.replica(), now) {
			out = append(out, c.computer(traposID))
		}
	})
	return out
}

// RemoteAccounts implements gateway.Cluster: the accounts in which another live replica holds
// computer traposID, by one lookup (the claims are kept by traposId: remote.go).
func (r *Router) RemoteAccounts(traposID string) []string {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	r.remote.byTraposID(traposID, func(c remoteClaim) {
		if r.aliveLocked(c.replica(), now) {
			out = append(out, c.account())
		}
	})
	return out
}

// RemoteComputer implements gateway.Cluster: computer k as the claim of the live replica
// other than this one that holds its socket says it, by one lookup.
func (r *Router) RemoteComputer(k gateway.Key) (gateway.Computer, bool) {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.remote.get(k)
	if !ok || !r.aliveLocked(c.replica(), now) {
		return gateway.Computer{}, false
	}
	return c.computer(k.TraposID), true
}

// HealthDetail implements gateway.HealthReporter: the line /healthz shows.
func (r *Router) HealthDetail() string {
	if r.nc.IsConnected() {
		line := fmt.Sprintf("nats: connected (replica %s, %d replica(s) alive)", r.cfg.Replica, r.aliveReplicas())
		r.mu.Lock()
		ready, n := r.ready, r.remote.len()
		r.mu.Unlock()
		if !ready {
			line += fmt.Sprintf(", reading the other replicas' computers (%d so far)", n)
		}
		return line
	}
	return fmt.Sprintf("nats: disconnected (replica %s serves only its own computers until NATS is back)", r.cfg.Replica)
}

// PartialList implements gateway.PartialLister: while this replica cannot reach NATS, its
// computer list leaves out the other replicas' computers, and an empty one read as "none
// connected" while the others held theirs (played: replica a cut off, 7:kitchen on b).
func (r *Router) PartialList() string {
	if r.nc.IsConnected() {
		return ""
	}
	return fmt.Sprintf("replica %s cannot reach NATS: only the computers it holds are listed; see /healthz", r.cfg.Replica)
}

// claim is the value of a computer's entry in ClaimsBucket.
type claim struct {
	Replica        string    `json:"replica"`
	AccountID      string    `json:"accountId"`
	TraposID       string    `json:"traposId"`
	RemoteAddr     string    `json:"remoteAddr"`
	ConnectedSince time.Time `json:"connectedSince"`
	ClientVersion  string    `json:"clientVersion,omitempty"`
	// Credential is the selector of the computer's own credential ("" for the shared
	// password), so that any replica can revoke it (revocation.go).
	Credential string `json:"credential,omitempty"`
}

// withdrawal is the body of a claim's delete marker in ClaimsBucket, when the computer said
// bye: what it said (gateway.Bye), so that the others end a live screen watched through them
// with a single gateway's words (claimDeleted). In the marker itself, not in a write before
// it: with a history of 1, a watcher may never see a write that the marker replaced at once.
type withdrawal struct {
	Bye          string `json:"bye"`
	RelabelledTo string `json:"relabelledTo,omitempty"`
}

func encodeClaim(replica string, c gateway.Computer, credential string) []byte {
	b, _ := json.Marshal(claim{Replica: replica, AccountID: c.AccountID, TraposID: c.TraposID,
		RemoteAddr: c.RemoteAddr, ConnectedSince: c.ConnectedSince, ClientVersion: c.ClientVersion, Credential: credential})
	return b
}
