package console

import (
	"time"
	"unicode/utf8"

	"fakecraft/ccstr"
	"fakecraft/computer"
)

// Key codes of CC: Tweaked's keys API (GLFW's codes) that the decoder sends.
const (
	KeySpace     = 32
	KeyEnter     = 257
	KeyTab       = 258
	KeyBackspace = 259
	KeyInsert    = 260
	KeyDelete    = 261
	KeyRight     = 262
	KeyLeft      = 263
	KeyDown      = 264
	KeyUp        = 265
	KeyPageUp    = 266
	KeyPageDown  = 267
	KeyHome      = 268
	KeyEnd       = 269
	KeyF1        = 290
	KeyLeftCtrl  = 341
	KeyLeftAlt   = 342
)

// MaxPaste is the longest paste CC: Tweaked passes on (StringUtil.normaliseClipboardString).
const MaxPaste = ccstr.MaxPaste

// Action is something a terminal shortcut asks of the computer itself, not of the program.
type Action int

// The actions of CraftOS-PC's shortcuts (in CC: Tweaked, Ctrl-T/R/S held for a moment).
const (
	NoAction  Action = iota
	Terminate        // Ctrl-T: queue a terminate event
	Reboot           // Ctrl-R: restart the computer, its files kept
	Shutdown         // Ctrl-S: turn the computer off (and leave fakecraft)
	// Look (Ctrl-L held, fakecraft's own) shows the next of the world's monitors instead of
	// the computer's screen, as a player walks up to one (Console.LookAround).
	Look
)

// Event is one CC event to queue: key (code, is_held), key_up (code), char (text), paste
// (text), or a mouse event: mouse_click, mouse_up, mouse_drag (button, x, y) and
// mouse_scroll (direction, x, y). Text is CC's bytes (one byte per character, Latin-1).
type Event struct {
	Name string
	Key  int    // key, key_up
	Text string // char, paste
	// Button is CC's mouse button (1 left, 2 right, 3 middle), or for mouse_scroll the
	// direction (-1 up, 1 down); X and Y the cell, 1-based.
	Button, X, Y int
}

// Mouse buttons as CC numbers them, by the button bits of an xterm mouse report.
var mouseButtons = [3]int{1, 3, 2} // left, middle, right

// Bits of an xterm (SGR) mouse report's button number.
const (
	mouseButtonBits = 3
	mouseMotion     = 32
	mouseWheel      = 64
)

// Input is what one piece of terminal input means: events to queue, or an action.
type Input struct {
	Events []Event
	Action Action
}

// Decoder turns bytes read from a terminal in raw mode into CC input. Terminals report
// key presses only, so every key is followed by its key_up at once, as CraftOS-PC's
// terminal mode does (a held Ctrl-T's, Ctrl-R's or Ctrl-S's may wait: KeepCtrlTDown,
// KeepPowerKeysDown); a printable key also sends its char between the two. A terminal
// cannot send a bare Ctrl press: Esc (alone in its read) and Ctrl-Space stand for one,
// e.g. for edit's menu. Bracketed paste (ESC[200~ … ESC[201~) becomes one paste event.
// The zero value is ready to use.
type Decoder struct {
	// Now is the clock that tells a held key's repeats from a new press (see shortcut);
	// nil is time.Now. Tests set a fake one.
	Now func() time.Time
	// Screen is the size of the computer's screen the mouse reports are cells of (a pocket
	// computer's is 26x20); nil is an ordinary computer's 51x19.
	Screen func() (w, h int)
	// KeepCtrlTDown says the reader calls LetGo when HeldUntil comes: a held Ctrl-T's keys
	// then stay down until its hold ends, their key_up after its terminate, as in CC.
	// Unset, they go up at once, as every other key's.
	KeepCtrlTDown bool
	// KeepPowerKeysDown says the same of a held Ctrl-R's and Ctrl-S's keys: they stay down
	// past its reboot or shutdown and go up when the hold ends, to the computer rebooted,
	// as in CC, where the player still holds them when the computer restarts or turns off.
	// Unset (a view of a computer that a host does not reboot), they go up at once.
	KeepPowerKeysDown bool

	pending []byte // an escape sequence cut by the end of a read
	// held is the shortcut byte seen last with nothing between (see shortcut), fired says
	// its action already ran for this hold, last is when that byte was last read.
	held  byte
	fired bool
	last  time.Time
	// down is the key_up events a held Ctrl-T owes (Ctrl-T's key, then Ctrl's): they are
	// sent when the hold ends (LetGo, or the next other input), after its terminate.
	down    []Event
	pasting bool
	paste   []byte
}

// FirstRepeatWait is how long a Ctrl-T's keys stay down with no repeat: a terminal's pause
// before it repeats a held key is 250 ms to 1 s (X11 660 ms, GNOME and Windows 500 ms,
// Windows' slowest 1 s), so a Ctrl-T not repeated within FirstRepeatWait was let go (a tap),
// and its key_up events go then. A repeat later still is a second press held: its keys go
// down again, then its terminate.
const FirstRepeatWait = time.Second

// holdsKeys says whether shortcut b keeps its keys down until its hold ends. In CC the
// keys go up when the player lets go, after the hold acted: a program goes on after
// Ctrl-T's terminate and sees them; Ctrl-R and Ctrl-S stop the program that saw the keys
// go down before they go up (TerminalWidget queues key_up in keyReleased only), so their
// key_up reaches the computer rebooted, or none once it is off. Under Ctrl-L a player
// looks away from the computer, so its keys go up at once.
func (d *Decoder) holdsKeys(b byte) bool {
	switch shortcuts[b] {
	case Terminate:
		return d.KeepCtrlTDown
	case Reboot, Shutdown:
		return d.KeepPowerKeysDown
	}
	return false
}

// RepeatGap is the longest pause between a held key's repeats: a shortcut read again after
// its hold acted and a longer pause is a new press, the first of a new hold. Terminals
// repeat a held key every 30-50 ms by default (GNOME 30 ms, X11 40 ms, macOS 30 ms); 500 ms
// covers the slowest common settings (Windows' slowest, 2.5 a second, is 400 ms) and is
// shorter than a person's pause between two deliberate holds. The pause before a hold's
// first repeat (250-1000 ms) is not bounded: the second of two presses with nothing typed
// between is a hold however late it comes.
const RepeatGap = 500 * time.Millisecond

// now reads the decoder's clock.
func (d *Decoder) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// pasteEnd ends a bracketed paste.
var pasteEnd = []byte("\x1b[201~")

// shortcuts are the bytes of Ctrl-T, Ctrl-R, Ctrl-S and Ctrl-L and what holding them does.
var shortcuts = map[byte]Action{0x14: Terminate, 0x12: Reboot, 0x13: Shutdown, 0x0c: Look}

// shortcut decodes Ctrl-T/R/S/L read at now. CC acts only when the keys are held, and a
// terminal repeats a held key, so the action runs on the second of two presses in a row
// (nothing typed between) and once per hold: the repeats that follow it, each within
// RepeatGap of the one before, do nothing; after a longer pause the next press starts a new
// pair. A single press is an ordinary Ctrl+letter, so a quick Ctrl-S in edit does not turn
// the computer off; CC: Tweaked sends the letter's key too for a hold's first 0.2 s
// (TerminalWidget's KEY_SUPPRESS_DELAY, since 1.103.0), so a tap's Ctrl+T reaches the
// program there as well.
//
// With KeepCtrlTDown, Ctrl-T's keys stay down while it may be held (with
// KeepPowerKeysDown, Ctrl-R's and Ctrl-S's, as Ctrl-T's): its first press sends
// Ctrl's and T's key only, and their key_up come when the hold ends, after its terminate,
// as a player lets go in CC: at the next other input, or at LetGo once the repeats stopped.
func (d *Decoder) shortcut(b byte, now time.Time) []Input {
	var out []Input
	if d.held == b && d.fired && now.Sub(d.last) > RepeatGap {
		d.held, d.fired = 0, false // that hold was let go: this is a new press
	}
	if d.held != b || (!d.fired && len(d.down) == 0 && d.holdsKeys(b)) {
		// A new press; or the second of a pair whose first was let go (LetGo) before
		// the terminal's first repeat came, which goes down again to be held.
		out = append(out, d.release()...)
		out = append(out, d.pressShortcut(b))
	}
	d.last = now
	if d.held == b {
		if !d.fired {
			d.fired = true
			out = append(out, Input{Action: shortcuts[b]})
		}
		return out
	}
	d.held, d.fired = b, false
	return out
}

// pressShortcut is the keys of a shortcut's press: Ctrl+letter, whose key_up events wait in
// down while the shortcut holds its keys.
func (d *Decoder) pressShortcut(b byte) Input {
	in := withModifier(KeyLeftCtrl, press(int('A'+b-1), ""))
	if !d.holdsKeys(b) {
		return in
	}
	d.down = in.Events[2:]
	return Input{Events: in.Events[:2]}
}

// release is the key_up events the keys still down owe, now sent.
func (d *Decoder) release() []Input {
	if len(d.down) == 0 {
		return nil
	}
	in := Input{Events: d.down}
	d.down = nil
	return []Input{in}
}

// HeldUntil says when the keys of a Ctrl-T still down are let go if nothing more is read
// (LetGo): RepeatGap after the last repeat of a hold that acted, FirstRepeatWait after a
// first press. ok is false when no key is down.
func (d *Decoder) HeldUntil() (at time.Time, ok bool) {
	if len(d.down) == 0 {
		return time.Time{}, false
	}
	if d.fired {
		return d.last.Add(RepeatGap), true
	}
	return d.last.Add(FirstRepeatWait), true
}

// LetGo is the key_up events of the keys still down once their hold is over by the
// decoder's clock (HeldUntil), and none before. The reader calls it when nothing more came.
func (d *Decoder) LetGo() []Input {
	at, ok := d.HeldUntil()
	if !ok || d.now().Before(at) {
		return nil
	}
	return d.release()
}

// Close is the key_up events of the keys still down when the input ends.
func (d *Decoder) Close() []Input { return d.release() }

// Feed decodes one read's worth of bytes.
func (d *Decoder) Feed(p []byte) []Input {
	buf := append(d.pending, p...)
	d.pending = nil
	now := d.now() // one read's bytes came together
	var out []Input
	for len(buf) > 0 {
		if d.pasting {
			end := indexOf(buf, pasteEnd)
			if end < 0 {
				// Keep a possible start of the end marker for the next read.
				keep := partialSuffix(buf, pasteEnd)
				d.paste = append(d.paste, buf[:len(buf)-keep]...)
				d.pending = append([]byte(nil), buf[len(buf)-keep:]...)
				return out
			}
			d.paste = append(d.paste, buf[:end]...)
			buf = buf[end+len(pasteEnd):]
			d.pasting = false
			if text := ccstr.Clipboard(d.paste); text != "" {
				out = append(out, Input{Events: []Event{{Name: "paste", Text: text}}})
			}
			d.paste = nil
			continue
		}
		if shortcuts[buf[0]] != NoAction {
			out = append(out, d.shortcut(buf[0], now)...)
			buf = buf[1:]
			continue
		}
		d.held, d.fired = 0, false // any other input ends a hold
		out = append(out, d.release()...)
		in, n, incomplete := d.decodeOne(buf)
		if incomplete {
			d.pending = append([]byte(nil), buf...)
			return out
		}
		buf = buf[n:]
		if in.Action != NoAction || len(in.Events) > 0 {
			out = append(out, in)
		}
	}
	return out
}

// press is a key's press and release, with its char between them when it has one.
func press(code int, char string) Input {
	evs := []Event{{Name: "key", Key: code}}
	if char != "" {
		evs = append(evs, Event{Name: "char", Text: char})
	}
	return Input{Events: append(evs, Event{Name: "key_up", Key: code})}
}

// withModifier wraps a press in a modifier key's press and release.
func withModifier(mod int, in Input) Input {
	evs := append([]Event{{Name: "key", Key: mod}}, in.Events...)
	return Input{Events: append(evs, Event{Name: "key_up", Key: mod})}
}

// ctrlPress is the stand-in for pressing and releasing Ctrl alone.
func ctrlPress() Input {
	return press(KeyLeftCtrl, "")
}

// decodeOne decodes the input at the start of buf: the Input, the bytes used, or
// incomplete when buf ends inside an escape sequence.
func (d *Decoder) decodeOne(buf []byte) (Input, int, bool) {
	b := buf[0]
	switch {
	case b == 0x1b:
		return d.decodeEscape(buf)
	case b == '\r' || b == '\n':
		return press(KeyEnter, ""), 1, false
	case b == '\t':
		return press(KeyTab, ""), 1, false
	case b == 0x7f || b == 0x08:
		return press(KeyBackspace, ""), 1, false
	case b == 0x00:
		return ctrlPress(), 1, false
	case b < 0x20:
		// Ctrl+letter: CC sends the Ctrl key and the letter's key, no char.
		if b >= 0x01 && b <= 0x1a {
			return withModifier(KeyLeftCtrl, press(int('A'+b-1), "")), 1, false
		}
		return Input{}, 1, false
	case b < 0x80:
		return press(keyOf(b), string(rune(b))), 1, false
	}
	if !utf8.FullRune(buf) {
		return Input{}, 0, true
	}
	r, n := utf8.DecodeRune(buf)
	if r >= 160 && r <= 255 {
		// CC passes Latin-1 characters on as one byte each; it has no key code for them.
		return Input{Events: []Event{{Name: "char", Text: string([]byte{byte(r)})}}}, n, false
	}
	return Input{}, n, false
}

// decodeEscape decodes input starting with ESC.
func (d *Decoder) decodeEscape(buf []byte) (Input, int, bool) {
	if len(buf) == 1 {
		// Esc alone in its read: the key a person presses for Ctrl.
		return ctrlPress(), 1, false
	}
	switch buf[1] {
	case '[':
		return d.decodeCSI(buf)
	case 'O':
		if len(buf) < 3 {
			return Input{}, 0, true
		}
		return ss3Key(buf[2]), 3, false
	case 0x1b:
		return ctrlPress(), 1, false
	}
	// ESC then a key: Alt held with it.
	in, n, incomplete := d.decodeOne(buf[1:])
	if incomplete {
		return Input{}, 0, true
	}
	if len(in.Events) == 0 {
		return in, n + 1, false
	}
	return withModifier(KeyLeftAlt, in), n + 1, false
}

// decodeCSI decodes ESC [ params final.
func (d *Decoder) decodeCSI(buf []byte) (Input, int, bool) {
	i := 2
	for i < len(buf) && buf[i] >= 0x20 && buf[i] <= 0x3f {
		i++
	}
	if i >= len(buf) {
		return Input{}, 0, true
	}
	final := buf[i]
	params := parseParams(buf[2:i])
	n := i + 1
	first := 0
	if len(params) > 0 {
		first = params[0]
	}
	if buf[2] == '<' && (final == 'M' || final == 'm') {
		w, h := computer.TermWidth, computer.TermHeight
		if d.Screen != nil {
			w, h = d.Screen()
		}
		return mouse(params, final == 'm', w, h), n, false
	}
	switch final {
	case 'A':
		return press(KeyUp, ""), n, false
	case 'B':
		return press(KeyDown, ""), n, false
	case 'C':
		return press(KeyRight, ""), n, false
	case 'D':
		return press(KeyLeft, ""), n, false
	case 'H':
		return press(KeyHome, ""), n, false
	case 'F':
		return press(KeyEnd, ""), n, false
	case 'Z':
		return press(KeyTab, ""), n, false
	case 'P', 'Q', 'R', 'S':
		return press(KeyF1+int(final-'P'), ""), n, false
	case '~':
		if first == 200 {
			d.pasting = true
			d.paste = nil
			return Input{}, n, false
		}
		if code, ok := tildeKeys[first]; ok {
			return press(code, ""), n, false
		}
	}
	return Input{}, n, false
}

// mouse decodes an SGR mouse report (ESC [ < b ; x ; y M, or m for a release). The computer's
// screen is drawn from the terminal's top left cell, so cells are the computer's: a click
// or scroll outside its w x h cells is dropped, a drag or release outside is held to its edge.
func mouse(params []int, release bool, w, h int) Input {
	if len(params) < 3 {
		return Input{}
	}
	b, x, y := params[0], params[1], params[2]
	inside := x >= 1 && x <= w && y >= 1 && y <= h
	x, y = min(max(x, 1), w), min(max(y, 1), h)
	var ev Event
	switch {
	case b&mouseWheel != 0:
		if release || !inside {
			return Input{}
		}
		ev = Event{Name: "mouse_scroll", Button: -1, X: x, Y: y}
		if b&1 != 0 {
			ev.Button = 1
		}
	case b&mouseButtonBits == mouseButtonBits:
		return Input{} // motion with no button held
	case b&mouseMotion != 0:
		ev = Event{Name: "mouse_drag", Button: mouseButtons[b&mouseButtonBits], X: x, Y: y}
	case release:
		ev = Event{Name: "mouse_up", Button: mouseButtons[b&mouseButtonBits], X: x, Y: y}
	default:
		if !inside {
			return Input{}
		}
		ev = Event{Name: "mouse_click", Button: mouseButtons[b&mouseButtonBits], X: x, Y: y}
	}
	return Input{Events: []Event{ev}}
}

// tildeKeys are the keys of ESC [ n ~.
var tildeKeys = map[int]int{
	1: KeyHome, 2: KeyInsert, 3: KeyDelete, 4: KeyEnd, 5: KeyPageUp, 6: KeyPageDown,
	7: KeyHome, 8: KeyEnd,
	11: KeyF1, 12: KeyF1 + 1, 13: KeyF1 + 2, 14: KeyF1 + 3, 15: KeyF1 + 4,
	17: KeyF1 + 5, 18: KeyF1 + 6, 19: KeyF1 + 7, 20: KeyF1 + 8, 21: KeyF1 + 9,
	23: KeyF1 + 10, 24: KeyF1 + 11,
}

// ss3Key decodes ESC O x (cursor keys in application mode, F1-F4).
func ss3Key(b byte) Input {
	switch b {
	case 'A':
		return press(KeyUp, "")
	case 'B':
		return press(KeyDown, "")
	case 'C':
		return press(KeyRight, "")
	case 'D':
		return press(KeyLeft, "")
	case 'H':
		return press(KeyHome, "")
	case 'F':
		return press(KeyEnd, "")
	case 'M':
		return press(KeyEnter, "")
	case 'P', 'Q', 'R', 'S':
		return press(KeyF1+int(b-'P'), "")
	}
	return Input{}
}

func parseParams(p []byte) []int {
	var out []int
	cur, have := 0, false
	for _, c := range p {
		switch {
		case c >= '0' && c <= '9':
			cur = cur*10 + int(c-'0')
			have = true
		case c == ';':
			out = append(out, cur)
			cur, have = 0, false
		}
	}
	if have || len(out) > 0 {
		out = append(out, cur)
	}
	return out
}

// shiftedKeys maps a US-layout character typed with Shift to the key it is on.
var shiftedKeys = map[byte]byte{
	'!': '1', '@': '2', '#': '3', '$': '4', '%': '5', '^': '6', '&': '7', '*': '8',
	'(': '9', ')': '0', '_': '-', '+': '=', '{': '[', '}': ']', '|': '\\', ':': ';',
	'"': '\'', '<': ',', '>': '.', '?': '/', '~': '`',
}

// keyOf is the key code of a printable ASCII character: letters and digits their own
// code (upper case), punctuation the key it is on in a US layout.
func keyOf(c byte) int {
	if c >= 'a' && c <= 'z' {
		return int(c - 'a' + 'A')
	}
	if base, ok := shiftedKeys[c]; ok {
		return int(base)
	}
	return int(c)
}

func indexOf(buf, sep []byte) int {
	for i := 0; i+len(sep) <= len(buf); i++ {
		if string(buf[i:i+len(sep)]) == string(sep) {
			return i
		}
	}
	return -1
}

// partialSuffix is the length of the longest end of buf that starts sep.
func partialSuffix(buf, sep []byte) int {
	for n := min(len(sep)-1, len(buf)); n > 0; n-- {
		if string(buf[len(buf)-n:]) == string(sep[:n]) {
			return n
		}
	}
	return 0
}
