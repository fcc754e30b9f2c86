package computer

import (
	"math"
	"math/rand/v2"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luakit"
)

// installCobaltChecks replaces the base-library functions whose gopher-lua versions accept
// arguments Cobalt (CC 1.113's 0.9.3) refuses, or refuse ones it accepts, with versions that
// check as Cobalt's BaseLib, StringLib, TableLib and MathLib do; the work itself stays
// gopher-lua's where it already was CC's. The wording of every argument error is luakit's
// (UseStdLibArgRules for gopher-lua's own checks).
func installCobaltChecks(L *lua.LState) {
	G := L.G.Global
	G.RawSetString("setmetatable", L.NewFunction(luaSetMetatable))
	G.RawSetString("select", L.NewFunction(luaSelect))
	G.RawSetString("getfenv", L.NewFunction(luaGetfenv))
	G.RawSetString("setfenv", L.NewFunction(luaSetfenv))

	str := G.RawGetString("string").(*lua.LTable)
	str.RawSetString("char", L.NewFunction(luaStringChar))
	// CC's Cobalt has string.dump but no bytecode format (CC sets none), so it dumps nothing.
	str.RawSetString("dump", L.NewFunction(func(L *lua.LState) int {
		if _, ok := L.Get(1).(*lua.LFunction); !ok {
			luakit.TypeError(L, 1, "function")
		}
		luakit.RaiseMessage(L, "unable to dump given function")
		return 0
	}))

	tab := G.RawGetString("table").(*lua.LTable)
	tab.RawSetString("concat", L.NewFunction(luaTableConcat))
	unpack := L.NewFunction(luaUnpack)
	tab.RawSetString("unpack", unpack)
	G.RawSetString("unpack", unpack)
	tab.RawSetString("insert", L.NewFunction(func(L *lua.LState) int {
		t := checkInsertArgs(L)
		if t.Metatable != lua.LNil {
			return insertThroughMetamethods(L, t)
		}
		return insertRaw(L, t)
	}))
	tab.RawSetString("remove", L.NewFunction(luaTableRemove))

	m := G.RawGetString("math").(*lua.LTable)
	rs := newRandomState()
	m.RawSetString("random", L.NewFunction(rs.random))
	m.RawSetString("randomseed", L.NewFunction(rs.randomseed))
	for _, name := range []string{"max", "min"} {
		orig := m.RawGetString(name).(*lua.LFunction).GFunction
		m.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			// No argument is a missing number, not gopher-lua's "wrong number of arguments".
			luakit.CheckNumber(L, 1)
			return orig(L)
		}))
	}
}

// luaSetMetatable is Cobalt's setmetatable: the metatable must be given (nil or a table), a
// protected metatable stays, and only tables and userdata take one; gopher-lua's would give
// every number or string the metatable of its type.
func luaSetMetatable(L *lua.LState) int {
	mt := luakit.CheckValue(L, 2)
	switch mt.(type) {
	case *lua.LNilType, *lua.LTable:
	default:
		luakit.TypeError(L, 2, "nil or table")
	}
	obj := L.Get(1)
	var current lua.LValue
	switch o := obj.(type) {
	case *lua.LTable:
		current = o.Metatable
	case *lua.LUserData:
		current = o.Metatable
	default:
		luakit.TypeError(L, 1, "table")
	}
	if current, ok := current.(*lua.LTable); ok && current.RawGetString("__metatable") != lua.LNil {
		luakit.RaiseMessage(L, "cannot change a protected metatable")
	}
	L.SetMetatable(obj, mt)
	L.SetTop(1)
	return 1
}

// luaSelect is Cobalt's select: "#", or an index that is a number or a numeric string, not
// 0, and no further back than the first value.
func luaSelect(L *lua.LState) int {
	top := L.GetTop()
	n := top - 1
	if s, ok := L.Get(1).(lua.LString); ok && s == "#" {
		L.Push(lua.LNumber(n))
		return 1
	}
	i := luakit.CheckInteger(L, 1)
	if i == 0 || i < -n {
		luakit.BadArgumentReason(L, 1, "index out of range")
	}
	if i < 0 {
		i += n + 1
	}
	if i > n {
		return 0
	}
	// The values from the i-th on are the top n-i+1 of the stack.
	return n - i + 1
}

// luaTableConcat is Cobalt's table.concat(t [, sep [, i [, j]]]): the length is #t (its
// __len), the elements t[i] to t[j] are read through __index, and each must be a string or
// a number, any of them, where gopher-lua clamped i and j to the table and refused a
// value with "invalid value (table) at index 1 in table for concat". A number converts as
// tostring writes it, the separator too.
func luaTableConcat(L *lua.LState) int {
	t := luakit.CheckTable(L, 1)
	length := objectLength(L, t)
	sep := luakit.OptString(L, 2, "")
	first := luakit.OptInteger(L, 3, 1)
	last := luakit.OptInteger(L, 4, length)
	var b strings.Builder
	for i := first; i <= last; i++ {
		if i > first {
			b.WriteString(sep)
		}
		switch v := indexed(L, t, lua.LNumber(i)).(type) {
		case lua.LString:
			b.WriteString(string(v))
		case lua.LNumber:
			b.WriteString(ccformat.FormatNumber(float64(v)))
		default:
			luakit.ValueTypeError(L, v, "string")
		}
		if i == math.MaxInt {
			break
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// objectLength is #v as an integer, as Cobalt's intLength: a string's length, a table's
// border, else its __len's result, which must be a whole number (or a string holding one);
// a value with neither cannot be measured ("attempt to get length of a nil value").
func objectLength(L *lua.LState, v lua.LValue) int {
	lenFn := L.GetMetaField(v, "__len")
	if lenFn == lua.LNil {
		switch v := v.(type) {
		case lua.LString:
			return len(v)
		case *lua.LTable:
			return v.Len()
		}
		luakit.RaiseMessage(L, "attempt to get length of a "+v.Type().String()+" value")
	}
	L.Push(lenFn)
	L.Push(v)
	L.Call(1, 1)
	n := L.Get(-1)
	L.Pop(1)
	return lengthResult(L, n)
}

// lengthResult is what an __len returned, n, as Cobalt's intLength takes it: a whole number
// (or a string holding one) within 32 bits, else "object length is not an integer".
func lengthResult(L *lua.LState, n lua.LValue) int {
	var f float64
	switch v := n.(type) {
	case lua.LNumber:
		f = float64(v)
	case lua.LString:
		var ok bool
		if f, ok = ccformat.ParseNumber(string(v), 10); !ok {
			f = math.NaN()
		}
	default:
		f = math.NaN()
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		luakit.RaiseMessage(L, "object length is not an integer")
	}
	return int(f)
}

// checkInsertArgs checks table.insert's arguments as Cobalt's does and returns the table; a
// position (a number or a numeric string) is made a number in place.
func checkInsertArgs(L *lua.LState) *lua.LTable {
	t := luakit.CheckTable(L, 1)
	switch L.GetTop() {
	case 2:
	case 3:
		L.Replace(2, lua.LNumber(luakit.CheckInteger(L, 2)))
	default:
		luakit.RaiseMessage(L, `wrong number of arguments to "insert"`)
	}
	return t
}

// insertThroughMetamethods is Cobalt's table.insert(t, [pos,] value) off its fast path, for
// a table with a metatable: #t through __len (objectLength), the elements moved up and the
// value stored through __index and __newindex, as a proxy table expects. gopher-lua's
// worked on the raw table. The arguments are checked (insert in installCobaltChecks).
func insertThroughMetamethods(L *lua.LState, t *lua.LTable) int {
	if L.GetTop() == 2 {
		L.SetTable(t, lua.LNumber(objectLength(L, t)+1), L.Get(2))
		return 0
	}
	position, value := int(L.Get(2).(lua.LNumber)), L.Get(3)
	end := max(objectLength(L, t)+1, position)
	for i := end; i > position; i-- {
		L.SetTable(t, lua.LNumber(i), L.GetTable(t, lua.LNumber(i-1)))
	}
	L.SetTable(t, lua.LNumber(position), value)
	return 0
}

// insertRaw is Cobalt's table.insert(t, [pos,] value) on its fast path, a table without a
// metatable: the value at #t + 1, or the elements from pos to #t moved up one, from the last,
// and the value at pos, all raw. gopher-lua's moved its whole array part, holes and elements
// past #t included, and so made other keys than Cobalt's (and set them in another order).
func insertRaw(L *lua.LState, t *lua.LTable) int {
	if L.GetTop() == 2 {
		t.RawSetInt(t.Len()+1, L.Get(2))
		return 0
	}
	position, value := int(L.Get(2).(lua.LNumber)), L.Get(3)
	for i := max(t.Len()+1, position); i > position; i-- {
		t.RawSet(lua.LNumber(i), t.RawGet(lua.LNumber(i-1)))
	}
	t.RawSet(lua.LNumber(position), value)
	return 0
}

// luaTableRemove is Cobalt's table.remove(t [, pos]): #t (through __len), pos by default #t,
// nothing past the end, the elements moved down (through __index and __newindex, for a table
// with a metatable). gopher-lua's own took the last slot of the table's array part, not
// t[#t]: after t[#t] = nil, table.remove(t) answered nil and removed nothing.
func luaTableRemove(L *lua.LState) int {
	t := luakit.CheckTable(L, 1)
	size := objectLength(L, t)
	position := luakit.OptInteger(L, 2, size)
	if position > size {
		return 0
	}
	removed := L.GetTable(t, lua.LNumber(position))
	for ; position < size; position++ {
		L.SetTable(t, lua.LNumber(position), L.GetTable(t, lua.LNumber(position+1)))
	}
	L.SetTable(t, lua.LNumber(position), lua.LNil)
	L.Push(removed)
	return 1
}

// fenvTarget is Cobalt's getfenvobj: the function whose environment getfenv and setfenv
// read or change, given as itself or as a level (a number or a numeric string; optional for
// getfenv, 1 by default) counted as CC counts levels past pcall (luakit.FrameAt). Level 0 is
// the running coroutine (nil here: Cobalt's thread, which has no environment of its own); a
// Go function or code standing in for C is returned as cFunction.
func fenvTarget(L *lua.LState, optional bool) (target *lua.LFunction, cFunction bool) {
	if fn, ok := L.Get(1).(*lua.LFunction); ok {
		return fn, fn.IsG
	}
	var level int
	if optional {
		level = luakit.OptInteger(L, 1, 1)
	} else {
		level = luakit.CheckInteger(L, 1)
	}
	if level < 0 {
		luakit.BadArgumentReason(L, 1, "level must be non-negative")
	}
	if level == 0 {
		return nil, true
	}
	th, dbg, _, ok := luakit.FrameAt(L, level)
	if !ok {
		luakit.BadArgumentReason(L, 1, "invalid level")
	}
	fnValue, err := th.GetInfo("Sf", dbg, lua.LNil)
	fn, isFunction := fnValue.(*lua.LFunction)
	if err != nil || !isFunction {
		luakit.BadArgumentReason(L, 1, "invalid level")
	}
	return fn, fn.IsG || dbg.Source == cFrameSource
}

// luaGetfenv is Cobalt's getfenv([f]): a Lua function's environment (the globals when it
// has no _ENV upvalue, hasEnvUpvalue), the globals for a C function or level 0; "level
// must be non-negative", "invalid level" past the stack.
func luaGetfenv(L *lua.LState) int {
	fn, cFunction := fenvTarget(L, true)
	if cFunction || !hasEnvUpvalue(fn.Proto) {
		L.Push(L.G.Global)
	} else {
		L.Push(fn.Env)
	}
	return 1
}

// hasEnvUpvalue says whether a Lua 5.2 function compiled from p would have the _ENV upvalue
// Cobalt's getfenv reads (LegacyEnv.getEnv): a chunk always has it, any other function when
// it or a function inside it reads or writes a global or names _ENV. gopher-lua gives every
// function an environment, so without this getfenv of a function that uses no globals
// answered its chunk's environment (a program's), where Cobalt answers the globals.
func hasEnvUpvalue(p *lua.FunctionProto) bool {
	return p.LineDefined == 0 || reachesEnv(p)
}

// reachesEnv says whether p or a function inside it uses the environment.
func reachesEnv(p *lua.FunctionProto) bool {
	for _, inst := range p.Code {
		if op := int(inst >> 26); op == lua.OP_GETGLOBAL || op == lua.OP_SETGLOBAL {
			return true
		}
	}
	for _, name := range p.DbgUpvalues {
		if name == "_ENV" {
			return true
		}
	}
	for _, inner := range p.FunctionPrototypes {
		if reachesEnv(inner) {
			return true
		}
	}
	return false
}

// luaSetfenv is Cobalt's setfenv(f, t): t a table (checked first), f a function or a level
// as getfenv takes it but not optional; it returns f's function. A C function and level 0
// (the coroutine) refuse: "'setfenv' cannot change environment of given object", placed
// where Cobalt places an error without a level. gopher-lua's set a coroutine's environment
// at level 0 and worded its refusal "cannot change the environment of given object".
func luaSetfenv(L *lua.LState) int {
	env := luakit.CheckTable(L, 2)
	fn, cFunction := fenvTarget(L, false)
	if cFunction {
		luakit.RaiseMessage(L, "'setfenv' cannot change environment of given object")
	}
	fn.Env = env
	L.Push(fn)
	return 1
}

// installIpairs sets Cobalt's ipairs(v): inext, v, 0 for any value but none. inext is Go
// (luaInext); for a table with a metatable it is proxyInext, cfuncs.lua's, which reads
// v[i + 1] through the VM so that an __index function may yield, as Cobalt's inext lets it
// (a resumable call off its fast path, the table without a metatable). The two differ as
// values, where Cobalt's is one function. pairs is cfuncs.lua's, for its __pairs to yield.
func installIpairs(L *lua.LState, inext, proxyInext lua.LValue) {
	L.SetGlobal("ipairs", L.NewFunction(func(L *lua.LState) int {
		v := luakit.CheckValue(L, 1)
		iter := inext
		if t, ok := v.(*lua.LTable); ok && t.Metatable != lua.LNil {
			iter = proxyInext
		}
		L.SetTop(0)
		L.Push(iter)
		L.Push(v)
		L.Push(lua.LNumber(0))
		return 3
	}))
}

// luaInext is the iterator ipairs returns, Cobalt's inext(v, i): v[i + 1] through __index
// (a string's is its library: no element, so the loop ends at once), nil ending the loop; a
// value without __index cannot be indexed ("attempt to index a number value", where the
// loop calls it).
func luaInext(L *lua.LState) int {
	v := L.Get(1)
	key := lua.LNumber(luakit.CheckInteger(L, 2) + 1)
	value := indexed(L, v, key)
	if value == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(key)
	L.Push(value)
	return 2
}

// indexed is v[key] as Cobalt's OperationHelper.getTable reads it for its library (ipairs,
// unpack, table.concat): a table's own value, else through __index; a value that is not a
// table and has no __index cannot be indexed ("attempt to index a number value").
func indexed(L *lua.LState, v, key lua.LValue) lua.LValue {
	if t, ok := v.(*lua.LTable); ok {
		if t.Metatable == lua.LNil {
			return t.RawGet(key)
		}
	} else if L.GetMetaField(v, "__index") == lua.LNil {
		luakit.RaiseMessage(L, "attempt to index a "+v.Type().String()+" value")
	}
	return L.GetTable(v, key)
}

// luaUnpack is Cobalt's unpack(v [, i [, j]]), table.unpack too: i and j are numbers or
// numeric strings, j defaults to #v and v[i] to v[j] are read as indexed reads them, so a
// proxy table's __len and __index are followed and a string unpacks to nils, where
// gopher-lua's refused any value but a table and read it raw.
func luaUnpack(L *lua.LState) int {
	v := L.Get(1)
	first := luakit.OptInteger(L, 2, 1)
	var last int
	if L.Get(3) != lua.LNil {
		last = luakit.CheckInteger(L, 3)
	} else {
		last = objectLength(L, v)
	}
	if first > last {
		return 0
	}
	count := int64(last) - int64(first) + 1
	if count >= math.MaxInt32 {
		luakit.RaiseMessage(L, "too many results to unpack")
	}
	for i := first; i <= last; i++ {
		L.Push(indexed(L, v, lua.LNumber(i)))
	}
	return int(count)
}

// luaStringChar is Cobalt's string.char: each code a number (or numeric string) from 0 to
// 255, which gopher-lua would wrap into a byte.
func luaStringChar(L *lua.LState) int {
	top := L.GetTop()
	bytes := make([]byte, top)
	for i := 1; i <= top; i++ {
		c := luakit.CheckInteger(L, i)
		if c < 0 || c >= 256 {
			luakit.BadArgumentReason(L, i, "invalid value")
		}
		bytes[i-1] = byte(c)
	}
	L.Push(lua.LString(bytes))
	return 1
}

// randomState is a computer's math.random generator, as Cobalt keeps one per Lua state:
// math.randomseed(x [, y]) seeds it with two parts, so that a program that seeds it gets
// the same numbers again (Go's global generator ignores rand.Seed since Go 1.24). Its
// numbers are not Cobalt's (xoshiro256**), only as reproducible.
type randomState struct {
	source *rand.PCG
	rand   *rand.Rand
}

func newRandomState() *randomState {
	source := rand.NewPCG(rand.Uint64(), rand.Uint64())
	return &randomState{source: source, rand: rand.New(source)}
}

// randomseed is Cobalt's math.randomseed([x [, y]]): it seeds with x and y (0 when absent),
// or with two random parts when given nothing, and returns the two parts.
func (rs *randomState) randomseed(L *lua.LState) int {
	var part1, part2 int64
	if L.GetTop() == 0 {
		part1, part2 = rs.rand.Int64(), rs.rand.Int64()
	} else {
		part1, part2 = int64(luakit.CheckInteger(L, 1)), int64(luakit.OptInteger(L, 2, 0))
	}
	rs.source.Seed(uint64(part1), uint64(part2))
	L.Push(lua.LNumber(part1))
	L.Push(lua.LNumber(part2))
	return 2
}

// random is Cobalt's math.random: none, one or two bounds, refusing an empty interval
// (gopher-lua's panicked inside Go's rand.Intn) and a third argument.
func (rs *randomState) random(L *lua.LState) int {
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(rs.rand.Float64()))
	case 1:
		high := luakit.CheckInteger(L, 1)
		if high < 1 {
			luakit.BadArgumentReason(L, 1, "interval is empty")
		}
		L.Push(lua.LNumber(1 + rs.rand.Int64N(int64(high))))
	case 2:
		low, high := int64(luakit.CheckInteger(L, 1)), int64(luakit.CheckInteger(L, 2))
		if high < low {
			luakit.BadArgumentReason(L, 2, "interval is empty")
		}
		L.Push(lua.LNumber(float64(low + int64(rs.below(uint64(high-low)+1)))))
	default:
		luakit.RaiseMessage(L, "wrong number of arguments")
	}
	return 1
}

// below is a uniform draw from [0, span), span 0 meaning all 2^64 values.
func (rs *randomState) below(span uint64) uint64 {
	if span == 0 {
		return rs.rand.Uint64()
	}
	return rs.rand.Uint64N(span)
}
