package computer

import (
	"bufio"
	"context"
	"io"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccstr"
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

// cursorBlink is called (on the Lua goroutine) whenever Lua sets the cursor blink. CC's read()
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

// typedTaken is called once the computer took ev (handed it over or discarded it). After the
// Enter of the last typed line, a blink that came on meanwhile and is still on wants a line.
func (c *Computer) typedTaken(ev event) {
	if !ev.typed {
		return
	}
	c.typedQueued--
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

// typeLine types line as a paste and Enter, as a player's keyboard would deliver it; at the
// end of the input (ok false) the computer shuts down, since nothing will ever answer it.
func (c *Computer) typeLine(line string, ok bool) {
	c.wantLine = false
	if !ok {
		c.result.InputEnded = true
		c.stop = true
		return
	}
	c.QueueEvent("paste", lua.LString(ccstr.FromText(line)))
	if c.queueEvent(event{name: "key", args: []lua.LValue{lua.LNumber(keyEnter), lua.LFalse}, typed: true}) {
		c.typedQueued++
	}
	c.QueueEvent("key_up", lua.LNumber(keyEnter))
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
