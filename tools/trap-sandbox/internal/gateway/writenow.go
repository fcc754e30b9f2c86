package gateway

// maxWriteNowBytes bounds a frame a host's caller writes itself (enqueueRequest): less than
// half the smallest send buffer Linux gives a socket (SOCK_MIN_SNDBUF, about 4.5 KiB), so an
// empty send buffer takes it in one step. A ping or a small command is a few hundred bytes;
// a file's chunk goes through the queue.
const maxWriteNowBytes = 2 << 10

// enqueueRequest sends the frame of a host's gateway_request. The caller writes it itself
// when the write cannot wait: no writer runs and nothing is queued (sendQueue.claim), the
// frame is small, and the kernel holds none of the socket's bytes unacknowledged
// (sendBufferEmpty), so its send buffer takes the frame at once. That saves a writer
// goroutine per request. Otherwise the frame is queued for a writer goroutine, as any frame:
// a computer that does not read blocks that writer, never the host's caller, who waits no
// longer than its timeout. It fails as enqueue does.
func (s *Session) enqueueRequest(frame []byte) error {
	if len(frame) > maxWriteNowBytes || !s.claimWriter(frame, writeInline) {
		return s.enqueue(frame)
	}
	// The caller is the socket's one writer now (control frames, a few bytes, may still be
	// written beside it: a pong, an idle probe), so nothing else fills the send buffer
	// between the check and the write.
	if !sendBufferEmpty(s.conn.NetConn()) {
		return s.queueClaimed(frame)
	}
	if err := s.write(frame, s.realNow().Add(s.gw.cfg.WriteTimeout)); err != nil {
		s.writeFailed(err) // the close it begins ends the request's wait (not_connected)
		s.send.release()
		return nil
	}
	if s.send.keepIfQueued() {
		go s.flush() // what was queued meanwhile may be large: a writer of its own writes it
	}
	return nil
}

// queueClaimed queues frame for a writer goroutine after the caller claimed the writer role
// for it, as enqueue would have.
func (s *Session) queueClaimed(frame []byte) error {
	result := s.send.pushClaimed(frame)
	if s.send.keepIfQueued() {
		go s.flush()
	}
	switch result {
	case pushQueued:
		return nil
	case pushFull:
		return errQueueFull
	}
	return s.errNotConnected()
}
