package httpapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// tickDuration is the fake computer's tick: 50 ms of computer time pass in 1 ms, so timer
// tests do not wait real seconds.
const tickDuration = time.Millisecond

// maxQueuedEvents is CC's event queue size; the fake drops the excess like CC.
const maxQueuedEvents = 256

// queued is an event or a Do function waiting for the Lua goroutine.
type queued struct {
	name string
	args []lua.LValue
	fn   func(*lua.LState)
}

// fakeHost is a minimal CC computer for tests: one goroutine (the one calling run) owns
// the Lua state, runs a chunk as a coroutine and feeds it events with CC's filter rules.
type fakeHost struct {
	L    *lua.LState
	done chan struct{}
	wg   sync.WaitGroup
	// parked is true while the program is yielded, waiting for an event (tests wait for it
	// instead of sleeping).
	parked atomic.Bool

	mu      sync.Mutex
	queue   []queued
	events  int
	wake    chan struct{}
	timers  map[int]*time.Timer
	nextID  int
	stopped bool
	atStop  []func()
}

func newFakeHost() *fakeHost {
	h := &fakeHost{
		L:      lua.NewState(),
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		timers: map[int]*time.Timer{},
	}
	h.installOS()
	return h
}

func (h *fakeHost) push(q queued) {
	h.mu.Lock()
	if q.fn == nil {
		if h.events >= maxQueuedEvents {
			h.mu.Unlock()
			return
		}
		h.events++
	}
	h.queue = append(h.queue, q)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *fakeHost) QueueEvent(name string, args ...lua.LValue) {
	h.push(queued{name: name, args: args})
}

func (h *fakeHost) Do(fn func(L *lua.LState)) { h.push(queued{fn: fn}) }

func (h *fakeHost) Go(fn func()) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn()
	}()
}

func (h *fakeHost) Done() <-chan struct{} { return h.done }

func (h *fakeHost) AtShutdown(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.atStop = append(h.atStop, fn)
}

func (h *fakeHost) Now() time.Time { return time.Now() }

func (h *fakeHost) StartTimer(seconds float64) int {
	ticks := max(math.Round(seconds/0.05), 1) // 0 and 1 tick both fire on the next tick
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.nextID
	h.nextID++
	if h.stopped {
		return id
	}
	h.timers[id] = time.AfterFunc(time.Duration(ticks)*tickDuration, func() {
		h.mu.Lock()
		delete(h.timers, id)
		h.mu.Unlock()
		h.QueueEvent("timer", lua.LNumber(id))
	})
	return id
}

func (h *fakeHost) CancelTimer(id int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.timers[id]; ok {
		t.Stop()
		delete(h.timers, id)
	}
}

// After is not used by the http API.
func (h *fakeHost) After(float64, func()) { panic("fakeHost.After: the http API has no use for it") }

// shutdown stops the computer and waits for every goroutine started through Go.
func (h *fakeHost) shutdown() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.stopped = true
	for id, t := range h.timers {
		t.Stop()
		delete(h.timers, id)
	}
	atStop := h.atStop
	h.mu.Unlock()
	close(h.done)
	for _, fn := range atStop {
		fn()
	}
	h.wg.Wait()
	h.L.Close()
}

// installOS provides the slice of CC's os API the http wrappers and tests use.
func (h *fakeHost) installOS() {
	L := h.L
	osTable := L.NewTable()
	L.SetGlobal("os", osTable)
	L.SetFuncs(osTable, map[string]lua.LGFunction{
		"queueEvent": func(L *lua.LState) int {
			args := make([]lua.LValue, 0, L.GetTop())
			for i := 2; i <= L.GetTop(); i++ {
				args = append(args, L.Get(i))
			}
			h.QueueEvent(L.CheckString(1), args...)
			return 0
		},
		"startTimer": func(L *lua.LState) int {
			L.Push(lua.LNumber(h.StartTimer(float64(L.CheckNumber(1)))))
			return 1
		},
	})
	if err := L.DoString(`
		local function check(event, ...)
			if event == "terminate" then error("Terminated", 0) end
			return event, ...
		end
		function os.pullEventRaw(filter) return coroutine.yield(filter) end
		function os.pullEvent(filter) return check(coroutine.yield(filter)) end
	`); err != nil {
		panic(err)
	}
}

// next waits for the next queued item.
func (h *fakeHost) next(ctx context.Context) (queued, error) {
	for {
		h.mu.Lock()
		if len(h.queue) > 0 {
			q := h.queue[0]
			h.queue = h.queue[1:]
			if q.fn == nil {
				h.events--
			}
			h.mu.Unlock()
			return q, nil
		}
		h.mu.Unlock()
		select {
		case <-h.wake:
		case <-ctx.Done():
			return queued{}, ctx.Err()
		}
	}
}

// run executes src as the computer's program until it returns, delivering events and Do
// functions in order. It returns the chunk's results.
func (h *fakeHost) run(ctx context.Context, src string, args ...string) ([]lua.LValue, error) {
	fn, err := h.L.LoadString(src)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	co, _ := h.L.NewThread()
	resumeArgs := make([]lua.LValue, 0, len(args))
	for _, a := range args {
		resumeArgs = append(resumeArgs, lua.LString(a))
	}
	for {
		st, err, values := h.L.Resume(co, fn, resumeArgs...)
		if err != nil {
			return nil, err
		}
		if st == lua.ResumeOK {
			return values, nil
		}
		filter := ""
		if len(values) > 0 {
			if s, ok := values[0].(lua.LString); ok {
				filter = string(s)
			}
		}
		resumeArgs = nil
		h.parked.Store(true)
		for resumeArgs == nil {
			q, err := h.next(ctx)
			if err != nil {
				return nil, errors.New("program still waiting when the test deadline passed")
			}
			if q.fn != nil {
				q.fn(h.L)
				continue
			}
			// CC discards, not defers, an event the filter rejects.
			if filter == "" || filter == q.name || q.name == "terminate" {
				resumeArgs = append([]lua.LValue{lua.LString(q.name)}, q.args...)
			}
		}
		h.parked.Store(false)
	}
}
