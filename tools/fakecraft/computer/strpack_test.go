package computer

import "testing"

// TestStringPack: string.pack, unpack and packsize are Lua 5.3's, as CC's Cobalt has them
// (little-endian, a 4-byte size_t, Cobalt's messages and its reading of a 'z' string
// without its zero).
func TestStringPack(t *testing.T) {
	check(t, `
local function eq(got, want, what)
  assert(got == want, ("%s: want %q, got %q"):format(what, tostring(want), tostring(got)))
end
-- CC places the error of string.pack (Java) at the nearest Lua code: the line calling pcall.
local function err(want, f, ...)
  local ok, e = pcall(f, ...) local at = debug.getinfo(1, "S").short_src .. ":" .. debug.getinfo(1, "l").currentline .. ": "
  assert(not ok, "no error, want " .. want)
  eq(e, at .. want, "error")
end
eq(string.pack("i4", 100), "\100\0\0\0", "i4")
eq(string.pack(">I2", 258), "\1\2", ">I2")
eq(string.pack("<h>h", 1, 1), "\1\0\0\1", "endianness switches")
eq(string.pack("z s1 x c3", "ab", "cd", "e"), "ab\0\2cd\0e\0\0", "strings and padding")
eq(string.pack("T", 1), "\1\0\0\0", "size_t is 4 bytes")
eq(string.pack("s", "a"), "\1\0\0\0a", "s defaults to size_t")
eq(string.pack("i16", -1), ("\255"):rep(16), "sign fills a wide integer")
eq(string.pack("!bXi4b", 1, 2), "\1\0\0\0\2", "X aligns to the next option")
eq(string.pack("bXi4b", 1, 2), "\1\2", "no alignment without !")
eq(string.pack("i4", "7"), "\7\0\0\0", "a numeric string converts")
eq(string.pack("b", 1.9), "\1", "a number is cut towards zero")
eq(string.packsize("i4i8"), 12, "packsize")
eq(string.packsize("!i1i8"), 16, "packsize aligned")
eq(string.packsize(""), 0, "empty format")
local a, b, c, nxt = string.unpack("<i2 B d", string.pack("<i2 B d", -2, 200, 1.5))
eq(a, -2, "i2") eq(b, 200, "B") eq(c, 1.5, "d") eq(nxt, 12, "next position")
eq(math.abs(string.unpack("f", string.pack("f", 0.1)) - 0.1) < 1e-7, true, "f is a float")
eq(select(2, string.unpack("z", "abc")), 5, "z without its zero reads to the end")
eq(string.unpack("s1", "\2hi"), "hi", "s1")
eq(string.unpack("i16", ("\255"):rep(16)), -1, "i16")
eq(string.unpack("J", ("\255"):rep(8)), -1, "J wraps")
eq(string.unpack("b", "xy\200", -1), -56, "negative position")
eq(select(2, string.unpack("c2", "abcd", 2)), 4, "c2 from 2")
err("bad argument #2 (integer overflow)", string.pack, "b", 200)
err("bad argument #2 (integer overflow)", string.pack, "B", -1)
err("invalid format option 'q'", string.pack, "q")
err("integral size (17) out of limits [1,16]", string.pack, "i17", 1)
err("integral size (0) out of limits [1,16]", string.pack, "!0")
err("missing size for format option 'c'", string.pack, "c", "a")
err("bad argument #2 (string longer than given size)", string.pack, "c2", "abc")
err("bad argument #2 (string contains zeros)", string.pack, "z", "a\0")
err("bad argument #2 (string length does not fit in given size)", string.pack, "s1", ("x"):rep(257))
err("invalid next option for option 'X'", string.pack, "X")
err("invalid next option for option 'X'", string.pack, "Xc1")
err("bad argument #1 to 'pack' (format asks for alignment not power of 2)", string.pack, "!4 i3", 1)
err("bad argument (number expected, got nil)", string.pack, "i4")
err("bad argument (string expected, got nil)", string.pack)
err("bad argument #1 (variable-length format)", string.packsize, "s")
err("bad argument #2 (data string too short)", string.unpack, "i4", "abc")
err("bad argument #2 (data string too short)", string.unpack, "s1", "\5ab")
err("bad argument #3 (initial position out of string)", string.unpack, "b", "a", 3)
err("9-byte integer does not fit into Lua Integer", string.unpack, "I9", ("\255"):rep(9))
local ok, e = pcall(function() string.pack("q") end)
assert(e:find("^/?[%w_/.]*:%d+: invalid format option 'q'$"), "placed at its caller: " .. e)
`)
}
