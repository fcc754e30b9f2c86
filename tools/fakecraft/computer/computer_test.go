package computer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every computer a test runs: a hang ends there, a loaded machine under
// -race does not (the heaviest test, half a million values, took 9.5 s in CI).
const testTimeout = 60 * time.Second

// runLua boots a computer whose top-level program (in place of the shell) is src, and
// returns the transcript and result.
func runLua(t *testing.T, src string, tweak ...func(*Config)) (string, Result, *Computer) {
	t.Helper()
	var out bytes.Buffer
	cfg := Config{
		Stdout:    &out,
		TimeScale: 20,
		APIs:      []Installer{memFS{ShellPath: src}.install},
	}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := c.Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, out.String(), c.Transcript())
	return out.String(), res, c
}

func TestPrintBasics(t *testing.T) {
	out, res, _ := runLua(t, `print("a", 1, nil, true) print(1/3, 0.1+0.2, 2^53) print(1e15, 0/0, math.huge, -math.huge, 1e100, 10/2) return true`)
	assert.Equal(t, "a\t1\tnil\ttrue\n0.33333333333333\t0.3\t9007199254740992\n1000000000000000\tnan\tinf\t-inf\t1e+100\t5\n", out)
	assert.True(t, res.OK)
	assert.True(t, res.Reported)
	assert.NoError(t, res.Err)
}

// TestShutdownAndRebootNeverReturn: os.shutdown and os.reboot do not return, as CC's bios
// makes them (it yields until the computer stops): the caller's next line never runs, under
// pcall neither.
func TestShutdownAndRebootNeverReturn(t *testing.T) {
	for _, call := range []string{"os.shutdown()", "os.reboot()", "pcall(os.reboot)"} {
		t.Run(call, func(t *testing.T) {
			out, res, _ := runLua(t, `print("before") `+call+` print("after")`)
			assert.Equal(t, "before\n", out)
			assert.Equal(t, strings.Contains(call, "reboot"), res.Reboot)
		})
	}
}

// check runs src, which must print "ok" as its last line, and fails with the transcript.
func check(t *testing.T, src string, tweak ...func(*Config)) *Computer {
	t.Helper()
	out, res, c := runLua(t, src+"\nprint('ok')", tweak...)
	require.NoError(t, res.Err, out)
	assert.True(t, strings.HasSuffix(out, "ok\n"), out)
	return c
}

func TestToStringAndFormat(t *testing.T) {
	check(t, `
assert(tostring(1/3) == "0.33333333333333", tostring(1/3))
assert(tostring(0.1 + 0.2) == "0.3")
assert(tostring(2^53) == "9007199254740992")
assert(tostring(1e15) == "1000000000000000")
assert(tostring(-0.5) == "-0.5")
assert(tostring(1234567.5) == "1234567.5")
assert(tostring(0/0) == "nan" or tostring(0/0) == "-nan")
assert(tostring(math.huge) == "inf" and math.huge == 1/0)
assert(tostring(setmetatable({}, {__tostring = function() return "T" end})) == "T")
assert(string.format("%s|%d|%5.1f", 1/3, 3, 2) == "0.33333333333333|3|  2.0", string.format("%s|%d|%5.1f", 1/3, 3, 2))
assert(string.format("%q", "a\nb\"\0") == '"a\\\nb\\"\\000"', string.format("%q", "a\nb\"\0"))
assert(string.format("%d", 1.5) == "1") -- Cobalt truncates: CC's own os_spec formats os.epoch()/1000 with %d
assert(("%x"):format(255) == "ff")
assert(string.rep("ab", 3, ",") == "ab,ab,ab")
`)
}

func TestLua52Surface(t *testing.T) {
	check(t, `
assert(_VERSION == "Lua 5.2", _VERSION)
assert(_HOST:find("^ComputerCraft 1%.113%.1 %(fakecraft%)"), _HOST)
local p = table.pack(1, nil, 3)
assert(p.n == 3 and p[1] == 1 and p[3] == 3)
assert(select("#", table.unpack({1, 2, 3})) == 3)
assert(unpack == table.unpack)
local env = {x = 5}
local f = load("return x", "chunk", "t", env)
assert(f() == 5)
local g = load("y = 7")
g()
assert(y == 7, "load defaults to _G")
local parts = {"return ", "4"}
local i = 0
assert(load(function() i = i + 1 return parts[i] end)() == 4)
assert(load("return 1", "n", "b") == nil)
local _, err = load("x = = 1", "=my")
assert(err:find("^my:1:"), err)
local _, err2 = load("error('boom')", "@/path/file.lua")
assert(select(2, pcall(_)) == "/path/file.lua:1: boom", select(2, pcall(_)))
assert(rawlen({1, 2}) == 2 and rawlen("abc") == 3)
assert(bit32.band(0xFF, 0x0F) == 0x0F and bit32.bor(1, 2) == 3 and bit32.bxor(3, 1) == 2)
assert(bit32.bnot(0) == 0xFFFFFFFF and bit32.lshift(1, 4) == 16 and bit32.rshift(16, 4) == 1)
assert(bit32.arshift(0x80000000, 4) == 0xF8000000 and bit32.btest(1, 3))
assert(bit32.extract(0xF0, 4, 4) == 0xF and bit32.replace(0, 0xF, 4, 4) == 0xF0)
assert(bit32.lrotate(0x80000000, 1) == 1 and bit32.rrotate(1, 1) == 0x80000000)
assert(bit.blshift(1, 2) == 4 and bit.brshift(-8, 1) == bit32.arshift(-8, 1) and bit.blogic_rshift(8, 1) == 4)
for _, name in ipairs({"collectgarbage", "module", "newproxy", "gcinfo", "require", "package", "io"}) do
  assert(_G[name] == nil, name .. " should be absent")
end
-- string.dump is Cobalt's, which CC leaves without a bytecode format: it dumps nothing.
assert(select(2, pcall(string.dump, print)):find("unable to dump given function$"))
assert(os.exit == nil and os.execute == nil and os.getenv == nil)
assert(os.remove == nil and os.rename == nil and os.tmpname == nil)
assert(loadstring("return 2")() == 2)
assert(math.log(8, 2) == 3)
local t = table.move({1, 2, 3}, 1, 3, 2)
assert(t[1] == 1 and t[2] == 1 and t[4] == 3)
goto done
error("goto skipped")
::done::
`)
}

func TestYieldInsidePcall(t *testing.T) {
	check(t, `
os.queueEvent("e", 1)
local ok, name, v = pcall(os.pullEvent, "e")
assert(ok and name == "e" and v == 1)
local ok2, err = pcall(function() sleep(0) error("x", 0) end)
assert(not ok2 and err == "x")
local ok3, tbl = pcall(error, {code = 1})
assert(not ok3 and tbl.code == 1)
assert(select(2, pcall(nil)) == "attempt to call a nil value")
local r = {xpcall(function(a) error(a .. "!", 0) end, function(m) return "h:" .. m end, "q")}
assert(r[1] == false and r[2] == "h:q!")
local gen = coroutine.wrap(function() coroutine.yield(1) coroutine.yield(2) end)
assert(gen() == 1 and gen() == 2)
`)
}

func TestTopLevelDiscardsUnfilteredEvents(t *testing.T) {
	check(t, `
os.queueEvent("a")
os.queueEvent("b")
assert(os.pullEventRaw("b") == "b")
os.queueEvent("c")
local name = os.pullEventRaw()
assert(name == "c", "event a should have been discarded, got " .. tostring(name))
`)
}

func TestTerminatePassesFilter(t *testing.T) {
	check(t, `
os.queueEvent("terminate")
assert(os.pullEventRaw("something") == "terminate")
os.queueEvent("terminate")
local ok, err = pcall(os.pullEvent, "something")
assert(not ok and err == "Terminated", tostring(err))
`)
}

// TestGoTerminateStopsProgram: a terminate queued by a Go goroutine ends the program's wait.
// The goroutine queues it once the program says it waits (waiting()): queued at a fixed time
// after the APIs are installed, it could come before the computer's queue starts and be lost
// on a slow machine, which left the program waiting until the test's time limit.
func TestGoTerminateStopsProgram(t *testing.T) {
	out, res, _ := runLua(t, `print("waiting") waiting() while true do os.pullEvent("never") end`, func(cfg *Config) {
		cfg.APIs = append(cfg.APIs, func(L *lua.LState, h *Env) error {
			waiting := make(chan struct{})
			L.SetGlobal("waiting", L.NewFunction(func(*lua.LState) int {
				close(waiting)
				return 0
			}))
			h.Go(func() {
				select {
				case <-waiting:
					h.QueueEvent("terminate")
				case <-h.Done():
				}
			})
			return nil
		})
	})
	assert.Equal(t, "waiting\nTerminated\n", out)
	require.Error(t, res.Err)
	assert.Equal(t, "Terminated", res.Err.Error())
	assert.False(t, res.OK)
}

func TestQueueDropsPast256(t *testing.T) {
	check(t, `
for i = 1, 300 do os.queueEvent("e", i) end
os.queueEvent("extra")
for i = 1, 256 do
  local _, n = os.pullEvent()
  assert(n == i)
end
os.queueEvent("end")
local name = os.pullEvent()
assert(name == "end", "events past 256 must be dropped, got " .. tostring(name))
`)
	c, err := New(Config{})
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		c.QueueEvent("flood")
	}
	assert.Equal(t, EventQueueLimit, c.QueueLength())
}

func TestQueueEventDeepCopies(t *testing.T) {
	check(t, `
local t = {1, {2}, f = print, co = coroutine.create(print)}
t.self = t
t[print] = true
os.queueEvent("x", t, t, print, 5)
t[1] = 99
t[2][1] = 98
local name, a, b, fn, n = os.pullEvent("x")
assert(a ~= t and a[1] == 1 and a[2][1] == 2, "copy taken at queue time")
assert(a.f == nil and a.co == nil, "functions and coroutines dropped")
assert(a.self == a, "identity kept within an argument")
assert(a ~= b and b.self == b, "not across arguments")
assert(fn == nil and n == 5)
assert(getmetatable(a) == nil)
for k in pairs(a) do assert(type(k) ~= "function") end
assert(not pcall(os.queueEvent, 1))
`)
}

func TestTimers(t *testing.T) {
	check(t, `
local a = os.startTimer(0)
local b = os.startTimer(0.07)
assert(a == 0 and b == 1, "timer ids start at 0")
local c = os.startTimer(10)
os.cancelTimer(c)
local fired = {}
for i = 1, 2 do local _, id = os.pullEvent("timer") fired[#fired + 1] = id end
assert(fired[1] == 0 and fired[2] == 1)
local _, err = pcall(os.startTimer, 0/0)
assert(err:find("bad argument #1 %(number expected, got nan%)"), err)
`)
	c, err := New(Config{})
	require.NoError(t, err)
	for _, tc := range []struct {
		seconds float64
		ticks   int
	}{{0, 0}, {0.05, 1}, {0.07, 1}, {0.025, 1}, {0.08, 2}, {0.125, 3}, {0.075, 1}, {1, 20}} {
		id := c.StartTimer(tc.seconds)
		assert.Equal(t, tc.ticks, c.timers[id], "seconds %v", tc.seconds)
	}
}

// TestAlarms: os.setAlarm rings at an in-game hour (ids of their own, from 0), cancelAlarm
// stops one, and an hour out of range is CC's error.
func TestAlarms(t *testing.T) {
	check(t, `
local start = os.time()
local soon, later = (start + 0.01) % 24, (start + 0.02) % 24
local a = os.setAlarm(later)
local b = os.setAlarm(soon)
local c = os.setAlarm(soon)
assert(a == 0 and b == 1 and c == 2, "alarm ids start at 0")
os.cancelAlarm(c)
local fired = {}
for i = 1, 2 do
  local _, id = os.pullEvent("alarm")
  fired[#fired + 1] = id
  assert((os.time() - start) % 24 >= (id == b and 0.01 or 0.02) - 1e-9, "rang early: " .. os.time())
end
assert(fired[1] == b and fired[2] == a, "rang in order of hour")
-- An alarm for the current hour is tomorrow's: it does not ring with one set a tick later.
local now = os.time()
local tomorrow = os.setAlarm(now)
local next = os.setAlarm((now + 0.001) % 24)
local _, id = os.pullEvent("alarm")
assert(id == next, "the current hour rings tomorrow, not now")
os.cancelAlarm(tomorrow)
assert(select(2, pcall(os.setAlarm, 24)):find("Number out of range"))
assert(select(2, pcall(os.setAlarm, -0.5)):find("Number out of range"))
assert(select(2, pcall(os.setAlarm, 0/0)):find("bad argument #1 %(number expected, got nan%)"))
assert(select(2, pcall(os.cancelAlarm, "x")):find("bad argument #1 %(number expected, got string%)"))
`, func(cfg *Config) { cfg.TimeScale = 40 })
}

// TestTimeOfTable: os.time(table) is CC's: year, month and day are required, hour, min and
// sec default to 12, isdst is a boolean, and a date out of range is not normalised.
func TestTimeOfTable(t *testing.T) {
	check(t, `
local midnight = os.time({ year = 2000, month = 1, day = 1, hour = 0, min = 0, sec = 0 })
assert(os.time({ year = 2000, month = 1, day = 1 }) - midnight == 12 * 3600 + 12 * 60 + 12,
  "hour, min and sec default to 12")
assert(os.time({ year = 2000, month = 1, day = 1, hour = 0, min = 0, sec = 0.9 }) == midnight, "fields truncate")
assert(os.time(os.date("*t", midnight)) == midnight, "a date table converts back")
local function err(t) local ok, e = pcall(os.time, t) local at = debug.getinfo(1, "S").short_src .. ":" .. debug.getinfo(1, "l").currentline .. ": " assert(not ok) return e:sub(1, #at) == at and e:sub(#at + 1) or "(not placed at pcall) " .. e end
local function bare(t) local ok, e = pcall(os.time, t) assert(not ok) return e end
assert(err({}) == 'field "year" missing in date table', err({}))
assert(err({ year = 2000 }) == 'field "month" missing in date table', err({ year = 2000 }))
assert(err({ year = 2000, month = 1, day = "1" }) == 'field "day" missing in date table')
assert(err({ year = 2000, month = 1, day = 1, isdst = 1 }) == 'field "isdst" missing in date table')
assert(bare({ year = 2000, month = 13, day = 1 }) ==
  "Java Exception Thrown: java.time.DateTimeException: Invalid value for MonthOfYear (valid values 1 - 12): 13")
assert(bare({ year = 2001, month = 4, day = 31 }) ==
  "Java Exception Thrown: java.time.DateTimeException: Invalid date 'APRIL 31'")
assert(bare({ year = 2001, month = 2, day = 29 }) ==
  "Java Exception Thrown: java.time.DateTimeException: Invalid date 'February 29' as '2001' is not a leap year")
assert(bare({ year = 2000, month = 1, day = 1, hour = 24 }) ==
  "Java Exception Thrown: java.time.DateTimeException: Invalid value for HourOfDay (valid values 0 - 23): 24")
assert(os.time({ year = 2000, month = 2, day = 29, isdst = false }), "a leap day")
`)
}

// TestTermArgumentsAsJava: the native term (and a monitor, which shares its functions) takes
// its arguments by CC's Java rules: numbers must be finite numbers, not numeric strings,
// blit's are strings only, and a mismatch is "bad argument #N (T expected, got U)".
func TestTermArgumentsAsJava(t *testing.T) {
	check(t, `
local n = term.native()
-- CC places a Java function's error at the nearest Lua code: the line calling pcall.
local function err(f, ...) local ok, e = pcall(f, ...) local at = debug.getinfo(1, "S").short_src .. ":" .. debug.getinfo(1, "l").currentline .. ": " assert(not ok, "no error") return e:sub(1, #at) == at and e:sub(#at + 1) or "(not placed at pcall) " .. e end
local x, y = n.getCursorPos()
for _, c in ipairs({
  { n.setTextColour, { nil }, "bad argument #1 (number expected, got nil)" },
  { n.setTextColour, { "1" }, "bad argument #1 (number expected, got string)" },
  { n.setBackgroundColour, { 0/0 }, "bad argument #1 (number expected, got nan)" },
  { n.setTextColour, { 0x10000 }, "Colour out of range" },
  { n.setCursorPos, { "1", "2" }, "bad argument #1 (number expected, got string)" },
  { n.setCursorPos, { 1, 1/0 }, "bad argument #2 (number expected, got inf)" },
  { n.scroll, {}, "bad argument #1 (number expected, got nil)" },
  { n.setCursorBlink, { 1 }, "bad argument #1 (boolean expected, got number)" },
  { n.blit, { 1, "1", "1" }, "bad argument #1 (string expected, got number)" },
  { n.blit, { "ab", "0", "ff" }, "Arguments must be the same length" },
  { n.setPaletteColour, { 16384, "1" }, "bad argument #2 (number expected, got string)" },
  { n.setPaletteColour, { 16384, 1, 0/0, 1 }, "bad argument #3 (number expected, got nan)" },
  { n.getPaletteColour, {}, "bad argument #1 (number expected, got nil)" },
}) do
  local e = err(c[1], table.unpack(c[2], 1, 4))
  assert(e == c[3], ("%s: want %q, got %q"):format(c[3], c[3], e))
end
assert(({ n.getCursorPos() })[1] == x, "nothing moved the cursor")
local ok, e = pcall(function() n.setTextColour(0) end)
assert(e:find("^/?[%w_/.]*:%d+: Colour out of range$"), "placed at its caller: " .. e)
`)
}

func TestSleepSwallowsEvents(t *testing.T) {
	check(t, `
os.queueEvent("lost")
sleep(0.1)
os.queueEvent("kept")
assert(os.pullEvent() == "kept")
assert(os.sleep == sleep)
`)
}

func TestClockAndEpoch(t *testing.T) {
	start := time.Now()
	out, res, c := runLua(t, `
local c0 = os.clock()
sleep(0.05)
local c1 = os.clock()
assert(c1 > c0)
for _, v in ipairs({c0, c1}) do
  local ticks = v / 0.05
  assert(math.abs(ticks - math.floor(ticks + 0.5)) < 1e-9, "clock steps in ticks: " .. v)
end
local e0 = os.epoch("utc")
assert(os.epoch("UTC") - e0 < 1000 and os.epoch("local") - e0 < 1000)
sleep(2)
local d = os.epoch("utc") - e0
-- sleep(2) is 40 ticks, each at least 1/40 of a tick's 50 ms of wall time at 40x: at least
-- 39 of them lie between e0 and now, however slow the machine (the Go side bounds d above).
assert(d >= 1900, "epoch must follow the time scale: " .. d)
assert(select(2, pcall(os.epoch, "mars")):find("Unsupported operation"))
assert(type(os.epoch()) == "number" and os.time() >= 0 and os.time() < 24 and os.day() >= 1)
print("epoch advanced " .. d)
print("ok")
`, func(cfg *Config) { cfg.TimeScale = 40 })
	wall := time.Since(start)
	require.NoError(t, res.Err, out)
	require.True(t, strings.HasSuffix(out, "ok\n"), out)
	var d int64
	_, err := fmt.Sscanf(out[strings.Index(out, "epoch advanced "):], "epoch advanced %d", &d)
	require.NoError(t, err, out)
	// Epoch time is wall time times the scale: sleep(2) cannot have moved it further than 40
	// times the wall time the whole run took, at any machine speed.
	assert.LessOrEqual(t, d, 40*wall.Milliseconds()+1, "epoch must follow the time scale (wall %s)", wall)
	// Ticks come 40 times as often as in real time, so sleep(2) is ~50 ms of wall time.
	assert.Equal(t, TickDuration/40, c.tickPeriod())
}

// TestInGameEpoch: os.epoch("ingame") is CC's day * 86400000 + hour * 3600000, with the day
// counted from 1 as os.day() counts it (ServerComputer.getDay), so a computer that booted at
// 06:00 of day 1 reads 108000000 then.
func TestInGameEpoch(t *testing.T) {
	check(t, `
local e, day, hour = os.epoch("ingame"), os.day(), os.time()
assert(day == 1, "the world starts on day 1: " .. day)
assert(e == day * 86400000 + math.floor(hour * 3600000), "epoch " .. e .. " at day " .. day .. ", hour " .. hour)
assert(os.epoch() == os.epoch("ingame") and os.epoch("INGAME") >= e)
`)
}

// TestCalendarDay: os.day("utc") and os.day("local") count the date's days since 1970 from
// 1, as CC's getDayForCalendar does (the years' days plus the day of the year), in the
// zone asked for.
func TestCalendarDay(t *testing.T) {
	newYork := time.FixedZone("EST", -5*3600)
	for _, tc := range []struct {
		at   time.Time
		want int64
	}{
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 1},
		{time.Date(1970, 1, 1, 23, 59, 59, 0, time.UTC), 1},
		{time.Date(1970, 12, 31, 12, 0, 0, 0, time.UTC), 365},
		{time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC), 366},
		{time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC), 20791},
		{time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC).In(newYork), 20791},
		{time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC).In(newYork), 20790}, // still Dec 2 there
	} {
		assert.Equal(t, tc.want, calendarDay(tc.at), "%s", tc.at)
	}
	check(t, `
local before = math.floor(os.epoch("utc") / 86400000) + 1
local day = os.day("utc")
local after = math.floor(os.epoch("utc") / 86400000) + 1
assert(day == before or day == after, "os.day(\"utc\") " .. day .. ", epoch's day " .. before)
assert(math.abs(os.day("local") - day) <= 1)
`)
}

// TestHoursOfDayIsAJavaFloat: os.time("utc") and os.time("local") are computed in Java
// floats by CC (getTimeForCalendar), and a program printing one sees that float's digits.
func TestHoursOfDayIsAJavaFloat(t *testing.T) {
	assert.Equal(t, 6.501389026641846, hoursOfDay(time.Date(2026, 12, 3, 6, 30, 5, 0, time.UTC)))
	assert.Equal(t, 23.99972152709961, hoursOfDay(time.Date(2026, 12, 3, 23, 59, 59, 0, time.UTC)))
	assert.Equal(t, 12.0, hoursOfDay(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)))
}

// TestTooLongWithoutYielding: a resume that runs DefaultYieldTimeout (CC's 7 s) without
// yielding is aborted, not a nanosecond sooner; in Lua code the abort keeps the position of
// the code it stopped, as CC's does (a pattern match is stopped with the bare message,
// patterns_test.go). The guard's clock is the test's: it moves only once the loop runs, so
// however long the computer takes to boot, the Lua gets its whole limit.
func TestTooLongWithoutYielding(t *testing.T) {
	clock := newFakeYieldClock()
	looping := make(chan struct{})
	finished := make(chan struct{})
	fired := make(chan [2]int, 1) // timers run by the two moves of the clock
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-looping:
		case <-finished:
			return
		}
		fired <- [2]int{clock.advance(DefaultYieldTimeout - time.Nanosecond), clock.advance(time.Nanosecond)}
	})
	// The goroutine sends what it ran only after the abort it caused, which the computer can
	// outrun to its end: its count is read once it is done.
	stop := sync.OnceFunc(func() {
		close(finished)
		wg.Wait()
	})
	defer stop()
	check(t, `
local ok, err = pcall(function()
  looping()
  while true do end
end)
assert(not ok and err:match("^[^:]+:4: Too long without yielding$"), tostring(err))
sleep(0)
`, func(cfg *Config) {
		cfg.yieldClock = clock.after
		cfg.APIs = append(cfg.APIs, func(L *lua.LState, _ *Env) error {
			L.SetGlobal("looping", L.NewFunction(func(*lua.LState) int {
				close(looping)
				return 0
			}))
			return nil
		})
	})
	stop()
	select {
	case n := <-fired:
		assert.Equal(t, [2]int{0, 1}, n, "the soft abort fires at the limit, the hard one later")
	default:
		t.Error("the loop never started")
	}
}

// fakeYieldClock is a clock for the yield guard (Config.yieldClock) that moves only when a
// test advances it.
type fakeYieldClock struct {
	mu     sync.Mutex
	now    time.Duration
	timers map[*fakeYieldTimer]struct{} // guarded by mu: started and not yet run or stopped
}

type fakeYieldTimer struct {
	at time.Duration
	f  func()
}

func newFakeYieldClock() *fakeYieldClock {
	return &fakeYieldClock{timers: map[*fakeYieldTimer]struct{}{}}
}

func (c *fakeYieldClock) after(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeYieldTimer{at: c.now + d, f: f}
	c.timers[t] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, armed := c.timers[t]
		delete(c.timers, t)
		return armed
	}
}

// advance moves the clock by d, runs the timers then due and says how many it ran.
func (c *fakeYieldClock) advance(d time.Duration) int {
	c.mu.Lock()
	c.now += d
	var due []func()
	for t := range c.timers {
		if t.at <= c.now {
			due = append(due, t.f)
			delete(c.timers, t)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
	return len(due)
}

func TestWriteWrapsAndCounts(t *testing.T) {
	out, _, c := runLua(t, `
local long = ("word "):rep(12)
local n = print(long)
write(tostring(n) .. "\n")
write(("x"):rep(60) .. "\n")
`)
	assert.Equal(t, "word word word word word word word word word word \nword word \n2\n"+
		strings.Repeat("x", 51)+"\n"+strings.Repeat("x", 9)+"\n", out)
	assert.Contains(t, c.Screen(), "word word\n2")
}

func TestTranscriptKeepsScrolledLines(t *testing.T) {
	out, _, c := runLua(t, `for i = 1, 30 do print("line " .. i) end`)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 30)
	assert.Equal(t, "line 1", lines[0])
	screen := strings.Split(c.Screen(), "\n")
	require.Len(t, screen, TermHeight)
	assert.Equal(t, "line 13", screen[0])
	assert.Equal(t, "line 30", screen[17])
	assert.Equal(t, "", screen[18])
}

// TestTextLeavesAsTheFontShowsIt: the transcript and Screen are UTF-8 text; a byte past
// ASCII is the character CC's font draws (Latin-1, block characters), and on the screen a
// control character is its font picture (CC keeps it in the cell), not a space.
func TestTextLeavesAsTheFontShowsIt(t *testing.T) {
	out, _, c := runLua(t, `print("k\252che \135") term.write("a\16b\1")`)
	assert.Equal(t, "k\u00fcche \U0001FB06\na►b☺\n", out)
	assert.Equal(t, "küche \U0001FB06\na►b☺", strings.TrimRight(c.Screen(), "\n"))
}

// TestTranscriptNeverDrivesTheTerminal: the control bytes a program writes (a hostile
// gateway's text that the computer shows, a file it prints) leave the transcript as the
// pictures CC's screen shows for them, never as the bytes: run's stdout is a person's
// terminal, where "\27]0;...\7" set its title, "\27]52;c;...\7" its clipboard, "\27[2J"
// cleared it, and "\r" put the rest of a line over its start.
func TestTranscriptNeverDrivesTheTerminal(t *testing.T) {
	out, _, c := runLua(t, `write("A\27]0;pwned\7B\27[2JC\rD\8E\127") print()`)
	for _, b := range []string{"\x1b", "\x07", "\r", "\b", "\x7f"} {
		assert.NotContains(t, out, b)
	}
	assert.Equal(t, "A←]0;pwned•B←[2JC D◘E▒\n", out)
	assert.Equal(t, strings.TrimSuffix(out, "\n"), strings.TrimRight(c.Screen(), "\n"), "the transcript is the screen's row")
}

func TestPrintErrorColour(t *testing.T) {
	const src = `
local seen = {}
local native = term.current()
local spy = setmetatable({
  setTextColour = function(c) seen[#seen + 1] = c native.setTextColour(c) end,
}, {__index = native})
term.redirect(spy)
printError("bad", 1)
term.redirect(native)
print(#seen, seen[1], term.getTextColour())
`
	out, _, _ := runLua(t, src)
	assert.Equal(t, "bad\t1\n2\t16384\t1\n", out)
	out, _, _ = runLua(t, src, func(cfg *Config) { cfg.Basic = true })
	assert.Equal(t, "bad\t1\n0\tnil\t1\n", out)
}

func TestOSInfo(t *testing.T) {
	check(t, `
assert(os.version() == "CraftOS 1.9")
assert(os.getComputerID() == 7 and os.computerID() == 7)
assert(select("#", os.getComputerLabel()) == 0, "unset label returns nothing")
os.setComputerLabel(("L"):rep(40))
assert(os.getComputerLabel() == ("L"):rep(32))
os.setComputerLabel("a\nb\127c\252")
assert(os.getComputerLabel() == "a?b?c\252", "CC shows a ? for what its font cannot show")
os.setComputerLabel(nil)
assert(os.getComputerLabel() == nil)
os.setComputerLabel("")
assert(select("#", os.getComputerLabel()) == 1 and os.getComputerLabel() == "", "CC keeps an empty label")
os.setComputerLabel()
assert(select("#", os.getComputerLabel()) == 0, "no argument clears it")
`, func(cfg *Config) { cfg.ID = 7 })
}

func TestHostEventsWakeScheduler(t *testing.T) {
	check(t, `
local _, v = os.pullEvent("ping")
assert(v == "from go")
assert(_G.didRun == true)
`, func(cfg *Config) {
		cfg.APIs = append(cfg.APIs, func(L *lua.LState, h *Env) error {
			h.Go(func() {
				select {
				case <-time.After(20 * time.Millisecond):
					h.Do(func(L *lua.LState) { L.SetGlobal("didRun", lua.LTrue) })
					h.QueueEvent("ping", lua.LString("from go"))
				case <-h.Done():
				}
			})
			return nil
		})
	})
}

func TestTimeLimit(t *testing.T) {
	c, err := New(Config{APIs: []Installer{memFS{ShellPath: `while true do end`}.install}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Run(ctx)
	assert.ErrorIs(t, err, ErrTimeLimit)
}

// TestStopIsNotTheProgramsError: when Run's ctx ends (fakecraft's --time-limit) while Lua
// runs, the screen shows no error (it showed "bios.lua:N: Too long without yielding", as if
// the program had failed) and the error the stopped code sees says who stopped it, in the
// VM and in the pattern matcher alike.
func TestStopIsNotTheProgramsError(t *testing.T) {
	for name, src := range map[string]string{
		"vm":      `print("spin") stop() while true do end`,
		"pattern": `print("spin") stop() while true do string.find(string.rep("a", 1e5), ".-.-.-.-b") end`,
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			stopped, stop := context.WithCancel(ctx)
			defer stop()
			var out bytes.Buffer
			c, err := New(Config{Stdout: &out, APIs: []Installer{
				memFS{ShellPath: src}.install,
				func(L *lua.LState, _ *Env) error {
					L.SetGlobal("stop", L.NewFunction(func(*lua.LState) int { stop(); return 0 }))
					return nil
				},
			}})
			require.NoError(t, err)
			res, err := c.Run(stopped)
			assert.ErrorIs(t, err, ErrTimeLimit)
			assert.Equal(t, "spin\n", out.String())
			require.Error(t, res.Err)
			assert.Contains(t, res.Err.Error(), StoppedMessage)
			assert.NotContains(t, res.Err.Error(), TooLongMessage)
		})
	}
}

func TestErrorLevels(t *testing.T) {
	check(t, `
local function inner() error("x", 2) end
local function outer() inner() end
local _, e1 = pcall(outer)
assert(e1 == "...rom/programs/shell.lua:3: x", e1) -- Cobalt keeps the last 22 bytes of a longer path
local function f() error("y", 3) end
local function g() f() end
local _, e2 = pcall(g)
assert(e2 == "y", e2)
local _, e3 = pcall(string.rep)
assert(not e3:find("^%[C%]"), e3)
assert(select(2, pcall(error, "z", 0)) == "z")
assert(({pcall(string.rep, "a", 3)})[2] == "aaa")
`)
}

func TestTranscriptKeepsColumns(t *testing.T) {
	out, _, _ := runLua(t, `
term.write("abc")
term.setCursorPos(2, select(2, term.getCursorPos()))
term.write("X")
term.setCursorPos(10, select(2, term.getCursorPos()))
term.write("col10")
print()
`)
	assert.Equal(t, "aXc      col10\n", out)
}

func TestTranscriptDropsErasedText(t *testing.T) {
	out, _, _ := runLua(t, `
term.write("> ")
term.write("typed hint")
term.setCursorPos(8, select(2, term.getCursorPos()))
term.write("     ")
print()
`)
	assert.Equal(t, "> typed\n", out)
}

// TestTranscriptDropsWhatClearingErased: a line is what its row still shows of the text
// written on it when the cursor leaves it. A notice erased with clearLine (libsandbox's
// "Asking the gateway...", textutils' "Press any key to continue") or with clear, then
// written over by shorter text, showed through the new text in the transcript, where CC's
// row holds only the new text; a row the program left blank is an empty line, as the
// screen's row is blank.
func TestTranscriptDropsWhatClearingErased(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"clearLine, then shorter text", `
term.write("Asking the gateway...")
term.clearLine()
term.setCursorPos(1, 1)
print("code 1234")`, "code 1234\n"},
		{"clearLine, then text further on", `
term.write("Asking the gateway...")
term.clearLine()
term.setCursorPos(4, 1)
print("x")`, "   x\n"},
		{"clearLine, and the cursor leaves", `
print("first")
write("Asking the gateway...")
term.clearLine()
print()
print("next")`, "first\n\nnext\n"},
		{"clear, then shorter text on the same row", `
print("first")
write("working...")
term.clear()
term.setCursorPos(1, 2)
print("done")`, "first\ndone\n"},
		{"clear, and the cursor leaves", `
print("first")
write("working...")
term.clear()
term.setCursorPos(1, 1)
print("done")`, "first\n\ndone\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, res, c := runLua(t, tc.src)
			require.NoError(t, res.Err, out)
			assert.Equal(t, tc.want, out)
			if tc.name == "clearLine, then shorter text" {
				assert.Equal(t, "code 1234", strings.Split(c.Screen(), "\n")[0], "the transcript's line is the screen's row")
			}
		})
	}
}

// TestTranscriptLeavesOutRowsOffTheScreen: text written on a row above or below the screen
// shows nowhere (CC's terminal drops it), so it is no line of the transcript either.
func TestTranscriptLeavesOutRowsOffTheScreen(t *testing.T) {
	out, _, c := runLua(t, `
write("top")
term.setCursorPos(1, 0)
term.write("above")
term.setCursorPos(1, 20)
term.write("below")
term.setCursorPos(1, 2)
print("shown")`)
	assert.Equal(t, "top\nshown\n", out)
	assert.NotContains(t, c.Screen(), "above")
}

// A cursor far past the right edge must not pad the transcript line out to it (a billion
// spaces for setCursorPos(1e9, y)); a long write from a visible column stays whole.
func TestTranscriptIgnoresTextFarOffTheScreen(t *testing.T) {
	out, _, _ := runLua(t, `
local _, y = term.getCursorPos()
term.setCursorPos(1e9, y)
term.write("lost")
term.setCursorPos(1, y)
term.write("seen " .. ("w"):rep(60))
print()
`)
	assert.Equal(t, "seen "+strings.Repeat("w", 60)+"\n", out)
}

// TestTermArgumentsAreCCs: the term functions (a monitor's methods too) read their
// arguments as CC's Java does: a string is not a number (setCursorPos("2", 1) moved the
// cursor), nor a number a string (blit(1, 2, 3) drew "1"), nan and inf are refused,
// write() writes "nil", and the messages are CC's (they said "bad argument #1 to ?").
// TestTermErrorsAtTheROMsForwardingCall: a native term function's error through term.* on
// the native terminal is placed at the term API's forwarding call, line 14 of the ROM's
// apis/term.lua, as CC's (Cobalt does not tail-call a Java function); it was bios.lua's.
func TestTermErrorsAtTheROMsForwardingCall(t *testing.T) {
	check(t, `
local want = "/rom/apis/term.lua:14: bad argument #1 (number expected, got string)"
local _, direct = pcall(term.setCursorPos, "x", 1)
assert(direct == want, direct)
local _, called = pcall(function() term.setCursorPos("x", 1) end)
assert(called == want, called)
local _, nilArg = pcall(function() term.scroll() end)
assert(nilArg == "/rom/apis/term.lua:14: bad argument #1 (number expected, got nil)", nilArg)
`)
}

func TestTermArgumentsAreCCs(t *testing.T) {
	check(t, `
local t = term.native()
local function refuses(want, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "accepted: " .. want)
  assert(err:sub(-#want) == want, err)
end
refuses("bad argument #1 (number expected, got string)", t.setCursorPos, "2", 1)
refuses("bad argument #2 (number expected, got nan)", t.setCursorPos, 1, 0/0)
refuses("bad argument #1 (number expected, got string)", t.scroll, "1")
refuses("bad argument #1 (number expected, got string)", t.setTextColour, "1")
refuses("bad argument #1 (number expected, got inf)", t.setBackgroundColour, 1/0)
refuses("bad argument #1 (boolean expected, got nil)", t.setCursorBlink)
refuses("bad argument #1 (string expected, got number)", t.blit, 1, 2, 3)
refuses("bad argument #2 (number expected, got string)", t.setPaletteColour, 1, "x")
refuses("bad argument #3 (number expected, got inf)", t.setPaletteColour, 1, 0, 1/0, 0)
refuses("Colour out of range", t.setTextColour, 0)
t.setCursorPos(1.9, 2) t.write() t.write(nil)
local x, y = t.getCursorPos()
assert(x == 7 and y == 2, x .. "," .. y)
`)
}
