package computer

// The term API: the Lua binding of the screen model (term.go). Its functions check their
// arguments and word their errors as CC's TermAPI does, then act on the Terminal only
// through its methods, so a monitor's methods (Functions) draw the same way.

import (
	"maps"
	"math/bits"
	"slices"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// checkColour validates a colors.* value and returns its index. Like CC, any number is
// accepted and its highest set bit of the low 16 chosen; nothing set is an error. The
// arguments of these functions are read as CC's Java reads them (luakit's CheckInt,
// CheckBool, StrictString: a string is not a number, nor a number a string).
func checkColour(L *lua.LState, n int) uint8 {
	c := int64(luakit.CheckInt(L, n))
	if c <= 0 || c > 0xFFFF {
		luakit.RaiseMessage(L, "Colour out of range")
	}
	return uint8(bits.Len64(uint64(c)) - 1)
}

// blitColours turns a blit colour string into indices; a character that is not a hex
// digit keeps the fallback index, as CC's terminal does.
func blitColours(s string, fallback uint8) []uint8 {
	out := make([]uint8, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			out[i] = c - '0'
		case c >= 'a' && c <= 'f':
			out[i] = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			out[i] = c - 'A' + 10
		default:
			out[i] = fallback
		}
	}
	return out
}

// channel turns a palette component in [0,1] into a byte.
func channel(f float64) uint32 {
	if f < 0 {
		f = 0
	} else if f > 1 {
		f = 1
	}
	return uint32(f*255 + 0.5)
}

// install builds the native term table.
func (t *Terminal) install(L *lua.LState) *lua.LTable {
	fns := t.Functions()
	tbl := L.NewTable()
	L.SetFuncs(tbl, fns) // in the names' order: the same on every run
	for _, british := range slices.Sorted(maps.Keys(TermAliases)) {
		tbl.RawSetString(TermAliases[british], tbl.RawGetString(british))
	}
	// Only the computer's own term has nativePaletteColour (a monitor has none); the ROM's
	// term.lua moves it to the term API, as CC's does.
	native := L.NewFunction(nativePaletteColour)
	tbl.RawSetString("nativePaletteColour", native)
	tbl.RawSetString("nativePaletteColor", native)
	return tbl
}

// nativePaletteColour is CC's term.nativePaletteColour(colour): the colour's default RGB
// (whatever the palette holds now), each a Java float (CC's Colour keeps them as n / 255f),
// so they differ from getPaletteColour's doubles past the seventh digit. A Go function, as
// CC's is Java, so its errors are placed at the Lua line that called it, a tail call too.
func nativePaletteColour(L *lua.LState) int {
	rgb := DefaultPalette[checkColour(L, 1)]
	for _, shift := range []uint{16, 8, 0} {
		L.Push(lua.LNumber(float64(float32(rgb>>shift&0xFF) / float32(255))))
	}
	return 3
}

// Functions are the term API's functions drawing on t, by their British names (see
// TermAliases): the native term table, and a monitor's methods.
func (t *Terminal) Functions() map[string]lua.LGFunction {
	fns := map[string]lua.LGFunction{
		"write": func(L *lua.LState) int {
			t.Write(luakit.Coerced(L.Get(1)))
			return 0
		},
		"blit": func(L *lua.LState) int {
			text, fg, bg := luakit.StrictString(L, 1), luakit.StrictString(L, 2), luakit.StrictString(L, 3)
			if len(fg) != len(text) || len(bg) != len(text) {
				luakit.RaiseMessage(L, "Arguments must be the same length")
			}
			t.blit(text, blitColours(fg, colourWhite), blitColours(bg, colourBlack))
			return 0
		},
		"scroll":    func(L *lua.LState) int { t.Scroll(luakit.CheckInt(L, 1)); return 0 },
		"clear":     func(L *lua.LState) int { t.Clear(); return 0 },
		"clearLine": func(L *lua.LState) int { t.ClearLine(); return 0 },
		"getCursorPos": func(L *lua.LState) int {
			x, y := t.CursorPos()
			L.Push(lua.LNumber(x))
			L.Push(lua.LNumber(y))
			return 2
		},
		"setCursorPos": func(L *lua.LState) int {
			t.SetCursorPos(luakit.CheckInt(L, 1), luakit.CheckInt(L, 2))
			return 0
		},
		"getCursorBlink": func(L *lua.LState) int { L.Push(lua.LBool(t.CursorBlink())); return 1 },
		"setCursorBlink": func(L *lua.LState) int { t.SetCursorBlink(luakit.CheckBool(L, 1)); return 0 },
		"getSize": func(L *lua.LState) int {
			w, h := t.Size()
			L.Push(lua.LNumber(w))
			L.Push(lua.LNumber(h))
			return 2
		},
		"isColour":            func(L *lua.LState) int { L.Push(lua.LBool(t.IsColour())); return 1 },
		"setTextColour":       func(L *lua.LState) int { t.SetTextColour(checkColour(L, 1)); return 0 },
		"getTextColour":       func(L *lua.LState) int { L.Push(lua.LNumber(t.TextColour())); return 1 },
		"setBackgroundColour": func(L *lua.LState) int { t.SetBackgroundColour(checkColour(L, 1)); return 0 },
		"getBackgroundColour": func(L *lua.LState) int { L.Push(lua.LNumber(t.BackgroundColour())); return 1 },
		"setPaletteColour": func(L *lua.LState) int {
			c := checkColour(L, 1)
			var rgb uint32
			if L.GetTop() == 2 {
				rgb = uint32(luakit.CheckInt(L, 2)) & 0xFFFFFF
			} else {
				r, g, b := luakit.CheckFinite(L, 2), luakit.CheckFinite(L, 3), luakit.CheckFinite(L, 4)
				rgb = channel(r)<<16 | channel(g)<<8 | channel(b)
			}
			t.SetPaletteColour(c, rgb)
			return 0
		},
		"getPaletteColour": func(L *lua.LState) int {
			c := checkColour(L, 1)
			rgb := t.PaletteColour(c)
			L.Push(lua.LNumber(float64(rgb>>16&0xFF) / 255))
			L.Push(lua.LNumber(float64(rgb>>8&0xFF) / 255))
			L.Push(lua.LNumber(float64(rgb&0xFF) / 255))
			return 3
		},
	}
	return fns
}

// TermAliases are the American spellings of the term API's British names: each is the
// same function.
var TermAliases = map[string]string{
	"isColour": "isColor", "setTextColour": "setTextColor", "getTextColour": "getTextColor",
	"setBackgroundColour": "setBackgroundColor", "getBackgroundColour": "getBackgroundColor",
	"setPaletteColour": "setPaletteColor", "getPaletteColour": "getPaletteColor",
}
