package computer

import (
	"math"
	"math/bits"

	lua "github.com/yuin/gopher-lua"
)

// twoTo32 is the modulus bit32 reduces every argument by.
const twoTo32 = 4294967296.0

func checkUint32(L *lua.LState, n int) uint32 {
	f := math.Floor(float64(L.CheckNumber(n)))
	f = math.Mod(f, twoTo32)
	if f < 0 {
		f += twoTo32
	}
	return uint32(f)
}

func pushUint32(L *lua.LState, v uint32) int {
	L.Push(lua.LNumber(v))
	return 1
}

func shiftLeft(x uint32, disp int) uint32 {
	switch {
	case disp <= -32 || disp >= 32:
		return 0
	case disp >= 0:
		return x << uint(disp)
	default:
		return x >> uint(-disp)
	}
}

// fieldArgs checks bit32.extract/replace's field and width.
func fieldArgs(L *lua.LState, fi, wi int) (int, int) {
	f := L.CheckInt(fi)
	w := L.OptInt(wi, 1)
	if f < 0 {
		L.ArgError(fi, "field cannot be negative")
	}
	if w <= 0 {
		L.ArgError(wi, "width must be positive")
	}
	if f+w > 32 {
		L.RaiseError("trying to access non-existent bits")
	}
	return f, w
}

func fold(L *lua.LState, init uint32, op func(a, b uint32) uint32) uint32 {
	r := init
	for i := 1; i <= L.GetTop(); i++ {
		r = op(r, checkUint32(L, i))
	}
	return r
}

// installBit32 sets the Lua 5.2 bit32 library, which CC: Tweaked provides.
func installBit32(L *lua.LState) {
	fns := map[string]lua.LGFunction{
		"band": func(L *lua.LState) int {
			return pushUint32(L, fold(L, math.MaxUint32, func(a, b uint32) uint32 { return a & b }))
		},
		"bor": func(L *lua.LState) int {
			return pushUint32(L, fold(L, 0, func(a, b uint32) uint32 { return a | b }))
		},
		"bxor": func(L *lua.LState) int {
			return pushUint32(L, fold(L, 0, func(a, b uint32) uint32 { return a ^ b }))
		},
		"btest": func(L *lua.LState) int {
			L.Push(lua.LBool(fold(L, math.MaxUint32, func(a, b uint32) uint32 { return a & b }) != 0))
			return 1
		},
		"bnot": func(L *lua.LState) int { return pushUint32(L, ^checkUint32(L, 1)) },
		"lshift": func(L *lua.LState) int {
			return pushUint32(L, shiftLeft(checkUint32(L, 1), L.CheckInt(2)))
		},
		"rshift": func(L *lua.LState) int {
			return pushUint32(L, shiftLeft(checkUint32(L, 1), -L.CheckInt(2)))
		},
		"arshift": func(L *lua.LState) int {
			x, disp := checkUint32(L, 1), L.CheckInt(2)
			if disp < 0 || x&0x80000000 == 0 {
				return pushUint32(L, shiftLeft(x, -disp))
			}
			if disp >= 32 {
				return pushUint32(L, math.MaxUint32)
			}
			return pushUint32(L, uint32(int32(x)>>uint(disp)))
		},
		"lrotate": func(L *lua.LState) int {
			return pushUint32(L, bits.RotateLeft32(checkUint32(L, 1), L.CheckInt(2)%32))
		},
		"rrotate": func(L *lua.LState) int {
			return pushUint32(L, bits.RotateLeft32(checkUint32(L, 1), -(L.CheckInt(2)%32)))
		},
		"extract": func(L *lua.LState) int {
			n := checkUint32(L, 1)
			f, w := fieldArgs(L, 2, 3)
			return pushUint32(L, (n>>uint(f))&mask(w))
		},
		"replace": func(L *lua.LState) int {
			n, v := checkUint32(L, 1), checkUint32(L, 2)
			f, w := fieldArgs(L, 3, 4)
			m := mask(w)
			return pushUint32(L, (n&^(m<<uint(f)))|((v&m)<<uint(f)))
		},
	}
	t := L.NewTable()
	L.SetFuncs(t, fns) // in the names' order: the same on every run
	L.SetGlobal("bit32", t)
}

func mask(width int) uint32 {
	if width >= 32 {
		return math.MaxUint32
	}
	return 1<<uint(width) - 1
}
