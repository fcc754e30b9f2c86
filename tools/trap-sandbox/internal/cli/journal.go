package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
)

// journalEnv is the variable systemd sets for a service whose stdout or stderr is the journal's
// stream: that stream's "DEVICE:INODE" (systemd.exec(5), JOURNAL_STREAM).
const journalEnv = "JOURNAL_STREAM"

// onJournal says whether w is the journal's stream, as $JOURNAL_STREAM names it: not merely
// that the variable is set, since a program a unit started with its stderr redirected (to a
// file, by a shell) inherits it too.
func onJournal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	stream := os.Getenv(journalEnv)
	return stream != "" && stream == streamID(f)
}

// ErrorPrefix is what main writes before the line of a command that failed (its error, the
// command's last line): the journal's priority of an error when stderr is the journal's stream,
// so that a unit whose start failed has its reason among journalctl -p err's lines; else
// nothing.
func ErrorPrefix(stderr io.Writer) string {
	if onJournal(stderr) {
		return syslogPrefixes[0]
	}
	return ""
}

// journalHandler is a text handler whose lines each start with the syslog priority of their
// level (sd-daemon(3)'s prefix: <3> error, <4> warning, <6> info, <7> debug), which journald
// takes as the entry's priority, and strips: without it every line was at info, and
// journalctl -p warning showed none of the gateway's warnings or errors.
type journalHandler struct {
	// byPriority are one text handler per prefix, in the order of priorities: each writes
	// its prefix and its line in one Write (os.File serializes writes, so lines never mix).
	byPriority [4]slog.Handler
}

// syslogPrefixes are the prefixes of journalHandler.byPriority.
var syslogPrefixes = [4]string{"<3>", "<4>", "<6>", "<7>"}

func newJournalHandler(w io.Writer, opts *slog.HandlerOptions) *journalHandler {
	h := &journalHandler{}
	for i, p := range syslogPrefixes {
		h.byPriority[i] = slog.NewTextHandler(prefixedWriter{w: w, prefix: p}, opts)
	}
	return h
}

// Enabled implements slog.Handler.
func (h *journalHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.byPriority[0].Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	switch {
	case r.Level >= slog.LevelError:
		return h.byPriority[0].Handle(ctx, r)
	case r.Level >= slog.LevelWarn:
		return h.byPriority[1].Handle(ctx, r)
	case r.Level >= slog.LevelInfo:
		return h.byPriority[2].Handle(ctx, r)
	default:
		return h.byPriority[3].Handle(ctx, r)
	}
}

// WithAttrs implements slog.Handler.
func (h *journalHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := &journalHandler{}
	for i, p := range h.byPriority {
		n.byPriority[i] = p.WithAttrs(attrs)
	}
	return n
}

// WithGroup implements slog.Handler.
func (h *journalHandler) WithGroup(name string) slog.Handler {
	n := &journalHandler{}
	for i, p := range h.byPriority {
		n.byPriority[i] = p.WithGroup(name)
	}
	return n
}

// prefixedWriter writes prefix before each Write's bytes (one line of a text handler), in
// the same Write.
type prefixedWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixedWriter) Write(b []byte) (int, error) {
	line := make([]byte, 0, len(p.prefix)+len(b))
	line = append(append(line, p.prefix...), b...)
	if _, err := p.w.Write(line); err != nil {
		return 0, err
	}
	return len(b), nil
}
