// Package screen is the gateway's screen module: it keeps live watches of the computers'
// screens for the host's viewers (the CLI's `trap-sandbox screen`, the web console). It answers
// the computers' screen.update requests (Register), keeps one watch per screen (a computer's
// own, or one of its monitors: docs/screen.md, Monitors) shared by all its viewers, and hands each viewer the newest screen when it asks for the next one, so
// a slow viewer skips frames and never holds up the computer or another viewer. See
// docs/screen.md.
//
// A watch starts (screen.watch, through the module's computer.Client, so accounts scope it
// like every other call) with its first viewer and stops (screen.unwatch) with its last;
// a screen.update of a watch the module no longer keeps is answered unknown_watch, which
// stops it on the computer. A watch also ends when the computer's socket closes: its viewers
// are told the computer went away, whether or not it sent an update.
//
// Under --nats a viewer may ask any replica: a computer whose socket another replica holds is
// watched through that replica's screen module, which passes the computer's screen.update
// requests on to the module that keeps the watch (relay.go).
package screen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Handlers is the table the module registers into; *gateway.Gateway implements it.
type Handlers interface {
	Handle(typ string, h protocol.RequestHandler)
	// Socket returns a context that ends when the socket of the computer held here closes
	// (its cause is the gateway's reason, as a handler's context's), or nil when none is.
	Socket(accountID, traposID string) context.Context
}

// Module keeps the watches. It is safe for concurrent use.
type Module struct {
	client  *computer.Client
	replica string // this gateway's replica name under --nats (OnReplica); "" for one gateway
	relay   Relay  // the other replicas' screen modules (OnReplica); nil for one gateway
	// socketOf is the gateway's Handlers.Socket (Register): a watch ends with the computer's
	// socket from its answer on, not from its first update only (a computer that leaves
	// before it draws would leave its viewers waiting). nil before Register.
	socketOf func(accountID, traposID string) context.Context

	mu      sync.Mutex
	watches map[string]*watch // by watchKey: the computer's account and traposId, and the monitor
	// relayed are the watches this module started, on computers whose sockets this replica
	// holds, for another replica's viewers, by watchKey (relay.go).
	relayed map[string][]*relayed

	// relayTimeout bounds the wait for another replica's answer to a screen.update passed on
	// (RelayTimeout, PassOnWithin); guarded by mu.
	relayTimeout time.Duration

	// keepAlive is how long the host API's stream waits on a still screen before it checks
	// its token again and sends a comment (KeepAlive).
	keepAlive time.Duration
	// writeTimeout bounds each write of the host API's stream (StreamWriteTimeout).
	writeTimeout time.Duration

	updates, updateBytes prometheus.Counter // nil without a registry

	// maxViewers bounds the viewers one holder (viewerHolder) holds at once (LimitViewers),
	// viewersOf counts them by holder; both guarded by mu. onViewersRefused is told of each
	// viewer refused for it (nil: nobody is).
	maxViewers       int
	viewersOf        map[viewerHolder]int
	onViewersRefused func(holder string, held int)
}

// DefaultMaxViewers is how many viewers of screens one account holds at once on a gateway, its
// screen streams and its MCP wait_for_screen calls together (--max-screen-viewers): a person
// has a few open (a web console's view of each computer shown, a CLI's live view, an agent's
// wait), where one account's token that held 300 waits at once took 1200 goroutines and 23 MB
// of the gateway every other account is served by.
const DefaultMaxViewers = 64

// ViewersFlag names the setting of the bound in the refusal, for the operator who would raise it.
const ViewersFlag = "--max-screen-viewers"

// New returns the module; it starts and stops watches through c, as the viewer's caller (the
// account in the context), so a viewer sees only the screens its account reaches.
func New(c *computer.Client) *Module {
	return &Module{client: c, watches: map[string]*watch{}, relayed: map[string][]*relayed{}, keepAlive: KeepAlive,
		writeTimeout: StreamWriteTimeout, relayTimeout: RelayTimeout, maxViewers: DefaultMaxViewers, viewersOf: map[viewerHolder]int{}}
}

// LimitViewers sets how many viewers one account holds at once here (DefaultMaxViewers
// without it; the gateway's own callers and loopback ones are the account local; the agent of
// one computer holds its own, viewerHolder), and onRefused, told of each viewer refused for
// it with its holder as the refusal names it and the viewers it holds (the gateway's metric
// and its log); nil tells nobody.
func (m *Module) LimitViewers(most int, onRefused func(holder string, held int)) *Module {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.maxViewers, m.onViewersRefused = most, onRefused
	return m
}

// viewerHolder is whose places a viewer takes: its caller's account, or, for the agent of one
// computer (a gateway pass, account.Caller.Only), that computer's agent. The computers that
// say hello with the shared password are the account local, the operator's own: the agents
// of its players' computers, up to --ai-max-turns of them at once, would otherwise share the
// operator's places and could leave its web console none.
type viewerHolder struct{ accountID, only string }

func holderOf(c account.Caller) viewerHolder { return viewerHolder{accountID: c.Account, only: c.Only} }

// String is the holder as the refusal names it.
func (h viewerHolder) String() string {
	if h.only != "" {
		return fmt.Sprintf("the agent of computer %s (account %s)", cctext.ShowTraposID(h.only), h.accountID)
	}
	return "account " + h.accountID
}

// takeViewerPlace takes a place among h's viewers, or refuses it busy when h holds its most
// already. Its viewer gives it back with leaveViewerPlace.
func (m *Module) takeViewerPlace(h viewerHolder) error {
	m.mu.Lock()
	held := m.viewersOf[h]
	if held < m.maxViewers {
		m.viewersOf[h] = held + 1
		m.mu.Unlock()
		return nil
	}
	refused := m.onViewersRefused
	m.mu.Unlock()
	if refused != nil {
		refused(h.String(), held)
	}
	return protocol.Errorf(protocol.CodeBusy, "%s already holds %d screen waits and streams at once on this gateway, "+
		"the most it may (%s): close some (a web console's screen, a live view of trap-sandbox screen, "+
		"an agent's wait_for_screen), or ask the gateway's operator", h, held, ViewersFlag)
}

// leaveViewerPlace gives back a place takeViewerPlace took.
func (m *Module) leaveViewerPlace(h viewerHolder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leaveViewerPlaceLocked(h)
}

// leaveViewerPlaceLocked is leaveViewerPlace with mu held.
func (m *Module) leaveViewerPlaceLocked(h viewerHolder) {
	if m.viewersOf[h]--; m.viewersOf[h] <= 0 {
		delete(m.viewersOf, h) // ever new holders do not grow the map for good
	}
}

// OnReplica names the replica this module runs on and its link to the screen modules of the
// other replicas (docs/scale-out.md): a computer whose socket another replica holds is watched
// through that replica, which passes its screen.update requests on here. relay's handler of
// the others' messages is Relayed.
func (m *Module) OnReplica(name string, relay Relay) *Module {
	m.replica, m.relay = name, relay
	return m
}

// watchKey keys a watch by the computer's account and traposId, and the monitor watched (""
// for the computer's own screen; host text): two accounts may each have a computer "7:", and
// one's screen.update must never reach the other's viewers, nor a monitor's those of the
// computer's own screen.
func watchKey(accountID, traposID, monitor string) string {
	return accountID + "\x00" + traposID + "\x00" + monitor
}

// listingOf is the listing of the computer traposID that ctx's caller reaches (its own
// account's first, when an admin reaches several, unless its own is local:
// account.Caller.OwnWins); its AccountID is "" when it reaches none, or, an admin, several
// accounts' and none of its own that wins: the watch then fails as the request
// does (not_connected, naming the accounts when several have it), where picking one of several
// would watch a computer the caller's request would not reach.
func (m *Module) listingOf(ctx context.Context, traposID string) computer.Computer {
	cs, err := m.client.Computers(ctx)
	if err != nil {
		return computer.Computer{}
	}
	var found computer.Computer
	several := false
	for _, c := range cs {
		if c.TraposID != traposID {
			continue
		}
		if caller := account.CallerFrom(ctx); c.AccountID == caller.Account && caller.OwnWins() {
			return c
		}
		several = several || found.AccountID != ""
		found = c
	}
	if several {
		return computer.Computer{}
	}
	return found
}

// Metrics records the module's counters on reg: screen.update requests merged, and their
// payload bytes (what watching costs the computer's socket).
func (m *Module) Metrics(reg prometheus.Registerer) *Module {
	m.updates = prometheus.NewCounter(prometheus.CounterOpts{Name: "trapos_gateway_screen_updates_total",
		Help: "screen.update requests merged into a watched screen."})
	m.updateBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "trapos_gateway_screen_update_bytes_total",
		Help: "Payload bytes of the screen.update requests merged."})
	reg.MustRegister(m.updates, m.updateBytes)
	return m
}

// Register adds screen.update to the gateway's handler table, and ties the watches to the
// gateway's sockets.
func (m *Module) Register(h Handlers) {
	m.socketOf = h.Socket
	h.Handle(protocol.TypeScreenUpdate, m.handleUpdate)
}

// socket is the context of the computer's socket held here (Handlers.Socket), or nil.
func (m *Module) socket(accountID, traposID string) context.Context {
	if m.socketOf == nil || accountID == "" {
		return nil
	}
	return m.socketOf(accountID, traposID)
}

// untilSocketCloses calls gone with the socket's cause when socket (nil: none known) ends,
// and returns what stops that.
func untilSocketCloses(socket context.Context, gone func(cause error)) (stop func()) {
	if socket == nil {
		return nil
	}
	stopAfter := context.AfterFunc(socket, func() { gone(context.Cause(socket)) })
	return func() { stopAfter() }
}

// Frame is one state of a watched screen.
type Frame struct {
	// Seq counts the updates merged into Screen; a viewer sees a growing Seq, with gaps when it
	// was slower than the computer.
	Seq    int
	Screen computer.Screen
}

// watch is one computer's watch and the screen its updates build.
type watch struct {
	accountID, traposID string
	monitor             string         // the monitor watched, host text; "" for the computer's own screen
	key                 string         // watchKey of the computer's account, traposID and monitor
	caller              account.Caller // the first viewer's, which stops the watch as it started it
	// holder names the replica that holds the computer's socket when another one does: the
	// watch is started and stopped through it, and only it passes the updates on (relay.go).
	holder string
	// held is the holder's lifeline of the computer (Relay.Holder) once the watch started
	// through it; guarded by Module.mu. Ended, it ends the watch in its words (lost).
	held    context.Context
	ready   chan struct{} // closed once screen.watch answered (id or err set)
	id      string
	err     error
	viewers int

	// Guarded by Module.mu.
	frame   Frame
	changed chan struct{} // closed and replaced at each update
	gone    error         // set when the watch ended under its viewers
	stopped bool          // the last viewer left (or it never started)
	onClose func()        // stops watching the computer's socket (or its holder's lifeline)
}

// Viewer is one viewer of a computer's screen.
type Viewer struct {
	m    *Module
	w    *watch
	seen int
	once sync.Once
	// placeOf is the holder whose viewer place this viewer holds (takeViewerPlace), given
	// back by Close; placed is false until WatchMonitor hands the viewer out.
	placeOf viewerHolder
	placed  bool
}

// Watch adds a viewer of traposID's own screen, starting the computer's watch when it is the
// first. The viewer must be closed.
func (m *Module) Watch(ctx context.Context, traposID string, timeout time.Duration) (*Viewer, error) {
	return m.WatchMonitor(ctx, traposID, "", timeout)
}

// WatchMonitor adds a viewer of the screen of traposID's monitor named monitor (host text: a
// side, or a wired modem's monitor_0; "" for the computer's own screen, as Watch), starting
// its watch (screen.watch {monitor}, client 0.5.31 on: the gateway refuses an older client
// such a request) when it is the first. A name that is no monitor of the computer's is the
// computer's bad_payload, naming its monitors; one holding a character CC cannot hold is the
// gateway's, unsent (computer.MonitorWire). A caller whose account holds its most viewers
// already (LimitViewers) is refused busy before anything is sent. The viewer must be closed.
func (m *Module) WatchMonitor(ctx context.Context, traposID, monitor string, timeout time.Duration) (*Viewer, error) {
	if monitor != "" {
		if _, err := computer.MonitorWire(monitor); err != nil {
			return nil, err
		}
	}
	holder := holderOf(account.CallerFrom(ctx))
	if err := m.takeViewerPlace(holder); err != nil {
		return nil, err
	}
	v, err := m.watchMonitor(ctx, traposID, monitor, timeout)
	if err != nil {
		m.leaveViewerPlace(holder)
		return nil, err
	}
	v.placeOf, v.placed = holder, true
	return v, nil
}

// watchMonitor is WatchMonitor once the caller has its viewer's place.
func (m *Module) watchMonitor(ctx context.Context, traposID, monitor string, timeout time.Duration) (*Viewer, error) {
	monitor = computer.MonitorName(monitor) // one watch for "Top" and "top"
	listed := m.listingOf(ctx, traposID)
	key := watchKey(listed.AccountID, traposID, monitor)
	m.mu.Lock()
	w := m.watches[key]
	if w == nil || w.gone != nil {
		w = &watch{accountID: listed.AccountID, traposID: traposID, monitor: monitor, key: key, caller: account.CallerFrom(ctx), ready: make(chan struct{}), changed: make(chan struct{})}
		m.watches[key] = w
		w.viewers++
		m.mu.Unlock()
		var id string
		var socket context.Context
		held, stopHeld, err := m.holderOf(listed, w)
		if err == nil {
			if w.holder != "" {
				id, err = m.startThrough(ctx, w, timeout)
			} else {
				// The socket that will answer, taken before it does: a socket that closes
				// (and one that replaces it) in between ends the watch at once, rather than
				// leaving it tied to a socket that never heard of it.
				socket = m.socket(listed.AccountID, traposID)
				id, err = m.start(ctx, traposID, monitor, timeout)
			}
		}
		m.mu.Lock()
		w.id, w.err = id, err
		if err != nil {
			w.stopped = true
			if m.watches[key] == w {
				delete(m.watches, key)
			}
			if stopHeld != nil {
				stopHeld()
			}
		} else if held != nil {
			// The holder's socket, as the cluster knows it: the watch ends when it does, as a
			// local watch ends with the computer's socket.
			w.held = held
			stop := context.AfterFunc(held, func() { m.computerGone(w, context.Cause(held)) })
			w.onClose = func() { stop(); stopHeld() }
		} else {
			// The computer's socket: the watch ends when it closes, though no update came.
			w.onClose = untilSocketCloses(socket, func(cause error) { m.computerGone(w, cause) })
		}
		close(w.ready)
		m.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return &Viewer{m: m, w: w}, nil
	}
	w.viewers++
	m.mu.Unlock()
	v := &Viewer{m: m, w: w}
	select {
	case <-w.ready:
	case <-ctx.Done():
		v.Close()
		return nil, ctx.Err()
	}
	if w.err != nil {
		v.Close()
		return nil, w.err
	}
	return v, nil
}

// start asks the computer for a watch of its own screen, or of its monitor named monitor.
func (m *Module) start(ctx context.Context, traposID, monitor string, timeout time.Duration) (string, error) {
	answer, _, err := m.client.Request(ctx, traposID, protocol.TypeScreenWatch, watchPayload(monitor), timeout)
	if err != nil {
		return "", computer.MonitorNameTooLong(err, monitor)
	}
	return watchIDOf(answer, traposID)
}

// watchPayload is screen.watch's payload: {} for the computer's own screen, else the monitor's
// name on the wire (WatchMonitor refused a name CC cannot hold before).
func watchPayload(monitor string) json.RawMessage {
	if monitor == "" {
		return json.RawMessage(`{}`)
	}
	name, _ := computer.MonitorWire(monitor)
	payload, _ := json.Marshal(map[string]string{"monitor": name})
	return payload
}

// watchID is a watchId as a comparable string: a number or a string, as the computer chose.
func watchID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Next waits for a screen newer than the last this viewer got and returns it (the newest:
// frames in between are skipped). It fails when ctx ends, or when the watch ended under the
// viewer (the computer went away).
func (v *Viewer) Next(ctx context.Context) (Frame, error) {
	m := v.m
	for {
		m.mu.Lock()
		w := v.w
		if w.frame.Seq > v.seen {
			f := w.frame
			f.Screen.Rows = append([]computer.Row(nil), f.Screen.Rows...)
			f.Screen.Palette = append([]string(nil), f.Screen.Palette...)
			f.Screen.UnknownRows = append([]int(nil), f.Screen.UnknownRows...)
			v.seen = f.Seq
			m.mu.Unlock()
			return f, nil
		}
		if w.gone != nil {
			m.mu.Unlock()
			return Frame{}, w.gone
		}
		changed := w.changed
		m.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Frame{}, ctx.Err()
		}
	}
}

// Close removes the viewer; the last viewer of a watch stops it on the computer (bounded by
// computer.DefaultTimeout; the computer stops it anyway at its next update, answered
// unknown_watch). Its account's place is given back as it leaves, before that: the stop is
// one per watch, not per viewer, and the gateway's bound on requests in flight bounds it.
func (v *Viewer) Close() {
	v.once.Do(func() {
		m, w := v.m, v.w
		m.mu.Lock()
		if v.placed {
			m.leaveViewerPlaceLocked(v.placeOf)
		}
		w.viewers--
		last := w.viewers == 0
		gone := w.gone != nil
		if last {
			w.stopped = true
			if m.watches[w.key] == w {
				delete(m.watches, w.key)
			}
		}
		m.mu.Unlock()
		if !last {
			return
		}
		<-w.ready // the starting viewer closes it before it returns
		m.mu.Lock()
		onClose := w.onClose
		m.mu.Unlock()
		if onClose != nil {
			onClose()
		}
		if w.err != nil || gone {
			return
		}
		if w.holder != "" {
			m.unwatchThrough(w)
			return
		}
		payload, err := json.Marshal(map[string]json.RawMessage{"watchId": rawID(w.id)})
		if err == nil {
			ctx, cancel := context.WithTimeout(account.WithCaller(context.Background(), w.caller), computer.DefaultTimeout)
			defer cancel()
			_, _, _ = m.client.Request(ctx, w.traposID, protocol.TypeScreenUnwatch, payload, computer.DefaultTimeout)
		}
	})
}

// rawID is a watch id as the computer sent it.
func rawID(id string) json.RawMessage {
	if _, err := strconv.ParseFloat(id, 64); err == nil {
		return json.RawMessage(id)
	}
	b, _ := json.Marshal(id)
	return b
}

// updateShape is screen.update's payload, as a refusal shows it.
const updateShape = `{watchId, seq, monitor?, width, height, colour, cursor: {x, y, blink}, rows: {"<y>": {text, fg, bg}}, palette?, fg?, bg?, unknownRows?: [y…], textScale?}`

// update is screen.update's payload.
type update struct {
	WatchID json.RawMessage `json:"watchId"`
	Seq     int             `json:"seq"`
	// Monitor names the monitor of a watch of one (client 0.5.31 on), in every update: the
	// watch is looked up by it. "" for the computer's own screen. Host text once decoded.
	Monitor string `json:"monitor"`
	// TextScale is a monitor's text scale, in its first update and when it changed.
	TextScale *float64        `json:"textScale"`
	Width     int             `json:"width"`
	Height    int             `json:"height"`
	Colour    bool            `json:"colour"`
	Cursor    computer.Cursor `json:"cursor"`
	// FG and BG come in a whole frame and when they changed; nil keeps the last ones.
	FG      *int                    `json:"fg"`
	BG      *int                    `json:"bg"`
	Rows    map[string]computer.Row `json:"rows"`
	Palette []string                `json:"palette"`
	// UnknownRows are the rows the computer has not seen drawn whole, in every update as the
	// cursor is (screen.read's): none named is none (all seen, or a client before 0.5.25).
	UnknownRows []int `json:"unknownRows"`
	// Ended, when set, is the computer's last update of the watch, with no screen, and
	// Message says why: forbidden, the owner withdrew sandbox.allow_screen; not_found, the
	// monitor watched was taken off.
	Ended *struct {
		Code    protocol.Code `json:"code"`
		Message string        `json:"message"`
	} `json:"ended"`
}

// maxEndedBytes bounds the computer's reason a watch ended, as the viewers read it.
const maxEndedBytes = 512

// ErrGone is what Next returns when the computer's socket closed under the watch.
var ErrGone = fmt.Errorf("the computer disconnected")

// handleUpdate merges a computer's screen.update into its watch's screen and wakes the
// viewers, or passes it on to the replica that keeps the watch (relay.go).
func (m *Module) handleUpdate(ctx context.Context, from protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
	u, err := decodeUpdate(payload)
	if err != nil {
		return nil, err
	}
	if rw := m.relayedWatch(ctx, from, u.Monitor, watchID(u.WatchID)); rw != nil {
		return nil, m.passOn(ctx, rw, payload, u.Ended != nil)
	}
	return nil, m.merge(ctx, from, u, len(payload), "")
}

// decodeUpdate reads a screen.update's payload.
func decodeUpdate(payload json.RawMessage) (update, error) {
	var u update
	if err := json.Unmarshal(payload, &u); err != nil {
		// The field and what it must be, in the protocol's words (server.BodyError's, the
		// API's one wording), never the Go type it is decoded into.
		return update{}, protocol.Errorf(protocol.CodeBadPayload, "screen.update's payload: %s", server.BodyError(err, updateShape, nil))
	}
	if len(u.WatchID) == 0 {
		return update{}, protocol.Errorf(protocol.CodeBadPayload, "screen.update: watchId is missing")
	}
	var err error
	if u.Monitor, err = cctext.FromWire(u.Monitor); err != nil {
		return update{}, protocol.Errorf(protocol.CodeBadPayload, "screen.update: monitor: %v", err)
	}
	return u, nil
}

// merge merges update u (size bytes) of computer from into its watch's screen and wakes the
// viewers. holder is the replica that passed it on ("": the computer sent it here, and ctx
// ends with its socket): it counts only for a watch kept through that replica.
func (m *Module) merge(ctx context.Context, from protocol.Requester, u update, size int, holder string) error {
	if u.Ended != nil {
		return m.ended(ctx, from, u, holder)
	}
	if why := computer.SizeProblem(u.Width, u.Height); why != "" {
		return protocol.Errorf(protocol.CodeBadPayload, "screen.update: %s", why)
	}
	if why := computer.PaletteProblem(u.Palette); why != "" {
		return protocol.Errorf(protocol.CodeBadPayload, "screen.update: %s", why)
	}
	if why := computer.UnknownRowsProblem(u.UnknownRows, u.Height); why != "" {
		return protocol.Errorf(protocol.CodeBadPayload, "screen.update: %s", why)
	}
	if u.TextScale != nil {
		if why := computer.TextScaleProblem(*u.TextScale); why != "" {
			return protocol.Errorf(protocol.CodeBadPayload, "screen.update: %s", why)
		}
	}
	unknown := unknownWatch(u.WatchID, from.TraposID)
	m.mu.Lock()
	w := m.watches[watchKey(from.AccountID, from.TraposID, u.Monitor)]
	m.mu.Unlock()
	if w == nil || w.holder != holder {
		return unknown
	}
	// The update can overtake screen.watch's answer: wait for it.
	select {
	case <-w.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	rows := map[int]computer.Row{}
	for key, r := range u.Rows {
		y, err := strconv.Atoi(key)
		if err != nil || y < 1 || y > u.Height {
			return protocol.Errorf(protocol.CodeBadPayload, "screen.update: row %s is not a row of a %d-row screen", clip(key), u.Height)
		}
		// A row is as wide as the screen. A longer one would stay in the watch's screen, row
		// after row, update after update (1024 rows of 100 KB each), and go to every viewer.
		if why := computer.RowProblem(y, r, u.Width); why != "" {
			return protocol.Errorf(protocol.CodeBadPayload, "screen.update: %s", why)
		}
		if r.Text, err = cctext.FromWire(r.Text); err != nil {
			return protocol.Errorf(protocol.CodeBadPayload, "screen.update: row %d: %v", y, err)
		}
		rows[y] = r
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w.stopped || w.err != nil || w.id != watchID(u.WatchID) {
		return unknown
	}
	if w.onClose == nil && holder == "" {
		// No socket was known when the watch started (a module not registered on a
		// gateway): ctx, the update's, ends with the socket that sent it.
		w.onClose = untilSocketCloses(ctx, func(cause error) { m.computerGone(w, cause) })
	}
	s := &w.frame.Screen
	if s.Width != u.Width || s.Height != u.Height {
		resized := make([]computer.Row, u.Height)
		copy(resized, s.Rows)
		s.Rows = resized
	}
	s.Width, s.Height, s.Colour, s.Cursor, s.UnknownRows = u.Width, u.Height, u.Colour, u.Cursor, u.UnknownRows
	s.Monitor = u.Monitor
	if u.TextScale != nil {
		s.TextScale = *u.TextScale
	}
	if u.FG != nil {
		s.FG = *u.FG
	}
	if u.BG != nil {
		s.BG = *u.BG
	}
	for y, r := range rows {
		s.Rows[y-1] = r
	}
	if len(u.Palette) > 0 {
		s.Palette = u.Palette
	}
	w.frame.Seq++
	if m.updates != nil {
		m.updates.Inc()
		m.updateBytes.Add(float64(size))
	}
	close(w.changed)
	w.changed = make(chan struct{})
	return nil
}

// unknownWatch answers an update of a watch the module does not keep; the computer stops it.
func unknownWatch(id json.RawMessage, traposID string) error {
	return protocol.Errorf(protocol.CodeUnknownWatch, "the gateway keeps no screen watch %s on %s: stop it", clip(string(id)), traposID)
}

// ended ends a watch the computer ended (the owner withdrew the screen, or the monitor watched
// was taken off): its viewers' Next fails with the computer's reason and code (endedCode), and
// the next viewer starts a new watch. holder is as merge's.
func (m *Module) ended(ctx context.Context, from protocol.Requester, u update, holder string) error {
	unknown := protocol.Errorf(protocol.CodeUnknownWatch, "the gateway keeps no screen watch %s on %s", clip(string(u.WatchID)), from.TraposID)
	message, err := cctext.FromWire(u.Ended.Message)
	if err != nil {
		return protocol.Errorf(protocol.CodeBadPayload, "screen.update: ended.message: %v", err)
	}
	if len(message) > maxEndedBytes {
		message = message[:maxEndedBytes] + "…"
	}
	m.mu.Lock()
	w := m.watches[watchKey(from.AccountID, from.TraposID, u.Monitor)]
	m.mu.Unlock()
	if w == nil || w.holder != holder {
		return unknown
	}
	select {
	case <-w.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w.stopped || w.err != nil || w.gone != nil || w.id != watchID(u.WatchID) {
		return unknown
	}
	// "computer 7: says …", not "computer 7:: …": a traposId ends in a colon when its
	// computer has no label.
	said := &protocol.Error{Code: endedCode(u.Ended.Code), Message: message, ByComputer: true}
	m.endLocked(w, said.WithHostWords(fmt.Sprintf("computer %s says ", cctext.ShowTraposID(from.TraposID)), ""))
	return nil
}

// endedCode is the code a watch's viewers read when the computer ended it with code: not_found
// for a monitor taken off (client 0.5.31 on), else forbidden, the owner's withdrawal, which is
// what a client before 0.5.31 ends a watch for (and says no other code for).
func endedCode(code protocol.Code) protocol.Code {
	if code == protocol.CodeNotFound {
		return code
	}
	return protocol.CodeForbidden
}

// computerGone ends a watch whose computer's socket closed: its viewers' Next fails with
// ErrGone, or with the gateway's reason for closing the socket (cause, a *protocol.Error:
// the gateway is shutting down), so a viewer can tell the gateway stopping from the
// computer leaving.
func (m *Module) computerGone(w *watch, cause error) {
	why := ErrGone
	if pe, ok := errors.AsType[*protocol.Error](cause); ok {
		why = pe
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.endLocked(w, why)
}

// endLocked ends watch w with why (its viewers' Next fails with it) and forgets it, so the
// next viewer starts a new one. m.mu is held.
func (m *Module) endLocked(w *watch, why error) {
	w.gone = why
	if m.watches[w.key] == w {
		delete(m.watches, w.key)
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// Watches is how many computers are watched now (for tests and metrics).
func (m *Module) Watches() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.watches)
}

// clip keeps a computer's string short in a message, its control characters escaped
// (cctext.Show) whatever its length: a long one was cut and left raw, its ESC bytes a
// terminal's escapes wherever the message is shown.
func clip(s string) string {
	if len(s) > 40 {
		return cctext.Show(strings.ToValidUTF8(s[:40], ""), false) + "…"
	}
	return cctext.Show(s, false)
}
