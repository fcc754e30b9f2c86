package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"trap-sandbox/internal/clock"
)

// The event stream: one GET /global/event for the gateway, opened before any prompt and
// reopened when it drops. It carries the events of every computer's directory (opencode has
// no per-session stream), dispatched on their sessionID, unique across directories, to the
// turn running on that session.

// maxEventBytes bounds one SSE frame: a 200 000-character answer's final part update is
// ~202 KB.
const maxEventBytes = 16 << 20

// reconnect backoff of the event stream.
const (
	reconnectFirst = 200 * time.Millisecond
	reconnectMax   = 5 * time.Second
)

type stream struct {
	oc  *client
	log *slog.Logger
	// openGrace bounds an attempt's wait for the stream's first frame (opencode sends
	// server.connected at once): opencode accepts connections seconds before it serves while
	// it starts, and never answers a request that came then, which would hold the stream
	// down for good.
	openGrace time.Duration
	// heartbeatGrace is how long the open stream may stay silent (the constant of that name).
	heartbeatGrace time.Duration
	// clock times a question's wait for the stream (waitReady): the real one, or a test's
	// fake (not Config.Clock, which idle tests advance by minutes while turns are under way).
	clock clock.Clock

	mu    sync.Mutex
	turns map[string]*turn // by opencode session id
	// ready is closed while the stream is connected, replaced by an open one when it drops.
	ready     chan struct{}
	connected bool
	lastErr   error
	// down is closed when an attempt to open the stream fails, replaced by an open one.
	down chan struct{}
	// begun counts the attempts to open the stream; failed is the number of the last one that
	// failed. A question waits for an attempt begun after it: one begun before may have found
	// opencode down just before it came up.
	begun, failed uint64
	// runs counts the opencode runs the stream has seen: its first connection, and each one
	// after an attempt that failed to open it (opencode stopped, restarted or still starting),
	// so a stream that drops and opens again at once (opencode#38458) is still the same run.
	// unreached is set by such a failed attempt, until the next connection.
	runs      uint64
	unreached bool
	// kick asks the stream to retry now instead of at the end of its backoff.
	kick chan struct{}
}

func newStream(oc *client, log *slog.Logger) *stream {
	return &stream{oc: oc, log: log, openGrace: openGrace, heartbeatGrace: heartbeatGrace, clock: clock.Real{}, turns: map[string]*turn{}, ready: make(chan struct{}),
		down: make(chan struct{}), kick: make(chan struct{}, 1)}
}

// run keeps the stream open until ctx ends.
func (s *stream) run(ctx context.Context) {
	backoff := reconnectFirst
	for ctx.Err() == nil {
		s.mu.Lock()
		s.begun++
		attempt := s.begun
		s.mu.Unlock()
		err := s.readOnce(ctx)
		s.setDown(attempt, err)
		if ctx.Err() != nil {
			return
		}
		s.log.Debug("agent: opencode's event stream ended; reopening", "err", err, "after", backoff)
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-s.kick:
			timer.Stop()
		}
		backoff = min(backoff*2, reconnectMax)
	}
}

func (s *stream) setUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.connected {
		if s.runs == 0 || s.unreached {
			s.runs++
			s.unreached = false
		}
		s.connected = true
		close(s.ready)
	}
}

// opencodeRun is the opencode run the stream is connected to now (runs): a computer whose instance
// took no prompt in it is new to that opencode.
func (s *stream) opencodeRun() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}

// setDown records the end of the attempt numbered attempt, with its error.
func (s *stream) setDown(attempt uint64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.turns {
		t.tr.markGap() // their events until the stream reopens are lost
	}
	s.lastErr, s.failed = err, attempt
	if !s.connected {
		s.unreached = true // this attempt never opened the stream
	}
	if s.connected {
		s.connected = false
		s.ready = make(chan struct{})
	}
	close(s.down)
	s.down = make(chan struct{})
}

// waitReady waits until the stream is connected, at most wait. While it is down, it asks
// for an attempt now and returns the error of the first attempt begun since the call if it
// fails: a question to an opencode that is down fails at once, and one to an opencode just
// back does not wait out a backoff, nor get the failure of an attempt that found it still
// down a moment before.
func (s *stream) waitReady(ctx context.Context, wait time.Duration) error {
	s.mu.Lock()
	ready, down, connected, asked := s.ready, s.down, s.connected, s.begun
	s.mu.Unlock()
	if connected {
		return nil
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	timer := s.clock.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ready:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-down:
		case <-timer.C():
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.connected {
				return nil
			}
			if s.lastErr != nil {
				return s.lastErr
			}
			return errors.New("opencode's event stream did not open")
		}
		s.mu.Lock()
		if s.connected {
			s.mu.Unlock()
			return nil
		}
		if s.failed > asked {
			err := s.lastErr
			s.mu.Unlock()
			return err
		}
		// The attempt that failed was under way when the question came: the kick starts the
		// next one at once.
		down = s.down
		s.mu.Unlock()
	}
}

// attach routes the session's events to t. A stream that is down now (it dropped after the
// turn's waitReady) misses the turn's first events: the turn starts with a gap, as if it had
// dropped during it.
func (s *stream) attach(sessionID string, t *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.connected {
		t.tr.markGap()
	}
	s.turns[sessionID] = t
}

func (s *stream) detach(sessionID string, t *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turns[sessionID] == t {
		delete(s.turns, sessionID)
	}
}

func (s *stream) turnOf(sessionID string) *turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns[sessionID]
}

// readOnce reads the stream until it ends, sends no first frame within openGrace, or goes
// silent past heartbeatGrace once open.
func (s *stream) readOnce(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var opened atomic.Bool // a first line came
	silent := time.AfterFunc(s.openGrace, func() {
		if opened.Load() {
			cancel(errors.New("opencode's event stream went silent"))
			return
		}
		cancel(fmt.Errorf("opencode's event stream did not open within %s (is opencode still starting?)", s.openGrace))
	})
	defer silent.Stop()
	resp, err := s.oc.openEvents(ctx)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxEventBytes)
	var data bytes.Buffer
	for sc.Scan() {
		opened.Store(true)
		silent.Reset(s.heartbeatGrace)
		line := sc.Bytes()
		if len(line) == 0 {
			if data.Len() > 0 {
				s.dispatch(data.Bytes())
				data.Reset()
			}
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(rest, []byte(" ")))
		}
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("opencode closed its event stream")
}

// ocEvent is one frame of /event.
type ocEvent struct {
	Type       string          `json:"type"`
	Properties json.RawMessage `json:"properties"`
}

// eventProps holds every field the gateway reads of any event type.
type eventProps struct {
	SessionID string `json:"sessionID"`
	Info      *struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionID"`
		Role      string `json:"role"`
	} `json:"info"`
	Part *struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionID"`
		MessageID string `json:"messageID"`
		Type      string `json:"type"`
		Tool      string `json:"tool"`
		CallID    string `json:"callID"`
		State     struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Error  string          `json:"error"`
		} `json:"state"`
	} `json:"part"`
	// message.part.delta
	MessageID string `json:"messageID"`
	PartID    string `json:"partID"`
	Field     string `json:"field"`
	Delta     string `json:"delta"`
	// session.status
	Status *struct {
		Type    string `json:"type"`
		Attempt int    `json:"attempt"`
		Message string `json:"message"`
	} `json:"status"`
	// session.error
	Error *namedError `json:"error"`
	// permission.asked
	ID         string `json:"id"`
	Permission string `json:"permission"`
	Tool       *struct {
		MessageID string `json:"messageID"`
		CallID    string `json:"callID"`
	} `json:"tool"`
}

func (s *stream) dispatch(data []byte) {
	var frame struct {
		Payload *ocEvent `json:"payload"` // /global/event's wrapping
	}
	if json.Unmarshal(data, &frame) != nil || frame.Payload == nil {
		return
	}
	ev := *frame.Payload
	switch ev.Type {
	case "server.connected":
		s.setUp()
		return
	case "message.updated", "message.part.updated", "message.part.delta", "session.status", "session.error", "session.idle", "permission.asked":
	default:
		return // heartbeats, plugin and catalog noise
	}
	var p eventProps
	if json.Unmarshal(ev.Properties, &p) != nil {
		return
	}
	sid := p.SessionID
	if sid == "" && p.Info != nil {
		sid = p.Info.SessionID
	}
	if sid == "" && p.Part != nil {
		sid = p.Part.SessionID
	}
	t := s.turnOf(sid)
	if t == nil {
		return // another session's, or a turn already over
	}
	t.observe(ev.Type, &p)
}
