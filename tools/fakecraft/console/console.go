// Package console puts a fakecraft computer in a real terminal: its screen drawn with
// ANSI colours, the keyboard turned into CC's key, char, key_up and paste events, and
// CraftOS-PC's shortcuts (Ctrl-T terminate, Ctrl-R reboot, Ctrl-S shutdown).
package console

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/computer"
)

// readSize is how much terminal input one read takes.
const readSize = 4096

// inputRoom is how full the computer's event queue may be before the keyboard waits: a
// burst of typing (automation, a paste without bracketed paste) is held back rather than
// overflowing CC's 256-event queue, and room stays for timers and network events.
const inputRoom = computer.EventQueueLimit / 2

// clearScreen blanks the real terminal in its default colours.
const clearScreen = "\x1b[0m\x1b[2J"

// Computer is what a Console drives; *computer.Computer (and so a machine) is one.
type Computer interface {
	Terminal() *computer.Terminal
	QueueEvent(name string, args ...lua.LValue)
	Terminate()
	Shutdown()
	Reboot()
	QueueLength() int
	Popped() <-chan struct{}
}

// Console is one real terminal showing fakecraft computers one after the other (a reboot
// starts the next on the same terminal). It owns the goroutine that reads the terminal;
// Close ends it.
type Console struct {
	in       io.Reader
	out      io.Writer
	renderer Renderer
	inputs   chan Input
	redraw   chan struct{} // capacity 1: the real screen must be drawn afresh
	sizeMu   sync.Mutex    // guards size
	size     [2]int        // the real terminal's width and height (0: unknown), see Resize
	screen   [2]int        // the shown computer's screen size (0: none shown yet), under sizeMu
	done     chan struct{}
	readDone chan struct{}
	closeMu  sync.Once
}

// New starts reading in. Output goes to out, which must already be prepared (Start).
func New(in io.Reader, out io.Writer, mode ColourMode) *Console {
	c := &Console{
		in: in, out: out, renderer: Renderer{Mode: mode},
		inputs: make(chan Input), redraw: make(chan struct{}, 1), done: make(chan struct{}),
		readDone: make(chan struct{}),
	}
	go c.read()
	return c
}

// read decodes the terminal's input and hands it to the attached computer.
func (c *Console) read() {
	defer close(c.readDone)
	dec := Decoder{Screen: c.screenSize}
	buf := make([]byte, readSize)
	for {
		n, err := c.in.Read(buf)
		for _, in := range dec.Feed(buf[:n]) {
			select {
			case c.inputs <- in:
			case <-c.done:
				return
			}
		}
		if err != nil {
			return
		}
		select {
		case <-c.done:
			return
		default:
		}
	}
}

// screenSize is the size of the computer on show (51x19 before one is).
func (c *Console) screenSize() (w, h int) {
	c.sizeMu.Lock()
	defer c.sizeMu.Unlock()
	if c.screen[0] == 0 {
		return computer.TermWidth, computer.TermHeight
	}
	return c.screen[0], c.screen[1]
}

// Close stops reading. When the input is a file that supports read deadlines (a
// non-blocking one, which Go's poller serves) the read in progress is interrupted and Close
// waits for the reader; otherwise (a process's own blocking stdin) the reader ends with the
// process, or at the input's next byte.
func (c *Console) Close() {
	c.closeMu.Do(func() {
		close(c.done)
		if f, ok := c.in.(*os.File); ok {
			if err := f.SetReadDeadline(time.Now()); err == nil {
				<-c.readDone
				_ = f.SetReadDeadline(time.Time{})
			}
		}
	})
}

// Redraw asks for the whole screen to be drawn again (after the real terminal was resized,
// which may have garbled it). Safe from any goroutine.
func (c *Console) Redraw() {
	select {
	case c.redraw <- struct{}{}:
	default:
	}
}

// Resize tells the console the real terminal's size (0 for unknown) and redraws the screen
// clipped to it. Safe from any goroutine.
func (c *Console) Resize(width, height int) {
	c.sizeMu.Lock()
	c.size = [2]int{width, height}
	c.sizeMu.Unlock()
	c.Redraw()
}

// ErrInputClosed is returned by Attach and Follow when the terminal's input ended.
var ErrInputClosed = errors.New("terminal input closed")

// Attach shows comp on the terminal and sends it the keyboard until ctx ends. It returns
// ctx's error, or ErrInputClosed when the terminal's input ended.
func (c *Console) Attach(ctx context.Context, comp Computer) error {
	boots := make(chan Computer, 1)
	boots <- comp
	return c.Follow(ctx, boots)
}

// Follow shows each computer received from boots in turn (a reboot hands over the next),
// until ctx ends or the input ends; like Attach it returns why.
func (c *Console) Follow(ctx context.Context, boots <-chan Computer) error {
	var comp Computer
	var changed, popped <-chan struct{}
	var inputs chan Input // nil while no computer is shown or input is held back
	var held *Input       // input waiting for room in the computer's queue
	// offer delivers in, or holds it (and stops taking input) until the queue has room.
	offer := func(in Input) {
		if comp.QueueLength()+len(in.Events) > inputRoom {
			held, inputs, popped = &in, nil, comp.Popped()
			return
		}
		deliver(comp, in)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.readDone:
			return ErrInputClosed
		case next := <-boots:
			comp, changed, inputs, popped = next, next.Terminal().Changed(), c.inputs, nil
			w, h := next.Terminal().Size()
			c.sizeMu.Lock()
			c.screen = [2]int{w, h}
			c.sizeMu.Unlock()
			if held != nil {
				in := *held
				held = nil
				offer(in)
			}
			c.renderer.Invalidate()
			if err := c.draw(comp); err != nil {
				return err
			}
		case <-changed:
			if err := c.draw(comp); err != nil {
				return err
			}
		case <-c.redraw:
			if comp == nil {
				continue
			}
			if _, err := c.out.Write([]byte(clearScreen)); err != nil {
				return err
			}
			c.renderer.Invalidate()
			if err := c.draw(comp); err != nil {
				return err
			}
		case in := <-inputs:
			offer(in)
		case <-popped:
			in := *held
			held, inputs, popped = nil, c.inputs, nil
			offer(in)
		}
	}
}

// draw sends the frame that brings the real screen up to comp's.
func (c *Console) draw(comp Computer) error {
	snap := comp.Terminal().Snapshot()
	c.sizeMu.Lock()
	c.renderer.Width, c.renderer.Height = c.size[0], c.size[1]
	c.sizeMu.Unlock()
	_, err := c.out.Write(c.renderer.Frame(&snap))
	return err
}

// deliver queues an input's events or carries out its action.
func deliver(comp Computer, in Input) {
	switch in.Action {
	case Terminate:
		comp.Terminate()
		return
	case Reboot:
		comp.Reboot()
		return
	case Shutdown:
		comp.Shutdown()
		return
	}
	for _, ev := range in.Events {
		switch ev.Name {
		case "key":
			comp.QueueEvent("key", lua.LNumber(ev.Key), lua.LFalse)
		case "key_up":
			comp.QueueEvent("key_up", lua.LNumber(ev.Key))
		case "mouse_click", "mouse_up", "mouse_drag", "mouse_scroll":
			comp.QueueEvent(ev.Name, lua.LNumber(ev.Button), lua.LNumber(ev.X), lua.LNumber(ev.Y))
		default:
			comp.QueueEvent(ev.Name, lua.LString(ev.Text))
		}
	}
}
