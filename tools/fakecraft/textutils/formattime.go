package textutils

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// formatTime is textutils.formatTime(time [, twentyFourHour]) for a time in hours
// (os.time()): "H:MM" in 24-hour form, else "H:MM AM"/"H:MM PM" with hour 0 shown as 12.
func formatTime(L *lua.LState) int {
	t := float64(luakit.Expect(L, 1, "number").(lua.LNumber))
	twentyFour := lua.LVAsBool(luakit.Expect(L, 2, "boolean", "nil"))
	suffix := ""
	if !twentyFour {
		suffix = " AM"
		if t >= 12 {
			suffix = " PM"
		}
		if t >= 13 {
			t -= 12
		}
	}
	hour := math.Floor(t)
	minute := math.Floor((t - hour) * 60)
	if !twentyFour && hour == 0 {
		hour = 12
	}
	L.Push(lua.LString(fmt.Sprintf("%d:%02d%s", int64(hour), int64(minute), suffix)))
	return 1
}
