package screen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// WatchPattern is the host API's live view of a computer's screen: a server-sent event stream
// (Accept: text/event-stream) of frames, each `event: frame` with the whole screen as JSON
// (FrameJSON); it ends with `event: end` and the error when the computer goes away, or when
// the token it was opened with is revoked or expires (checked before each frame, and every
// KeepAlive while the screen stays still, with a `: keepalive` comment). The query's monitor
// (MonitorParam) names a monitor attached to the computer to stream instead of its own screen;
// its errors, the refusal and the end, name that monitor as the gateway asked for it (Monitor).
// A refusal the computer gave itself (its ok:false to screen.watch), and an end it gave itself
// (its update's ended), say so (Refused).
// Reading once and sending input go through …/requests (screen.read, screen.input), like every
// type.
const WatchPattern = "/trapos/computers/{traposId}/screen"

// MonitorParam is the stream's query parameter naming a monitor of the computer's (a side such
// as top, or a wired modem's monitor_0): its screen is streamed, each frame with its monitor
// and textScale, instead of the computer's own.
const MonitorParam = "monitor"

// KeepAlive is how long the stream waits on a still screen before it checks its token again
// (a revoked or expired one ends the stream then, not at the screen's next change) and sends a
// comment line (`: keepalive`, which SSE clients skip): the write keeps a proxy's idle timeout
// from cutting the stream, and fails once the viewer's connection is gone, which ends the
// watch instead of holding it for as long as the computer stays connected.
const KeepAlive = 15 * time.Second

// StreamWriteTimeout bounds each write of the stream (a frame, a keep-alive, the end): the
// server gives an event stream no deadline of its own, and a viewer that reads nothing, or
// whose connection vanished without a close (a half-open socket), blocked the write forever
// once the kernel's buffers were full, holding its watch and its goroutine as long as the
// gateway ran. Past it the stream ends, and its watch with it.
const StreamWriteTimeout = 10 * time.Second

// FrameJSON is a frame as the stream sends it: the screen, its text as host text.
type FrameJSON struct {
	Seq int `json:"seq"`
	computer.Screen
}

// monitorParam is the stream's one query parameter, as the server refuses any other
// (server.QueryParam): ?montior=top was ignored, and the stream showed the computer's own
// screen to a viewer that had asked for a monitor.
var monitorParam = server.QueryParam{Name: MonitorParam, Example: "top", Is: "a monitor attached to the computer", Without: "the stream is the computer's own screen"}

// Name implements server.Module.
func (m *Module) Name() string { return "screen" }

// Mount implements server.Module: the stream, behind the server's API auth.
func (m *Module) Mount(routes *server.Routes) {
	routes.HandleAPIFunc("GET "+WatchPattern, m.serveWatch, monitorParam)
}

func (m *Module) serveWatch(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	monitor := r.URL.Query().Get(MonitorParam)
	// ofTheMonitor is an error of the stream naming its monitor as the gateway asked the
	// computer for it (a copy: a watch's error is every viewer's).
	ofTheMonitor := func(pe *protocol.Error) *protocol.Error {
		c := *pe
		c.Monitor = computer.MonitorNamedBack(monitor)
		return &c
	}
	v, err := m.WatchMonitor(r.Context(), cctext.TraposID(r.PathValue("traposId")), monitor, 0)
	if err != nil {
		err = hostapi.ReadAgain(err) // a view is a read: its computer gone before it answered
		var pe *protocol.Error
		if !errors.As(err, &pe) {
			pe = protocol.Errorf(protocol.CodeInternal, "%v", err)
		}
		refusal := ofTheMonitor(pe.ToTheAPI())
		refusal.Refused = pe.ByComputer // the computer's own refusal, not the gateway's
		server.WriteAnswer(w, hostapi.StatusOf(pe), server.Answer{Error: refusal})
		return
	}
	defer v.Close()
	// send writes and flushes one event of the stream within writeTimeout.
	send := func(event string) error {
		_ = rc.SetWriteDeadline(time.Now().Add(m.writeTimeout))
		if _, err := io.WriteString(w, event); err != nil {
			return err
		}
		return rc.Flush()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if send("") != nil {
		return
	}
	end := func(pe *protocol.Error) {
		said := ofTheMonitor(pe)
		said.Refused = pe.ByComputer // the computer ended it itself (its update's ended)
		data, _ := marshal(server.Answer{Error: said})
		_ = send("event: end\ndata: " + string(data) + "\n\n")
	}
	for {
		wait, stop := context.WithTimeout(r.Context(), m.keepAlive)
		f, err := v.Next(wait)
		stop()
		if r.Context().Err() != nil {
			return
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// The screen stayed still for keepAlive.
			if pe := server.StillAuthorized(r.Context()); pe != nil {
				end(pe)
				return
			}
			if send(": keepalive\n\n") != nil {
				return
			}
			continue
		}
		if err != nil {
			var pe *protocol.Error
			if !errors.As(err, &pe) { // the computer went away (ErrGone)
				// "computer 7: disconnected", as the gateway's other answers name a
				// computer: never "computer 7:: …" for one with no label.
				pe = Disconnected(v.w.traposID)
			}
			end(pe)
			return
		}
		if pe := server.StillAuthorized(r.Context()); pe != nil {
			end(pe) // the token was revoked or expired while the stream ran: no more frames
			return
		}
		data, err := marshal(FrameJSON{Seq: f.Seq, Screen: f.Screen})
		if err != nil {
			return
		}
		if send("event: frame\ndata: "+string(data)+"\n\n") != nil {
			return
		}
	}
}

// Disconnected is the stream's end of a computer that went away (its socket closed), marked
// Left, which a client of the stream that words it its own way reads (the stdio MCP bridge's
// wait_for_screen), never its words.
func Disconnected(traposID string) *protocol.Error {
	pe := protocol.Errorf(protocol.CodeNotConnected, "computer %s disconnected", cctext.ShowTraposID(traposID))
	pe.Left = true
	return pe
}

// marshal encodes v as JSON on one line without HTML escaping, with the characters a terminal
// acts on as JSON escapes (cctext.ShowJSON, as every JSON answer of the API): a screen's row
// with CC's byte 0x9B is U+009B, a terminal's CSI, which a stream read with curl showed raw.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return cctext.ShowJSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
