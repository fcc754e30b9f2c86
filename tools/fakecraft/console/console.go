// Package console puts a fakecraft computer in a real terminal: its screen drawn with
// ANSI colours, the keyboard turned into CC's key, char, key_up and paste events, and
// CraftOS-PC's shortcuts (Ctrl-T terminate, Ctrl-R reboot, Ctrl-S shutdown), and
// fakecraft's Ctrl-L, which shows the world's monitors for a click to touch.
package console

import (
	"context"
	"errors"
	"fmt"
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

// Monitor is a monitor of the world a player may look at and touch (*monitor.Monitor is
// one): its screen, and a player's right-click on its cell x, y, which queues
// monitor_touch on the computers using it (none for a basic monitor, as in CC).
type Monitor interface {
	Terminal() *computer.Terminal
	Touch(x, y int)
}

// Sight is one of the world's monitors, as a player walking round sees it: where it
// stands ("computer 1's top") and the monitor.
type Sight struct {
	Where   string
	Monitor Monitor
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
	// sights lists the world's monitors for Look (LookAround); nil: none.
	sights func() []Sight
}

// LookAround gives the console the world's monitors: holding Ctrl-L shows each in turn
// instead of the computer's screen, then the screen again; a click on a monitor's view
// touches it. sights is asked at each Look, so a monitor attached meanwhile is there. Call
// it before Attach or Follow.
func (c *Console) LookAround(sights func() []Sight) { c.sights = sights }

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

// read decodes the terminal's input and hands it to the attached computer. The keys of a
// held Ctrl-T, Ctrl-R or Ctrl-S stay down until its repeats stop (Decoder.HeldUntil), past
// its terminate, reboot or shutdown, as a player's in CC: with no more input by then, read
// lets them go itself, so it reads the terminal through readRaw.
func (c *Console) read() {
	defer close(c.readDone)
	chunks := make(chan chunk)
	rawDone := make(chan struct{})
	go c.readRaw(chunks, rawDone)
	defer func() { <-rawDone }()
	dec := Decoder{Screen: c.screenSize, KeepCtrlTDown: true, KeepPowerKeysDown: true}
	send := func(ins []Input) bool {
		for _, in := range ins {
			select {
			case c.inputs <- in:
			case <-c.done:
				return false
			}
		}
		return true
	}
	for {
		var ins []Input
		ended := false
		var letGo <-chan time.Time // nil, never ready, while no key is down
		var timer *time.Timer
		if at, ok := dec.HeldUntil(); ok {
			timer = time.NewTimer(time.Until(at))
			letGo = timer.C
		}
		select {
		case ch := <-chunks:
			ins = dec.Feed(ch.bytes)
			if ch.err != nil {
				ins, ended = append(ins, dec.Close()...), true
			}
		case <-letGo:
			ins = dec.LetGo()
		case <-c.done:
			ended = true
		}
		if timer != nil {
			timer.Stop()
		}
		if !send(ins) || ended {
			return
		}
	}
}

// chunk is one read of the terminal: its bytes, and the error that ended the input.
type chunk struct {
	bytes []byte
	err   error
}

// readRaw reads the terminal for read until the input ends or the console closes.
func (c *Console) readRaw(chunks chan<- chunk, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, readSize)
	for {
		n, err := c.in.Read(buf)
		select {
		case chunks <- chunk{bytes: append([]byte(nil), buf[:n]...), err: err}:
		case <-c.done:
			return
		}
		if err != nil {
			return
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
	var sight *Sight      // the monitor on show instead of the computer's screen, if any
	// offer delivers in, or holds it (and stops taking input) until the queue has room.
	offer := func(in Input) {
		if comp.QueueLength()+len(in.Events) > inputRoom {
			held, inputs, popped = &in, nil, comp.Popped()
			return
		}
		deliver(comp, in)
	}
	// shown is the terminal on show: the monitor's, or the computer's.
	shown := func() *computer.Terminal {
		if sight != nil {
			return sight.Monitor.Terminal()
		}
		return comp.Terminal()
	}
	// show draws what is on show afresh, on a cleared screen.
	show := func() error {
		changed = shown().Changed()
		if _, err := c.out.Write([]byte(clearScreen)); err != nil {
			return err
		}
		c.renderer.Invalidate()
		return c.draw(shown(), sight)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.readDone:
			return ErrInputClosed
		case next := <-boots:
			comp, inputs, popped, sight = next, c.inputs, nil, nil
			if held != nil {
				in := *held
				held = nil
				offer(in)
			}
			if err := show(); err != nil {
				return err
			}
		case <-changed:
			if err := c.draw(shown(), sight); err != nil {
				return err
			}
		case <-c.redraw:
			if comp == nil {
				continue
			}
			if err := show(); err != nil {
				return err
			}
		case in := <-inputs:
			switch {
			case in.Action == Look:
				sight = c.nextSight(sight)
				if err := show(); err != nil {
					return err
				}
			case sight != nil:
				// A player looking at a monitor is not at the computer: a click touches
				// the monitor, a shortcut still acts on the computer, the rest goes nowhere.
				for _, ev := range in.Events {
					if ev.Name == "mouse_click" {
						sight.Monitor.Touch(ev.X, ev.Y)
					}
				}
				if in.Action != NoAction {
					offer(Input{Action: in.Action})
				}
			default:
				offer(in)
			}
		case <-popped:
			in := *held
			held, inputs, popped = nil, c.inputs, nil
			offer(in)
		}
	}
}

// nextSight is the monitor to show after the one on show (nil: the computer's screen): the
// next the world lists, or the computer's screen again after the last.
func (c *Console) nextSight(on *Sight) *Sight {
	if c.sights == nil {
		return nil
	}
	list := c.sights()
	next := 0
	if on != nil {
		next = len(list)
		for i, s := range list {
			if s.Monitor == on.Monitor {
				next = i + 1
			}
		}
	}
	if next >= len(list) {
		return nil
	}
	return &list[next]
}

// draw sends the frame that brings the real screen up to t's, the computer's or a
// monitor's; under a monitor's (sight) a line says which it is. The mouse's cells are
// t's from now on.
func (c *Console) draw(t *computer.Terminal, sight *Sight) error {
	snap := t.Snapshot()
	w, h := snap.Size()
	c.sizeMu.Lock()
	c.screen = [2]int{w, h}
	c.renderer.Width, c.renderer.Height = c.size[0], c.size[1]
	c.sizeMu.Unlock()
	frame := c.renderer.Frame(&snap)
	if sight != nil && (c.renderer.Height <= 0 || h < c.renderer.Height) {
		caption := fmt.Sprintf("fakecraft: %s, a monitor (%dx%d): a click touches it; hold Ctrl-L for the next screen", sight.Where, w, h)
		frame = append(frame, fmt.Sprintf("\x1b[%d;1H\x1b[0m%s\x1b[K\x1b[?25l", h+1, caption)...)
	}
	_, err := c.out.Write(frame)
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
