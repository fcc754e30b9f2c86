package computer

import (
	"context"
	"math"
	"slices"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The computer's clock is its ticks: os.clock, os.time and os.day, timers, alarms and After
// functions all count them, and Now is the wall time they stand for. On the real clock a
// ticker adds one every tickPeriod of real time. On the virtual clock (Config.VirtualTime)
// they are added only while the computer is idle (idle), all at once up to the next tick
// on which something is due (jumpClock); while it awaits something from outside
// (awaitsOutside) the real ticker adds them, so that a timeout never fires before a real
// answer could have come.

// Now implements host.Host. On the virtual clock it is the boot's wall time plus the ticks
// since; on the real clock, the real time since New, scaled by TimeScale.
func (c *Computer) Now() time.Time {
	if c.cfg.VirtualTime {
		return c.start.Add(time.Duration(c.ticks.Load()) * TickDuration)
	}
	elapsed := time.Since(c.start)
	return c.start.Add(time.Duration(float64(elapsed) * c.cfg.TimeScale))
}

// tickPeriod is the real time between two ticks of the real ticker.
func (c *Computer) tickPeriod() time.Duration {
	return time.Duration(float64(TickDuration) / c.cfg.TimeScale)
}

// tick advances the clock by one tick and fires due timers in id order.
func (c *Computer) tick() {
	c.ticks.Add(1)
	var due []int
	for id := range c.timers {
		c.timers[id]--
		if c.timers[id] <= 0 {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	for _, id := range due {
		delete(c.timers, id)
		c.QueueEvent("timer", lua.LNumber(id))
	}
	c.ringAlarms()
	if len(c.afters) > 0 {
		// A function may schedule another: it waits for the next tick.
		waiting := c.afters
		c.afters = nil
		for _, a := range waiting {
			if a.ticks--; a.ticks > 0 {
				c.afters = append(c.afters, a)
			} else {
				a.fn()
			}
		}
	}
}

// awaitsOutside says whether something outside the computer may give it work at any moment:
// a goroutine started with Go runs (a request, an open socket), or a line is wanted from
// Input. Lua goroutine only.
func (c *Computer) awaitsOutside() bool {
	if c.wantedInput() != nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.goroutines > 0
}

// idle says whether only the clock can give the computer work: Lua waits for an event
// (the caller's state), nothing is queued, no Do function waits, and nothing outside is
// awaited (awaitsOutside). The queue and the goroutines are seen in one look under mu: a
// goroutine queues its last event before it stops counting, so none slips between the two.
// Lua goroutine only.
func (c *Computer) idle() bool {
	if c.wantedInput() != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue) == 0 && len(c.doq) == 0 && c.goroutines == 0
}

// clockWaits says whether something waits for the clock: a timer, an alarm or an After
// function.
func (c *Computer) clockWaits() bool {
	return len(c.timers) > 0 || len(c.alarms) > 0 || len(c.afters) > 0
}

// realTicks is the real ticker's channel while ticks come from real time: always on the real
// clock, and on the virtual clock while the computer awaits something outside; otherwise
// nil, which never delivers. Lua goroutine only.
func (c *Computer) realTicks(t *time.Ticker) <-chan time.Time {
	if !c.cfg.VirtualTime {
		return t.C
	}
	real := c.awaitsOutside()
	if real && !c.onRealTime {
		// Back on real time: the first tick is a whole period away, not one left from before.
		t.Reset(c.tickPeriod())
	}
	c.onRealTime = real
	if !real {
		return nil
	}
	return t.C
}

// jumpClock advances the virtual clock while the computer is idle and something waits for
// the clock, tick by tick as the real ticker would (firing timers in id order, alarms, After
// functions), until what fired gives it work. It says whether it advanced; on the real
// clock, or when the computer is not idle or nothing waits, it does nothing. Lua goroutine
// only.
func (c *Computer) jumpClock(ctx context.Context) bool {
	if !c.cfg.VirtualTime || !c.clockWaits() || !c.idle() {
		return false
	}
	for ctx.Err() == nil && c.clockWaits() && c.idle() {
		c.skipQuietTicks()
		c.tick()
	}
	return true
}

// skipQuietTicks advances the clock over the ticks before the first timer's, when only
// timers wait: on those ticks nothing fires, so a sleep(3600) is one step, not 72000.
// Alarms (at most an in-game day away) and After functions (a few ticks) go tick by tick.
func (c *Computer) skipQuietTicks() {
	if len(c.alarms) > 0 || len(c.afters) > 0 || len(c.timers) == 0 {
		return
	}
	quiet := math.MaxInt
	for _, left := range c.timers {
		quiet = min(quiet, left-1)
	}
	if quiet <= 0 {
		return
	}
	for id := range c.timers {
		c.timers[id] -= quiet
	}
	c.ticks.Add(int64(quiet))
}
