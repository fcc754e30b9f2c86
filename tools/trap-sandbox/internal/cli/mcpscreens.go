package cli

import (
	"context"
	"errors"
	"io"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/mcp"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/screen"
)

// The screens MCP's wait_for_screen waits on (mcp.Screens): on the gateway its screen module,
// for the stdio bridge the host API's stream of the same watch. Either way the agent is one
// more viewer of the computer's one watch, shared with the web console and the CLI's live view.

// watchedScreens is the gateway's screen module as mcp.Screens.
type watchedScreens struct{ screens *screen.Module }

// WatchScreen implements mcp.Screens.
func (s watchedScreens) WatchScreen(ctx context.Context, traposID, monitor string, timeout time.Duration) (mcp.ScreenWatch, error) {
	v, err := s.screens.WatchMonitor(ctx, traposID, monitor, timeout)
	if err != nil {
		return nil, err
	}
	return watchedScreen{viewer: v, traposID: traposID}, nil
}

// watchedScreen is a viewer of the screen module as mcp.ScreenWatch.
type watchedScreen struct {
	viewer   *screen.Viewer
	traposID string
}

// Next implements mcp.ScreenWatch: a computer that went away is the gateway's not_connected of
// a request whose computer left before it answered, as every other tool's.
func (w watchedScreen) Next(ctx context.Context) (computer.Screen, error) {
	f, err := w.viewer.Next(ctx)
	if errors.Is(err, screen.ErrGone) {
		return computer.Screen{}, computer.LeftBeforeAnswer(w.traposID, false)
	}
	return f.Screen, err
}

// Close implements mcp.ScreenWatch.
func (w watchedScreen) Close() { w.viewer.Close() }

// streamedScreens is the host API's screen stream of a gateway in another process (the stdio
// bridge's) as mcp.Screens. Its traposIds are listed ones (as MCP's are), sent in their shown
// form, which the API reads back as that id.
type streamedScreens struct{ transport hostapi.HTTP }

// WatchScreen implements mcp.Screens: the stream lasts until Close, or until ctx ends (the
// gateway gives the watch's start its own bound).
func (s streamedScreens) WatchScreen(ctx context.Context, traposID, monitor string, _ time.Duration) (mcp.ScreenWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	body, err := openScreenStream(ctx, s.transport, cctext.ShowTraposID(traposID), monitor)
	if refused, ok := errors.AsType[refusal](err); ok {
		err = refused.error
	}
	if err != nil {
		cancel()
		return nil, err
	}
	w := &streamedScreen{traposID: traposID, body: body, cancel: cancel, frames: make(chan screen.FrameJSON), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.ended = readFrames(ctx, body, w.frames)
	}()
	return w, nil
}

// streamedScreen is one stream of the host API as mcp.ScreenWatch. Its reader goroutine,
// started by WatchScreen, ends by Close.
type streamedScreen struct {
	traposID string
	body     io.ReadCloser
	cancel   context.CancelFunc
	frames   chan screen.FrameJSON
	done     chan struct{} // closed when the reader has ended, ended set
	ended    error         // why the stream ended (readFrames')
}

// Next implements mcp.ScreenWatch.
func (w *streamedScreen) Next(ctx context.Context) (computer.Screen, error) {
	select {
	case f := <-w.frames:
		return f.Screen, nil
	case <-w.done:
		return computer.Screen{}, w.why()
	case <-ctx.Done():
		return computer.Screen{}, ctx.Err()
	}
}

// why words the stream's end as the gateway's own viewer would: a computer that went away as
// every tool's request whose computer left, the owner's withdrawal or a monitor taken off as
// the computer's words, anything else (a token revoked, the gateway stopping) as the
// gateway's.
func (w *streamedScreen) why() error {
	end, ok := errors.AsType[streamEnded](w.ended)
	if !ok {
		return protocol.Errorf(protocol.CodeInternal, "the gateway's stream of the screen of %s ended: %v", cctext.ShowTraposID(w.traposID), w.ended)
	}
	pe := end.why
	switch {
	case pe.Code == protocol.CodeNotConnected && pe.Left:
		// The mark of screen.Disconnected, never its words. A gateway of a build before the
		// mark (the bridge at another version's --url) ends the stream with the words alone,
		// which reach the agent as the gateway's, "computer 7: disconnected", without the
		// wait's words of what became of it: no fallback to the words is kept for it, as that
		// would keep the very comparison a rewording breaks silently.
		return computer.LeftBeforeAnswer(w.traposID, false)
	case pe.Code == protocol.CodeForbidden || pe.Code == protocol.CodeNotFound:
		return pe.FromTheAPI()
	}
	return pe
}

// Close implements mcp.ScreenWatch: the stream's request ends, and with it the gateway's viewer.
func (w *streamedScreen) Close() {
	w.cancel()
	_ = w.body.Close()
	<-w.done
}
