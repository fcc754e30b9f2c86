package gateway

import "time"

// maxWriteNowBytes bounds a frame a host's caller writes itself (enqueueRequest): a ping or
// a small command is a few hundred bytes; a file's chunk goes through the queue.
const maxWriteNowBytes = 2 << 10

// writeNowSlack is how much of the write timeout a caller's wait may lack and still write its
// frame itself: what passed between the caller's start and its write (well under it).
const writeNowSlack = 100 * time.Millisecond

// enqueueRequest sends the frame of a host's gateway_request, whose caller waits from now
// (the wall clock, read by the caller) until deadline (zero: not known). A caller that waits
// at least the write timeout writes the frame itself when no writer runs and nothing is
// queued (sendQueue.claim), and the frame is small: that saves a writer goroutine per
// request. Its write is bounded by its own deadline as well as the write timeout, so a
// computer that does not read holds it no longer than it waits anyway, and is dropped as a
// writer's timeout would drop it (at most writeNowSlack sooner). Any other frame is queued
// for a writer goroutine: a computer that does not read blocks that writer, never a caller,
// who waits no longer than its timeout. It fails as enqueue does. queued reports whether
// the queue holds frame now; otherwise frame is free again (the caller encoded it into a
// pooled buffer).
func (s *Session) enqueueRequest(frame []byte, now, deadline time.Time) (queued bool, err error) {
	writeBy := now.Add(s.gw.cfg.WriteTimeout)
	if len(frame) > maxWriteNowBytes || deadline.IsZero() || deadline.Before(writeBy.Add(-writeNowSlack)) ||
		!s.claimWriter(frame, writeInline) {
		err := s.enqueue(frame, frameRequest)
		return err == nil, err
	}
	if !s.writeAsWriter(frame, earliest(writeBy, deadline)) {
		return false, nil // the close it began ends the request's wait (not_connected)
	}
	if s.send.keepIfQueued() {
		go s.flush() // what was queued meanwhile may be large: a writer of its own writes it
	}
	return false, nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
