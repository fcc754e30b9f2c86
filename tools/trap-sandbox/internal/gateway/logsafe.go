package gateway

import (
	"log/slog"
	"strconv"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/server"
)

// maxLoggedBytes bounds every client-supplied value in a log line (a traposId, a type, an
// error text): a 128 KiB type must not become a 128 KiB log line per frame.
const maxLoggedBytes = 200

// clip returns s cut to maxLoggedBytes (at a rune boundary) and marked as cut, with the
// length it had.
func clip(s string) string { return cctext.Clip(s, maxLoggedBytes) }

// quoteClipped is clip for a value shown inside a message to a peer: quoted, at most
// maxLoggedBytes of it.
func quoteClipped(s string) string {
	if len(s) <= maxLoggedBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(clip(s))
}

// warnEvery is how often one kind of WARN line is written per address; what comes in
// between is counted and reported with the next line.
const warnEvery = logthrottle.Every

// warnThrottle writes a repeated WARN (or ERROR) line (same message, same address; with
// warnEach, same item too) at most once per warnEvery, with the number of lines it suppressed
// since the last one.
type warnThrottle struct{ t *logthrottle.Throttle }

func newWarnThrottle(logger *slog.Logger, c clock.Clock) *warnThrottle {
	return &warnThrottle{logthrottle.New(logger, c)}
}

// warn logs msg for address (grouped by server.AddressKey: an IPv6 /64 is one address) unless it
// was logged for it less than warnEvery ago; it reports whether it logged.
func (w *warnThrottle) warn(msg, address string, attrs ...any) bool {
	return w.logAt(slog.LevelWarn, msg, address, attrs...)
}

// error is warn at ERROR: a failure of the gateway's own (its account store), which every
// computer's retry would otherwise log again every few seconds.
func (w *warnThrottle) error(msg, address string, attrs ...any) bool {
	return w.logAt(slog.LevelError, msg, address, attrs...)
}

// warnBurst is warn for a failure that comes from many computers of an address at once and
// then stops (logthrottle.LogBurst): the number of those it left out is written at the end of
// the minute, not with a next line that may never come.
func (w *warnThrottle) warnBurst(msg, address string, attrs ...any) bool {
	return w.t.LogBurst(slog.LevelWarn, msg+" "+server.AddressKey(address), msg, append([]any{"remote", address}, attrs...)...)
}

// warnEach is warn per item of the address (a computer's credential, an API token's id): the
// computers of one Minecraft server share its address, and each is named in a line of its
// own, as long as logthrottle.MaxItemsPerGroup items from the address fit.
func (w *warnThrottle) warnEach(msg, address, item string, attrs ...any) bool {
	return w.t.LogItem(slog.LevelWarn, msg+" "+server.AddressKey(address), item, msg, append([]any{"remote", address}, attrs...)...)
}

// warnOf is warnEach for a line that comes from no address (a revocation heard on the bus):
// once per warnEvery for each item, as long as logthrottle.MaxItemsPerGroup items fit.
func (w *warnThrottle) warnOf(msg, item string, attrs ...any) bool {
	return w.t.LogItem(slog.LevelWarn, msg, item, msg, attrs...)
}

func (w *warnThrottle) logAt(level slog.Level, msg, address string, attrs ...any) bool {
	return w.t.Log(level, msg+" "+server.AddressKey(address), msg, append([]any{"remote", address}, attrs...)...)
}
