package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"trap-sandbox/internal/protocol"
)

// What the gateway keeps of a computer that asked is bounded: its place (the pass granted,
// the opencode client of its directory), its conversations' sessions and its rate limiter stay
// while it uses the agent, and go once it has been idle for Config.IdleAfter (no turn running,
// none asked), or sooner when more than Config.MaxComputers computers have them (the least
// recently used idle one goes first). Its opencode instance (with the instance's MCP
// connection) is disposed with them (POST /instance/dispose?directory=D). Nothing on disk
// goes here (dirs.go bounds the directories): a computer that asks again gets its place back
// from its directory (the same pass), and its conversations by their titles (sessionID), so
// it continues where it was.

// Defaults of the bounds.
const (
	// DefaultIdleAfter is how long a computer's agent state stays after its last use.
	DefaultIdleAfter = 15 * time.Minute
	// DefaultMaxComputers is the most computers with agent state at once (--ai-max-computers):
	// twice DefaultMaxTurns, so a computer with a turn running is never the one made to go.
	DefaultMaxComputers = 2 * DefaultMaxTurns
)

// errTooManyComputers is a question of a new computer while Config.MaxComputers computers
// have agent state and none of them is idle.
var errTooManyComputers = errors.New("as many computers as --ai-max-computers use the agent, none of them idle")

// released is a computer whose state the gateway dropped: its instance is disposed next.
type released struct {
	key  callerKey
	pl   *place
	gone chan struct{} // closed once opencode answered the dispose (or it was skipped)
}

// touchLocked marks pl used now.
func (m *Module) touchLocked(pl *place) {
	pl.lastUsed = m.cfg.Clock.Now()
}

// enter marks pl in use by a request (placeOf's caller, until leave): it is not dropped
// meanwhile. Called with placeMu held.
func (m *Module) enterLocked(pl *place) {
	m.mu.Lock()
	pl.users++
	m.touchLocked(pl)
	m.mu.Unlock()
}

// leave ends a request's use of pl (from placeOf): its turn holds the session busy by now, or
// it got none.
func (m *Module) leave(pl *place) {
	m.mu.Lock()
	pl.users--
	m.touchLocked(pl)
	m.mu.Unlock()
}

// busyLocked lists the computers with a session held busy (a turn, or a reset).
func (m *Module) busyLocked() map[callerKey]bool {
	busy := map[callerKey]bool{}
	for k, s := range m.sessions {
		if s.busy != nil {
			busy[k.callerKey] = true
		}
	}
	return busy
}

// releaseLocked drops the state of computer k, whose place is pl, and revokes its pass: no
// tool call of its instance gets in until it asks again (placeOf grants the pass again). Its
// instance is disposed by the caller (dispose). Called with placeMu and mu held.
func (m *Module) releaseLocked(k callerKey, pl *place) released {
	delete(m.places, k)
	for key := range m.sessions {
		if key.callerKey == k {
			delete(m.sessions, key)
		}
	}
	delete(m.limiters, k)
	m.passes.Revoke(pl.pass)
	r := released{key: k, pl: pl, gone: make(chan struct{})}
	m.releasing[k] = r.gone
	return r
}

// releaseIdle drops the state of every computer idle since IdleAfter before now, and
// disposes their instances. The janitor calls it.
func (m *Module) releaseIdle(now time.Time) {
	var out []released
	m.placeMu.Lock()
	m.mu.Lock()
	busy := m.busyLocked()
	for k, pl := range m.places {
		if pl.users == 0 && !busy[k] && now.Sub(pl.lastUsed) >= m.cfg.IdleAfter {
			out = append(out, m.releaseLocked(k, pl))
		}
	}
	m.sweepLocked()
	n := len(m.places)
	m.mu.Unlock()
	m.placeMu.Unlock()
	m.metrics.computers(n)
	m.metrics.releasedComputers(whyIdle, len(out))
	if len(out) > 0 {
		m.log.Info("agent: idle computers' agent state released, their opencode instances disposed", "computers", len(out),
			"idleAfter", m.cfg.IdleAfter, "left", n)
	}
	for _, r := range out {
		m.dispose(r)
	}
}

// makeRoomLocked drops the least recently used idle computer's state when MaxComputers have
// state; errTooManyComputers when none is idle. Its instance is disposed in the background.
// Called with placeMu held.
func (m *Module) makeRoomLocked() error {
	if len(m.places) < m.cfg.MaxComputers {
		return nil
	}
	m.mu.Lock()
	busy := m.busyLocked()
	var lru *place
	var lruKey callerKey
	for k, pl := range m.places {
		if pl.users == 0 && !busy[k] && (lru == nil || pl.lastUsed.Before(lru.lastUsed)) {
			lru, lruKey = pl, k
		}
	}
	if lru == nil {
		m.mu.Unlock()
		return errTooManyComputers
	}
	r := m.releaseLocked(lruKey, lru)
	m.mu.Unlock()
	m.metrics.computers(len(m.places))
	m.metrics.releasedComputers(whyCap, 1)
	m.log.Info("agent: a computer's agent state was released to make room for another (--ai-max-computers)",
		"traposId", lruKey.traposID, "account", lruKey.account, "maxComputers", m.cfg.MaxComputers)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.dispose(r)
	}()
	return nil
}

// waitReleased waits until a dispose of k's instance, if one runs, is answered, so a new
// instance of its directory is never disposed by it. Called with k's account mutex held, so
// no other place of k is made meanwhile.
func (m *Module) waitReleased(ctx context.Context, k callerKey) error {
	m.placeMu.Lock()
	gone := m.releasing[k]
	m.placeMu.Unlock()
	if gone == nil {
		return nil
	}
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dispose tells opencode to dispose the released computer's instance (its MCP connection
// with it). An opencode without the route (older: it answers unknown routes with its web
// UI, a 200 in HTML, or a 404) is said once in the log and not asked again; a failure is
// a WARN at most once a minute (a restarted opencode has no instance left to dispose).
func (m *Module) dispose(r released) {
	defer func() {
		m.placeMu.Lock()
		if m.releasing[r.key] == r.gone {
			delete(m.releasing, r.key)
		}
		m.placeMu.Unlock()
		close(r.gone)
	}()
	if m.noDispose.Load() || m.ctx.Err() != nil {
		return
	}
	if m.cfg.HeldElsewhere != nil && m.cfg.HeldElsewhere(r.key.account, r.key.traposID) {
		// It moved to another replica, which runs its turns in the same instance now (a shared
		// agent directory) and disposes it when the computer is idle there.
		m.log.Debug("agent: a released computer's opencode instance is kept: another replica holds the computer now",
			"traposId", r.key.traposID, "account", r.key.account)
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, callTimeout)
	defer cancel()
	var ok bool
	err := r.pl.oc.call(ctx, http.MethodPost, DisposePath, nil, nil, &ok)
	var ae *apiError
	var je *notJSONError
	switch {
	case err == nil && ok:
	case errors.As(err, &je) || errors.As(err, &ae) && ae.status == http.StatusNotFound:
		if !m.noDispose.Swap(true) {
			m.log.Warn("agent: opencode does not dispose instances (it is older than POST "+DisposePath+"): the instances of idle computers stay until opencode restarts; upgrade opencode",
				"err", firstLine(err.Error()))
		}
	case m.ctx.Err() != nil:
	default:
		if err == nil {
			err = fmt.Errorf("opencode answered %s with false", DisposePath)
		}
		m.warns.Log(slog.LevelWarn, "dispose", "agent: could not dispose an idle computer's opencode instance",
			"traposId", r.key.traposID, "account", r.key.account, "err", firstLine(err.Error()))
	}
}

// DisposePath is opencode's route that disposes the instance of ?directory=.
const DisposePath = "/instance/dispose"

// janitor releases idle computers every IdleAfter/4 (at least every minute), until ctx ends.
func (m *Module) janitor(ctx context.Context) {
	every := min(m.cfg.IdleAfter/4, time.Minute)
	t := m.cfg.Clock.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		m.releaseIdle(m.cfg.Clock.Now())
		t.Reset(every)
	}
}

// tooManyDirs is the busy answer to a new computer while its account's directories are at
// Config.MaxDirs and each was used too recently to go (dirs.go).
func (m *Module) tooManyDirs(from protocol.Requester) *protocol.Error {
	m.metrics.refused(refusedDirs)
	m.warns.Log(slog.LevelWarn, "max dirs", "agent: a new computer's question was refused: its account has as many computers' directories as --ai-max-dirs, each used within --ai-idle-after and a turn's time",
		"maxDirs", m.cfg.MaxDirs, "account", from.AccountID, "traposId", from.TraposID)
	return protocol.Errorf(protocol.CodeBusy, "the agent has too many computers: ask again later")
}

// tooManyComputers is the busy answer to a new computer while every computer with agent state
// is using it.
func (m *Module) tooManyComputers(from protocol.Requester) *protocol.Error {
	m.metrics.refused(refusedComputers)
	m.warns.Log(slog.LevelWarn, "max computers", "agent: a question was refused: as many computers as --ai-max-computers use the agent, none idle",
		"maxComputers", m.cfg.MaxComputers, "accountId", from.AccountID, "traposId", from.TraposID)
	return protocol.Errorf(protocol.CodeBusy, "the agent has too many computers: ask in a minute")
}
