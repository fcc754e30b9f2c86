package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
)

// promptResult is opencode's reply to a turn's prompt.
type promptResult struct {
	reply *promptReply
	err   error
}

// ending is how a turn ended: its done reason, the error event sent before the done event
// (nil if none), and the fault when it failed for a cause only the operator can fix.
type ending struct {
	reason string
	event  *Event
	fault  *fault
	// detail is the failure as the operator's WARN line gives it: the player's line, or more.
	detail string
}

// startingMessage is the starting event's: opencode loads a computer's instance on its first
// prompt, which the gateway cannot do ahead of it (no other route of opencode 1.18.33 does that
// work: the first prompt after GET /mcp, /config/providers and /experimental/tool in the
// directory still took 6 to 12 s), so the player is told why the question waits.
const startingMessage = "the agent is starting for this computer: its first question takes longer"

// runTurn runs a turn to its done event.
func (m *Module) runTurn(t *turn, body promptBody) {
	end := m.converse(t, body)
	reason, errEvent := end.reason, end.event
	if errEvent != nil {
		t.add(*errEvent)
		m.metrics.failed(errEvent.Code)
	}
	t.add(Event{Kind: KindDone, Reason: reason})
	t.cancel(nil)
	m.metrics.ended(t, reason)
	t.mu.Lock()
	answered := t.textBytes
	t.mu.Unlock()
	attrs := []any{"accountId", t.caller.account, "traposId", t.caller.traposID, "session", t.sess.key.name, "turnId", t.id, "reason", reason,
		"took", time.Since(t.started).Round(time.Millisecond), "answerBytes", answered}
	if errEvent != nil {
		// The operator's only view of why a player's turn failed (opencode down, the
		// provider's refusal, an unknown model): the line the player read, no more (it holds
		// no echoed headers or body).
		attrs = append(attrs, "code", errEvent.Code, "error", errEvent.Message)
	}
	switch {
	case end.fault != nil:
		detail := end.detail
		if detail == "" {
			detail = errEvent.Message
		}
		m.outages.turnFailed(end.fault, detail)
	case reason == ReasonStop:
		m.outages.turnSucceeded()
	}
	m.log.Info("agent: turn ended", attrs...)
}

// converse asks opencode and follows the turn to its end.
func (m *Module) converse(t *turn, body promptBody) ending {
	prompted := false
	defer func() {
		if !prompted {
			m.release(t)
		}
	}()
	ctx := t.ctx
	t.calledAt = m.cfg.Clock.Now()
	m.once.Do(func() {
		// Started on the first question, so the directory's instance (and its MCP connection)
		// starts only once this gateway's /mcp is serving.
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.stream.run(m.ctx)
		}()
	})
	if err := m.stream.waitReady(ctx, readyWait); err != nil {
		return m.failed(t, err)
	}
	run := m.stream.opencodeRun()
	if t.sess.pl.prompted.Load() != run {
		t.add(Event{Kind: KindStarting, Message: proseText(startingMessage)})
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	err := t.sess.oc.ensureMCP(cctx)
	cancel()
	if err != nil {
		return m.failed(t, err)
	}
	sid, err := m.sessionID(ctx, t.sess)
	if err != nil {
		return m.failed(t, err)
	}
	if detail := m.awaitModelCheck(ctx, t.sess.oc); detail != "" {
		if ctx.Err() != nil {
			return stopped(t, context.Cause(ctx))
		}
		// The line lacksModel refuses a question with; the check has warned the operator.
		return ending{reason: ReasonError, event: &Event{Kind: KindError, Code: string(CodeAIUnavailable),
			Message: proseText("the agent is unavailable: " + detail)}}
	}
	t.setOpencodeID(sid)
	m.stream.attach(sid, t)
	replies := make(chan promptResult, 1)
	finished := make(chan struct{}) // closed once the session is free again
	prompted = true
	m.wg.Add(1)
	go func() {
		// The prompt outlives an abort: its reply is how the gateway knows opencode stopped,
		// and until then the session stays busy.
		defer m.wg.Done()
		defer close(finished)
		r, err := t.sess.oc.prompt(m.ctx, sid, body)
		if err == nil {
			t.sess.pl.prompted.Store(run)
		}
		replies <- promptResult{r, err}
		t.tr.waitIdle(m.ctx, m.idleClock, idleWait) // the stream may lag behind the reply
		m.stream.detach(sid, t)
		m.release(t)
	}()
	if testHookAwaitingReply != nil {
		testHookAwaitingReply(ctx, replies)
	}
	select {
	case res := <-replies:
		<-finished // so the done event comes once the session takes a new question
		if ctx.Err() == nil {
			return m.outcome(t, res)
		}
	case <-ctx.Done():
	}
	// Stopped: aborted on opencode, which does not stop a turn whose client went away, also
	// when the prompt's reply was in hand as the stop came. Close cancels the prompt's call
	// too, so on a loaded machine its reply (the call's error) can be ready before this
	// goroutine reaches the select, which then takes either.
	m.stopOnOpencode(t, sid, finished)
	return stopped(t, context.Cause(ctx))
}

// testHookAwaitingReply, when set (by a test), runs just before a turn waits for its
// prompt's reply or its stop, with the turn's context and the reply's channel.
var testHookAwaitingReply func(ctx context.Context, replies chan promptResult)

// stopOnOpencode aborts a turn on opencode and waits (at most abortWait) until opencode has
// stopped it; the aborts go on in the background after that (abortUntilStopped), and the
// session stays busy until opencode has stopped the turn, so nothing is queued behind a turn
// that still runs. The wait does not include the aborts' calls: the first abort's own wait,
// up to callTimeout on a hung opencode, held the turn's done event 20 s and more after Q.
func (m *Module) stopOnOpencode(t *turn, sid string, finished <-chan struct{}) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.abortUntilStopped(t, sid, finished)
	}()
	wait := m.abortClock.NewTimer(abortWait)
	defer wait.Stop()
	select {
	case <-finished:
	case <-m.ctx.Done():
	case <-wait.C():
	}
}

// abortUntilStopped aborts a turn on opencode, and again every abortEvery until the prompt's
// reply comes (opencode has stopped it) or the gateway stops. opencode answers an abort of an
// idle session with true and forgets it, so an abort that overtook its prompt is lost; hence
// the tries. An abort that fails (opencode hung: each waits callTimeout) is warned once, not
// at each try, and the end says how many failed: opencode stopped the turn, or the gateway
// stopped and gave up.
func (m *Module) abortUntilStopped(t *turn, sid string, finished <-chan struct{}) {
	failed := 0 // aborts that failed
	abort := func() {
		// Not m.ctx: a gateway that is stopping (Close, right after its sockets closed) still
		// aborts, or the turn runs on in opencode, which does not stop a turn whose client went
		// away, and the restarted gateway's next question on the conversation waits behind it.
		timeout := callTimeout
		if m.ctx.Err() != nil {
			timeout = m.cfg.ClosingAbortWait
		}
		ctx, cancel := clock.WithTimeout(context.WithoutCancel(m.ctx), m.abortClock, timeout)
		defer cancel()
		err := t.sess.oc.abort(ctx, sid)
		t.abortFailing.Store(err != nil)
		if err == nil {
			return
		}
		if failed++; failed == 1 {
			m.log.Warn("agent: could not abort a turn on opencode; trying again until it stops the turn",
				"accountId", t.caller.account, "traposId", t.caller.traposID, "turnId", t.id, "err", firstLine(err.Error()))
		}
	}
	ended := func(gaveUp bool) {
		switch {
		case failed == 0:
		case gaveUp:
			m.log.Warn("agent: gave up aborting a turn on opencode: the gateway stops",
				"accountId", t.caller.account, "traposId", t.caller.traposID, "turnId", t.id, "failedAborts", failed)
		default:
			m.log.Info("agent: opencode stopped a turn whose aborts had failed",
				"accountId", t.caller.account, "traposId", t.caller.traposID, "turnId", t.id, "failedAborts", failed)
		}
	}
	abort()
	next := m.abortClock.NewTimer(abortEvery)
	defer next.Stop()
	for {
		select {
		case <-finished:
			ended(m.ctx.Err() != nil) // Close cancels the prompt's call: not opencode's stop
			return
		case <-m.ctx.Done():
			ended(true)
			return
		case <-next.C():
			abort()
			next.Reset(abortEvery)
		}
	}
}

// release frees the turn's session for the next question.
func (m *Module) release(t *turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.sess.busy == t {
		t.sess.busy = nil
		m.unholdLocked(t.caller)
		m.touchLocked(t.sess.pl) // idle from now
	}
}

// stopped is the end of a turn the gateway stopped: never the operator's fault (a turn's
// deadline is its own limit).
func stopped(t *turn, cause error) ending {
	switch {
	case errors.Is(cause, errAborted):
		return ending{reason: ReasonAborted}
	case errors.Is(cause, errDisconnected):
		return ending{reason: ReasonDisconnected}
	case errors.Is(cause, errDeadline):
		return ending{reason: ReasonDeadline, event: &Event{Kind: KindError, Code: string(protocol.CodeTimeout),
			Message: fmt.Sprintf("The agent did not finish in %s: ask again later", spokenDuration(t.m.cfg.TurnDeadline))}}
	}
	return ending{reason: ReasonError, event: &Event{Kind: KindError, Code: string(CodeAIUnavailable), Message: "The gateway is shutting down; ask again later."}}
}

// failed ends a turn whose opencode call failed (unless the turn was stopped meanwhile): the
// operator's fault, whose WARN line gives a hostError's whole story (the player reads its
// line without the host's paths).
func (m *Module) failed(t *turn, err error) ending {
	if t.ctx.Err() != nil {
		return stopped(t, context.Cause(t.ctx))
	}
	msg, f := m.diagnose(t.ctx, err, m.cfg.Clock.Now().Sub(t.calledAt))
	end := ending{reason: ReasonError, event: &Event{Kind: KindError, Code: string(CodeAIUnavailable), Message: proseText(msg)}, fault: f}
	var he *hostError
	if errors.As(err, &he) {
		end.detail = fmt.Sprintf("%s (traposId %s, turnId %s)", he.full, t.caller.traposID, t.id)
	}
	return end
}

// outcome reads opencode's reply to the prompt: only a provider's data.message reaches the
// computer (a 401's echoed headers and body never do). A model's failure is the operator's
// fault; a conversation gone on opencode is not (the next question starts a new one).
func (m *Module) outcome(t *turn, res promptResult) ending {
	if res.err != nil {
		var ae *apiError
		if !errors.As(res.err, &ae) {
			return m.failed(t, res.err)
		}
		if ae.status == http.StatusNotFound {
			m.mu.Lock()
			t.sess.opencodeID = "" // gone on opencode: the next question starts a new conversation
			m.mu.Unlock()
			return ending{reason: ReasonError, event: &Event{Kind: KindError, Code: string(CodeAIUnavailable),
				Message: "The conversation was lost: ask again for a new one"}}
		}
		// A bare 500 (e.g. an unknown model): the reason is only on the stream.
		msg, f := t.tr.waitError(lateErrorWait), faultModel
		if msg == "" {
			msg, f = ae.Error(), faultOpencode
		} else {
			msg = modelFailed(msg)
			m.modelMayBeGone()
		}
		return ending{reason: ReasonError, event: &Event{Kind: KindError, Code: string(CodeAIUnavailable), Message: proseText(msg)}, fault: f}
	}
	m.settle(t, res.reply)
	if e := res.reply.Info.Error; e != nil {
		if e.Name == "MessageAbortedError" {
			return ending{reason: ReasonAborted}
		}
		msg := firstLine(e.Data.Message)
		if msg == "" {
			msg = e.Name
		}
		return ending{reason: ReasonError, event: &Event{Kind: KindError, Code: string(CodeAIUnavailable), Message: proseText(modelFailed(msg))},
			fault: faultModel}
	}
	if res.reply.Info.Finish == "" {
		// Stopped on opencode before its model finished, not by this gateway: opencode 1.18.33
		// answers a turn that waited to retry its provider, aborted or its instance disposed,
		// with neither an error nor a finish (only a message its model finished has one).
		return ending{reason: ReasonAborted}
	}
	return ending{reason: ReasonStop}
}

// modelFailed is the player's line for a turn the model failed (the provider's refusal, an
// unknown model): opencode's words alone name no fix, and those it writes for an unreachable
// provider ("Is the computer able to access the url?") mean opencode's host, which a player
// at a computer reads as their own. Only the operator can fix it, so the line says so.
func modelFailed(reason string) string {
	return "The agent's model failed (tell the gateway's operator): " + reason
}

// settle relays the turn's text the event stream did not carry (text.go). The reply holds
// only the turn's last message; when the stream may have missed events (it dropped, or the
// turn's idle never came), every message of the turn is read from opencode (those whose
// parent is the turn's user message), the reply standing in if that fails.
func (m *Module) settle(t *turn, reply *promptReply) {
	parts := reply.Parts
	if !t.tr.streamWhole() && reply.Info.ParentID != "" {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), callTimeout)
		msgs, err := t.sess.oc.messages(ctx, t.opencodeSessionID())
		cancel()
		if err != nil {
			m.log.Warn("agent: could not read a turn's messages after opencode's event stream dropped; relaying its last message's text only",
				"traposId", t.caller.traposID, "turnId", t.id, "err", firstLine(err.Error()))
		} else {
			var all []ocPart
			for _, msg := range msgs {
				if msg.Info.Role == "assistant" && msg.Info.ParentID == reply.Info.ParentID {
					all = append(all, msg.Parts...)
				}
			}
			if len(all) > 0 {
				parts = all
			}
		}
	}
	t.settleText(parts)
}

// relayText relays answer text to the computer, as prose (proseText) that goes on from q, its
// part's text before it, and returns where it leaves off (cctext.ProseFrom).
func (m *Module) relayText(t *turn, q cctext.Quoting, text string) cctext.Quoting {
	shown, q := cctext.ProseFrom(q, text)
	if t.addText(wireText(shown), m.cfg.AnswerCap) {
		m.metrics.firstTextAfter(time.Since(t.started))
	}
	return q
}

// sessionID returns the opencode session of a conversation: the one already known, the one
// a previous gateway created (found by title), or a new one with the gateway's rules.
func (m *Module) sessionID(ctx context.Context, s *session) (string, error) {
	m.mu.Lock()
	id := s.opencodeID
	m.mu.Unlock()
	if id != "" {
		return id, nil
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	title := s.key.title()
	found, err := s.oc.findSession(ctx, title)
	if err != nil {
		return "", err
	}
	if found != nil && !sameRules(found.Permission, m.rules) {
		// Created under other rules (--ai-allow-host-tools changed): not continued.
		m.log.Info("agent: a conversation was created under other permission rules; starting a new one", "accountId", s.key.account, "traposId", s.key.traposID, "session", s.key.name)
		if err := s.oc.deleteSession(ctx, found.ID); err != nil {
			return "", err
		}
		found = nil
	}
	if found == nil {
		if found, err = s.oc.createSession(ctx, title, m.rules); err != nil {
			return "", err
		}
	} else {
		m.stopOrphan(ctx, s, found.ID)
	}
	m.mu.Lock()
	s.opencodeID = found.ID
	m.mu.Unlock()
	return found.ID, nil
}

// stopOrphan aborts a turn still running on a conversation this gateway finds (an earlier
// gateway's, killed before it could abort it, or one the replica a computer left is still
// stopping: opencode does not stop a turn whose client went away), and waits until opencode
// has stopped it, at most abortWait. Otherwise the question waits behind it (behind a stalled
// model, or a permission ask nobody answers, until the question's deadline) and shows its tool
// lines. It does its best: an opencode that cannot say (a route it lacks) is asked anyway, and
// the question says what else fails.
func (m *Module) stopOrphan(ctx context.Context, s *session, id string) {
	busy, err := s.oc.busy(ctx, id)
	if err == nil && busy {
		m.log.Info("agent: a turn this gateway did not start still ran on the conversation; aborting it", "accountId", s.key.account, "traposId", s.key.traposID, "session", s.key.name)
		err = s.oc.abort(ctx, id)
	}
	until := time.Now().Add(abortWait)
	for err == nil && busy && time.Now().Before(until) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(orphanPoll):
		}
		busy, err = s.oc.busy(ctx, id)
	}
	if err != nil {
		m.log.Warn("agent: could not learn whether a turn still runs on the conversation (if one does, the question waits for it)", "accountId", s.key.account, "traposId", s.key.traposID, "session", s.key.name, "err", firstLine(err.Error()))
	}
}

// answerAsk answers one permission ask of a turn: once, only for a tool acting on the asking
// computer (after the player's yes for a write, delete or run); otherwise reject with a
// message, so the model reads why and the turn goes on. Never "always".
func (m *Module) answerAsk(t *turn, askID, permission, callID string) {
	input := t.tr.inputOf(callID, t.ctx.Done())
	v := judge(permission, input, t.caller)
	if v.allow && v.confirm != "" {
		v = m.confirm(t, permission, input, v.confirm)
	}
	reply := replyOnce
	if !v.allow {
		reply = replyReject
	}
	m.metrics.asked(reply)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), callTimeout)
	defer cancel()
	if err := t.sess.oc.replyPermission(ctx, askID, reply, v.message); err != nil {
		m.log.Warn("agent: could not answer a permission ask", "accountId", t.caller.account, "traposId", t.caller.traposID, "turnId", t.id, "err", firstLine(err.Error()))
	}
}

// confirm puts a write, delete or run before the computer (a confirm event, with the request
// it will be) and waits for ai.approve, at most the confirm timeout. The computer answers by
// itself when its settings would refuse the request (ai.approve with its reason): the player
// is asked only what the owner allows.
func (m *Module) confirm(t *turn, permission string, input []byte, action string) verdict {
	name := strings.TrimPrefix(permission, toolPrefix)
	detail, size := describe(name, input)
	// A run is approved on what it runs: its whole code, when the detail shows only part; a
	// write on what it writes (contentOf).
	full, what := fullOf(name, input, detail)
	full = wireText(full)
	if n := protocol.WireLen(full); n > fullMax {
		return verdict{message: fmt.Sprintf("This run's %s is %d bytes: the player is shown at most %d to approve, so it was not put to them. Send a shorter one.", what, n, fullMax)}
	}
	req, err := changeRequest(name, input)
	if err != nil {
		// The tool would refuse this path (bad_payload) without touching the computer: the
		// model reads why, and the player is not asked about a change that cannot happen.
		return verdict{message: err.Error()}
	}
	id := newID("confirm")
	answer := t.askConfirm(id)
	defer t.dropConfirm(id)
	t.add(Event{Kind: KindConfirm, ConfirmID: id, Action: action, Tool: wireText(name), Detail: wireText(detail), Bytes: size,
		Full: full, Content: contentOf(name, input), Request: req})
	timer := time.NewTimer(m.cfg.ConfirmTimeout)
	defer timer.Stop()
	select {
	case a := <-answer:
		switch {
		case a.allow:
			return verdict{allow: true}
		case a.reason != "":
			// The computer's settings refuse it: its own words, as the request would have got,
			// and whose refusal it is (settingRefused).
			return verdict{message: fmt.Sprintf("%s: %s. %s", protocol.CodeForbidden, strings.TrimRight(a.reason, ". "), settingRefused)}
		}
		return verdict{message: fmt.Sprintf("The player refused this %s (%s %s). Do not retry it; tell the player what you wanted to do instead.", action, name, detail)}
	case <-timer.C:
		return verdict{message: fmt.Sprintf("The player did not answer within %s, so this %s was refused.", spokenDuration(m.cfg.ConfirmTimeout), action)}
	case <-t.ctx.Done():
		return verdict{message: "The turn was stopped."}
	}
}
