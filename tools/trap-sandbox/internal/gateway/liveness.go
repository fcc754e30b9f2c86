package gateway

import (
	"log/slog"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
)

// A session has four clocks, all on Config.Clock and kept on one timer that calls tick when
// the earliest is due (an AfterFunc: it holds no goroutine or channel while it waits, so an
// idle computer's clocks cost a runtime timer and this struct):
//   - hello: a socket without a good hello within HelloTimeout (PressureHelloTimeout when
//     admitted under pressure) is closed with 4008;
//   - ping: a WebSocket ping every PingPeriod, which CC's Java side answers by itself;
//   - pong: nothing at all (no frame, no pong) within PongWait means the TCP peer is gone;
//   - idle: no frame within IdleProbeAfter, either way, gets an application ping, which only a
//     running daemon answers (no answer within RequestTimeout: 4010). Either way: a computer
//     whose only frames are answers (a lua.exec that ran 40 s, an answer given up on) hears
//     from the gateway all the same, within the livenessMs its hello was promised.
type livenessClocks struct {
	hello time.Time // zero once checked
	ping  time.Time
	pong  time.Time
	idle  time.Time
}

// liveness is a session's clocks and the timer that keeps them.
type liveness struct {
	mu      sync.Mutex // held while the clocks tick, so stopLiveness waits for a tick
	clocks  livenessClocks
	timer   clock.Timer
	stopped bool
}

// startLiveness starts the session's clocks now.
func (s *Session) startLiveness() {
	cfg := s.gw.cfg
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	now := cfg.Clock.Now()
	s.live.clocks = newLivenessClocks(now, cfg, s.slot.helloTimeout)
	s.live.timer = cfg.Clock.AfterFunc(s.live.clocks.next(now), s.livenessDue)
}

// livenessDue runs when the earliest clock is due: it ticks, then sets the timer for the next
// one, until the session closes.
func (s *Session) livenessDue() {
	cfg := s.gw.cfg
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	if s.live.stopped || s.ctx.Err() != nil {
		return
	}
	if err := s.tick(&s.live.clocks, cfg.Clock.Now()); err != nil {
		if s.ctx.Err() == nil { // a ping refused because the close began is no failure
			s.writeFailed(err)
		}
		return
	}
	if s.ctx.Err() == nil {
		s.live.timer.Reset(s.live.clocks.next(cfg.Clock.Now()))
	}
}

// stopLiveness stops the clocks for good, waiting for a tick that runs; after it no idle
// probe starts.
func (s *Session) stopLiveness() {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	s.live.stopped = true
	s.live.timer.Stop()
}

// newLivenessClocks starts the clocks at start; helloTimeout is the socket's own (admission.go:
// shorter under pressure).
func newLivenessClocks(start time.Time, cfg Config, helloTimeout time.Duration) livenessClocks {
	return livenessClocks{
		hello: start.Add(helloTimeout),
		ping:  start.Add(cfg.PingPeriod),
		pong:  start.Add(cfg.PongWait),
		idle:  start.Add(cfg.IdleProbeAfter),
	}
}

// next is how long from now until the earliest deadline.
func (c *livenessClocks) next(now time.Time) time.Duration {
	due := c.ping
	for _, t := range [...]time.Time{c.hello, c.pong, c.idle} {
		if !t.IsZero() && t.Before(due) {
			due = t
		}
	}
	return due.Sub(now)
}

// didNotRunMsg is the WARN line of a gateway whose pings went out late (didNotRun), and
// didNotRunReplicaMsg a replica's, whose heartbeats stopped too (a gateway that runs alone has
// none, nor other replicas to take it for dead).
const (
	didNotRunMsg = "the gateway did not run for a while (its process stopped: SIGSTOP, a paused VM or container, a host out of CPU or memory): " +
		"its pings went out late, so a computer silent meanwhile is given a ping and the pong wait again, not dropped"
	didNotRunReplicaMsg = didNotRunMsg + "; this replica's heartbeats stopped too, and the other replicas may have taken it for dead meanwhile"
)

// didNotRun says, once a minute for all sessions together, that a session's ping went out
// late by late: how long the process did not run, at least.
func (g *Gateway) didNotRun(late time.Duration) {
	msg := didNotRunMsg
	if g.cfg.Replica != "" {
		msg = didNotRunReplicaMsg
	}
	g.limits.warns.t.Log(slog.LevelWarn, didNotRunMsg, msg, "pingLate", late.Round(time.Second))
}

// pongWaitReason is the disconnect line's reason of a socket dropped for its silence.
const pongWaitReason = "no frame or pong within the pong wait"

// tick does what is due at now: drop a socket without hello, drop a silent peer, send a
// ping, probe an idle computer. It returns a write error.
func (s *Session) tick(c *livenessClocks, now time.Time) error {
	cfg := s.gw.cfg
	if !c.hello.IsZero() && !now.Before(c.hello) {
		c.hello = time.Time{}
		if !s.isAuthenticated() && !s.verdictPending.Load() && !s.linkBegun.Load() {
			s.closeByGateway(CloseNoHello, "no hello in time")
		}
	}
	if !now.Before(c.pong) {
		lastAlive := time.Unix(0, s.lastAlive.Load())
		if now.Sub(lastAlive) < cfg.PongWait {
			c.pong = lastAlive.Add(cfg.PongWait)
		} else if late := now.Sub(c.ping); late > cfg.PongWait-cfg.PingPeriod {
			// The ping due at c.ping goes out only now, too late for its pong to arrive within
			// the pong wait: the gateway's process did not run (stopped, a paused VM, a host
			// out of CPU), and the silence is its own, not the peer's. The ping below goes out
			// now, and the peer has a whole pong wait to answer it.
			c.pong = now.Add(cfg.PongWait)
			s.gw.didNotRun(late)
		} else {
			// Nothing at all, not even a pong, within PongWait: the peer is gone. No close
			// frame: nobody would read it.
			if s.drop(websocket.CloseAbnormalClosure, pongWaitReason) {
				s.gw.cfg.Metrics.livenessDrop(dropPongTimeout)
				_ = s.conn.SetReadDeadline(s.realNow()) // wake the reader now
			}
			return nil
		}
	}
	if !now.Before(c.idle) {
		// The quieter side counts: the computer's last frame, or the gateway's own, whichever
		// is older.
		quietSince := time.Unix(0, min(s.lastFrameAt.Load(), s.lastSentAt.Load()))
		if now.Sub(quietSince) < cfg.IdleProbeAfter {
			c.idle = quietSince.Add(cfg.IdleProbeAfter)
		} else {
			if s.isAuthenticated() && !s.probing.Load() {
				s.startIdleProbe()
			}
			c.idle = now.Add(cfg.IdleProbeAfter)
		}
	}
	if !now.Before(c.ping) {
		c.ping = now.Add(cfg.PingPeriod)
		s.lateConnectLine(now)
		return s.conn.WriteControl(websocket.PingMessage, nil, s.realNow().Add(cfg.WriteTimeout))
	}
	return nil
}

// unresponsiveMsg is the WARN line of computers dropped for not answering the idle probe:
// once a minute per address (a Minecraft server's computers share its address), the number
// of the others dropped within that minute written at its end (warnBurst), so that a frozen
// server's 2 000 computers make two lines, not 2 000. Each computer's drop is an INFO line.
const unresponsiveMsg = "computers did not answer the idle probe, dropping them (4010): their sockets live (CC's Java side answers WebSocket pings) but their daemons do not answer; " +
	"many from one address within a minute (suppressedSinceLast counts the others): that Minecraft server's main thread likely hangs (a frozen or overloaded server; its computers reconnect once it runs again); " +
	"one alone: its daemon stopped"

// startIdleProbe sends a gateway_request ping to a computer that has been silent for
// IdleProbeAfter. CC's Java side answers WebSocket pings even when the Lua daemon has
// crashed, so only an application-level answer proves the computer is alive; without one
// within RequestTimeout the socket is closed with 4010. Called from tick only, under the
// liveness lock before stopLiveness, so handlers.Add never races run's handlers.Wait.
func (s *Session) startIdleProbe() {
	s.probing.Store(true)
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		defer s.probing.Store(false)
		// s.ctx has no deadline, so the request times out after RequestTimeout on Config.Clock.
		// It takes the slot kept for the gateway (pendingTable): hosts that fill the computer
		// with long requests cannot keep it from going out.
		_, err := s.request(s.ctx, TypePing, nil, byGateway)
		if protocol.CodeOf(err) != protocol.CodeTimeout {
			return // any answer, even ok:false, means the daemon runs; other errors mean closed
		}
		if s.closeByGateway(CloseUnresponsive, "unresponsive") {
			s.log().Info("computer did not answer the idle probe, dropping it", "traposId", s.Key().TraposID)
			s.gw.limits.warns.warnBurst(unresponsiveMsg, s.remoteAddr,
				"idleProbeAfter", s.gw.cfg.IdleProbeAfter, "requestTimeout", s.gw.cfg.RequestTimeout)
			s.gw.cfg.Metrics.livenessDrop(dropUnresponsive) // after the lines: whoever sees it counted finds them
		}
	}()
}
