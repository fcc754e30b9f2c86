package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/inputcases"
	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
	"fakecraft/pocket"

	"tests/internal/harness"
)

// TestTheWebConsolesKeysAreTheKeyboards checks the page's one home for what a key sends
// (keyEvents, pressEvents, charKey), in the browser, with send caught: a key tapped on screen
// or a character typed in the Type field sends what the keyboard on the screen sends for it;
// the on-screen Ctrl goes down when tapped and is let go after the next key, from any of the
// three, which types no character; the Type field sends what changed as it is typed; a key
// held down repeats (key, key held, …, key_up) and the click that ends it is no further tap.
func TestTheWebConsolesKeysAreTheKeyboards(t *testing.T) {
	ctx := testContext(t)
	page, _ := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/"), chromedp.WaitReady("#screen")))

	events := func(t *testing.T, js string) string {
		t.Helper()
		got, err := chromedp.Run(page, chromedp.Evaluate[json.RawMessage](js))
		require.NoError(t, err)
		return string(got)
	}
	const (
		keyA    = `{"type":"key","name":"a","held":false}`
		upA     = `{"type":"key_up","name":"a"}`
		ctrl    = `{"type":"key","name":"leftCtrl","held":false}`
		ctrlUp  = `{"type":"key_up","name":"leftCtrl"}`
		enter   = `{"type":"key","name":"enter","held":false},{"type":"key_up","name":"enter"}`
		bksp    = `{"type":"key","name":"backspace","held":false},{"type":"key_up","name":"backspace"}`
		charOfA = `{"type":"char","text":"a"}`
	)
	for _, c := range []struct{ what, js, want string }{
		{"Enter", `pressEvents("enter", "", false)`, `[` + enter + `]`},
		{"a typed: its key, its char", `pressEvents(charKey("a"), "a", false)`, `[` + keyA + `,` + charOfA + `,` + upA + `]`},
		{"A typed: the same key (no Shift), A", `pressEvents(charKey("A"), "A", false)`, `[` + keyA + `,{"type":"char","text":"A"},` + upA + `]`},
		{"? and space by their keys", `[charKey("?"), charKey(" "), charKey("7"), charKey("|")]`, `["slash","space","seven","backslash"]`},
		{"é: no key, its char alone", `pressEvents(charKey("é"), "é", false)`, `[{"type":"char","text":"é"}]`},
		{"日: its char, which the gateway sends as ?", `pressEvents(charKey("日"), "日", false)`, `[{"type":"char","text":"日"}]`},
		{"s with Ctrl held: its key, no char, then Ctrl let go", `pressEvents(charKey("s"), "s", true)`,
			`[{"type":"key","name":"s","held":false},{"type":"key_up","name":"s"},` + ctrlUp + `]`},
		{"é with Ctrl held types nothing: Ctrl let go", `pressEvents(charKey("é"), "é", true)`, `[` + ctrlUp + `]`},
	} {
		assert.JSONEq(t, c.want, events(t, c.js), c.what)
	}

	// The three ways in, on a view whose sends are caught.
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`
		window.sent = [];
		window.sends = [];
		send = (events) => { sent.push(...events); sends.push(events.length); };
		view = Object.assign(newView("7:test"), { live: true, shownLive: true });
		window.take = () => { const s = sent; sent = []; return s; };
		window.keyboard = (key, code, ctrlKey) => {
			const screen = document.getElementById("screen");
			for (const type of ["keydown", "keyup"]) screen.dispatchEvent(new KeyboardEvent(type, { key, code, ctrlKey, bubbles: true, cancelable: true }));
			return take();
		};
		window.type = (value) => {
			const field = document.getElementById("type-text");
			field.value = value;
			field.dispatchEvent(new InputEvent("input", { bubbles: true }));
			return take();
		};
		window.insert = (data, start, end) => {
			const field = document.getElementById("type-text");
			field.setSelectionRange(start, end);
			field.dispatchEvent(new InputEvent("beforeinput", { inputType: "insertText", data, bubbles: true, cancelable: true }));
			return [field.value, field.selectionStart, ...take()];
		};
		window.tap = (name) => { document.querySelector("#touch [data-key=" + name + "]").click(); return take(); };
		window.pressed = () => document.getElementById("ctrl").getAttribute("aria-pressed");
		window.pointer = (type, name) => document.querySelector("#touch [data-key=" + name + "]").dispatchEvent(
			new PointerEvent(type, { pointerId: 7, isPrimary: true, button: 0, bubbles: true }));
		window.letGo = (name) => { pointer("pointerup", name); document.querySelector("#touch [data-key=" + name + "]").click(); return take(); };
		true`))
	require.NoError(t, err)
	assert.JSONEq(t, events(t, `keyboard("a", "KeyA", false)`), events(t, `type("a")`), "a typed in the field is the keyboard's a")
	assert.JSONEq(t, events(t, `keyboard("Enter", "Enter", false)`), events(t, `tap("enter")`), "the Enter key is the keyboard's Enter")
	assert.JSONEq(t, `["", "", "a"]`, events(t, `[document.getElementById("type-text").value, view.typed, "a"]`), "a key empties the field")
	assert.JSONEq(t, `["", ""]`, events(t, `type("ls"), keyboard("Enter", "Enter", false), [document.getElementById("type-text").value, view.typed]`),
		"the keyboard's key on the screen empties the field too")
	assert.JSONEq(t, events(t, `keyboard("a", "KeyA", false)`), events(t, `type("a")`),
		"what the field types then is typed afresh: no Backspace for the ls the Enter left on the line before")
	assert.JSONEq(t, `[`+enter+`]`, events(t, `type("ls"), document.getElementById("type-form").requestSubmit(), take()`),
		"the field's Enter (its form submitted: a phone's keyboard may not name the key) is the computer's")
	assert.JSONEq(t, `["", "false"]`, events(t, `tap("leftCtrl"), keyboard("Control", "ControlLeft", true), [document.getElementById("type-text").value, pressed()]`),
		"the keyboard's Ctrl let go lets the on-screen one go")

	assert.JSONEq(t, `[`+ctrl+`]`, events(t, `tap("leftCtrl")`), "Ctrl tapped goes down")
	assert.JSONEq(t, `"true"`, events(t, `pressed()`))
	assert.JSONEq(t, `[{"type":"key","name":"s","held":false},{"type":"key_up","name":"s"},`+ctrlUp+`]`, events(t, `keyboard("s", "KeyS", false)`),
		"the keyboard's next key goes with Ctrl, typing no character; Ctrl is let go with it")
	assert.JSONEq(t, `"false"`, events(t, `pressed()`))
	assert.JSONEq(t, events(t, `keyboard("s", "KeyS", true)`), `[{"type":"key","name":"s","held":false},{"type":"key_up","name":"s"}]`,
		"the keyboard's own Ctrl+S: the same key, no character")

	assert.JSONEq(t, `[`+ctrl+`,{"type":"key","name":"left","held":false},{"type":"key_up","name":"left"},`+ctrlUp+`]`,
		events(t, `[...tap("leftCtrl"), ...tap("left")]`), "an on-screen key goes with Ctrl")
	assert.JSONEq(t, `[`+ctrl+`,{"type":"key","name":"c","held":false},{"type":"key_up","name":"c"},`+ctrlUp+`,{"type":"key","name":"d","held":false},{"type":"char","text":"d"},{"type":"key_up","name":"d"}]`,
		events(t, `[...tap("leftCtrl"), ...type("cd")]`), "the field's first character goes with Ctrl, the next as typed")
	assert.JSONEq(t, `""`, events(t, `document.getElementById("type-text").value`), "the field starts afresh after Ctrl")
	assert.JSONEq(t, `[`+ctrl+`,`+ctrlUp+`]`, events(t, `[...tap("leftCtrl"), ...tap("leftCtrl")]`), "Ctrl tapped twice: Ctrl alone")

	// A phone's keyboard rewrites a word it corrects: the field sends Backspace for what went,
	// then what came.
	assert.JSONEq(t, `[{"type":"key","name":"t","held":false},{"type":"char","text":"t"},{"type":"key_up","name":"t"},`+
		`{"type":"char","text":"é"}]`,
		events(t, `type("té")`))
	assert.JSONEq(t, `[`+bksp+`,{"type":"key","name":"e","held":false},{"type":"char","text":"e"},{"type":"key_up","name":"e"}]`,
		events(t, `type("te")`), "é corrected to e")
	assert.JSONEq(t, `[`+bksp+`,{"type":"char","text":"日"},{"type":"key","name":"space","held":false},{"type":"char","text":" "},{"type":"key_up","name":"space"}]`,
		events(t, `type("t日 ")`), "e replaced by two characters")
	// A key held down repeats as the keyboard's does: key, key held, …, key_up; the click that
	// ends the long press is no further tap. A short press is a tap.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`pointer("pointerdown", "backspace")`))
	require.NoError(t, err)
	_, err = chromedp.Run(page, chromedp.Poll[bool](`sent.length >= 3`))
	require.NoError(t, err)
	var held []map[string]any
	require.NoError(t, json.Unmarshal([]byte(events(t, `letGo("backspace")`)), &held))
	require.GreaterOrEqual(t, len(held), 4)
	assert.Equal(t, map[string]any{"type": "key", "name": "backspace", "held": false}, held[0])
	for _, e := range held[1 : len(held)-1] {
		assert.Equal(t, map[string]any{"type": "key", "name": "backspace", "held": true}, e)
	}
	assert.Equal(t, map[string]any{"type": "key_up", "name": "backspace"}, held[len(held)-1])
	assert.JSONEq(t, `[{"type":"key","name":"left","held":false},{"type":"key_up","name":"left"}]`,
		events(t, `pointer("pointerdown", "left"), letGo("left")`), "a short press")
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`tap("leftCtrl"), pointer("pointerdown", "right")`))
	require.NoError(t, err)
	_, err = chromedp.Run(page, chromedp.Poll[bool](`sent.length >= 2`))
	require.NoError(t, err)
	held = nil
	require.NoError(t, json.Unmarshal([]byte(events(t, `letGo("right")`)), &held))
	assert.Equal(t, []map[string]any{{"type": "key_up", "name": "right"}, {"type": "key_up", "name": "leftCtrl"}}, held[len(held)-2:],
		"a key held with Ctrl lets Ctrl go with it")
	assert.JSONEq(t, `"false"`, events(t, `pressed()`))

	// A text with line breaks put in the field at once (a phone keyboard's clipboard): typed
	// line by line, each line break Enter; the field holds its last line, the caret where the
	// text ended (the field put spaces for them, typing the lines as one).
	const (
		x  = `{"type":"key","name":"x","held":false},{"type":"char","text":"x"},{"type":"key_up","name":"x"}`
		y  = `{"type":"key","name":"y","held":false},{"type":"char","text":"y"},{"type":"key_up","name":"y"}`
		zz = `{"type":"key","name":"z","held":false},{"type":"char","text":"z"},{"type":"key_up","name":"z"}`
	)
	assert.JSONEq(t, `["z", 1, `+bksp+`,`+x+`,`+enter+`,`+enter+`,`+zz+`]`, events(t, `tap("enter"), type("d"), insert("x\r\n\nz", 0, 1)`),
		"d replaced: Backspace, then x, two Enters, z")
	assert.JSONEq(t, `["z", 0, `+bksp+`,`+y+`,`+enter+`,`+zz+`]`, events(t, `insert("y\n", 0, 0)`),
		"before the z: z rubbed out, y, Enter, z again, the caret before it")
	assert.JSONEq(t, `[`+ctrl+`,{"type":"key","name":"enter","held":false},{"type":"key_up","name":"enter"},`+ctrlUp+`,`+x+`, ""]`,
		events(t, `tap("enter"), [...tap("leftCtrl"), ...insert("\nx", 0, 0).slice(2), document.getElementById("type-text").value]`),
		"with Ctrl held, the first key goes with it; the field starts afresh")

	assert.JSONEq(t, `[`+x+`,{"type":"key","name":"tab","held":false},{"type":"key_up","name":"tab"},{"type":"key","name":"slash","held":false},{"type":"char","text":"?"},{"type":"key_up","name":"slash"},`+y+`]`,
		events(t, `tap("enter"), type("x\t\u0007y")`), "a tab is Tab, a bell ? (the computer refused the whole request for either)")
	question := `{"type":"key","name":"slash","held":false},{"type":"char","text":"?"},{"type":"key_up","name":"slash"}`
	assert.JSONEq(t, `[`+question+`,{"type":"char","text":"\u00a0"},{"type":"char","text":"\u00ad"},{"type":"char","text":"é"}]`,
		events(t, `tap("enter"), type("\u0085\u00a0\u00adé")`),
		"U+0085 ? (it reached the computer as byte 85, a block); a no-break space, a soft hyphen and é their chars, as CC's keyboard types them (they went as ?)")
	// The keyboard on the screen types by the same rule (CC's: 32-126 and 160-255): AltGr+Space's
	// no-break space is its char, a key giving U+0085 types none (it sent the byte 85).
	assert.JSONEq(t, `[{"type":"key","name":"space","held":false},{"type":"char","text":"\u00a0"},{"type":"key_up","name":"space"}]`,
		events(t, `keyboard("\u00a0", "Space", false)`), "AltGr+Space")
	assert.JSONEq(t, `[{"type":"key","name":"e","held":false},{"type":"key_up","name":"e"}]`,
		events(t, `keyboard("\u0085", "KeyE", false)`), "a key giving U+0085: its key, no char")

	// Many characters put in the field at once go in one send, which cuts them into the
	// requests the computer takes (TestTheWebConsoleCountsInputAsTheGatewayDoes).
	assert.JSONEq(t, `[300]`, events(t, `tap("enter"), sends = [], type("x".repeat(100)), sends`))
}

// TestTheWebConsoleCountsInputAsTheGatewayDoes holds the page's copies of the gateway's input
// rules to the gateway's own, on one table of events (trap-sandbox/testkit/inputcases): what
// an event costs the computer's queue (inputCost, computer.InputCost), and what of an input
// the computer typed when the gateway says how much of its queue it took before a failed
// request (typedPart, cutting where the gateway cuts the input into requests, computer.InputRequests), which
// the page says in its status, and how many characters the input is (charactersIn: the page
// says how many of them were not typed), each character as the text rule reads it (é written as
// e and U+0301 is one). The page sends what one queue holds in one call, whole: the
// gateway cuts it into the requests the computer takes, under its input turn.
func TestTheWebConsoleCountsInputAsTheGatewayDoes(t *testing.T) {
	ctx := testContext(t)
	page, _ := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/"), chromedp.WaitReady("#screen")))

	var events []string
	var want []int
	for _, c := range inputcases.Costs() {
		events = append(events, c.Event)
		want = append(want, c.Cost)
	}
	got, err := chromedp.Run(page, chromedp.Evaluate[[]int](`[`+strings.Join(events, ",")+`].map(inputCost)`))
	require.NoError(t, err)
	for i := range events {
		assert.Equal(t, want[i], got[i], "the cost of %s", events[i])
	}

	// What queue posts for the events, on a live view whose calls are caught, and what
	// typedPart finds typed after each request the gateway cut them in. queue, not send: send
	// drops a release of what the computer never got down (notStray), as the table's key_up
	// leftCtrl is, twice over.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`
		window.posted = [];
		sendInput = async (v, events) => { posted.push(events); };
		window.sent = (events) => {
			posted = [];
			view = Object.assign(newView("7:test"), { live: true, shownLive: true });
			queue(view, events);
			return view.queue.then(() => posted);
		};
		window.typedAfter = (events, parts) => parts.concat([[]]).map((_, k) => {
			const requests = parts.slice(0, k).flat();
			const typed = typedPart(events, requests.reduce((n, e) => n + inputCost(e), 0));
			return [charactersIn(typed), typed.reduce((n, e) => n + inputCost(e), 0), charactersIn(requests), requests.reduce((n, e) => n + inputCost(e), 0),
				charactersIn(events), charactersIn(parts.flat())];
		});
		true`))
	require.NoError(t, err)
	for _, c := range inputcases.Splits() {
		got, err := chromedp.Run(page, chromedp.Evaluate[json.RawMessage](`sent(`+c.Events+`)`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		assert.JSONEq(t, "["+c.Events+"]", string(got), "queue: %s in one call", c.What)
		typed, err := chromedp.Run(page, chromedp.Evaluate[[][6]int](`typedAfter(`+c.Events+`, `+c.Parts+`)`))
		require.NoError(t, err)
		for k, n := range typed {
			assert.Equal(t, [2]int{n[2], n[3]}, [2]int{n[0], n[1]}, "typedPart: %s, after %d requests", c.What, k)
		}
		assert.Equal(t, typed[0][5], typed[0][4], "charactersIn: %s, all of it", c.What)
	}
}

// controlledAtItsPrompt starts computer id (label; a pocket computer when pc is not nil) on g,
// its owner letting the host control its screen, and waits for its shell's prompt.
func controlledAtItsPrompt(ctx context.Context, t *testing.T, g *harness.Gateway, id int, label string, pc *pocket.Pocket) *fakecrafttest.Computer {
	t.Helper()
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = id, label
	if pc != nil {
		opts.Pocket = pc
	}
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": deskProgram}
	opts.Input = computer.Input(make(chan string))
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerAtPrompt)
	return c
}

// onAPhone opens the web console of the gateway at addr on a phone's touch screen, logs in
// with token and waits for the computer of fragment (its URL fragment, e.g. "13%3Adesk") live
// at its prompt.
func onAPhone(t *testing.T, page context.Context, until func(t *testing.T, what, js string), addr, fragment, token string) {
	t.Helper()
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	logIn(t, page, "http://"+addr+"/console/#/computer/"+fragment, token)
	until(t, "the prompt", liveAtThePrompt)
}

// TestTheWebConsoleEditsAFileFromAPhone: in a phone's window (360x640, touch) the view of a
// pocket computer offers the keys a phone has no keyboard for, and a Type field: the player
// starts edit on a file by typing in the field and Enter, types a line, fixes it with
// Backspace and an arrow, holds left down to go back to its start and types before it, opens edit's menu with Ctrl, saves with Enter and leaves it with
// Ctrl, left, Enter; the file holds the line as CC's bytes (é one byte, 日 sent as ?, as the
// status says). Before, a phone could only paste a line and press Enter: no full-screen
// program could be used.
func TestTheWebConsoleEditsAFileFromAPhone(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-phone-5e7b"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c := controlledAtItsPrompt(ctx, t, g, 12, "pocket", pocket.New(nil))

	onAPhone(t, page, until, g.Addr, "12%3Apocket", token)
	layout, err := chromedp.Run(page, chromedp.Evaluate[[]any](`{
		const keys = [...document.querySelectorAll("#touch button")];
		[document.documentElement.scrollWidth - document.documentElement.clientWidth,
			keys.every((b) => b.getBoundingClientRect().right <= window.innerWidth && b.getBoundingClientRect().width >= 44),
			keys.map((b) => b.getAttribute("aria-label") || b.textContent).join(" ")]
	}`))
	require.NoError(t, err)
	assert.Equal(t, []any{0.0, true, "Ctrl Tab Up Home Backspace Left Down Right End Enter"}, layout,
		"the keys in the window, each big enough for a thumb and named for a screen reader; the page no wider than the window")
	screen := `document.getElementById("screen-text").textContent`

	field := "#type-text"
	require.NoError(t, chromedp.Do(page, chromedp.Click(field), chromedp.SendKeys(field, "edit notes.txt\r")))
	until(t, "edit", screen+`.includes("Press Ctrl for menu")`) // a pocket computer's edit
	// A typo, one character too many: Backspace; a letter left out: left thrice, then it.
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys(field, "héllo wrld!"), chromedp.Click(`[data-key="backspace"]`)))
	until(t, "the line typed, then Backspace", screen+`.startsWith("héllo wrld\n")`)
	for range 3 {
		require.NoError(t, chromedp.Do(page, chromedp.Click(`[data-key="left"]`)))
	}
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys(field, "o"), chromedp.Click(`[data-key="end"]`), chromedp.SendKeys(field, " 日")))
	until(t, "the line fixed", screen+`.startsWith("héllo world ?\n")`)
	until(t, "the status naming 日", `document.getElementById("status").textContent === "Sent as ?: 日 (a computer types characters up to U+00FF only)"`)
	// ← held down repeats, as a keyboard's: the cursor goes back along the line to its start.
	left, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`{
		const b = document.querySelector('[data-key="left"]').getBoundingClientRect();
		[b.left + b.width / 2, b.top + b.height / 2]
	}`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.MouseEvent(chromedp.MousePressed, left[0], left[1], chromedp.ButtonLeft, chromedp.ClickCount(1))))
	until(t, "the cursor at the line's start", `!!document.querySelector("#screen .row:first-child > span:first-child.cursor")`)
	require.NoError(t, chromedp.Do(page, chromedp.MouseEvent(chromedp.MouseReleased, left[0], left[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.SendKeys(field, "Say ")))
	until(t, "the words put before it", screen+`.startsWith("Say héllo world ?\n")`)

	// Ctrl: edit's menu; Enter: Save, its first item.
	require.NoError(t, chromedp.Do(page, chromedp.Click("#ctrl")))
	until(t, "edit's menu", screen+`.includes("[Save]") && document.getElementById("ctrl").getAttribute("aria-pressed") === "true"`)
	require.NoError(t, chromedp.Do(page, chromedp.Click("#enter")))
	until(t, "saved", screen+`.includes("Saved to notes.txt") && document.getElementById("ctrl").getAttribute("aria-pressed") === "false"`)
	got, err := c.FS.ReadFile("/notes.txt")
	require.NoError(t, err)
	assert.Equal(t, "Say h\xe9llo world ?\n", string(got), "é as CC's byte, 日 as ?")

	// Ctrl, left (the menu's last item: Exit), Enter: back at the prompt.
	require.NoError(t, chromedp.Do(page, chromedp.Click("#ctrl"), chromedp.Click(`[data-key="left"]`), chromedp.Click("#enter")))
	until(t, "the prompt after edit", screen+` === ">"`)
}

// TestTheWebConsoleTypesALongTextFromAPhone: a text of 500 characters with 10 line breaks and
// a tab put into the Type field at once, as a phone's keyboard puts in a text from its
// clipboard (not a paste), is typed into edit whole and in order, each line break as Enter,
// the tab as Tab, in the requests the computer takes (1500 events, a dozen requests); the
// saved file holds it. The field put spaces for the line breaks, typing the lines as one, and
// a tab went as a char, which the computer refuses with its whole request.
func TestTheWebConsoleTypesALongTextFromAPhone(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-long-text-81c2"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c := controlledAtItsPrompt(ctx, t, g, 13, "desk", nil) // its lines fit the 51 columns: edit scrolls no line sideways

	onAPhone(t, page, until, g.Addr, "13%3Adesk", token)
	screen := `document.getElementById("screen-text").textContent`
	field := "#type-text"
	require.NoError(t, chromedp.Do(page, chromedp.Click(field), chromedp.SendKeys(field, "edit notes.txt\r")))
	until(t, "edit", screen+`.includes("to access menu")`)

	// Words in lines of at most 47 characters, 10 of them, the 11th what is left of 500.
	words := strings.Fields("the door opens when a player stands on the plate and shuts again after five seconds")
	var b strings.Builder
	for w, line, breaks := 0, 0, 0; b.Len() < 500; w++ {
		word := words[w%len(words)]
		if line > 0 && breaks < 10 && line+1+len(word) > 47 {
			b.WriteString("\n")
			breaks, line = breaks+1, 0
		} else if line > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	text := strings.Replace(b.String()[:500], "five seconds", "five\tseconds", 1) // copied code has tabs
	require.Equal(t, 10, strings.Count(text, "\n"))
	require.NoError(t, chromedp.Do(page, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})))
	// A while under -race, where the computer's Lua runs some ten times slower: the test's
	// deadline, not chromedp's 30 s.
	_, err := chromedp.Run(page, chromedp.Poll[bool](`view.pending.length === 0 && !view.sending && document.getElementById("status").textContent === "Live"`,
		chromedp.WithPollingTimeout(testTimeout)))
	require.NoError(t, err, "waiting for the text sent")
	value, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("type-text").value`))
	require.NoError(t, err)
	assert.Equal(t, text[strings.LastIndex(text, "\n")+1:], value, "the field holds the last line")
	require.NoError(t, chromedp.Do(page, chromedp.Click("#ctrl"), chromedp.Click("#enter")))
	until(t, "saved", screen+`.includes("Saved to notes.txt")`)
	got, err := c.FS.ReadFile("/notes.txt")
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(text, "\t", "    ", 1)+"\n", string(got), "the text whole, each line break Enter, the tab Tab (edit indents)")
}

// screenInputsSent captures how many screen.input requests the gateway has sent computers.
var screenInputsSent = regexp.MustCompile(`(?m)^trapos_gateway_frames_out_total\{event="gateway_request",type="screen\.input"\} (\d+)$`)

// TestTheWebConsoleTypesALongTextWholeWhileAnotherCallerTypes: a player puts a long text into
// a phone's Type field (1000 characters in lines of edit's width: some 25 of the computer's
// requests) while another caller (an agent, a script) sends a screen.input to the same
// computer once the text's second request has reached it. The text arrives whole, the other
// caller's keys after it: the page hands the text to the gateway in one call (…/input), which
// holds the computer's input turn over its requests. The page sent each part as a call of its
// own, and the other caller's keys landed in the middle of the player's text.
func TestTheWebConsoleTypesALongTextWholeWhileAnotherCallerTypes(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := controlledAtItsPrompt(ctx, t, g, 13, "desk", nil)
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate("http://"+g.Addr+"/console/#/computer/13%3Adesk")))
	screen := `document.getElementById("screen-text").textContent`
	until(t, "the prompt", `document.getElementById("status").textContent === "Live" && `+screen+`.includes("`+markerAtPrompt+`")`)
	require.NoError(t, chromedp.Do(page, chromedp.Click("#type-text"), chromedp.SendKeys("#type-text", "edit notes.txt\r")))
	until(t, "edit", screen+`.includes("to access menu")`)

	words := strings.Fields("the door opens when a player stands on the plate and shuts again after five seconds")
	var b strings.Builder
	for w, line := 0, 0; b.Len() < 1000; w++ {
		word := words[w%len(words)]
		switch {
		case line > 0 && line+1+len(word) > 47:
			b.WriteString("\n")
			line = 0
		case line > 0:
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	text := b.String()
	sent := metricCount(ctx, t, g, screenInputsSent)
	insertAtTheEnd(t, page, "#type-text", text)
	// A while under -race, where the computer's Lua runs some ten times slower: the test's
	// deadline, not chromedp's 30 s; only a failure waits it.
	for metricCount(ctx, t, g, screenInputsSent) < sent+2 {
		select {
		case <-ctx.Done():
			t.Fatal("the text's requests did not reach the computer")
		case <-time.After(10 * time.Millisecond): // polling the gateway's count, not a margin
		}
	}
	// The other caller waits for the turn as long as the text takes (under -race, a while):
	// the test's deadline bounds it, not the harness client's 30 s.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/trapos/computers/13:desk/requests"),
		strings.NewReader(`{"type":"screen.input","payload":{"events":[{"type":"char","text":"ZZ"}]},"timeoutMs":60000}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	answer, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", answer)
	_, err = chromedp.Run(page, chromedp.Poll[bool](`view.pending.length === 0 && !view.sending && document.getElementById("status").textContent === "Live"`,
		chromedp.WithPollingTimeout(testTimeout)))
	require.NoError(t, err, "waiting for the text sent")
	require.NoError(t, chromedp.Do(page, chromedp.Click("#ctrl"), chromedp.Click("#enter")))
	until(t, "saved", screen+`.includes("Saved to notes.txt")`)
	saved, err := c.FS.ReadFile("/notes.txt")
	require.NoError(t, err)
	assert.Equal(t, text+"ZZ\n", string(saved), "the player's text whole, the other caller's keys after it")
}

// TestTheWebConsolesKeysAreRefusedOnAViewOnlyComputer: the owner allows the screen to be
// viewed, not controlled (sandbox.allow_screen view): the on-screen keys and the Type field
// are not shown (the computer says what its owner allows before the screen is live), a note
// saying why; the keyboard's keys on the screen still go, and are refused, the status naming
// the setting, and nothing is typed.
func TestTheWebConsolesKeysAreRefusedOnAViewOnlyComputer(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-viewonly-2d8f"
	g, _ := deskAcrossRestarts(ctx, t, token, "view")
	onAPhone(t, page, until, g.Addr, "11%3Adesk", token)

	hidden, err := chromedp.Run(page, chromedp.Evaluate[[]bool](`[document.getElementById("touch").getClientRects().length === 0,
		document.getElementById("viewer-note").textContent.includes("set sandbox.allow_screen control")]`))
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, hidden)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "l")))
	until(t, "the keyboard's key refused", `document.getElementById("status").textContent.startsWith("forbidden: ")`)
	refused, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Contains(t, refused, "sandbox.allow_screen")
	text, err := chromedp.Run(page, chromedp.Text("#screen-text"))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(text, "\n>"), "nothing typed on the computer:\n%s", text)
}

// TestTheWebConsolePastesAsCCDoes: a paste on the screen or into the Paste field is what CC
// pastes from its clipboard: the first line (up to \r or \n), at most 512 characters, a tab or
// another control character as "?" (a tab in copied code had the computer refuse the whole
// paste), and the status says what was left out. The Paste field keeps the first line of a
// paste (a browser's field joined its lines: "ab" for "a" and "b", which CC never pastes); a
// paste into a phone's Type field is the screen's (it typed the lines joined, as keys).
func TestTheWebConsolePastesAsCCDoes(t *testing.T) {
	ctx := testContext(t)
	page, _ := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/"), chromedp.WaitReady("#screen")))
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`
		window.sent = [];
		send = (events) => { sent.push(...events); };
		view = Object.assign(newView("7:test"), { live: true, shownLive: true });
		window.pasteOn = (id, text) => {
			const data = new DataTransfer();
			data.setData("text/plain", text);
			document.getElementById(id).dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
			const s = sent;
			sent = [];
			return [s.map((e) => e.type + " " + e.text).join(" | "), document.getElementById("status").textContent];
		};
		true`))
	require.NoError(t, err)
	pasted := func(id, text string) []string {
		t.Helper()
		got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`pasteOn(`+jsString(t, id)+`, `+jsString(t, text)+`)`))
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, "paste local x = 1", pasted("screen", "local x = 1\n")[0], "a copied line's own line break is no line left out")
	assert.Equal(t, []string{"paste ?if x then", "Pasted the first line only, as CC does (2 more lines not sent)."},
		pasted("screen", "\tif x then\r\n\t\tprint(x)\n\nend\n"))
	assert.Equal(t, "paste a", pasted("screen", "a\rb")[0], "a lone \\r ends the line too")
	long := strings.Repeat("é", 2000)
	assert.Equal(t, []string{"paste " + strings.Repeat("é", 512), "Pasted the first 512 characters of the first line only, as CC does (1 more line not sent)."},
		pasted("screen", long+"\n"+long))
	assert.Equal(t, "paste ü ß € 日 ?", pasted("screen", "ü ß € 日 \u0085")[0], "past U+00FF is the gateway's to send as ? (and say so)")
	assert.Equal(t, "paste a?b?c", pasted("screen", "a\u00a0b\u00adc")[0], "a no-break space and a soft hyphen as ?, as CC pastes them (its keyboard types them)")

	assert.Equal(t, []string{"paste one", "Pasted the first line only, as CC does (1 more line not sent)."}, pasted("type-text", "one\ntwo"),
		"a paste into the Type field is the screen's (the field joined its lines, then typed them)")
	assert.Equal(t, "", pasted("paste-text", "one\ntwo")[0], "a paste into the field waits there")
	field, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("paste-text").value`))
	require.NoError(t, err)
	assert.Equal(t, "one", field, "the field keeps the first line, not both joined")
	submitted := func() []string {
		t.Helper()
		got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`status("");
			document.getElementById("paste-form").requestSubmit();
			[sent.splice(0).map((e) => e.type + " " + e.text).join(" | "), document.getElementById("status").textContent]`))
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, []string{"paste one", "Pasted the first line only, as CC does (1 more line not sent)."}, submitted(),
		"pasted from the field, it says what the field left out")
	pasted("paste-text", "uno\ndos\ntres")
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("paste-text").value = "una"; true`))
	require.NoError(t, err)
	assert.Equal(t, []string{"paste una", ""}, submitted(), "a text written over the pasted one left nothing out")
}

// TestTheWebConsoleSaysWhatAPasteLeftOutWithWhatItSentAsQuestionMarks: a paste of two lines
// whose first holds characters past U+00FF says both what CC's paste left out (the second line)
// and what the gateway sent as "?". Before, the gateway's answer put "Sent as ?: 日本 …" over
// "Pasted the first line only …", and the player never learnt that the second line was not sent.
func TestTheWebConsoleSaysWhatAPasteLeftOutWithWhatItSentAsQuestionMarks(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:paste")
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		const data = new DataTransfer();
		data.setData("text/plain", "日本 door\nsecond line");
		document.getElementById("screen").dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
		true
	}`))
	require.NoError(t, err)
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 })
	assert.Equal(t, []string{"paste ?? door"}, got)
	until(t, "both said", `!view.sending && document.getElementById("status").textContent === `+jsString(t,
		"Sent as ?: 日本 (a computer types characters up to U+00FF only) Pasted the first line only, as CC does (1 more line not sent)."))
}

// TestTheWebConsoleSaysNothingOfAClosedViewsKeysInTheNextView: keys typed on one computer
// whose answer comes once another computer's view is open ("Sent as ?: 日 …") say nothing
// there: they are no keys of that view. Before, the closed view's words replaced the open
// view's status, which then spoke of keys never typed on its computer.
func TestTheWebConsoleSaysNothingOfAClosedViewsKeysInTheNextView(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:first")
	// The page's calls to …/input are held until the test lets them answer (answerInput()).
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		const pageFetch = window.fetch;
		let answer;
		const held = new Promise((resolve) => { answer = resolve; });
		window.answerInput = answer;
		window.fetch = (url, options) => String(url).endsWith("/input") ? held.then(() => pageFetch(url, options)) : pageFetch(url, options);
		true
	}`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen-keys", "日")))
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`window.firstView = view; location.hash = "#/computer/99%3Aother"; true`))
	require.NoError(t, err)
	const other = "not_connected: computer 99:other is not connected; Back to the list (below) shows the connected ones (waiting for it to come back)"
	until(t, "the other computer's view", `document.getElementById("status").textContent === `+jsString(t, other))
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`answerInput(); firstView.queue.then(() => true)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 })
	assert.Equal(t, []string{"char ?"}, got, "the closed view's key reached its computer")
	assert.Equal(t, other, statusOf(t, page), "the open view's status")
}

// jsString is s as a JavaScript string literal.
func jsString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// TestTheWebConsoleLetsKeysGoWhenTheScreenLosesTheFocus: keys down on the screen when it loses
// the focus (Ctrl held, then a click elsewhere) are let go on the computer, as CC does when
// its screen loses it: their key_up goes to the page elsewhere, and the computer held Ctrl
// down until the player pressed it on the screen again.
func TestTheWebConsoleLetsKeysGoWhenTheScreenLosesTheFocus(t *testing.T) {
	page := focusedScreen(t)
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`{
		`+fakeFocusedView+`
		const key = (type, key, code) => screen.dispatchEvent(new KeyboardEvent(type, { key, code, ctrlKey: true, bubbles: true, cancelable: true }));
		key("keydown", "Control", "ControlLeft");
		key("keydown", "a", "KeyA");
		key("keyup", "a", "KeyA");
		document.getElementById("paste-text").focus();
		sent
	}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"key leftCtrl", "key a", "key_up a", "key_up leftCtrl"}, got)
}

// TestTheWebConsoleLetsKeysGoWhenThePageIsLeft: Ctrl+T on the screen opens the browser's new
// tab: the page gets Ctrl's keydown, never the t nor Ctrl's keyup, and is hidden. Keys down
// then are let go on the computer when the page is hidden or the window loses the focus, not
// only when the screen's field is blurred, which a browser need not do first (a headless one
// does not at all): CC held Ctrl down, and the next key typed on the screen went as a
// Ctrl chord. An on-screen key held down (a long press on ←) stops repeating then, with its
// key_up: a press another app ends may bring no pointer event, and the key went on repeating
// on the computer for as long as the page stayed open.
func TestTheWebConsoleLetsKeysGoWhenThePageIsLeft(t *testing.T) {
	page := focusedScreen(t)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		`+fakeFocusedView+`
		window.sent = sent;
		document.getElementById("screen-keys").focus();
		// The page hidden, as a browser hides it for its new tab (headless Chromium hides none).
		window.hide = () => {
			Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
			document.dispatchEvent(new Event("visibilitychange"));
			delete document.visibilityState;
		};
		true
	}`))
	require.NoError(t, err)
	key := func(typ input.DispatchKeyEventType, key, code string, vk int64) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			_, err := cdp.Call(ctx, target, input.DispatchKeyEvent, input.DispatchKeyEventParams{
				Type: typ, Key: key, Code: code, WindowsVirtualKeyCode: vk, Modifiers: 2}) // Ctrl
			return err
		})
	}
	require.NoError(t, chromedp.Do(page, key(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`hide(); [...sent.splice(0)]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"key leftCtrl", "key_up leftCtrl"}, got, "the page hidden with Ctrl down")

	require.NoError(t, chromedp.Do(page, key(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	got, err = chromedp.Run(page, chromedp.Evaluate[[]string](`window.dispatchEvent(new Event("blur")); [...sent.splice(0)]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"key leftCtrl", "key_up leftCtrl"}, got, "the window losing the focus with Ctrl down")

	// ← held on the on-screen keys until it repeats; then the page is hidden.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`document.querySelector('#touch [data-key="left"]').dispatchEvent(
		new PointerEvent("pointerdown", { pointerId: 1, isPrimary: true, button: 0, bubbles: true })); true`))
	require.NoError(t, err)
	_, err = chromedp.Run(page, chromedp.Poll[bool](`sent.filter((e) => e === "key left").length >= 2`))
	require.NoError(t, err)
	got, err = chromedp.Run(page, chromedp.Evaluate[[]string](`(async () => {
		const after = sent.length;
		hide();
		// Three periods of the repeat: a repeat still running fires ahead of each of them.
		await new Promise((resolve) => { let n = 0; const i = setInterval(() => { if (++n === 3) { clearInterval(i); resolve(); } }, repeatEveryMs); });
		return sent.slice(after);
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, []string{"key_up left"}, got, "let go once the page is hidden, and no repeat after")
}

// TestTheWebConsoleLetsEscLeaveTheScreen: Esc leaves the screen, as it leaves a computer's screen
// in game, letting go of the keys down; the computer gets no key for it. Without it a keyboard
// could not leave the screen, which takes Tab as the computer's key.
func TestTheWebConsoleLetsEscLeaveTheScreen(t *testing.T) {
	page := focusedScreen(t)
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`{
		`+fakeFocusedView+`
		const key = (type, key, code, ctrlKey) => screen.dispatchEvent(new KeyboardEvent(type, { key, code, ctrlKey, bubbles: true, cancelable: true }));
		key("keydown", "Control", "ControlLeft", true);
		key("keydown", "Escape", "Escape", true);
		key("keyup", "Escape", "Escape", true);
		sent.push("focused: " + (document.activeElement === screen));
		sent
	}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"key leftCtrl", "key_up leftCtrl", "focused: false"}, got)
}

// TestTheWebConsoleShowsWhenTheScreenHasTheKeyboard: the screen's border is the focus colour
// while the keyboard types on the computer (the focus is in its field of keys, screen-keys),
// and not once Esc has left it. The rule named screen-keys as the screen's next sibling, which
// it stopped being when the line of unseen rows came between them: a person at the keyboard
// saw no sign of where the focus was, a Tab into the screen and a Tab typed on it alike.
func TestTheWebConsoleShowsWhenTheScreenHasTheKeyboard(t *testing.T) {
	page := focusedScreen(t)
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`{
		`+fakeFocusedView+`
		const border = () => getComputedStyle(screen).borderTopColor;
		const shown = [document.activeElement.id, border()];
		screen.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", code: "Escape", bubbles: true, cancelable: true }));
		[...shown, document.activeElement.id, border()]
	}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"screen-keys", "rgb(76, 153, 178)", "", "rgb(68, 68, 68)"}, got,
		"the focus and the screen's border: on the screen, then after Esc")
}

// TestTheWebConsoleTellsAScreenReaderHowToLeaveTheScreen: the field the screen's keys go to
// (screen-keys, where the focus is while the keyboard types on the computer) is described to a
// screen reader with how the keyboard leaves it: Tab is the computer's key there, and only Esc
// leaves. Its name alone ("type here") said nothing of it, and a person who cannot see the page
// tabbed on and on into the computer's shell, with no way out of the screen they knew of.
func TestTheWebConsoleTellsAScreenReaderHowToLeaveTheScreen(t *testing.T) {
	page := focusedScreen(t)
	field, err := chromedp.Run(page, chromedp.Evaluate[*runtime.RemoteObject](`{
		`+fakeFocusedView+`
		document.activeElement
	}`))
	require.NoError(t, err)
	told := func(v *accessibility.Value) string {
		var s string
		if v != nil {
			_ = json.Unmarshal(v.Value, &s)
		}
		return s
	}
	// Chromium brings its accessibility tree up to date with the page at its next lifecycle
	// update, not as the script shows the screen and focuses its field: asked at once on a
	// busy machine, it still had the field as hidden, named nothing (it failed CI once so).
	// So the field's node is asked for until the tree has it named, or the guard runs out.
	var node *accessibility.Node
	guard := time.Now().Add(10 * time.Second) // a hang guard only
	for {
		tree, err := chromedp.Run(page, func(ctx context.Context, target *chromedp.Target) (accessibility.GetPartialAXTreeResult, error) {
			return cdp.Call(ctx, target, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: field.ObjectID, FetchRelatives: new(false)})
		})
		require.NoError(t, err)
		require.NotEmpty(t, tree.Nodes)
		node = tree.Nodes[0]
		if told(node.Name) != "" || time.Now().After(guard) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, "The computer's screen: type here", told(node.Name))
	assert.Equal(t, "Keys go to the computer, Tab too. Esc leaves the screen.", told(node.Description))
}

// TestTheWebConsolesTerminateButtonPromisesNoShortcut: the Terminate button said "Terminate
// (Ctrl+T)", a shortcut the page never gets: Ctrl+T pressed on the screen opens the browser's
// new tab, and the computer gets Ctrl alone. The button is named Terminate, its description
// (a tooltip, and a screen reader's description) saying it is CC's Ctrl+T and why the browser's
// is not.
func TestTheWebConsolesTerminateButtonPromisesNoShortcut(t *testing.T) {
	page := focusedScreen(t)
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`{
		const button = document.getElementById("terminate");
		[button.textContent, button.title]
	}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"Terminate", "CC's terminate, as Ctrl+T held at the computer: a browser keeps Ctrl+T for a new tab"}, got)
}

// TestTheWebConsolesPasteBoxSaysWhatGoesInIt: the paste box's label says what the field is
// for, and its button what it does, in words of their own. Before, both said Paste: the
// row read "Paste [field] Paste".
func TestTheWebConsolesPasteBoxSaysWhatGoesInIt(t *testing.T) {
	page := focusedScreen(t)
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`{
		const form = document.getElementById("paste-form"), label = form.querySelector("label");
		[[...label.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("").trim(),
			form.querySelector("button").textContent, document.getElementById("paste-text").labels[0] === label ? "labelled" : "not"]
	}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"A line to paste", "Paste", "labelled"}, got)
}

// focusedScreen opens a console page whose screen can have and lose the focus (a headless page
// has no focus of its own: without focus emulation the browser sends no blur).
func focusedScreen(t *testing.T) context.Context {
	t.Helper()
	ctx := testContext(t)
	page, _ := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	focused := chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})
	require.NoError(t, chromedp.Do(page, focused,
		chromedp.Navigate("http://"+g.Addr+"/console/"), chromedp.WaitReady("#screen")))
	return page
}

// fakeFocusedView is the script that gives a focusedScreen page a view of computer 7:test whose
// sent events are collected in sent (not sent anywhere), its screen focused: what a key test
// evaluates first. The page leaves its list first (stop, as opening a computer does): the list
// reloads every 2 s and shows itself, hiding the screen, which took the focus and the keys
// from a test that ran past it (TestTheWebConsoleLetsKeysGoWhenThePageIsLeft, in CI).
const fakeFocusedView = `stop();
		const sent = [];
		send = (events) => { sent.push(...events.map((e) => e.type + " " + e.name)); };
		view = Object.assign(newView("7:test"), { live: true, shownLive: true });
		const screen = document.getElementById("screen");
		screen.hidden = false;
		document.getElementById("viewer").hidden = false;
		screen.focus();`

// TestTheWebConsoleTypesNoTextPastItsCap: a text put into a phone's Type field at once types
// 4096 characters at most (line breaks too). One longer, with line breaks or not, is not
// typed, none of it: the status says so and how to put it on the computer, and the field holds
// what it did before. A text of 4096 is typed whole. Before, a text of any size went key by
// key, some 100 requests each 4096 characters, for as long as it took.
func TestTheWebConsoleTypesNoTextPastItsCap(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:cap")
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	field := "#type-text"
	insert := func(text string) { t.Helper(); insertAtTheEnd(t, page, field, text) }
	valueOf := func() string {
		t.Helper()
		value, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("type-text").value`))
		require.NoError(t, err)
		return value
	}
	tooLong := func(n int) string {
		return `document.getElementById("status").textContent === "Not typed: the text is ` + strconv.Itoa(n) +
			` characters; the Type field types 4096 at most at once. Put a longer text on the computer as a file (trap-sandbox put)."`
	}

	require.NoError(t, chromedp.Do(page, chromedp.SendKeys(field, "ok")))
	got, _ := c.events(ctx, func(events []string) bool { return typedText(events) == "ok" })
	assert.Equal(t, []string{"key o", "char o", "key_up o", "key k", "char k", "key_up k"}, got)

	lines := strings.Repeat(strings.Repeat("x", 99)+"\n", 45) // 4500 characters with their line breaks, after "ok"
	insert(lines)
	until(t, "the text with line breaks refused", tooLong(4500))
	assert.Equal(t, "ok", valueOf(), "the field as it was")
	insert(strings.Repeat("y", 5000))
	until(t, "the line refused", tooLong(5000))
	assert.Equal(t, "ok", valueOf(), "the field as it was")

	// Then what is typed goes, and nothing of the texts went before it.
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys(field, "!")))
	got, _ = c.events(ctx, func(events []string) bool { return typedText(events) == "!" })
	assert.Equal(t, []string{"key one", "char !", "key_up one"}, got)
	until(t, "Live again", `document.getElementById("status").textContent === "Live"`)

	full := strings.Repeat(strings.Repeat("z", 49)+"\n", 81) + strings.Repeat("z", 46) // 81*50+46 = 4096 characters
	insert(full)
	got, _ = c.events(ctx, func(events []string) bool { return typedText(events) == strings.ReplaceAll(full, "\n", "") })
	assert.Equal(t, 81, strings.Count(strings.Join(got, "|"), "key enter|key_up enter"), "every line break as Enter")
	assert.Equal(t, "Live", statusOf(t, page))
}

// insertAtTheEnd puts text into the field of selector at its end at once, as a phone's
// keyboard puts in a text from its clipboard (not a paste).
func insertAtTheEnd(t *testing.T, page context.Context, selector, text string) {
	t.Helper()
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		const f = document.querySelector(`+jsString(t, selector)+`);
		f.focus();
		f.setSelectionRange(f.value.length, f.value.length);
		true
	}`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})))
}

// TestTheWebConsoleSaysWhatOfATextWasNotTyped: a text put into the Type field at once goes in
// parts (200 characters: 600 events, five requests); the computer refuses the second. The
// parts after it are not sent (the text would go on with a hole in it), and the status says
// what was not typed until keys typed since go through. Before, the third part went on and its
// answer put Live over the refusal: the player never learnt that part of the text was missing.
func TestTheWebConsoleSaysWhatOfATextWasNotTyped(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:part")
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	c.refuseInput.Store(2)

	insertAtTheEnd(t, page, "#type-text", strings.Repeat("x", 200))
	got, requests := c.events(ctx, func(events []string) bool { return len(events) >= 128+128 })
	assert.Equal(t, 2, requests)
	assert.Equal(t, strings.Repeat("x", 43+42), typedText(got), "the first part's 43 characters, and the second's, which the computer refused")
	until(t, "the sending over", `view.pending.length === 0 && !view.sending`)
	assert.Equal(t, "forbidden: sandbox.allow_screen is view: the screen can be viewed, not typed on: the text put in at once was "+
		"typed only in part, its last 157 of 200 characters not (type them again once it says Live).", statusOf(t, page))

	// The refusal (the owner's setting) took the Type field away; the owner allowing control
	// since, a key typed on the screen goes through and brings it back.
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "!")))
	got, _ = c.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up one" })
	assert.Equal(t, []string{"key one", "char !", "key_up one"}, got, "nothing more of the text before the key typed since")
	until(t, "Live again, the Type field back", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("viewer-note").hidden && document.getElementById("type-text").getClientRects().length > 0`)
}

// TestTheWebConsoleTypesWhatAnInputMethodComposes: every way a person enters text on the
// screen reaches the computer once, by the text rule (docs/protocol.md): a key (its key and
// its character, the keydown's, never the field's text too), a dead key's é (´ then e: the
// dead key's key, then the composed character), an input method's 日本 (typed as its keys,
// which are the method's, then committed) and an emoji from the system's picker (text with no
// key), the last two past U+00FF, which the gateway sends as ? and the status names. Chromium's
// DevTools drive the keys and the composition as an input method does. A key past U+00FF (a
// Russian keyboard's ж) goes as its key and its character, which the gateway sends as ?. The
// screen read only keydown, where a browser gives the composed text to an editable field
// alone: é, 日本 and the emoji never reached the computer, the keys the method took went as
// keys (the Enter that committed 日本 ran the shell's line), and ж typed nothing, unsaid.
func TestTheWebConsoleTypesWhatAnInputMethodComposes(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:ime")
	key := func(typ input.DispatchKeyEventType, key, code string, vk int64, text string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			_, err := cdp.Call(ctx, target, input.DispatchKeyEvent, input.DispatchKeyEventParams{
				Type: typ, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk, Text: text, UnmodifiedText: text})
			return err
		})
	}
	compose := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			_, err := cdp.Call(ctx, target, input.ImeSetComposition, input.ImeSetCompositionParams{
				Text: text, SelectionStart: int64(len([]rune(text))), SelectionEnd: int64(len([]rune(text)))})
			return err
		})
	}
	commit := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			_, err := cdp.Call(ctx, target, input.InsertText, input.InsertTextParams{Text: text})
			return err
		})
	}
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"),
		key(input.DispatchKeyEventTypeKeyDown, "a", "KeyA", 65, "a"), key(input.DispatchKeyEventTypeKeyUp, "a", "KeyA", 65, ""),
		// A dead key (´ on a US-International keyboard), then e: é.
		key(input.DispatchKeyEventTypeRawKeyDown, "Dead", "Quote", 222, ""), compose("´"), key(input.DispatchKeyEventTypeKeyUp, "Dead", "Quote", 222, ""),
		key(input.DispatchKeyEventTypeRawKeyDown, "Process", "KeyE", 229, ""), commit("é"), key(input.DispatchKeyEventTypeKeyUp, "e", "KeyE", 69, ""),
		// An input method: n, i, h, o, n composing にほん, then Space and Enter committing 日本.
		key(input.DispatchKeyEventTypeRawKeyDown, "Process", "KeyN", 229, ""), compose("に"), key(input.DispatchKeyEventTypeKeyUp, "n", "KeyN", 78, ""),
		key(input.DispatchKeyEventTypeRawKeyDown, "Process", "KeyH", 229, ""), compose("にほん"), key(input.DispatchKeyEventTypeKeyUp, "h", "KeyH", 72, ""),
		key(input.DispatchKeyEventTypeRawKeyDown, "Process", "Enter", 229, ""), commit("日本"), key(input.DispatchKeyEventTypeKeyUp, "Enter", "Enter", 13, ""),
		// The system's emoji picker: text, no key.
		commit("😀"),
		// A Russian keyboard's ж: its key, and its character, which the gateway sends as ?.
		key(input.DispatchKeyEventTypeKeyDown, "ж", "Semicolon", 186, "ж"), key(input.DispatchKeyEventTypeKeyUp, "ж", "Semicolon", 186, ""),
		key(input.DispatchKeyEventTypeKeyDown, "b", "KeyB", 66, "b"), key(input.DispatchKeyEventTypeKeyUp, "b", "KeyB", 66, ""),
	))
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up b" })
	assert.Equal(t, []string{"key a", "char a", "key_up a", "key apostrophe", "key_up apostrophe", "char é",
		"char ?", "char ?", "char ?", "key semicolon", "char ?", "key_up semicolon", "key b", "char b", "key_up b"}, got,
		"each character once, the input method's keys its own; 日本, the emoji and ж as ? (the text rule)")
	until(t, "the field empty, the characters past U+00FF named", `document.getElementById("screen-keys").value === "" &&
		document.getElementById("status").textContent.startsWith("Sent as ?: ")`)
}

// TestTheWebConsoleTypesADecomposedCharacterComposed: a text written decomposed (é as e and
// U+0301: a Mac's, dictation's, some keyboards'), put at once into the Type field or the
// screen's field, is typed as the text rule reads it (docs/protocol.md), é whole, as the
// gateway types the same text for any other caller. Before, the page typed it a code point at a
// time: e, then U+0301 alone, which the gateway sent as ?: "cafe?", the status "Sent as ?: ́".
func TestTheWebConsoleTypesADecomposedCharacterComposed(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:cafe")
	insert := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			_, err := cdp.Call(ctx, target, input.InsertText, input.InsertTextParams{Text: text})
			return err
		})
	}
	// The word's end, é, typed whole or not ("?").
	endsTheWord := func(events []string) bool {
		return len(events) > 0 && (events[len(events)-1] == "char é" || events[len(events)-1] == "char ?")
	}
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640), chromedp.Focus("#type-text"), insert("cafe\u0301")))
	got, _ := c.events(ctx, endsTheWord)
	assert.Equal(t, []string{"key c", "char c", "key_up c", "key a", "char a", "key_up a", "key f", "char f", "key_up f", "char é"}, got, "the Type field")
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), insert("ne\u0301")))
	got, _ = c.events(ctx, endsTheWord)
	assert.Equal(t, []string{"key n", "char n", "key_up n", "char é"}, got, "the screen's field")
	until(t, "the keys answered", `document.getElementById("status").textContent === "Live" && !view.sending`)
}

// TestTheWebConsolePastesWithCtrlV: Ctrl+V on the screen pastes the clipboard as CC pastes it
// (a paste event), Ctrl going down and up around it and no key v. Its keydown was prevented as
// every key's, so the browser never pasted: the computer got Ctrl and v, and the clipboard
// nothing (seen in Chromium under Xvfb with a real clipboard; here the page's own text is
// copied with Ctrl+C first).
func TestTheWebConsolePastesWithCtrlV(t *testing.T) {
	ctx := testContext(t)
	page, _, c := watchConsoleComputer(ctx, t, "7:paste")
	chord := func(key, code string, vk int64) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			for _, e := range []input.DispatchKeyEventParams{
				{Type: input.DispatchKeyEventTypeRawKeyDown, Key: "Control", Code: "ControlLeft", WindowsVirtualKeyCode: 17, Modifiers: 2},
				{Type: input.DispatchKeyEventTypeRawKeyDown, Key: key, Code: code, WindowsVirtualKeyCode: vk, Modifiers: 2},
				{Type: input.DispatchKeyEventTypeKeyUp, Key: key, Code: code, WindowsVirtualKeyCode: vk, Modifiers: 2},
				{Type: input.DispatchKeyEventTypeKeyUp, Key: "Control", Code: "ControlLeft", WindowsVirtualKeyCode: 17},
			} {
				if _, err := cdp.Call(ctx, target, input.DispatchKeyEvent, e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		const range = document.createRange();
		range.selectNodeContents(document.getElementById("viewer-id"));
		getSelection().removeAllRanges();
		getSelection().addRange(range);
		true
	}`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chord("c", "KeyC", 67), chromedp.Focus("#screen"), chord("v", "KeyV", 86)))
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up leftCtrl" })
	assert.Equal(t, []string{"key leftCtrl", "paste 7:paste", "key_up leftCtrl"}, got)
}
