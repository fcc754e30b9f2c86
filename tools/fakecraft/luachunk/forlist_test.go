package luachunk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// each is an iterator of a table's array part that is not a standard one, so its loops are
// rewritten into ordinary calls.
const each = `local function each(t) local i = 0 return function() i = i + 1 return t[i] end end `

// A rewritten generic for means what Lua's for means.
func TestGenericForKeepsItsMeaning(t *testing.T) {
	tests := []struct{ src, want string }{
		{`local s = 0 for v in each({ 1, 2, 3, 4 }) do if v == 3 then break end s = s + v end return s`, "3"},
		{`local out = "" for a in each({ "a", "b" }) do for b in each({ "x", "y" }) do if b == "y" then break end out = out .. a .. b end end return out`, "axbx"},
		{`local fs = {} for v in each({ 1, 2, 3 }) do fs[#fs + 1] = function() return v end end return fs[1]() + fs[2]() * 10 + fs[3]() * 100`, "321"},
		{`local fs = {} for v in each({ 1, 2, 3 }) do local w = v * 2 fs[#fs + 1] = function() return w end if v == 2 then break end end return fs[1]() + fs[2]() * 10`, "42"},
		{`local function find(t, x) for v in each(t) do if v == x then return "found " .. v end end return "none" end return find({ 1, 2 }, 2) .. find({ 1 }, 5)`, "found 2none"},
		{`local s = "" for v in each({ 1, 2, 3 }) do if v == 2 then goto continue end s = s .. v ::continue:: end return s`, "13"},
		// Assigning a loop variable does not move the iteration.
		{`local n = 0 for i in function(_, c) if c < 3 then return c + 1 end end, nil, 0 do n = n + 1 i = 10 end return n`, "3"},
		// Only nil ends the loop; false is a value.
		{`local k, st = 0, { n = 0 } for v in function(s) s.n = s.n + 1 if s.n <= 2 then return false end end, st do k = k + 1 end return k`, "2"},
		// The list is evaluated once, to three values; the iterator gets state and control.
		{`local calls = 0 local function make() calls = calls + 1 return function(s, c) if c < s then return c + 1 end end, 3, 0, "extra" end local n = 0 for v in make() do n = n + v end return n .. "," .. calls`, "6,1"},
		{`local r = "" for a, b, c in each({ 1 }) do r = tostring(b) .. tostring(c) end return r`, "nilnil"},
		{`for v in each({ 1 }) do end return tostring(v)`, "nil"},
		{`local s = "" for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do s = s .. k .. v end return s`, "a1b2"},
		// With `..`: a loop variable hiding a whole-number numeric for's is routed as any
		// other name; the numeric for's own stays unrouted inside the rewritten loop.
		{`local s = "" for i = 1, 2 do for i in each({ 1/4 }) do s = s .. i .. "," end s = s .. i .. ";" end return s`, "0.25,1;0.25,2;"},
		{`local s = "" for v in each({ 1, 2 }) do for w in each({ 3, 4 }) do if w == 4 then goto next end s = s .. v .. w end ::next:: end return s`, "1323"},
		// The standard iterators keep gopher-lua's loop, with the same meaning.
		{`local fs = {} for _, v in ipairs({ 1, 2, 3 }) do fs[#fs + 1] = function() return v end end return fs[1]() + fs[2]() * 10 + fs[3]() * 100`, "321"},
		{`local n = 0 for k, v in pairs({ a = 1, b = 2 }) do n = n + v end for k in next, { 1, 2 } do n = n + k end return n`, "6"},
		{`local function pairs(t) return each(t) end local s = 0 for v in pairs({ 4, 5 }) do s = s + v end return s`, "9"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.want}, run(t, each+tt.src), tt.src)
	}
}

// An iterator may yield: it is called by an ordinary call, not from inside the VM.
func TestGenericForIteratorMayYield(t *testing.T) {
	src := `
local co = coroutine.wrap(function()
  local got = {}
  for v in function() return coroutine.yield("want") end do got[#got + 1] = v end
  return table.concat(got, ",")
end)
local asks = co() .. co("a") .. co("b")
return asks .. "|" .. co(nil)`
	assert.Equal(t, []string{"wantwantwant|a,b"}, run(t, src))
}

// usesTForLoop says whether p or a function inside it keeps gopher-lua's OP_TFORLOOP.
func usesTForLoop(p *lua.FunctionProto) bool {
	for _, inst := range p.Code {
		if int(inst>>26) == lua.OP_TFORLOOP {
			return true
		}
	}
	for _, child := range p.FunctionPrototypes {
		if usesTForLoop(child) {
			return true
		}
	}
	return false
}

func TestOnlyStandardIteratorsKeepGopherLuasLoop(t *testing.T) {
	for src, kept := range map[string]bool{
		`for k, v in pairs({}) do end`:                                     true,
		`for i, v in ipairs({}) do end`:                                    true,
		`for k, v in next, {} do end`:                                      true,
		`local t = {} for k in next, t, nil do end`:                        true,
		`for w in ("a b"):gmatch("%a+") do end`:                            false,
		`for v in f do end`:                                                false,
		`local pairs = pairs for k in pairs({}) do end`:                    false,
		`local function f(ipairs) for k in ipairs({}) do end end`:          false,
		`for _, next in ipairs({}) do for k in next, {} do end end`:        true, // ipairs kept; next is a local
		`do local pairs = 1 end for k in pairs({}) do end`:                 true,
		`local t = {} for _ in t.pairs({}) do end`:                         false,
		`local function f() for k in pairs({}) do end end local pairs = 1`: true,
	} {
		c, err := Compile(src, "x")
		require.NoError(t, err, src)
		assert.Equal(t, kept, usesTForLoop(c.Proto), src)
	}
	c, err := Compile(`for _, next in ipairs({}) do for k in next, {} do end end`, "x")
	require.NoError(t, err)
	var loops int
	for _, inst := range c.Proto.Code {
		if int(inst>>26) == lua.OP_TFORLOOP {
			loops++
		}
	}
	assert.Equal(t, 1, loops, "only the ipairs loop keeps OP_TFORLOOP")
}

// loadError runs src as chunk "chunk" and returns its error.
func loadError(t *testing.T, src string) string {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	fn, err := Load(L, src, "=chunk", L.G.Global)
	require.NoError(t, err)
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	require.Error(t, err)
	return err.(*lua.ApiError).Object.String()
}

// Errors keep their lines: the iterator's call is on the for's line, the body's on its own.
func TestGenericForKeepsLines(t *testing.T) {
	assert.Equal(t, "chunk:2: attempt to call a nil value", loadError(t, "local x\nfor v in x do\nend"))
	assert.Equal(t, "chunk:4: boom", loadError(t, each+"\nfor v in each({ 1 }) do\n\n  error('boom')\nend"))
	assert.Equal(t, "3", loadError(t, each+"\nfor v in each({ 1 }) do\n  error(debug.getinfo(1, 'l').currentline, 0)\nend"))
	assert.Equal(t, "chunk:1: iter", loadError(t, "local function it() error('iter') end\nfor v in it do\nend"))
}
