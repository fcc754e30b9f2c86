// Package computer is the core of fakecraft: one headless CC: Tweaked computer on gopher-lua.
//
// A Computer owns one Lua state, driven by the goroutine that calls Run. Like CC, the whole
// computer is one coroutine that is resumed with one event at a time; everything else
// (network goroutines, timers, the caller) only queues events or hands functions to Do.
//
// apis.go lists every API the computer gets, its own and those of the parts it is built
// with (Config.FS, HTTP, Peripherals); term.go is its screen and termapi.go the term API.
package computer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/ccstr"
	"fakecraft/fsapi"
	"fakecraft/host"
	"fakecraft/httpapi"
	"fakecraft/peripheral"
	"fakecraft/pocket"
)

// EventQueueLimit is CC's per-computer event queue size; events past it are dropped.
const EventQueueLimit = 256

// TickDuration is one Minecraft server tick, the unit of CC's timers and os.clock.
const TickDuration = 50 * time.Millisecond

// MaxLabelLength is the longest computer label CC keeps.
const MaxLabelLength = ccstr.MaxLabel

// Lua state sizing: small initial stacks because every yield-safe pcall makes a coroutine,
// growing on demand up to generous limits. 128 registry slots (2 KiB) hold a pcall's
// function and its arguments with room to spare; 1024 (16 KiB, zeroed) was most of a
// pcall's cost (BenchmarkPcall).
const (
	registryInitial  = 128
	registryMax      = 1 << 20
	registryGrowStep = 1024
	callStackMax     = 32768
	// goCallDepthMax bounds the Lua calls nested through Go (each pcall's coroutine, a
	// string.gsub callback, a Go metamethod): Cobalt's 200 Java frames.
	goCallDepthMax = 200
)

// ErrTimeLimit is returned by Run when its context ends before the computer shuts down.
var ErrTimeLimit = errors.New("time limit reached")

// Boot says what the computer runs once the bios is up, through the shell and the launcher
// (BootPath).
type Boot struct {
	// Program is the command run in the shell, e.g. "/tests/x.lua" or "sandbox".
	Program string
	// Args are passed to Program exactly as given.
	Args []string
	// Autostart are computer paths of servers started beside Program, each under shell.run.
	Autostart []string
}

// MaxID is the largest computer id: CC: Tweaked numbers computers from 0 up in a Java int.
const MaxID = math.MaxInt32

// CheckID refuses an id no CC computer can have (negative, or past MaxID) with a message
// naming the range; the caller names the id.
func CheckID(id int) error {
	if id < 0 || id > MaxID {
		return fmt.Errorf("CC's computer ids run from 0 to %d", MaxID)
	}
	return nil
}

// Config describes one computer.
type Config struct {
	// ID is os.getComputerID().
	ID int
	// Label is the initial os.getComputerLabel(); nil means unset ("" is a label, as CC's).
	Label *string
	// Settings are raw `set key value` values, converted like CC's set program
	// (true/false/nil/numbers) and applied with settings.set before /.settings is loaded:
	// a server's default settings, which the computer's own /.settings overrides.
	Settings map[string]string
	// SettingOverridden, when set, hears each key of Settings whose value the computer's
	// /.settings replaced at boot (for a nil value: gave one), with the value it has
	// instead as CC's set program shows it (textutils.serialize, compact). Both are CC's
	// bytes. It is called on the computer's goroutine, at each boot.
	SettingOverridden func(key, value string)
	// FS is the file system (the fs API), with the ROM mounted at /rom. Nil leaves fs out:
	// then one of APIs must set a global fs the bios can load the ROM through.
	FS *fsapi.FS
	// HTTP is the http API's state; nil leaves http out.
	HTTP *httpapi.API
	// Peripherals are the computer's sides (the peripheral and redstone APIs); nil leaves
	// them out.
	Peripherals *peripheral.Bus
	// APIs are the caller's own, installed in order after the standard ones of the table
	// (apis.go) and before the bios runs.
	APIs []Installer
	// TimeScale speeds the computer's clock up: 10 makes ticks every 5 ms of real time and
	// os.epoch/os.clock advance ten times faster. Zero means 1 (real time). On the virtual
	// clock it sets the pace of the ticks while the computer awaits something outside.
	TimeScale float64
	// VirtualTime puts the computer on the virtual clock (clock.go): its time passes only
	// while it is idle, and then at once, up to the next tick on which something is due
	// (a timer, an alarm, an After function), so a program's sleep(60) takes no real time
	// and what a program sees of time does not depend on the machine's speed. While a
	// goroutine started with Go runs (real I/O in flight) or a line is wanted from Input,
	// ticks come from the real clock at TimeScale, as without it.
	VirtualTime bool
	// YieldTimeout is how long one resume may run before "Too long without yielding".
	// Zero means DefaultYieldTimeout (7 s, CC's value).
	YieldTimeout time.Duration
	// yieldClock runs YieldTimeout's timers; nil is the wall clock. A test gives a fake one
	// to say when the time is up instead of waiting for it.
	yieldClock afterFunc
	// Stdout receives the terminal transcript line by line as it is written. May be nil.
	Stdout io.Writer
	// Basic makes a basic (non-colour) computer; the default is an advanced one.
	Basic bool
	// Pocket makes a pocket computer (basic or advanced, as Basic says): a 26x20 screen and
	// the pocket API over its back upgrade, on Peripherals' back. Nil: an ordinary computer.
	Pocket *pocket.Pocket
	// Boot is what to run. With an empty Program the shell runs boot.lua with nothing to do.
	Boot Boot
	// Bare makes a plain CC: Tweaked computer: no TrapOS launcher (Boot is ignored); the shell
	// runs /rom/startup.lua (the computer's startup files) and then reads commands at its
	// prompt, each typed from Input.
	Bare bool
	// Input answers read(): each time a program starts waiting for a line (read() turns a
	// cursor blink on, on the screen or a monitor; a coroutine waits only for char or key
	// events), the next line is typed on CC's keyboard (typeLine). When it ends the computer shuts down (Result.InputEnded). Nil types nothing.
	Input Input
	// Acts are the player's doings beside the keyboard (a touch on a monitor), each done
	// when the computer next waits for an event with none queued and no line wanted from
	// Input, one at a time, in order. Nil does nothing.
	Acts Acts
	// Multishell lets the bios start CC's multishell (tabs) on an advanced computer with
	// bios.use_multishell set, as CC's bios does; the shell then runs in its first tab.
	// Off, the shell runs directly on the screen: a transcript (Stdout) wants that, since
	// multishell's window redraws every row of the screen each time it scrolls.
	Multishell bool
}

// screenSize is the size of the computer's screen: a pocket computer's or an ordinary one's.
func (cfg *Config) screenSize() (w, h int) {
	if cfg.Pocket != nil {
		return PocketWidth, PocketHeight
	}
	return TermWidth, TermHeight
}

// Result is how a computer's run ended.
type Result struct {
	// OK is the command's outcome as the shell reported it (false when it errored).
	OK bool
	// Reported says whether boot.lua reported an outcome before the computer stopped.
	Reported bool
	// Err is a bios-level failure: the computer's top coroutine errored.
	Err error
	// Reboot says the computer stopped for os.reboot (or Reboot, Ctrl-R): start it again
	// on the same disk.
	Reboot bool
	// InputEnded says the computer stopped because it waited for a line after Input ended.
	InputEnded bool
	// Label is the computer label when it stopped, nil for none (a reboot keeps it).
	Label *string
}

type event struct {
	name string
	args []lua.LValue
	// typed marks the Enter that ends a line Input typed (typeLine).
	typed bool
}

// Computer is one running CC computer. Create it with New and drive it with Run.
type Computer struct {
	cfg   Config
	term  *Terminal
	guard *yieldGuard
	start time.Time // real time of New

	mu    sync.Mutex // guards queue, doq, goroutines, atShutdown, and label's writes (Label reads it from any goroutine)
	queue []event
	doq   []func(*lua.LState)
	// goroutines counts the goroutines started with Go still running: under mu with the
	// queue, so that one look sees a goroutine's last event queued or the goroutine running.
	goroutines int
	atShutdown []func()      // AtShutdown's functions
	wake       chan struct{} // capacity 1: something was queued
	popped     chan struct{} // capacity 1: an event left the queue
	done       chan struct{}
	doneMu     sync.Once
	// settled is closed the first time the computer waits with nothing queued (or stops):
	// it has booted and run what it runs at startup up to its first real wait.
	settled     chan struct{}
	settledOnce sync.Once
	wg          sync.WaitGroup // goroutines started with Go

	// Fields below are owned by the Lua goroutine; Now reads ticks from any goroutine.
	L         *lua.LState
	co        *lua.LState
	ticks     atomic.Int64 // the computer's clock (clock.go)
	timers    map[int]int  // timer id -> ticks left
	nextTimer int
	alarms    map[int]float64 // alarm id -> in-game hours since day 0 at which it rings
	nextAlarm int
	afters    []after // functions waiting for the clock (After)
	label     *string // nil: none; written under mu (Label)
	stop      bool    // os.shutdown/os.reboot or boot.lua's finish: stop after this resume
	result    Result
	ran       bool
	mainFn    *lua.LFunction // the bios chunk, body of the computer coroutine
	gsubs     gsubYields     // string.gsub's replacement functions that yield
	// trampoline is cfuncs.lua's body for a coroutine that calls a function (pcall's, and
	// boot.go's create for a Go function).
	trampoline *lua.LFunction
	// pcallBody is the prototype of the bodies trampoline makes (standInBody).
	pcallBody *lua.FunctionProto
	// lastTask is the id of the last main-thread task (task.go; CC's count from 1),
	// taskResults what the finished ones left for their calls, taskWait the stand-in a call
	// waits in.
	lastTask    int64
	taskResults map[int64][]lua.LValue
	taskWait    *lua.LFunction
	wantLine    bool // read() waits for a line and Input has not typed it yet
	// typedQueued counts the lines Input typed whose Enter the computer has not taken yet;
	// a blink turned on meanwhile (the shell putting its prompt back after a drop, inside
	// the same read) is no new wait, only blinkWaits, which holds until that Enter is taken.
	typedQueued int
	blinkWaits  bool
	// typing holds the keys of the typed line that did not fit in the queue yet (typeMore).
	typing []typedKey
	// keyWaiter is the coroutine last seen waiting only for char or key events (noteYield),
	// held weakly: one the program dropped is garbage, and is typed nothing (waitsForKeys).
	keyWaiter weak.Pointer[lua.LState]
	// keyWaiterFed says a line was typed for keyWaiter alone (no read() asked for it) and
	// keyWaiter has not been resumed since: if it still has not when the line's Enter is
	// taken, it never will be, as far as run can tell, and is typed no more (typedTaken).
	keyWaiterFed bool
	// keyWaiterChars says keyWaiter waits for char events, which a line of no character
	// (only its Enter) does not give it: such a line is no test of whether it hears.
	keyWaiterChars bool
	actsEnded      bool // Config.Acts is closed and drained
	// onRealTime says the virtual clock's ticks come from the real ticker at the moment
	// (realTicks).
	onRealTime bool
}

// New prepares a computer; nothing runs until Run.
func New(cfg Config) (*Computer, error) {
	if cfg.TimeScale < 0 {
		return nil, fmt.Errorf("time scale %v: must be positive", cfg.TimeScale)
	}
	if cfg.TimeScale == 0 {
		cfg.TimeScale = 1
	}
	if cfg.YieldTimeout == 0 {
		cfg.YieldTimeout = DefaultYieldTimeout
	}
	w, h := cfg.screenSize()
	c := &Computer{
		cfg:     cfg,
		term:    newScreen(cfg.Stdout, !cfg.Basic, w, h),
		guard:   newYieldGuard(cfg.yieldClock),
		start:   time.Now(),
		wake:    make(chan struct{}, 1),
		popped:  make(chan struct{}, 1),
		done:    make(chan struct{}),
		timers:  map[int]int{},
		alarms:  map[int]float64{},
		settled: make(chan struct{}),
		label:   ccstr.OptLabel(cfg.Label),
	}
	c.term.onBlink = c.cursorBlink
	return c, nil
}

// ID is the computer's id.
func (c *Computer) ID() int { return c.cfg.ID }

// Screen returns the current screen's text (51x19, a pocket computer's 26x20; rows
// right-trimmed, joined by newlines).
func (c *Computer) Screen() string { return c.term.Screen() }

// Terminal is the computer's screen, for a renderer (Snapshot, Changed).
func (c *Computer) Terminal() *Terminal { return c.term }

// Transcript returns every finished terminal line written so far.
func (c *Computer) Transcript() string { return c.term.Transcript() }

// Label is the computer's label now, nil when it has none. Safe from any goroutine (another
// computer's computer peripheral asks).
func (c *Computer) Label() *string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.label
}

// Terminate queues a terminate event, as holding Ctrl-T does.
func (c *Computer) Terminate() { c.QueueEvent("terminate") }

// Shutdown turns the computer off after the current resume, as holding Ctrl-S does; Run
// then returns. Safe from any goroutine.
func (c *Computer) Shutdown() {
	c.Do(func(*lua.LState) { c.stop = true })
}

// Reboot stops the computer to restart it, as holding Ctrl-R does: Run returns with
// Result.Reboot set. Safe from any goroutine.
func (c *Computer) Reboot() {
	c.Do(func(*lua.LState) {
		c.stop = true
		c.result.Reboot = true
	})
}

// QueueEvent implements host.Host.
func (c *Computer) QueueEvent(name string, args ...lua.LValue) {
	c.queueEvent(event{name: name, args: args})
}

// queueEvent queues ev unless the queue is full, and says whether it did.
func (c *Computer) queueEvent(ev event) bool {
	c.mu.Lock()
	queued := len(c.queue) < EventQueueLimit
	if queued {
		c.queue = append(c.queue, ev)
	}
	c.mu.Unlock()
	c.poke()
	return queued
}

// QueueLength returns how many events wait in the queue.
func (c *Computer) QueueLength() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// Do implements host.Host.
func (c *Computer) Do(fn func(L *lua.LState)) {
	c.mu.Lock()
	c.doq = append(c.doq, fn)
	c.mu.Unlock()
	c.poke()
}

// Go implements host.Host.
func (c *Computer) Go(fn func()) {
	c.wg.Add(1)
	c.mu.Lock()
	c.goroutines++
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			c.goroutines--
			c.mu.Unlock()
			// The computer may be idle now: let Run look again (the virtual clock may jump).
			c.poke()
		}()
		fn()
	}()
}

// AtShutdown implements host.Host.
func (c *Computer) AtShutdown(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.atShutdown = append(c.atShutdown, fn)
}

// Done implements host.Host.
func (c *Computer) Done() <-chan struct{} { return c.done }

// StartTimer implements host.Host: Math.round(seconds/0.05) ticks, where 0 and 1 both fire
// on the next tick.
func (c *Computer) StartTimer(seconds float64) int {
	id := c.nextTimer
	c.nextTimer++
	c.timers[id] = int(javaRound(seconds / TickDuration.Seconds()))
	return id
}

// CancelTimer implements host.Host.
func (c *Computer) CancelTimer(id int) { delete(c.timers, id) }

// after is a function waiting for the computer's clock.
type after struct {
	ticks int
	fn    func()
}

// After implements host.Host.
func (c *Computer) After(seconds float64, fn func()) {
	c.afters = append(c.afters, after{ticks: max(int(javaRound(seconds/TickDuration.Seconds())), 1), fn: fn})
}

var _ host.Host = (*Computer)(nil)

func (c *Computer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Run boots the computer and drives it until it shuts down or ctx ends (ErrTimeLimit).
// It must be called once; the calling goroutine owns the Lua state meanwhile.
func (c *Computer) Run(ctx context.Context) (Result, error) {
	if c.ran {
		return Result{}, errors.New("computer already ran")
	}
	c.ran = true
	defer c.shutdown()
	if err := c.boot(); err != nil {
		return Result{}, err
	}
	ticker := time.NewTicker(c.tickPeriod())
	defer ticker.Stop()
	c.onRealTime = true
	// A resume that never yields cannot see ctx: abort it from outside.
	stopWatch := context.AfterFunc(ctx, c.guard.abort)
	defer stopWatch()

	state, filter := c.resume(nil)
	for state == lua.ResumeYield && !c.stop {
		c.runDo()
		if c.stop {
			break
		}
		select {
		case <-ctx.Done():
			c.term.Flush()
			return c.finalResult(), ErrTimeLimit
		case <-c.realTicks(ticker):
			c.tick()
			continue
		case line, ok := <-c.wantedInput():
			c.typeLine(line, ok)
			continue
		default:
		}
		ev, ok := c.pop()
		if !ok && len(c.typing) > 0 {
			c.typeMore()
			continue
		}
		if !ok {
			c.settle()
			c.waitsForKeys()
			if c.act() {
				continue
			}
			if c.jumpClock(ctx) {
				continue
			}
			select {
			case <-ctx.Done():
				c.term.Flush()
				return c.finalResult(), ErrTimeLimit
			case <-c.realTicks(ticker):
				c.tick()
			case line, ok := <-c.wantedInput():
				c.typeLine(line, ok)
			case <-c.wake:
			}
			continue
		}
		if filter != "" && ev.name != filter && ev.name != "terminate" {
			c.typedTaken(ev)
			continue // CC discards, not defers, an event the top coroutine is not waiting for
		}
		// A goroutine that called Do and then queued ev may have done both since the runDo
		// above; its function must still run before ev is delivered, as Do promises.
		c.runDo()
		if c.stop {
			break
		}
		args := make([]lua.LValue, 1, len(ev.args)+1)
		args[0] = lua.LString(ev.name)
		for _, a := range ev.args {
			args = append(args, host.Resolve(c.L, a))
		}
		state, filter = c.resume(args)
		c.typedTaken(ev)
	}
	c.term.Flush()
	if ctx.Err() != nil && !c.result.Reported {
		return c.finalResult(), ErrTimeLimit
	}
	return c.finalResult(), nil
}

func (c *Computer) finalResult() Result {
	r := c.result
	r.Label = c.label
	return r
}

func (c *Computer) pop() (event, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return event{}, false
	}
	ev := c.queue[0]
	c.queue[0] = event{}
	c.queue = c.queue[1:]
	select {
	case c.popped <- struct{}{}:
	default:
	}
	return ev, true
}

// Settled is closed the first time the computer waits for an event with none queued, or
// when it stops: by then it has booted and its startup has run up to its first wait (a
// GPS host is answering). A world starts the computer someone runs after the others settle.
func (c *Computer) Settled() <-chan struct{} { return c.settled }

func (c *Computer) settle() { c.settledOnce.Do(func() { close(c.settled) }) }

// Popped receives a value after an event left the queue, for a producer that waits for
// room instead of overflowing it (fakecraft shell's keyboard).
func (c *Computer) Popped() <-chan struct{} { return c.popped }

// runDo runs functions handed to Do, in order.
func (c *Computer) runDo() {
	for {
		c.mu.Lock()
		fns := c.doq
		c.doq = nil
		c.mu.Unlock()
		if len(fns) == 0 {
			return
		}
		for _, fn := range fns {
			if err := c.L.CallByParam(lua.P{Fn: c.L.NewFunction(func(L *lua.LState) int {
				fn(L)
				return 0
			}), Protect: true}); err != nil {
				c.printError(fmt.Sprintf("host function: %v", err))
			}
		}
	}
}

// resume resumes the computer coroutine under the yield guard and returns its state and the
// filter it yielded.
func (c *Computer) resume(args []lua.LValue) (lua.ResumeState, string) {
	disarm := c.guard.arm(c.cfg.YieldTimeout)
	state, err, values := c.L.Resume(c.co, c.mainFn, args...)
	disarm()
	switch state {
	case lua.ResumeError:
		msg := err.Error()
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Object != nil {
			msg = toStringSafe(c.L, apiErr.Object)
		}
		if c.guard.hard.Load() {
			c.stop = true
		}
		c.result.Err = errors.New(msg)
		if c.guard.stopped.Load() {
			// The host stopped the computer (Run's ctx): its caller says so; the code it
			// stopped did nothing wrong, so the screen shows no error of its.
			return state, ""
		}
		c.printError(msg)
		return state, ""
	case lua.ResumeYield:
		if len(values) > 0 {
			if s, ok := values[0].(lua.LString); ok {
				return state, string(s)
			}
		}
		return state, ""
	}
	return state, ""
}

// printError writes a bios-level error on the terminal, red on colour terminals.
func (c *Computer) printError(msg string) {
	x, y := 1, 1
	c.term.mu.Lock()
	x, y = c.term.x, c.term.y
	c.term.mu.Unlock()
	if x > 1 {
		c.newline(y)
	}
	c.term.Write(msg)
	c.term.mu.Lock()
	y = c.term.y
	c.term.mu.Unlock()
	c.newline(y)
}

func (c *Computer) newline(y int) {
	_, h := c.term.Size()
	if y < h {
		c.term.SetCursorPos(1, y+1)
		return
	}
	c.term.SetCursorPos(1, h)
	c.term.Scroll(1)
}

// shutdown runs the AtShutdown functions, waits for the goroutines started with Go and
// releases the Lua state.
func (c *Computer) shutdown() {
	c.settle()
	c.doneMu.Do(func() { close(c.done) })
	c.mu.Lock()
	stops := c.atShutdown
	c.atShutdown = nil
	c.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	c.wg.Wait()
	if c.L != nil {
		c.L.Close()
	}
}

// toStringSafe renders an error value without running Lua code that could fail again.
func toStringSafe(L *lua.LState, v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return ccformat.FormatNumber(float64(n))
	}
	if s, ok := v.(lua.LString); ok {
		return string(s)
	}
	var out string
	if err := L.CallByParam(lua.P{Fn: L.NewFunction(func(L *lua.LState) int {
		out = toStringMeta(L, v)
		return 0
	}), Protect: true}); err != nil {
		return v.String()
	}
	return out
}

// javaRound is Java's Math.round for doubles: the nearest integer, ties towards +inf.
// (floor(x+0.5) would be wrong for 0.49999999999999994, whose sum rounds up to 1.)
func javaRound(x float64) float64 {
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return r
}
