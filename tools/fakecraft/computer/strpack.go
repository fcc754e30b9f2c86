package computer

// string.pack, string.unpack and string.packsize as CC's Cobalt has them: Lua 5.3's format
// language on a little-endian machine whose size_t ('T', 's') is 4 bytes and whose native
// alignment ('!') is 8. Where Cobalt departs from C Lua, fakecraft follows Cobalt: an
// unsigned value must not be negative, a 'z' string without its terminating zero is read
// to the end, and the messages are Cobalt's.

import (
	"encoding/binary"
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

const (
	packSizeT = 4 // size_t on Cobalt's imagined machine
	packLong  = 8 // lua_Integer
)

type packKind int

const (
	packInt packKind = iota
	packUint
	packFloat
	packDouble
	packFixed  // c[n]
	packLength // s[n]: a length, then the bytes
	packZero   // z
	packPad    // x
	packAlign  // X
	packNone   // spaces, endianness and '!'
)

// packFormat walks a format string, one option at a time.
type packFormat struct {
	L        *lua.LState
	f        string
	i        int
	little   bool
	maxAlign int
}

func newPackFormat(L *lua.LState, f string) *packFormat {
	return &packFormat{L: L, f: f, little: true, maxAlign: 1}
}

func (p *packFormat) more() bool { return p.i < len(p.f) }

// number reads the digits at the cursor, or def when there are none.
func (p *packFormat) number(def int) int {
	if !p.more() || p.f[p.i] < '0' || p.f[p.i] > '9' {
		return def
	}
	n := 0
	for p.more() && p.f[p.i] >= '0' && p.f[p.i] <= '9' && n < math.MaxInt32/10-1 {
		n = n*10 + int(p.f[p.i]-'0')
		p.i++
	}
	return n
}

func (p *packFormat) sizeLimit(def int) int {
	n := p.number(def)
	if n < 1 || n > 16 {
		luakit.RaiseMessage(p.L, fmt.Sprintf("integral size (%d) out of limits [1,16]", n))
	}
	return n
}

// option reads one option: its kind and its size in bytes.
func (p *packFormat) option() (packKind, int) {
	c := p.f[p.i]
	p.i++
	switch c {
	case 'b':
		return packInt, 1
	case 'B':
		return packUint, 1
	case 'h':
		return packInt, 2
	case 'H':
		return packUint, 2
	case 'l', 'j':
		return packInt, packLong
	case 'L', 'J':
		return packUint, packLong
	case 'T':
		return packUint, packSizeT
	case 'f':
		return packFloat, 4
	case 'd', 'n':
		return packDouble, 8
	case 'i':
		return packInt, p.sizeLimit(4)
	case 'I':
		return packUint, p.sizeLimit(4)
	case 's':
		return packLength, p.sizeLimit(packSizeT)
	case 'c':
		n := p.number(-1)
		if n < 0 {
			luakit.RaiseMessage(p.L, "missing size for format option 'c'")
		}
		return packFixed, n
	case 'z':
		return packZero, 0
	case 'x':
		return packPad, 1
	case 'X':
		return packAlign, 0
	case ' ':
	case '<', '=':
		p.little = true
	case '>':
		p.little = false
	case '!':
		p.maxAlign = p.sizeLimit(8)
	default:
		luakit.RaiseMessage(p.L, fmt.Sprintf("invalid format option '%c'", c))
	}
	return packNone, 0
}

// next reads one option and the padding that aligns it at offset pos.
func (p *packFormat) next(pos int) (kind packKind, size, pad int) {
	kind, size = p.option()
	align := size
	if kind == packAlign {
		// X aligns to the size of the option after it, which it takes.
		var nextKind packKind
		if p.more() {
			nextKind, align = p.option()
		}
		if nextKind == packFixed || align == 0 {
			luakit.RaiseMessage(p.L, "invalid next option for option 'X'")
		}
	}
	if align <= 1 || kind == packFixed {
		return kind, size, 0
	}
	align = min(align, p.maxAlign)
	if align&(align-1) != 0 {
		luakit.RaiseMessage(p.L, "bad argument #1 to 'pack' (format asks for alignment not power of 2)")
	}
	return kind, size, (align - pos&(align-1)) & (align - 1)
}

// putInt appends the low size bytes of v (size may pass 8: the sign fills the rest).
func putInt(out []byte, v uint64, size int, little, negative bool) []byte {
	buf := make([]byte, size)
	for i := range size {
		b := byte(0)
		if i < packLong {
			b = byte(v >> (8 * i))
		} else if negative {
			b = 0xFF
		}
		if little {
			buf[i] = b
		} else {
			buf[size-1-i] = b
		}
	}
	return append(out, buf...)
}

func strPack(L *lua.LState) int {
	p := newPackFormat(L, luakit.CheckString(L, 1))
	var out []byte
	arg := 2
	for p.more() {
		kind, size, pad := p.next(len(out))
		out = append(out, make([]byte, pad)...)
		switch kind {
		case packInt, packUint:
			v := cobaltLong(L, L.Get(arg))
			if size < packLong {
				lo, hi := int64(0), int64(1)<<(8*size)
				if kind == packInt {
					lo, hi = -(int64(1) << (8*size - 1)), int64(1)<<(8*size-1)
				}
				if v < lo || v >= hi {
					luakit.RaiseMessage(L, fmt.Sprintf("bad argument #%d (integer overflow)", arg))
				}
			}
			out = putInt(out, uint64(v), size, p.little, kind == packInt && v < 0)
			arg++
		case packFloat:
			out = putInt(out, uint64(math.Float32bits(float32(luakit.CheckNumber(L, arg)))), size, p.little, false)
			arg++
		case packDouble:
			out = putInt(out, math.Float64bits(luakit.CheckNumber(L, arg)), size, p.little, false)
			arg++
		case packFixed:
			s := luakit.CheckString(L, arg)
			if len(s) > size {
				luakit.RaiseMessage(L, fmt.Sprintf("bad argument #%d (string longer than given size)", arg))
			}
			out = append(append(out, s...), make([]byte, size-len(s))...)
			arg++
		case packZero:
			s := luakit.CheckString(L, arg)
			for i := 0; i < len(s); i++ {
				if s[i] == 0 {
					luakit.RaiseMessage(L, fmt.Sprintf("bad argument #%d (string contains zeros)", arg))
				}
			}
			out = append(append(out, s...), 0)
			arg++
		case packLength:
			s := luakit.CheckString(L, arg)
			if size < packSizeT && len(s) > 1<<(8*size) {
				luakit.RaiseMessage(L, fmt.Sprintf("bad argument #%d (string length does not fit in given size)", arg))
			}
			out = append(putInt(out, uint64(len(s)), size, p.little, false), s...)
			arg++
		case packPad:
			out = append(out, 0)
		}
	}
	L.Push(lua.LString(out))
	return 1
}

func strPacksize(L *lua.LState) int {
	p := newPackFormat(L, luakit.CheckString(L, 1))
	total := 0
	for p.more() {
		kind, size, pad := p.next(total)
		if total > math.MaxInt32-(pad+size) {
			luakit.RaiseMessage(L, "bad argument #1 (format result too large)")
		}
		total += pad + size
		if kind == packLength || kind == packZero {
			luakit.RaiseMessage(L, "bad argument #1 (variable-length format)")
		}
	}
	L.Push(lua.LNumber(total))
	return 1
}

// getInt reads a size-byte integer at data[pos:]; one wider than 8 bytes must hold only
// the sign in its upper bytes.
func getInt(L *lua.LState, data string, pos, size int, little, signed bool) int64 {
	at := func(i int) byte {
		if little {
			return data[pos+i]
		}
		return data[pos+size-1-i]
	}
	var buf [packLong]byte
	for i := range min(size, packLong) {
		buf[i] = at(i)
	}
	v := int64(binary.LittleEndian.Uint64(buf[:]))
	switch {
	case size < packLong && signed:
		shift := 64 - 8*size
		v = v << shift >> shift
	case size > packLong:
		fill := byte(0)
		if signed && v < 0 {
			fill = 0xFF
		}
		for i := packLong; i < size; i++ {
			if at(i) != fill {
				luakit.RaiseMessage(L, fmt.Sprintf("%d-byte integer does not fit into Lua Integer", size))
			}
		}
	}
	return v
}

func strUnpack(L *lua.LState) int {
	p := newPackFormat(L, luakit.CheckString(L, 1))
	data := luakit.CheckString(L, 2)
	pos := luakit.OptInteger(L, 3, 1)
	switch {
	case pos < 0 && -pos > len(data):
		pos = 0
	case pos < 0:
		pos = len(data) + pos + 1
	}
	pos--
	if pos < 0 || pos > len(data) {
		luakit.RaiseMessage(L, "bad argument #3 (initial position out of string)")
	}
	n := 0
	for p.more() {
		kind, size, pad := p.next(pos)
		if pad+size+pos > len(data) {
			luakit.RaiseMessage(L, "bad argument #2 (data string too short)")
		}
		pos += pad
		switch kind {
		case packInt, packUint:
			L.Push(lua.LNumber(getInt(L, data, pos, size, p.little, kind == packInt)))
			n++
		case packFloat:
			L.Push(lua.WithoutNegativeZero(lua.LNumber(math.Float32frombits(uint32(getInt(L, data, pos, size, p.little, false))))))
			n++
		case packDouble:
			L.Push(lua.WithoutNegativeZero(lua.LNumber(math.Float64frombits(uint64(getInt(L, data, pos, size, p.little, false))))))
			n++
		case packFixed:
			L.Push(lua.LString(data[pos : pos+size]))
			n++
		case packLength:
			length := getInt(L, data, pos, size, p.little, false)
			if length < 0 || int64(size)+length+int64(pos) > int64(len(data)) {
				luakit.RaiseMessage(L, "bad argument #2 (data string too short)")
			}
			L.Push(lua.LString(data[pos+size : pos+size+int(length)]))
			n++
			pos += int(length)
		case packZero:
			end := pos
			for end < len(data) && data[end] != 0 {
				end++
			}
			L.Push(lua.LString(data[pos:end]))
			n++
			pos = end + 1
		}
		pos += size
	}
	L.Push(lua.LNumber(pos + 1))
	return n + 1
}

// installPack adds string.pack, string.unpack and string.packsize.
func installPack(L *lua.LState) {
	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("pack", L.NewFunction(strPack))
	str.RawSetString("unpack", L.NewFunction(strUnpack))
	str.RawSetString("packsize", L.NewFunction(strPacksize))
}
