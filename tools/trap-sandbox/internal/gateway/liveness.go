package gateway

import (
	"time"

	"github.com/gorilla/websocket"

	"trap-sandbox/internal/protocol"
)

// A session has four clocks, all on Config.Clock and kept by the writer on one timer (a
// select on one timer channel is cheaper per frame than on four, and an idle computer holds
// one timer instead of four):
//   - hello: a socket without a good hello within HelloTimeout (PressureHelloTimeout when
//     admitted under pressure) is closed with 4008;
//   - ping: a WebSocket ping every PingPeriod, which CC's Java side answers by itself;
//   - pong: nothing at all (no frame, no pong) within PongWait means the TCP peer is gone;
//   - idle: no frame within IdleProbeAfter gets an application ping, which only a running
//     daemon answers (no answer within RequestTimeout: 4010).
type livenessClocks struct {
	hello time.Time // zero once checked
	ping  time.Time
	pong  time.Time
	idle  time.Time
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
		} else {
			// Nothing at all, not even a pong, within PongWait: the peer is gone. No close
			// frame: nobody would read it.
			if s.abandon("no frame or pong within the pong wait") {
				s.gw.cfg.Metrics.livenessDrop("pong_timeout")
				_ = s.conn.SetReadDeadline(s.realNow()) // wake the reader now
			}
			return nil
		}
	}
	if !now.Before(c.idle) {
		lastFrame := time.Unix(0, s.lastFrameAt.Load())
		if now.Sub(lastFrame) < cfg.IdleProbeAfter {
			c.idle = lastFrame.Add(cfg.IdleProbeAfter)
		} else {
			if s.isAuthenticated() && !s.probing.Load() {
				s.startIdleProbe()
			}
			c.idle = now.Add(cfg.IdleProbeAfter)
		}
	}
	if !now.Before(c.ping) {
		c.ping = now.Add(cfg.PingPeriod)
		return s.conn.WriteControl(websocket.PingMessage, nil, s.realNow().Add(cfg.WriteTimeout))
	}
	return nil
}

// startIdleProbe sends a gateway_request ping to a computer that has been silent for
// IdleProbeAfter. CC's Java side answers WebSocket pings even when the Lua daemon has
// crashed, so only an application-level answer proves the computer is alive; without one
// within RequestTimeout the socket is closed with 4010. Called from the writer only, so
// handlers.Add never races run's handlers.Wait.
func (s *Session) startIdleProbe() {
	s.probing.Store(true)
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		defer s.probing.Store(false)
		// s.ctx has no deadline, so the request times out after RequestTimeout on Config.Clock.
		_, err := s.request(s.ctx, TypePing, nil)
		if protocol.CodeOf(err) != protocol.CodeTimeout {
			return // any answer, even ok:false, means the daemon runs; other errors mean closed
		}
		if s.closeByGateway(CloseUnresponsive, "unresponsive") {
			s.gw.cfg.Metrics.livenessDrop("unresponsive")
			s.log.Warn("computer did not answer the idle probe, dropping it", "traposId", s.Key().TraposID,
				"idleProbeAfter", s.gw.cfg.IdleProbeAfter, "requestTimeout", s.gw.cfg.RequestTimeout)
		}
	}()
}
