package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// TestTheWebConsoleDrawsOnlyTheNewestFrame: frames that reach the page between two of the
// browser's animation frames are drawn once, the newest, at the next animation frame. The
// page's animation frames are held (requestAnimationFrame queued, run by the test) while the
// computer draws two frames and goes away: the view took both and the end of the stream, and
// drew neither until the next animation frame, which drew the newest alone. Before, the page
// drew every frame it read, each as it came, so a tab slower than the computer (a phone, a
// tab in the background) drew frames ever further behind it.
func TestTheWebConsoleDrawsOnlyTheNewestFrame(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:fast")
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Afast")))
	c.watched(ctx, t)
	c.draw(ctx, t, "frame 0")
	until(t, "the first frame", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === "frame 0"`)

	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`
		window.animationFrames = [];
		requestAnimationFrame = (f) => animationFrames.push(f);
		window.redraws = 0;
		new MutationObserver((records) => { redraws += records.filter((r) => r.addedNodes.length).length; })
			.observe(document.getElementById("screen"), { childList: true });
		true`))
	require.NoError(t, err)
	// chromedp's waits run on animation frames too: these wait on a timer instead.
	waitFor := func(what, js string) {
		t.Helper()
		_, err := chromedp.Run(page, chromedp.Poll[bool](js, chromedp.WithPollingInterval(10*time.Millisecond)))
		require.NoError(t, err, "waiting for %s", what)
	}
	c.draw(ctx, t, "frame 1")
	waitFor("the page given frame 1", `animationFrames.length > 0 || redraws > 0`)
	c.draw(ctx, t, "frame 2")
	require.NoError(t, c.ws.Close())
	waitFor("the stream's end read", `document.getElementById("status").textContent.startsWith("not_connected: computer 7:fast disconnected")`)

	drawn, err := chromedp.Run(page, chromedp.Evaluate[[]any](`(async () => {
		const before = redraws;
		for (const f of animationFrames.splice(0)) f(performance.now());
		await new Promise((resolve) => setTimeout(resolve)); // the observer's records
		return [before, redraws, document.getElementById("screen-text").textContent];
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, []any{0.0, 1.0, "frame 2"}, drawn,
		"no frame drawn until the animation frame; then one, the newest (the view's last screen stays, greyed)")
}

// drawingComputer is a computer on a raw socket that draws the frames a test gives it (draw) on
// the one screen watch it answers.
type drawingComputer struct {
	ws      *harness.Computer
	id      string
	watch   chan struct{}
	answers chan harness.Frame
}

// connectDrawingComputer says hello on g as id and answers computer.info (as a client older than
// 0.5.15: without allowed), screen.watch and screen.unwatch; draw sends a frame.
func connectDrawingComputer(ctx context.Context, t *testing.T, g *harness.Gateway, id string) *drawingComputer {
	t.Helper()
	ws, err := harness.Dial(ctx, "ws://"+g.Addr+"/trapos/ws", id)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	hello, err := ws.Request(ctx, harness.TypeHello, map[string]any{"traposId": id, "secret": sandboxPassword})
	require.NoError(t, err)
	require.True(t, hello.OK != nil && *hello.OK, "hello: %+v", hello.Error)
	c := &drawingComputer{ws: ws, id: id, watch: make(chan struct{}, 1), answers: make(chan harness.Frame, 1)}
	go func() {
		for {
			f, err := ws.Next(ctx)
			if err != nil {
				return
			}
			if f.Event == harness.EventGatewayResponse {
				c.answers <- f
				continue
			}
			if f.Event != harness.EventGatewayRequest {
				continue
			}
			payload := map[string]any{}
			switch f.Type {
			case harness.TypeComputerInfo:
				payload = map[string]any{"traposId": id, "clientVersion": "0.5.14"}
			case "screen.watch":
				payload = map[string]any{"watchId": 1}
				select {
				case c.watch <- struct{}{}:
				default:
				}
			}
			_ = ws.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": id,
				"messageId": f.MessageID, "type": f.Type, "ok": true, "payload": payload})
		}
	}()
	return c
}

// watched waits for the gateway's screen.watch.
func (c *drawingComputer) watched(ctx context.Context, t *testing.T) {
	t.Helper()
	select {
	case <-c.watch:
	case <-ctx.Done():
		t.Fatal("the view never watched the screen")
	}
}

// draw sends the whole screen, one row of text, and waits for the gateway's answer.
func (c *drawingComputer) draw(ctx context.Context, t *testing.T, text string) {
	t.Helper()
	blit := fmt.Sprintf("%0*d", len(text), 0)
	require.NoError(t, c.ws.WriteJSON(map[string]any{"event": harness.EventComputerRequest, "traposSenderId": c.id,
		"messageId": harness.NewMessageID(), "type": "screen.update", "payload": map[string]any{
			"watchId": 1, "seq": 1, "width": len(text), "height": 1, "colour": true,
			"cursor":  map[string]any{"x": 1, "y": 1, "blink": false},
			"rows":    map[string]any{"1": map[string]any{"text": text, "fg": blit, "bg": blit}},
			"palette": []string{"#f0f0f0"}, "fg": 1, "bg": 32768}}))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a generous bound: only a failure waits it
	defer cancel()
	select {
	case f := <-c.answers:
		require.True(t, f.OK != nil && *f.OK, "screen.update: %+v", f.Error)
	case <-ctx.Done():
		t.Fatal("the gateway did not answer screen.update")
	}
}
