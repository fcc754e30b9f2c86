package computer

import (
	"bufio"
	"context"
	"io"
	"runtime"
	"slices"
	"unicode/utf8"
	"weak"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// Key codes CC: Tweaked uses (GLFW's).
const keyEnter = 257

// Input is the player's keyboard as lines of text: each line is typed when the computer
// asks for one (see Config.Input). A closed channel means nothing more will be typed.
type Input <-chan string

// Acts are a player's doings other than typing (see Config.Acts): each function is called on
// the computer's goroutine and queues what the player's act makes CC queue. A closed
// channel means the player does nothing more.
type Acts <-chan func()

// ActsOf is Acts that does fns in order and then ends.
func ActsOf(fns ...func()) Acts {
	ch := make(chan func(), len(fns))
	for _, fn := range fns {
		ch <- fn
	}
	close(ch)
	return ch
}

// LinesOf is Input that types lines and then ends.
func LinesOf(lines ...string) Input {
	ch := make(chan string, len(lines))
	for _, l := range lines {
		ch <- l
	}
	close(ch)
	return ch
}

// LinesFrom types r's lines (without their "\n" or "\r\n") and ends at r's end, or at
// ctx's: a line no computer takes (its run ended, or never began) is not waited on once ctx
// ends. Its goroutine lives until then, or until r ends or fails; a read of r it is in
// cannot be cut short, so give it a reader that ends (a file, a pipe whose writer closes,
// os.Stdin of a command).
func LinesFrom(ctx context.Context, r io.Reader) Input {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// cursorBlink is called (on the Lua goroutine) whenever Lua sets the cursor blink, on the
// computer's screen or a monitor's (CursorBlink). CC's read()
// turns the blink on while it waits for a line, so turning it on is when a player would type:
// the next input line is wanted. Not while a line typed earlier still waits in the queue
// (the shell turns the blink off and on around a drop, inside the read that line is for):
// the player is not asked again until that line's Enter is taken (typedTaken).
func (c *Computer) cursorBlink(was, on bool) {
	switch {
	case c.cfg.Input == nil:
	case !on:
		c.blinkWaits = false
	case was:
	case c.typedQueued > 0:
		c.blinkWaits = true
	default:
		c.wantLine = true
	}
}

// CursorBlink implements host.Blinker: a monitor's blink is heard as the screen's.
func (c *Computer) CursorBlink(was, on bool) { c.cursorBlink(was, on) }

// typedTaken is called once the computer took ev (handed it over or discarded it). After the
// Enter of the last typed line, a blink that came on meanwhile and is still on wants a line.
func (c *Computer) typedTaken(ev event) {
	if !ev.typed {
		return
	}
	c.typedQueued--
	if c.typedQueued == 0 {
		c.term.Typing(nil)
	}
	if c.typedQueued == 0 && c.keyWaiterFed {
		c.keyWaiterFed = false
		c.keyWaiter = weak.Pointer[lua.LState]{}
	}
	if c.typedQueued == 0 && c.blinkWaits {
		c.blinkWaits = false
		c.wantLine = true
	}
}

// wantedInput is the input channel while a line is wanted, else nil (never ready in a select).
func (c *Computer) wantedInput() Input {
	if c.wantLine {
		return c.cfg.Input
	}
	return nil
}

// typeLine types line and Enter, as a player types it on CC's keyboard (a line is typing,
// not a paste: a program that pulls char events gets its characters); at the end of the
// input (ok false) the computer shuts down, since nothing will ever answer it. The keys go
// into the queue as it has room (typeMore), so a line longer than the queue loses nothing.
func (c *Computer) typeLine(line string, ok bool) {
	c.wantLine = false
	if !ok {
		c.result.InputEnded = true
		c.stop = true
		return
	}
	keys := typedKeys(line)
	c.term.Typing(typedBytes(keys))
	if c.keyWaiterFed && c.keyWaiterChars && !slices.ContainsFunc(keys, func(k typedKey) bool { return k.key == 0 }) {
		c.keyWaiterFed = false // a waiter for chars cannot hear it
	}
	c.typing = append(c.typing, keys...)
	c.typing = append(c.typing, typedKey{key: keyEnter, ends: true})
	c.typedQueued++
	c.typeMore()
}

// typedKey is one key of a typed line: a character's char event, or a key's press and
// release (key), the last Enter marked ends.
type typedKey struct {
	char byte
	key  int
	ends bool
}

// typedBytes is what keys put in a read() line, CC's bytes (nil when a Tab among them
// completes the line instead, which no transcript can tell).
func typedBytes(keys []typedKey) []byte {
	line := make([]byte, 0, len(keys))
	for _, k := range keys {
		if k.key != 0 {
			return nil
		}
		line = append(line, k.char)
	}
	return line
}

// keyTab is GLFW's Tab.
const keyTab = 258

// typedKeys are the keys that type line on CC's keyboard. Minecraft hands CC each char of a
// character typed, as a Java string holds it (one past U+FFFF, an emoji, is two), and CC
// queues a char event for each as its terminal holds it: U+0020–U+007E and U+00A0–U+00FF as
// themselves (a no-break space and a soft hyphen are typed, where a paste gives '?'), any
// other as '?' (the installer's advice names that ?). A tab is the Tab key; a control
// (U+0000–U+001F, U+007F–U+009F) is no character a keyboard types, and types nothing. A
// byte that is not UTF-8 is already a CC byte (ccstr.FromText) and follows the same rule.
func typedKeys(line string) []typedKey {
	var keys []typedKey
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		if r == utf8.RuneError && n == 1 {
			r = rune(line[i])
		}
		i += n
		switch {
		case r == '\t':
			keys = append(keys, typedKey{key: keyTab})
		case r >= ' ' && r <= '~', r >= 0xA0 && r <= 0xFF:
			keys = append(keys, typedKey{char: byte(r)})
		case r > 0xFFFF:
			keys = append(keys, typedKey{char: '?'}, typedKey{char: '?'})
		case r > 0xFF:
			keys = append(keys, typedKey{char: '?'})
		}
	}
	return keys
}

// typeMore queues the typed keys that fit in the queue (a key's press and release take
// two places); the rest wait for the computer to take some (Run calls it again).
func (c *Computer) typeMore() {
	for len(c.typing) > 0 && c.QueueLength()+2 <= EventQueueLimit {
		k := c.typing[0]
		c.typing = c.typing[1:]
		switch {
		case k.key == 0:
			c.QueueEvent("char", lua.LString([]byte{k.char}))
		default:
			c.queueEvent(event{name: "key", args: []lua.LValue{lua.LNumber(k.key), lua.LFalse}, typed: k.ends})
			c.QueueEvent("key_up", lua.LNumber(k.key))
		}
	}
}

// noteYield hears every coroutine.yield (os.pullEvent's), in L: a coroutine that waits only
// for char or key events (os.pullEvent("char"), a "press any key") waits for the player's
// keys though it turns no blink on, so it is keyWaiter until it yields for something else
// or dies. Under the bios's parallel (rednet beside the shell) the top coroutine's own
// filter is always none, so the wait is seen where it is made. A yield of keyWaiter is
// the proof that it was resumed: a line typed for it was heard.
func (c *Computer) noteYield(L *lua.LState) {
	th := luakit.Running(L)
	waiter := c.keyWaiter.Value()
	if th == waiter {
		c.keyWaiterFed = false
	}
	switch filter, _ := L.Get(1).(lua.LString); {
	case filter == "char" || filter == "key":
		c.keyWaiter = weak.Make(th)
		c.keyWaiterChars = filter == "char"
	case th == waiter:
		c.keyWaiter = weak.Pointer[lua.LState]{}
	}
}

// waitsForKeys is called when the computer waits for an event with none queued: a
// coroutine waiting for keys (noteYield) wants a line, as a blink that comes on does
// (cursorBlink), unless a line is wanted already or one typed earlier is still being
// taken, and unless nothing will ever resume it: it died, the program dropped it (a
// collection, forced here once per line, finds it garbage: this runs only while a computer
// given input waits with nothing to do), or the last line typed for it alone went unheard
// (typedTaken).
func (c *Computer) waitsForKeys() {
	if c.cfg.Input == nil || c.wantLine || c.typedQueued > 0 || c.keyWaiter == (weak.Pointer[lua.LState]{}) {
		return
	}
	runtime.GC()
	if waiter := c.keyWaiter.Value(); waiter == nil || waiter.Dead {
		c.keyWaiter = weak.Pointer[lua.LState]{}
		return
	}
	c.wantLine = true
	c.keyWaiterFed = true
}

// act does the player's next act, if one is ready, and reports whether it did. It is called
// when the computer waits for an event with none queued; a computer that wants a line from
// Input first gets its line (what it waits for), so an act never lands in a read() that
// would discard it. Lua goroutine only.
func (c *Computer) act() bool {
	if c.cfg.Acts == nil || c.actsEnded || c.wantedInput() != nil {
		return false
	}
	select {
	case fn, ok := <-c.cfg.Acts:
		if !ok {
			c.actsEnded = true
			return false
		}
		fn()
		return true
	default:
		return false
	}
}
