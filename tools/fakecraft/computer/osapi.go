package computer

import (
	"math"
	"slices"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccstr"
	"fakecraft/luakit"
)

// In-game time: CC's world clock, which starts here at 06:00 of day 1 and advances one
// Minecraft tick per computer tick.
const (
	ticksPerDay    = 24000
	dayStartOffset = 6000 // tick 0 of a Minecraft day is 06:00
)

// copyValue is os.queueEvent's deep copy: tables are copied without metatables, functions,
// threads and userdata become nil and table entries with a nil key or value are dropped.
// seen keeps table identity (and cycles) within one argument.
func copyValue(L *lua.LState, v lua.LValue, seen map[*lua.LTable]*lua.LTable) lua.LValue {
	switch t := v.(type) {
	case lua.LString, lua.LNumber, lua.LBool, *lua.LNilType:
		return v
	case *lua.LTable:
		if c, ok := seen[t]; ok {
			return c
		}
		c := L.NewTable()
		seen[t] = c
		t.ForEach(func(k, val lua.LValue) {
			ck := copyValue(L, k, seen)
			cv := copyValue(L, val, seen)
			if ck != lua.LNil && cv != lua.LNil {
				c.RawSet(ck, cv)
			}
		})
		return c
	default:
		return lua.LNil
	}
}

// worldTicks is the in-game clock in Minecraft ticks since world time 0.
func (c *Computer) worldTicks() int64 { return c.ticks.Load() + dayStartOffset }

// timeOfDay is os.time("ingame"): the in-game hour, 0 to 24.
func (c *Computer) timeOfDay() float64 { return float64(c.worldTicks()%ticksPerDay) / 1000 }

// day is os.day("ingame"): the in-game day, from 1.
func (c *Computer) day() int64 { return c.worldTicks()/ticksPerDay + 1 }

// setAlarm is os.setAlarm: the alarm rings at the hour given, today if that hour is still
// to come, else tomorrow (as CC's, an alarm for the current hour is tomorrow's).
func (c *Computer) setAlarm(hour float64) int {
	day := c.day()
	if hour <= c.timeOfDay() {
		day++
	}
	id := c.nextAlarm
	c.nextAlarm++
	c.alarms[id] = float64(day)*24 + hour
	return id
}

// ringAlarms queues an alarm event, in id order, for each alarm whose hour has come.
func (c *Computer) ringAlarms() {
	if len(c.alarms) == 0 {
		return
	}
	now := float64(c.day())*24 + c.timeOfDay()
	var due []int
	for id, at := range c.alarms {
		if now >= at {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	for _, id := range due {
		delete(c.alarms, id)
		c.QueueEvent("alarm", lua.LNumber(id))
	}
}

// epoch is os.epoch(kind) in milliseconds; ok is false for an unknown kind.
func (c *Computer) epoch(kind string) (float64, bool) {
	switch strings.ToLower(kind) {
	case "utc", "local":
		// CC 1.113.1's "local" ignores the time zone, so both are UNIX milliseconds.
		return float64(c.Now().UnixMilli()), true
	case "ingame":
		// CC's day counts from 1 (os.day()), so the epoch of day 1 at 06:00 is 108000000.
		return float64(c.day())*86400000 + math.Floor(c.timeOfDay()*3600000), true
	}
	return 0, false
}

// installOS sets CC's os API (the Go half; bios.lua adds pullEvent, sleep, loadAPI, run, version).
func (c *Computer) installOS(L *lua.LState) {
	os := L.NewTable()
	fns := map[string]lua.LGFunction{
		"queueEvent": func(L *lua.LState) int {
			name := luakit.StrictString(L, 1)
			args := make([]lua.LValue, 0, L.GetTop()-1)
			for i := 2; i <= L.GetTop(); i++ {
				args = append(args, copyValue(L, L.Get(i), map[*lua.LTable]*lua.LTable{}))
			}
			c.QueueEvent(name, args...)
			return 0
		},
		"startTimer": func(L *lua.LState) int {
			L.Push(lua.LNumber(c.StartTimer(luakit.CheckFinite(L, 1))))
			return 1
		},
		"cancelTimer": func(L *lua.LState) int {
			c.CancelTimer(int(luakit.CheckFinite(L, 1)))
			return 0
		},
		"setAlarm": func(L *lua.LState) int {
			hour := luakit.CheckFinite(L, 1)
			if hour < 0 || hour >= 24 {
				L.RaiseError("Number out of range")
			}
			L.Push(lua.LNumber(c.setAlarm(hour)))
			return 1
		},
		"cancelAlarm": func(L *lua.LState) int {
			delete(c.alarms, int(luakit.CheckFinite(L, 1)))
			return 0
		},
		"clock": func(L *lua.LState) int {
			L.Push(lua.LNumber(float64(c.ticks.Load()) * TickDuration.Seconds()))
			return 1
		},
		"epoch": func(L *lua.LState) int {
			ms, ok := c.epoch(luakit.OptStrictString(L, 1, "ingame"))
			if !ok {
				L.RaiseError("Unsupported operation")
			}
			L.Push(lua.LNumber(ms))
			return 1
		},
		"time": func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok {
				L.Push(lua.LNumber(osTimeTable(L, t)))
				return 1
			}
			switch strings.ToLower(luakit.OptStrictString(L, 1, "ingame")) {
			case "ingame":
				L.Push(lua.LNumber(c.timeOfDay()))
			case "utc":
				L.Push(lua.LNumber(hoursOfDay(c.Now().UTC())))
			case "local":
				L.Push(lua.LNumber(hoursOfDay(c.Now().Local())))
			default:
				L.RaiseError("Unsupported operation")
			}
			return 1
		},
		"day": func(L *lua.LState) int {
			switch strings.ToLower(luakit.OptStrictString(L, 1, "ingame")) {
			case "ingame":
				L.Push(lua.LNumber(c.day()))
			case "utc":
				L.Push(lua.LNumber(calendarDay(c.Now().UTC())))
			case "local":
				L.Push(lua.LNumber(calendarDay(c.Now().Local())))
			default:
				L.RaiseError("Unsupported operation")
			}
			return 1
		},
		"getComputerID": func(L *lua.LState) int { L.Push(lua.LNumber(c.cfg.ID)); return 1 },
		"getComputerLabel": func(L *lua.LState) int {
			label := c.Label()
			if label == nil {
				return 0
			}
			L.Push(lua.LString(*label))
			return 1
		},
		"setComputerLabel": func(L *lua.LState) int {
			label := ccstr.OptLabel(luakit.OptionalString(L, 1))
			c.mu.Lock()
			c.label = label
			c.mu.Unlock()
			return 0
		},
		"shutdown": func(L *lua.LState) int { c.stop = true; return 0 },
		"reboot":   func(L *lua.LState) int { c.stop = true; c.result.Reboot = true; return 0 },
	}
	L.SetFuncs(os, fns) // in the names' order: the same on every run
	os.RawSetString("computerID", os.RawGetString("getComputerID"))
	os.RawSetString("computerLabel", os.RawGetString("getComputerLabel"))
	os.RawSetString("date", L.NewFunction(c.osDate))
	L.SetGlobal("os", os)
}

// calendarDay is os.day("utc"/"local") of t's date in t's zone: CC adds the days of the
// years since 1970 to the day of the year, which counts from 1, so 1970-01-01 is day 1.
func calendarDay(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400 + 1
}

// hoursOfDay is os.time("utc"/"local"): CC's getTimeForCalendar sums the hour, minute/60
// and second/3600 in Java floats, so 06:30:05 is 6.5013890266418, not 6.5013888888889. The
// explicit conversions round each step to float32, as Java does: Go may otherwise fuse the
// operations (the spec allows it unless a conversion intervenes).
func hoursOfDay(t time.Time) float64 {
	h := float32(t.Hour())
	h = float32(h + float32(float32(t.Minute())/60))
	h = float32(h + float32(float32(t.Second())/3600))
	return float64(h)
}
