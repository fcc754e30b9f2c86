package server

import (
	"errors"
	"log/slog"
	"net"
	"syscall"

	"trap-sandbox/internal/logthrottle"
)

// filesMsg is the WARN line of a listener that cannot accept for want of file descriptors.
const filesMsg = "cannot accept a connection: the gateway has as many files open as it may (its open-files limit, or the system's): new computers and clients wait, /healthz too, until sockets close; raise the limit (ulimit -n, LimitNOFILE=) or lower --max-connections"

// filesListener is a listener that says at WARN, at most once a minute, when accepting fails
// for want of file descriptors (EMFILE: the process's open-files limit; ENFILE: the system's).
// net/http retries such a failure by itself and says so only to its ErrorLog, which the server
// keeps at debug: a gateway past its limit kept every new computer out, its /healthz too, and
// its log at info said nothing.
type filesListener struct {
	net.Listener
	warns *logthrottle.Throttle
}

// Accept implements net.Listener.
func (l filesListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
		l.warns.Log(slog.LevelWarn, "files "+l.Addr().String(), filesMsg, "addr", l.Addr().String(), "err", err)
	}
	return c, err
}
