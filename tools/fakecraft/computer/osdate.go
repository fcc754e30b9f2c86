package computer

import (
	"fmt"
	"math"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// C locale names, as CC's os.date prints them.
var (
	weekdayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	monthNames   = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
)

// osDate is os.date([format [, time]]): strftime's conversions in the C locale, "*t" for a
// table, a leading "!" for UTC. time defaults to now on the computer's clock.
func (c *Computer) osDate(L *lua.LState) int {
	format := luakit.OptString(L, 1, "%c")
	t := c.Now()
	if L.Get(2) != lua.LNil {
		secs := luakit.CheckFinite(L, 2)
		t = time.Unix(int64(math.Floor(secs)), 0)
	}
	if strings.HasPrefix(format, "!") {
		format = format[1:]
		t = t.UTC()
	} else {
		t = t.Local()
	}
	if strings.HasPrefix(format, "*t") {
		// CC's LuaDateTime.toTable: a HashMap of 9, in this order, copied as CC copies a map.
		n := func(v int) lua.LValue { return lua.LNumber(v) }
		L.Push(luakit.JavaMap(L, 9,
			luakit.MapEntry{Key: "year", Value: n(t.Year())}, luakit.MapEntry{Key: "month", Value: n(int(t.Month()))},
			luakit.MapEntry{Key: "day", Value: n(t.Day())}, luakit.MapEntry{Key: "hour", Value: n(t.Hour())},
			luakit.MapEntry{Key: "min", Value: n(t.Minute())}, luakit.MapEntry{Key: "sec", Value: n(t.Second())},
			luakit.MapEntry{Key: "wday", Value: n(int(t.Weekday()) + 1)}, luakit.MapEntry{Key: "yday", Value: n(t.YearDay())},
			luakit.MapEntry{Key: "isdst", Value: lua.LBool(t.IsDST())}))
		return 1
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		i++
		if i >= len(format) {
			luakit.Raise(L, "bad argument #1 to 'date' (invalid conversion specifier '%%')")
		}
		if !strftime(&b, format[i], t) {
			luakit.Raise(L, "bad argument #1 to 'date' (invalid conversion specifier '%%%c')", format[i])
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// strftime writes one conversion; false for a letter C's strftime does not know.
func strftime(b *strings.Builder, verb byte, t time.Time) bool {
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	isoYear, isoWeek := t.ISOWeek()
	switch verb {
	case 'a':
		b.WriteString(weekdayNames[t.Weekday()][:3])
	case 'A':
		b.WriteString(weekdayNames[t.Weekday()])
	case 'b', 'h':
		b.WriteString(monthNames[t.Month()-1][:3])
	case 'B':
		b.WriteString(monthNames[t.Month()-1])
	case 'c':
		fmt.Fprintf(b, "%s %s %2d %02d:%02d:%02d %d", weekdayNames[t.Weekday()][:3],
			monthNames[t.Month()-1][:3], t.Day(), t.Hour(), t.Minute(), t.Second(), t.Year())
	case 'C':
		fmt.Fprintf(b, "%02d", t.Year()/100)
	case 'd':
		fmt.Fprintf(b, "%02d", t.Day())
	case 'D', 'x':
		fmt.Fprintf(b, "%02d/%02d/%02d", int(t.Month()), t.Day(), t.Year()%100)
	case 'e':
		fmt.Fprintf(b, "%2d", t.Day())
	case 'F':
		fmt.Fprintf(b, "%d-%02d-%02d", t.Year(), int(t.Month()), t.Day())
	case 'g':
		fmt.Fprintf(b, "%02d", isoYear%100)
	case 'G':
		fmt.Fprintf(b, "%d", isoYear)
	case 'H':
		fmt.Fprintf(b, "%02d", t.Hour())
	case 'I':
		fmt.Fprintf(b, "%02d", hour12)
	case 'j':
		fmt.Fprintf(b, "%03d", t.YearDay())
	case 'm':
		fmt.Fprintf(b, "%02d", int(t.Month()))
	case 'M':
		fmt.Fprintf(b, "%02d", t.Minute())
	case 'n':
		b.WriteByte('\n')
	case 'p':
		b.WriteString(amPM(t))
	case 'r':
		fmt.Fprintf(b, "%02d:%02d:%02d %s", hour12, t.Minute(), t.Second(), amPM(t))
	case 'R':
		fmt.Fprintf(b, "%02d:%02d", t.Hour(), t.Minute())
	case 'S':
		fmt.Fprintf(b, "%02d", t.Second())
	case 't':
		b.WriteByte('\t')
	case 'T', 'X':
		fmt.Fprintf(b, "%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
	case 'u':
		fmt.Fprintf(b, "%d", (int(t.Weekday())+6)%7+1)
	case 'U': // weeks starting on Sunday; days before the first Sunday are week 0
		fmt.Fprintf(b, "%02d", (t.YearDay()+6-int(t.Weekday()))/7)
	case 'V':
		fmt.Fprintf(b, "%02d", isoWeek)
	case 'w':
		fmt.Fprintf(b, "%d", int(t.Weekday()))
	case 'W': // weeks starting on Monday
		fmt.Fprintf(b, "%02d", (t.YearDay()+6-(int(t.Weekday())+6)%7)/7)
	case 'y':
		fmt.Fprintf(b, "%02d", t.Year()%100)
	case 'Y':
		fmt.Fprintf(b, "%d", t.Year())
	case 'z':
		_, off := t.Zone()
		sign := '+'
		if off < 0 {
			sign, off = '-', -off
		}
		fmt.Fprintf(b, "%c%02d%02d", sign, off/3600, off%3600/60)
	case 'Z':
		name, _ := t.Zone()
		b.WriteString(zoneLetters(name))
	case '%':
		b.WriteByte('%')
	default:
		return false
	}
	return true
}

func amPM(t time.Time) string {
	if t.Hour() < 12 {
		return "AM"
	}
	return "PM"
}

// zoneLetters is a zone's abbreviation; Go names zones without one "+03", which strftime
// would not print, so those become GMT.
func zoneLetters(name string) string {
	for _, r := range name {
		if !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') {
			return "GMT"
		}
	}
	return name
}
