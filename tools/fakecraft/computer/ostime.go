package computer

import (
	"fmt"
	"math"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// osTimeTable is os.time(table) as CC's: year, month and day are required, hour, min and
// sec default to 12 (CC's defaults, not Lua's 12:00:00), isdst must be a boolean or absent,
// and the date is read in the machine's time zone. A date out of range (month 13, 31 April)
// is the Java exception CC lets through, not Lua's normalised date.
func osTimeTable(L *lua.LState, t *lua.LTable) float64 {
	field := func(name string, def int) int {
		n, ok := t.RawGetString(name).(lua.LNumber)
		if !ok {
			if def < 0 {
				luakit.RaiseMessage(L, fmt.Sprintf("field %q missing in date table", name))
			}
			return def
		}
		return javaIntValue(float64(n))
	}
	year, month, day := field("year", -1), field("month", -1), field("day", -1)
	hour, minute, sec := field("hour", 12), field("min", 12), field("sec", 12)
	var wantDST *bool
	switch v := t.RawGetString("isdst").(type) {
	case *lua.LNilType:
	case lua.LBool:
		b := bool(v)
		wantDST = &b
	default:
		luakit.RaiseMessage(L, `field "isdst" missing in date table`)
	}
	if msg := invalidDateTime(year, month, day, hour, minute, sec); msg != "" {
		L.Error(lua.LString("Java Exception Thrown: java.time.DateTimeException: "+msg), 0)
	}
	at := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.Local)
	if wantDST != nil && at.IsDST() != *wantDST {
		// A wall-clock time that occurs twice (the hour the clocks go back) has an offset
		// of each kind: isdst picks one, as CC's does. Otherwise it is ignored.
		for _, other := range []time.Time{at.Add(-time.Hour), at.Add(time.Hour)} {
			y, mo, d := other.Date()
			if other.IsDST() == *wantDST && y == year && int(mo) == month && d == day &&
				other.Hour() == hour && other.Minute() == minute && other.Second() == sec {
				at = other
				break
			}
		}
	}
	return float64(at.Unix())
}

// javaIntValue is Java's Double.intValue: towards zero, saturating, NaN is 0.
func javaIntValue(f float64) int {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int(f)
}

// invalidDateTime is the message of java.time's LocalDateTime.of for a field out of its
// range, checked in its order, or "" for a valid date and time.
func invalidDateTime(year, month, day, hour, minute, sec int) string {
	check := func(name string, v, lo, hi int, rng string) string {
		if v < lo || v > hi {
			return fmt.Sprintf("Invalid value for %s (valid values %s): %d", name, rng, v)
		}
		return ""
	}
	for _, msg := range []string{
		check("Year", year, -999999999, 999999999, "-999999999 - 999999999"),
		check("MonthOfYear", month, 1, 12, "1 - 12"),
		check("DayOfMonth", day, 1, 31, "1 - 28/31"),
	} {
		if msg != "" {
			return msg
		}
	}
	if last := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day(); day > last {
		if day == 29 {
			return fmt.Sprintf("Invalid date 'February 29' as '%d' is not a leap year", year)
		}
		return fmt.Sprintf("Invalid date '%s %d'", strings.ToUpper(time.Month(month).String()), day)
	}
	for _, msg := range []string{
		check("HourOfDay", hour, 0, 23, "0 - 23"),
		check("MinuteOfHour", minute, 0, 59, "0 - 59"),
		check("SecondOfMinute", sec, 0, 59, "0 - 59"),
	} {
		if msg != "" {
			return msg
		}
	}
	return ""
}
