package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"slices"
	"strings"
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

// connectDrawingComputer is a consoleComputer of a client older than 0.5.15 (its computer.info
// without allowed) that draws the frames a test gives it (draw) on the one screen watch it
// answers.
func connectDrawingComputer(ctx context.Context, t *testing.T, g *harness.Gateway, id string) *consoleComputer {
	t.Helper()
	return connectConsoleComputer(ctx, t, g, id, consoleComputerHooks{clientVersion: "0.5.14"})
}

// checkerWidth is how many cells across drawPaintsChecker draws.
const checkerWidth = 51

// drawPaintsChecker has the computer draw what paint's canvas is in CC: every cell of its 51x19
// screen CC's checker character (0x7F) in colour 0 on colour f, white on black.
func (c *consoleComputer) drawPaintsChecker(ctx context.Context, t *testing.T) {
	t.Helper()
	const width, height = checkerWidth, 19
	rows := map[string]any{}
	for y := 1; y <= height; y++ {
		rows[fmt.Sprint(y)] = map[string]any{"text": strings.Repeat("\x7f", width), "fg": strings.Repeat("0", width), "bg": strings.Repeat("f", width)}
	}
	white := []string{"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff",
		"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#000000"}
	c.drawScreen(ctx, t, map[string]any{"width": width, "height": height, "rows": rows,
		"cursor": map[string]any{"x": 1, "y": 1, "blink": false}, "palette": white})
}

// checkerPageAtRatio opens the web console, in a 1000x800 window of a display of ratio of its
// pixels to a CSS pixel (--force-device-scale-factor), on computer 7:paint drawing paint's
// checker (drawPaintsChecker) on a gateway of its own.
func checkerPageAtRatio(ctx context.Context, t *testing.T, ratio float64) (context.Context, func(t *testing.T, what, js string)) {
	t.Helper()
	page, until := consolePageWith(ctx, t, chromedp.Flag("force-device-scale-factor", fmt.Sprint(ratio)), chromedp.WindowSize(1000, 800))
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:paint")
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Apaint")))
	c.watched(ctx, t)
	c.drawPaintsChecker(ctx, t)
	return page, until
}

// TestTheWebConsoleDrawsAMonitorSizedScreen: a screen as large as CC's largest terminal an
// advanced monitor has (8x6 blocks at text scale 0.5: 164x81) is drawn whole, every cell in its
// colours and the cursor in its place, smaller than 16 px to fit a desktop's window; in a
// phone's window it is drawn at 8 px and scrolls sideways in its own box, the page staying in
// the window. Before, the page grew as wide as the cursor was far (the keyboard's hidden field
// sits at the cursor, out of view in the box), and the window made narrower (a phone turned)
// left that field where the cursor had been drawn, the page as wide as the old window. A line
// under it says it is wider than the window and scrolls (a phone shows no scroll bar: its first
// 55 characters looked like all of it), by a finger drawn across it on a touch screen and by its
// scroll bar with a mouse, and goes in a window that shows it whole.
func TestTheWebConsoleDrawsAMonitorSizedScreen(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:wall")
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Awall")))
	c.watched(ctx, t)
	const width, height, blit = 164, 81, "0123456789abcdef"
	palette := []string{"#f0f0f0", "#f2b233", "#e57fd8", "#99b2f2", "#dede6c", "#7fcc19", "#f2b2cc", "#4c4c4c",
		"#999999", "#4c99b2", "#b266e5", "#3366cc", "#7f664c", "#57a64e", "#cc4c4c", "#111111"}
	rows := map[string]any{}
	for y := 1; y <= height; y++ {
		var text, fg, bg []byte
		for x := 1; x <= width; x++ {
			text = append(text, byte('A'+(x+y)%26))
			fg = append(fg, blit[(x+y)%16])
			bg = append(bg, blit[(x*7+y)%16])
		}
		rows[fmt.Sprint(y)] = map[string]any{"text": string(text), "fg": string(fg), "bg": string(bg)}
	}
	c.drawScreen(ctx, t, map[string]any{"width": width, "height": height, "rows": rows, "palette": palette,
		"cursor": map[string]any{"x": 100, "y": 50, "blink": true}})
	until(t, "the screen", `document.querySelectorAll("#screen .row").length === 81`)

	// Each cell as the page drew it: its character, text and background colour; and the cursor.
	drawn, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#screen .row")].map((row) =>
		[...row.children].map((span) => {
			const style = getComputedStyle(span);
			return [...span.textContent].map((ch) => ch + " " + style.color + " " + style.backgroundColor +
				(span.classList.contains("cursor") ? " cursor" : "")).join("|");
		}).join("|"))`))
	require.NoError(t, err)
	rgb := func(hex string) string {
		var r, g, b int
		_, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b)
		require.NoError(t, err)
		return fmt.Sprintf("rgb(%d, %d, %d)", r, g, b)
	}
	require.Len(t, drawn, height)
	for y := 1; y <= height; y++ {
		var want []string
		for x := 1; x <= width; x++ {
			cell := fmt.Sprintf("%c %s %s", 'A'+(x+y)%26, rgb(palette[(x+y)%16]), rgb(palette[(x*7+y)%16]))
			if x == 100 && y == 50 {
				cell += " cursor"
			}
			want = append(want, cell)
		}
		require.Equal(t, strings.Join(want, "|"), drawn[y-1], "row %d: each cell's character and colours", y)
	}

	fit := `{
		const screen = document.getElementById("screen");
		[document.documentElement.scrollWidth - document.documentElement.clientWidth, screen.scrollWidth - screen.clientWidth,
			parseFloat(getComputedStyle(screen).fontSize)]
	}`
	size, err := chromedp.Run(page, chromedp.Evaluate[[]float64](fit))
	require.NoError(t, err)
	assert.Equal(t, 0.0, size[0], "the page in a desktop's window")
	assert.Equal(t, 0.0, size[1], "the screen whole in it")
	hidden, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("wide-note").hidden`))
	require.NoError(t, err)
	assert.True(t, hidden, "nothing said of a screen shown whole")
	assert.Less(t, size[2], 16.0, "drawn smaller than 16 px to fit")
	assert.GreaterOrEqual(t, size[2], 8.0, "at 8 px at least")

	// A desktop's window as narrow: the line names the box's scroll bar, which a mouse scrolls
	// it with; it named a finger there too.
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640)))
	until(t, "the line, for a mouse", `!document.getElementById("wide-note").hidden`)
	said, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("wide-note").textContent`))
	require.NoError(t, err)
	assert.Equal(t, "This screen is 164 characters across, more than the window shows: scroll it sideways for the rest (its scroll bar).", said)

	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	size, err = chromedp.Run(page, chromedp.Evaluate[[]float64](fit))
	require.NoError(t, err)
	assert.Equal(t, 0.0, size[0], "the page in a phone's window")
	assert.Greater(t, size[1], 0.0, "the screen scrolls sideways in its box")
	assert.Equal(t, 8.0, size[2], "at 8 px, the smallest")
	// A phone's: the line names the finger, once the page knows its pointer is one.
	until(t, "the line that says it is wider than the window", `!document.getElementById("wide-note").hidden &&
		document.getElementById("wide-note").getBoundingClientRect().bottom <= document.getElementById("screen").getBoundingClientRect().top &&
		document.getElementById("wide-note").textContent ===
		"This screen is 164 characters across, more than the window shows: scroll it sideways for the rest (a finger drawn across it)."`)

	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(1280, 900)))
	until(t, "no such line in a desktop's window, the screen whole there again", `document.getElementById("wide-note").hidden`)
}

// TestTheWebConsoleDrawsCCsCheckerOverItsWholeCell: CC's character 127 is a checker that fills
// its cell, as paint draws its canvas with it: the page draws it as its background, as it does
// the block characters. A font's ▒ left a line of the background between two rows of it, so
// paint's canvas was striped. Two rows of 127, white on black: the last pixel line of the first
// row and the first of the second have white in them.
func TestTheWebConsoleDrawsCCsCheckerOverItsWholeCell(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:paint")
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Apaint")))
	c.watched(ctx, t)
	row := map[string]any{"text": "\x7f\x7f\x7f\x7f", "fg": "0000", "bg": "ffff"}
	c.drawScreen(ctx, t, map[string]any{"width": 4, "height": 2, "rows": map[string]any{"1": row, "2": row},
		"cursor": map[string]any{"x": 1, "y": 1, "blink": false}, "palette": []string{"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff",
			"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#000000"}})
	until(t, "the checker", `document.getElementById("screen-text").textContent === "▒▒▒▒\n▒▒▒▒"`)
	box, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`{
		const rows = [...document.querySelectorAll("#screen .row")].map((row) => row.getBoundingClientRect());
		[rows[0].left, rows[0].top, rows[0].width, rows[0].height, rows[1].top]
	}`))
	require.NoError(t, err)
	shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	whiteIn := func(y int) (white int) {
		for x := int(box[0]); x < int(box[0]+box[2]); x++ {
			if r, g, b, _ := img.At(x, y).RGBA(); r > 0xc000 && g > 0xc000 && b > 0xc000 {
				white++
			}
		}
		return white
	}
	assert.Positive(t, whiteIn(int(box[1]+box[3])-1), "the first row's last pixel line is of the checker")
	assert.Positive(t, whiteIn(int(box[4])), "the second row's first pixel line is of the checker")
}

// TestTheWebConsoleDrawsCCsCheckerEvenly: paint's canvas, rows of 127, is an even checker on
// the screen and in the screen as text, across cells and rows: along a line of pixels, each
// run of one colour is as long as the next, but for the line's ends. Three checks each way in a
// cell put a check of the same colour on both sides of its edges, which joined into stripes
// twice as wide; and the screen as text drew the font's ▒, with a thin line of the page
// between its rows.
func TestTheWebConsoleDrawsCCsCheckerEvenly(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:paint")
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Apaint")))
	c.watched(ctx, t)
	row := map[string]any{"text": strings.Repeat("\x7f", 8), "fg": "00000000", "bg": "ffffffff"}
	white := []string{"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff",
		"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#000000"}
	c.drawScreen(ctx, t, map[string]any{"width": 8, "height": 3, "rows": map[string]any{"1": row, "2": row, "3": row},
		"cursor": map[string]any{"x": 1, "y": 1, "blink": false}, "palette": white})
	until(t, "the checker", `document.getElementById("screen-text").textContent === "▒▒▒▒▒▒▒▒\n▒▒▒▒▒▒▒▒\n▒▒▒▒▒▒▒▒"`)
	// The screen's rows and the screen as text's first and last checkers (none: drawn by the
	// font): left, top, right, bottom.
	box, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`{
		const rows = [...document.querySelectorAll("#screen .row")].map((row) => row.getBoundingClientRect());
		const text = [...document.querySelectorAll("#screen-text .block")].map((b) => b.getBoundingClientRect());
		[rows[0].left, rows[0].top, rows[0].right, rows[2].bottom, rows[0].height,
			...(text.length ? [text[0].left, text[0].top, text[0].right, text[text.length - 1].bottom] : [])]
	}`))
	require.NoError(t, err)
	shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	isWhite := func(x, y int) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		return r > 0x8000 && g > 0x8000 && b > 0x8000
	}
	even := func(what string, rs []int, atLeast int) {
		t.Helper()
		require.GreaterOrEqual(t, len(rs), atLeast, "%s: checks along it: %v", what, rs)
		assert.LessOrEqual(t, slices.Max(rs)*2, slices.Min(rs)*3, "%s: its runs of one colour are the same length: %v", what, rs)
	}
	left, top, right, bottom, rowHeight := int(box[0]), int(box[1]), int(box[2]), int(box[3]), box[4]
	even("the screen's first row of checks", colourRuns(right-left, func(i int) bool { return isWhite(left+i, top+int(rowHeight/6)) }), 12)
	even("the screen's first column of checks", colourRuns(bottom-top, func(i int) bool { return isWhite(left+1, top+i) }), 6)
	require.Len(t, box, 9, "the screen as text draws its checkers as the screen does")
	tLeft, tTop, tRight, tBottom := int(box[5]), int(box[6]), int(box[7]), int(box[8])
	even("the screen as text's first column of checks", colourRuns(tBottom-tTop, func(i int) bool { return !isWhite(tLeft+(tRight-tLeft)/4, tTop+i) }), 4)
}

// colourRuns are the lengths of the runs of one colour along n pixels (at(i) white or not),
// without the first and the last, which the line's ends may cut.
func colourRuns(n int, at func(i int) bool) []int {
	var out []int
	length := 1
	for i := 1; i < n; i++ {
		if at(i) == at(i-1) {
			length++
			continue
		}
		out = append(out, length)
		length = 1
	}
	if len(out) < 2 {
		return nil
	}
	return out[1:]
}

// TestTheWebConsoleDrawsCCsCheckerInWholePixels: paint's canvas, a 51x19 screen of 127, in
// a window whose fit gives the screen a size between whole pixels (1000x800: 24.9-pixel text),
// is drawn in checks all the same size, each a whole number of the display's pixels, with no
// line of blended pixels between them, on the screen and in the screen as text. Its checks
// were 8 to 11 pixels down a column, with grey lines between them, which striped the canvas:
// the cell was as wide and high as the window made it, a fraction of a pixel; and the text's
// were 4 and 3 wide, its font's 7.83-pixel advance, a dark line every few cells.
func TestTheWebConsoleDrawsCCsCheckerInWholePixels(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:paint")
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(1000, 800),
		chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Apaint")))
	c.watched(ctx, t)
	c.drawPaintsChecker(ctx, t)
	until(t, "the checker", `document.querySelectorAll("#screen .row").length === 19`)
	// The screen's first and last rows, and the screen as text's checkers (each a block) in
	// its first row and column, scrolled into view: their boxes and the window's pixels.
	measure := func(js string) ([]float64, image.Image) {
		t.Helper()
		box, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`(async () => {
			for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame); // drawn
			`+js+`
		})()`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(shot))
		require.NoError(t, err)
		return box, img
	}
	box, img := measure(`const rows = document.querySelectorAll("#screen .row");
		const first = rows[0].getBoundingClientRect(), last = rows[rows.length - 1].getBoundingClientRect();
		return [first.left, first.top, first.right, last.bottom, first.height];`)
	textBox, textImg := measure(`document.getElementById("screen-text").scrollIntoView();
		await new Promise(requestAnimationFrame);
		const text = [...document.querySelectorAll("#screen-text .block")].map((b) => b.getBoundingClientRect());
		const firstRow = text.filter((b) => b.top === text[0].top), firstColumn = text.filter((b) => b.left === text[0].left);
		return [text[0].left, text[0].top, firstRow[firstRow.length - 1].right, firstColumn[firstColumn.length - 1].bottom, text[0].height];`)
	left, top, right, bottom, rowHeight := int(box[0]), int(box[1]), int(box[2]), int(box[3]), box[4]
	tLeft, tTop, tRight, tBottom, tHeight := int(textBox[0]), int(textBox[1]), int(textBox[2]), int(textBox[3]), textBox[4]
	for _, line := range []struct {
		what  string
		img   image.Image
		n     int
		pixel func(i int) (x, y int)
	}{
		{"the first row of checks", img, right - left - 2, func(i int) (int, int) { return left + 1 + i, top + int(rowHeight/6) }},
		{"the middle row of checks", img, right - left - 2, func(i int) (int, int) { return left + 1 + i, (top+bottom)/2 + 1 }},
		{"the first column of checks", img, bottom - top - 2, func(i int) (int, int) { return left + 2, top + 1 + i }},
		{"the middle column of checks", img, bottom - top - 2, func(i int) (int, int) { return (left+right)/2 + 1, top + 1 + i }},
		{"the screen as text's first row of checks", textImg, tRight - tLeft - 2, func(i int) (int, int) { return tLeft + 1 + i, tTop + int(tHeight/6) }},
		{"the screen as text's first column of checks", textImg, tBottom - tTop - 2, func(i int) (int, int) { return tLeft + 1, tTop + 1 + i }},
	} {
		assertEvenChecks(t, line.img, line.what, line.n, line.pixel)
	}
}

// TestTheWebConsoleScreensMarginIsWholePixelsAtAFractionalRatio: on a display of 1.25, 1.5 or 1.75
// of its pixels to a CSS pixel (a desktop's 125 % scaling, a browser zoomed; a real device scale
// factor, --force-device-scale-factor, as the browser lays a page out in the display's pixels
// there: DevTools' emulated one lays it out in CSS pixels and scales the picture), the screen's
// border and padding are whole pixels of the display, so its cells start on a pixel and its
// margin round them is as wide on each side. Its 6-pixel padding was 7.5 of them at 1.25 (10.5
// at 1.75), the border snapped to 2 (3): the screen a pixel narrower than its cells and margins,
// its rows half a pixel off, drawn with a margin a pixel wider on one side than the other.
func TestTheWebConsoleScreensMarginIsWholePixelsAtAFractionalRatio(t *testing.T) {
	for _, ratio := range []float64{1.25, 1.5, 1.75} {
		t.Run(fmt.Sprint(ratio), func(t *testing.T) {
			ctx := testContext(t)
			page, until := checkerPageAtRatio(ctx, t, ratio)
			until(t, "the checker", `document.querySelectorAll("#screen .row").length === 19`)
			// The screen's box and its rows', in the display's pixels.
			box, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`(async () => {
				for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame); // drawn
				const screen = document.getElementById("screen").getBoundingClientRect(), rows = document.querySelectorAll("#screen .row");
				const first = rows[0].getBoundingClientRect(), last = rows[rows.length - 1].getBoundingClientRect();
				return [devicePixelRatio, screen.left, screen.top, screen.right, screen.bottom, first.left, first.top, first.right, last.bottom]
					.map((v, i) => i ? v * devicePixelRatio : v);
			})()`, chromedp.EvalAwaitPromise))
			require.NoError(t, err)
			require.InDelta(t, ratio, box[0], 0.001, "the display's ratio")
			margins := map[string]float64{"left": box[5] - box[1], "top": box[6] - box[2], "right": box[3] - box[7], "bottom": box[4] - box[8]}
			for side, margin := range margins {
				assert.InDelta(t, math.Round(margin), margin, 0.02, "the margin at the %s, %.3f of the display's pixels, is whole", side, margin)
			}
			assert.InDelta(t, margins["left"], margins["right"], 0.02, "the margins at the left and the right")
			assert.InDelta(t, margins["top"], margins["bottom"], 0.02, "the margins at the top and the bottom")
			cells := box[7] - box[5]
			// To a thousandth: 0.02 passed a cell a 64th of a pixel short (the browser's unit of
			// layout), 25.984 at 1.5, whose 51 drew the screen a pixel narrow.
			assert.InDelta(t, math.Round(cells/checkerWidth), cells/checkerWidth, 0.001, "a cell, %.3f of the display's pixels, is whole", cells/checkerWidth)

			// As drawn: the pixels of the border and the padding (neither the page's white
			// outside nor the checker's white or black inside) across the screen's middle, from
			// each side to its first check, and down its middle.
			shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
			require.NoError(t, err)
			img, err := png.Decode(bytes.NewReader(shot))
			require.NoError(t, err)
			checker := func(x, y int) bool {
				r, g, b, _ := img.At(x, y).RGBA()
				return r < 0x0800 && g < 0x0800 && b < 0x0800 || r > 0xf800 && g > 0xf800 && b > 0xf800
			}
			drawnMargin := func(from, step int, at func(i int) (x, y int)) int {
				i := from
				for checker(at(i)) { // the page, outside the screen
					i += step
				}
				n := 0
				for ; !checker(at(i)); i += step {
					n++
				}
				return n
			}
			midX, midY := int((box[5]+box[7])/2), int((box[6]+box[8])/2)
			across := func(i int) (int, int) { return i, midY }
			down := func(i int) (int, int) { return midX, i }
			left, right := drawnMargin(int(box[1])-3, 1, across), drawnMargin(int(box[3])+3, -1, across)
			top, bottom := drawnMargin(int(box[2])-3, 1, down), drawnMargin(int(box[4])+3, -1, down)
			assert.Equal(t, left, right, "the margins drawn at the left and the right")
			assert.Equal(t, top, bottom, "the margins drawn at the top and the bottom")
		})
	}
}

// TestTheWebConsoleShowsTheBarOfARowNotYetSeen: a row the computer has not seen drawn whole
// (a frame's unknownRows) has a grey bar at its left, in the screen's margin beside its first
// cell, that a person sees: the pixels there are the bar's grey, beside a seen row the screen's
// dark margin. Before, the bar was the row's inset shadow, drawn under its runs, whose
// background covered it: the rows were marked in the page and nothing showed.
func TestTheWebConsoleShowsTheBarOfARowNotYetSeen(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:boot")
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Aboot")))
	c.watched(ctx, t)
	row := map[string]any{"text": " ab ", "fg": "0000", "bg": "ffff"} // its first cell blank, black
	c.drawScreen(ctx, t, map[string]any{"width": 4, "height": 2, "rows": map[string]any{"1": row, "2": row},
		"cursor": map[string]any{"x": 4, "y": 2, "blink": false}, "unknownRows": []int{1}, "palette": []string{"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff",
			"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#000000"}})
	until(t, "the two rows, the first not yet seen", `document.getElementById("screen-text").textContent === " ab\n ab" &&
		!document.getElementById("unseen-rows").hidden`)
	box, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`{
		const rows = [...document.querySelectorAll("#screen .row")].map((row) => row.getBoundingClientRect());
		[rows[0].left, rows[0].top + rows[0].height / 2, rows[1].top + rows[1].height / 2]
	}`))
	require.NoError(t, err)
	shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	grey := func(y float64) uint32 { // the screen's margin, 4 px left of the row
		r, g, b, _ := img.At(int(box[0])-4, int(y)).RGBA()
		return (r + g + b) / 3 >> 8
	}
	assert.InDelta(t, 0x77, grey(box[1]), 8, "beside the unseen row: the bar's grey")
	assert.InDelta(t, 0x11, grey(box[2]), 8, "beside the seen row: the screen's margin")
}

// TestTheWebConsoleDrawsBlockCharactersInTheScreenAsText: CC's block characters (128-159, edit
// showing a file of those bytes, a program's drawing) are drawn as blocks in the screen as text
// too, each sixth whose bit is set in the text's colour, as the screen draws them; copied, they
// are Unicode's sextants (the text rule's U+0080-U+009F drawn as CC's font draws them). Before,
// the text showed Unicode's sextants in the page's font, which has none: an empty box each.
func TestTheWebConsoleDrawsBlockCharactersInTheScreenAsText(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:blocks")
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(800, 600),
		chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Ablocks")))
	c.watched(ctx, t)
	// 129: the top left sixth; 143: the top and middle rows; 159: all but the bottom right
	// (CC leaves it to the background); 154: top right, middle right, bottom left.
	blocks := []int{129, 143, 159, 154}
	text := "a"
	for _, b := range blocks {
		text += string(rune(b))
	}
	c.drawScreen(ctx, t, map[string]any{"width": 5, "height": 1,
		"rows":   map[string]any{"1": map[string]any{"text": text, "fg": "00000", "bg": "fffff"}},
		"cursor": map[string]any{"x": 1, "y": 1, "blink": false}, "palette": []string{"#f0f0f0"}})
	until(t, "the blocks as text, Unicode's sextants when copied", `document.getElementById("screen-text").textContent ===
		"a\u{1fb00}\u{1fb0e}\u{1fb1d}\u{1fb18}"`)

	// Each character's cell in the text: where its text begins, as wide as the a before it
	// and as high as its line.
	cells, err := chromedp.Run(page, chromedp.Evaluate[[][]float64](`{
		const pre = document.getElementById("screen-text"), walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
		const boxes = [];
		for (let node; (node = walker.nextNode());) {
			for (let i = 0; i < node.data.length;) {
				const n = node.data.codePointAt(i) > 0xffff ? 2 : 1, range = document.createRange();
				range.setStart(node, i);
				range.setEnd(node, i + n);
				const box = range.getBoundingClientRect();
				boxes.push([box.left, box.top, box.width, box.height]);
				i += n;
			}
		}
		boxes.slice(1).map((box) => [box[0], boxes[0][1], boxes[0][2], boxes[0][3]])
	}`))
	require.NoError(t, err)
	require.Len(t, cells, len(blocks))
	shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	for i, b := range blocks {
		cell := cells[i]
		var drawn, want []string
		for bit := range 6 {
			x, y := cell[0]+cell[2]*float64(bit%2*2+1)/4, cell[1]+cell[3]*float64(bit/2*2+1)/6
			r, g, b2, _ := img.At(int(x), int(y)).RGBA()
			shade := "light"
			if (r+g+b2)/3>>8 < 0x80 {
				shade = "dark"
			}
			drawn = append(drawn, shade)
			if bit < 5 && (b-128)&(1<<bit) != 0 {
				want = append(want, "dark")
			} else {
				want = append(want, "light")
			}
		}
		assert.Equal(t, want, drawn, "character %d's sixths, left to right, top to bottom", b)
	}
}

// TestTheWebConsoleDrawsCCsCheckerEvenlyAtAFractionalRatio: on a display of 1.1, 1.25 or 1.5
// of its pixels to a CSS pixel (a zoomed browser, a desktop's 125 % or 150 % scaling: a real
// device scale factor, --force-device-scale-factor), paint's canvas is drawn in checks all the
// same size, with no line of blended pixels between them, along the first row and column of
// the screen and of the screen as text, and each of the screen's cells is the same whole number
// of the display's pixels wide, the 51 of a row as wide as 51 of them. At 1.5 each cell was
// 25.984 pixels wide, not 26 (a cell's width, 0.75 em, read the font's size, which the browser
// keeps a hair under 34.667 pixels, and laid out in 64ths of a pixel, cut down): a row of 51
// 1325.2, the screen a pixel narrow, and one of its checks 12 pixels wide among the 13s.
func TestTheWebConsoleDrawsCCsCheckerEvenlyAtAFractionalRatio(t *testing.T) {
	for _, ratio := range []float64{1.1, 1.25, 1.5} {
		t.Run(fmt.Sprint(ratio), func(t *testing.T) {
			ctx := testContext(t)
			page, until := checkerPageAtRatio(ctx, t, ratio)
			until(t, "the checker", `document.querySelectorAll("#screen-text .block").length === 51 * 19`)
			// The screen's first row and its cells, then the screen as text's checkers (each a
			// block) of its first row and column, scrolled into view, in the display's pixels.
			screen, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`(async () => {
				for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame); // drawn
				const rows = document.querySelectorAll("#screen .row"), first = rows[0].getBoundingClientRect();
				const cells = [...rows[0].children].map((b) => b.getBoundingClientRect());
				return [first.left, first.top, cells[cells.length - 1].right, rows[rows.length - 1].getBoundingClientRect().bottom, first.height,
					...cells.map((b) => b.width)].map((v) => v * devicePixelRatio);
			})()`, chromedp.EvalAwaitPromise))
			require.NoError(t, err)
			screenShot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
			require.NoError(t, err)
			screenImg, err := png.Decode(bytes.NewReader(screenShot))
			require.NoError(t, err)
			box, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`(async () => {
				document.getElementById("screen-text").scrollIntoView();
				for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame); // drawn
				const text = [...document.querySelectorAll("#screen-text .block")].map((b) => b.getBoundingClientRect());
				const firstRow = text.filter((b) => b.top === text[0].top), firstColumn = text.filter((b) => b.left === text[0].left);
				return [devicePixelRatio, text[0].left, text[0].top, firstRow[firstRow.length - 1].right, firstColumn[firstColumn.length - 1].bottom, text[0].height]
					.map((v, i) => i ? v * devicePixelRatio : v);
			})()`, chromedp.EvalAwaitPromise))
			require.NoError(t, err)
			require.InDelta(t, ratio, box[0], 0.001, "the display's ratio")
			shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
			require.NoError(t, err)
			img, err := png.Decode(bytes.NewReader(shot))
			require.NoError(t, err)

			sLeft, sTop, sRight, sBottom, sHeight6, cells := int(screen[0]), int(screen[1]), int(screen[2]), int(screen[3]), screen[4]/6, screen[5:]
			require.Len(t, cells, checkerWidth, "the screen's first row: a cell each")
			cell := math.Round(cells[0])
			for i, w := range cells {
				assert.InDelta(t, cell, w, 0.001, "the screen's cell %d, %.3f of the display's pixels wide, is as wide as the first, a whole %v", i+1, w, cell)
			}
			assert.InDelta(t, cell*checkerWidth, screen[2]-screen[0], 0.001, "the screen's row, %d cells of %v", checkerWidth, cell)
			assertEvenChecks(t, screenImg, "the screen's first row of checks", sRight-sLeft-2, func(i int) (int, int) { return sLeft + 1 + i, sTop + int(sHeight6) })
			assertEvenChecks(t, screenImg, "the screen's first column of checks", sBottom-sTop-2, func(i int) (int, int) { return sLeft + 1, sTop + 1 + i })
			left, top, right, bottom, height6 := int(box[1]), int(box[2]), int(box[3]), int(box[4]), box[5]/6
			assertEvenChecks(t, img, "the screen as text's first row of checks", right-left-2, func(i int) (int, int) { return left + 1 + i, top + int(height6) })
			assertEvenChecks(t, img, "the screen as text's first column of checks", bottom-top-2, func(i int) (int, int) { return left + 1, top + 1 + i })
		})
	}
}

// assertEvenChecks asserts that along n pixels of img (the i-th at pixel(i)) CC's checker is
// drawn in white and black runs (the screen's checker, or the screen as text's in the page's
// #111) of one length, but for the line's ends, with no pixel blended of the two.
func assertEvenChecks(t *testing.T, img image.Image, what string, n int, pixel func(i int) (x, y int)) {
	t.Helper()
	shade := func(i int) string {
		r, g, b, _ := img.At(pixel(i)).RGBA()
		switch {
		case r > 0xf000 && g > 0xf000 && b > 0xf000:
			return "white"
		case r < 0x2000 && g < 0x2000 && b < 0x2000:
			return "black"
		}
		return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
	}
	var blends []string
	for i := range n {
		if s := shade(i); s != "white" && s != "black" {
			blends = append(blends, s)
		}
	}
	assert.Empty(t, blends, "%s: pixels of neither colour", what)
	rs := colourRuns(n, func(i int) bool { return shade(i) == "white" })
	require.GreaterOrEqual(t, len(rs), 30, "%s: checks along it: %v", what, rs)
	assert.Equal(t, slices.Min(rs), slices.Max(rs), "%s: each check as long as the next: %v", what, rs)
}

// TestTheWebConsoleDrawsAnUnderscoreInsideItsRow: an underscore, at the bottom of its cell as
// CC's font draws it, shows on the screen: two rows, the first "____" white on black, the
// second blank and black; the first row's lower pixel lines have white in them. The glyph sat
// on the row's last pixel line and below it, where the next row's background covered it, so
// `sandbox.allow_exec` in a program's output read as `sandbox.allow exec`, a setting that
// does not exist, and a token's `tsk_…_…` lost its underscores.
func TestTheWebConsoleDrawsAnUnderscoreInsideItsRow(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectDrawingComputer(ctx, t, g, "7:shell")
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Ashell")))
	c.watched(ctx, t)
	c.drawScreen(ctx, t, map[string]any{"width": 4, "height": 2, "rows": map[string]any{
		"1": map[string]any{"text": "____", "fg": "0000", "bg": "ffff"},
		"2": map[string]any{"text": "    ", "fg": "0000", "bg": "ffff"}},
		"cursor": map[string]any{"x": 4, "y": 2, "blink": false}, "palette": []string{"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff",
			"#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#ffffff", "#000000"}})
	until(t, "the underscores", `document.getElementById("screen-text").textContent === "____"`)
	box, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`{
		const rows = [...document.querySelectorAll("#screen .row")].map((row) => row.getBoundingClientRect());
		[rows[0].left, rows[0].top, rows[0].width, rows[1].top]
	}`))
	require.NoError(t, err)
	shot, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	// The brightest pixel of the first row's lower half: an underscore drawn is white there.
	brightest := uint32(0)
	for y := int(box[1] + (box[3]-box[1])/2); y < int(box[3]); y++ {
		for x := int(box[0]); x < int(box[0]+box[2]); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			brightest = max(brightest, (r+g+b)/3>>8)
		}
	}
	assert.Greater(t, brightest, uint32(0xc0), "the underscores show in their row (its lower half's brightest pixel)")
}
