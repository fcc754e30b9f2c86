package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"
)

// blankScreen is a consoleComputer's screen of width x height cells, its first row "top" and
// its last "bottom".
func blankScreen(width, height int) map[string]any {
	rows := map[string]any{}
	for y := 1; y <= height; y++ {
		text := strings.Repeat(" ", width)
		switch y {
		case 1:
			text = "top" + text[3:]
		case height:
			text = "bottom" + text[6:]
		}
		blit := strings.Repeat("0", width)
		rows[fmt.Sprint(y)] = map[string]any{"text": text, "fg": blit, "bg": strings.Repeat("f", width)}
	}
	return map[string]any{"width": width, "height": height, "rows": rows, "palette": []string{"#f0f0f0"},
		"cursor": map[string]any{"x": 1, "y": 1, "blink": false}}
}

// TestTheWebConsoleFitsTheScreenAndItsKeysInAPhonesWindow: on a phone the screen is drawn small
// enough that it and the keys below it (the on-screen keys and the Type field) fit the window's
// height, not its width alone: a pocket computer's 26x20 screen in a 360x420 window (a phone
// with its keyboard up) with the Type field focused, and a 51x19 computer's on a phone held
// sideways (740x360). Before, the screen was sized by the width alone: 16-pixel text, the top
// of the pocket computer's screen off the page above the focused Type field, and the sideways
// phone's lower half of the screen and its keys below the fold.
func TestTheWebConsoleFitsTheScreenAndItsKeysInAPhonesWindow(t *testing.T) {
	for _, c := range []struct {
		name          string
		width, height int
		// opened is the window the view opens in, shown the one the player looks at it in,
		// there as the player left the page: the pocket computer's Type field tapped (at its
		// place: the browser scrolls a field it focuses to the window's middle) before the
		// keyboard came up, the sideways phone's page scrolled to the screen.
		opened, shown [2]int64
		scroll        string
	}{
		{"a pocket computer, the keyboard up", 26, 20, [2]int64{360, 740}, [2]int64{360, 420}, ""},
		{"a computer, the phone held sideways", 51, 19, [2]int64{740, 360}, [2]int64{740, 360},
			`scrollBy(0, Math.floor(document.getElementById("screen").getBoundingClientRect().top))`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testContext(t)
			page, until := consolePage(ctx, t)
			g := startGateway(t, opencodefake.ClosedPortURL(t))
			computer := connectDrawingComputer(ctx, t, g, "7:phone")
			require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(c.opened[0], c.opened[1], chromedp.EmulateMobile, chromedp.EmulateTouch),
				chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Aphone")))
			computer.watched(ctx, t)
			computer.drawScreen(ctx, t, blankScreen(c.width, c.height))
			until(t, "the screen", `document.getElementById("status").textContent === "Live" &&
				document.getElementById("screen-text").textContent.endsWith("bottom")`)
			if c.scroll == "" {
				require.NoError(t, chromedp.Do(page, chromedp.Click("#type-text"),
					chromedp.EmulateViewport(c.shown[0], c.shown[1], chromedp.EmulateMobile, chromedp.EmulateTouch)))
			} else {
				_, err := chromedp.Run(page, chromedp.Evaluate[bool](c.scroll+`; true`))
				require.NoError(t, err)
			}

			boxes, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`(async () => {
				for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame); // the window's resize handled
				const box = (id) => { const b = document.getElementById(id).getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
				return [innerWidth, innerHeight, ...box("screen"), ...box("touch"), parseFloat(getComputedStyle(document.getElementById("screen")).fontSize)];
			})()`, chromedp.EvalAwaitPromise))
			require.NoError(t, err)
			view, screen, keys := boxes[:2], boxes[2:6], boxes[6:10]
			for _, b := range []struct {
				what string
				box  []float64
			}{{"the screen", screen}, {"the keys and the Type field", keys}} {
				assert.GreaterOrEqual(t, b.box[0], 0.0, "%s's left in the window (%v)", b.what, b.box)
				assert.GreaterOrEqual(t, b.box[1], 0.0, "%s's top in the window (%v)", b.what, b.box)
				assert.LessOrEqual(t, b.box[2], view[0], "%s's right in the window (%v)", b.what, b.box)
				assert.LessOrEqual(t, b.box[3], view[1], "%s's bottom in the window (%v)", b.what, b.box)
			}
			assert.GreaterOrEqual(t, boxes[10], 8.0, "the screen's text no smaller than 8 px")
		})
	}
}

// TestTheWebConsoleGrowsTheScreenInALargeWindow: in a desktop's large window (1920x1080) a
// 51x19 computer's screen is drawn at 32-pixel text, the largest (docs/screen.md says why),
// whole in the window under the page's header, its cells the shape they have at 16 px. Before,
// its text stopped at 16 px: a screen about 505 pixels wide in a window 1920 wide. The shape is
// CC's, a cell 6 wide to 9 high: the font's own (about 0.6 em by 1.25) drew paint's pixels and
// block characters 40% taller than in game, a round circle as an upright oval, and a 51x19
// screen nearly square where the game's is nearly twice as wide as high.
func TestTheWebConsoleGrowsTheScreenInALargeWindow(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	computer := connectDrawingComputer(ctx, t, g, "7:desk")
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(1920, 1080),
		chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Adesk")))
	computer.watched(ctx, t)
	computer.drawScreen(ctx, t, blankScreen(51, 19))
	until(t, "the screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.endsWith("bottom")`)

	const measure = `(async () => {
		await new Promise(requestAnimationFrame);
		const screen = document.getElementById("screen"), box = screen.getBoundingClientRect();
		const row = screen.querySelector(".row").getBoundingClientRect();
		return [parseFloat(getComputedStyle(screen).fontSize), box.left, box.top, box.right, box.bottom,
			innerWidth, innerHeight, row.height / (row.width / 51)];
	})()`
	large, err := chromedp.Run(page, chromedp.Evaluate[[]float64](measure, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, 32.0, large[0], "the screen's text at its largest")
	assert.Greater(t, large[3]-large[1], 900.0, "the screen's width")
	assert.GreaterOrEqual(t, large[2], 0.0, "the screen's top in the window")
	assert.LessOrEqual(t, large[3], large[5], "the screen's right in the window")
	assert.LessOrEqual(t, large[4], large[6], "the screen's bottom in the window, not scrolled to")
	assert.InDelta(t, 1.5, large[7], 0.02, "a cell's height to its width, CC's 9 to 6")

	// A window the size of the screen at 16 px: the cells' shape is the same there.
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(700, 460)))
	small, err := chromedp.Run(page, chromedp.Evaluate[[]float64](measure, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, 16.0, small[0], "the screen's text at 16 px in a window its size")
	assert.InDelta(t, small[7], large[7], 0.05, "a cell's height to its width, at 32 px as at 16 px")
}
