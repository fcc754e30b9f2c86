package lua

import "math"

const defaultArrayCap = 32
const defaultHashCap = 32

type lValueArraySorter struct {
	L      *LState
	Fn     *LFunction
	Values []LValue
}

func (lv lValueArraySorter) Len() int {
	return len(lv.Values)
}

func (lv lValueArraySorter) Swap(i, j int) {
	lv.Values[i], lv.Values[j] = lv.Values[j], lv.Values[i]
}

func (lv lValueArraySorter) Less(i, j int) bool {
	if lv.Fn != nil {
		lv.L.Push(lv.Fn)
		lv.L.Push(lv.Values[i])
		lv.L.Push(lv.Values[j])
		lv.L.Call(2, 1)
		return LVAsBool(lv.L.reg.Pop())
	}
	return lessThan(lv.L, lv.Values[i], lv.Values[j])
}

func newLTable(acap int, hcap int) *LTable {
	if acap < 0 {
		acap = 0
	}
	if hcap < 0 {
		hcap = 0
	}
	tb := &LTable{}
	tb.Metatable = LNil
	if acap != 0 {
		tb.array = make([]LValue, 0, acap)
	}
	if hcap != 0 {
		tb.strdict = make(map[string]LValue, hcap)
	}
	return tb
}

// Len returns length of this LTable without using __len: the border Cobalt's LuaTable.length
// finds (cobaltorder.go), which a table with holes makes one of several. In its array part:
// the array's size when its last element holds a value and no key is outside it, else a
// binary search there; past it, doubling from its end until a key has no value, then a
// binary search.
func (tb *LTable) Len() int {
	a := tb.arrayPart
	if a > 0 && tb.intValue(a) == LNil {
		m, n := 0, a+1
		for n-m > 1 {
			if k := (m + n) / 2; tb.intValue(k) == LNil {
				n = k
			} else {
				m = k
			}
		}
		return m
	}
	if len(tb.nodes) == 0 {
		return a
	}
	i, j := a, a+1
	for tb.intValue(j) != LNil {
		i, j = j, j*2
		if j > math.MaxInt32*2-2 {
			// Cobalt's fallback when the doubling runs past an int: count from 1
			i = 1
			for tb.intValue(i) != LNil {
				i++
			}
			return i - 1
		}
	}
	for j-i > 1 {
		if k := (i + j) / 2; tb.intValue(k) != LNil {
			i = k
		} else {
			j = k
		}
	}
	return i
}

// intValue is the value at the whole-number key k.
func (tb *LTable) intValue(k int) LValue {
	if k >= 1 && k < MaxArrayIndex {
		return tb.RawGetInt(k)
	}
	return tb.RawGetH(LNumber(k))
}

// Append appends a given LValue to this LTable.
func (tb *LTable) Append(value LValue) {
	if value == LNil {
		return
	}
	i := len(tb.array) - 1
	for ; i >= 0; i-- {
		if tb.array[i] != LNil {
			break
		}
	}
	tb.RawSetInt(i+2, value)
}

// Insert inserts a given LValue at position `i` in this table.
func (tb *LTable) Insert(i int, value LValue) {
	if tb.array == nil {
		tb.array = make([]LValue, 0, defaultArrayCap)
	}
	if i > len(tb.array) {
		tb.RawSetInt(i, value)
		return
	}
	if i <= 0 {
		tb.RawSet(LNumber(i), value)
		return
	}
	// Each key that gets a value is placed as Cobalt's table.insert, moving the elements up
	// from the last, would place it.
	for j := len(tb.array) + 1; j > i; j-- {
		if (j > len(tb.array) || tb.array[j-1] == LNil) && tb.array[j-2] != LNil {
			tb.layoutSet(LNumber(j))
		}
	}
	if tb.array[i-1] == LNil && value != LNil {
		tb.layoutSet(LNumber(i))
	}
	i -= 1
	tb.array = append(tb.array, LNil)
	copy(tb.array[i+1:], tb.array[i:])
	tb.array[i] = value
}

// MaxN returns a maximum number key that nil value does not exist before it.
func (tb *LTable) MaxN() int {
	if tb.array == nil {
		return 0
	}
	for i := len(tb.array) - 1; i >= 0; i-- {
		if tb.array[i] != LNil {
			return i + 1
		}
	}
	return 0
}

// Remove removes from this table the element at a given position.
func (tb *LTable) Remove(pos int) LValue {
	if tb.array == nil {
		return LNil
	}
	larray := len(tb.array)
	if larray == 0 {
		return LNil
	}
	i := pos - 1
	oldval := LNil
	if i >= 0 && i < larray-1 {
		// Each key that gets a value is placed as Cobalt's table.remove, moving the
		// elements down from pos, would place it.
		for j := i; j < larray-1; j++ {
			if tb.array[j] == LNil && tb.array[j+1] != LNil {
				tb.layoutSet(LNumber(j + 1))
			}
		}
	}
	switch {
	case i >= larray:
		// nothing to do
	case i == larray-1 || i < 0:
		oldval = tb.array[larray-1]
		tb.array = tb.array[:larray-1]
	default:
		oldval = tb.array[i]
		copy(tb.array[i:], tb.array[i+1:])
		tb.array[larray-1] = nil
		tb.array = tb.array[:larray-1]
	}
	return oldval
}

// RawSet sets a given LValue to a given index without the __newindex metamethod.
// It is recommended to use `RawSetString` or `RawSetInt` for performance
// if you already know the given LValue is a string or number.
func (tb *LTable) RawSet(key LValue, value LValue) {
	switch v := key.(type) {
	case LNumber:
		if isArrayKey(v) {
			if tb.array == nil {
				tb.array = make([]LValue, 0, defaultArrayCap)
			}
			index := int(v) - 1
			alen := len(tb.array)
			if index >= alen || tb.array[index] == LNil {
				tb.layoutSet(v)
			}
			switch {
			case index == alen:
				tb.array = append(tb.array, value)
			case index > alen:
				for i := 0; i < (index - alen); i++ {
					tb.array = append(tb.array, LNil)
				}
				tb.array = append(tb.array, value)
			case index < alen:
				tb.array[index] = value
			}
			return
		}
	case LString:
		tb.RawSetString(string(v), value)
		return
	}

	tb.RawSetH(key, value)
}

// RawSetInt sets a given LValue at a position `key` without the __newindex metamethod.
func (tb *LTable) RawSetInt(key int, value LValue) {
	if key < 1 || key >= MaxArrayIndex {
		tb.RawSetH(LNumber(key), value)
		return
	}
	if tb.array == nil {
		tb.array = make([]LValue, 0, 32)
	}
	index := key - 1
	alen := len(tb.array)
	if index >= alen || tb.array[index] == LNil {
		tb.layoutSet(LNumber(key))
	}
	switch {
	case index == alen:
		tb.array = append(tb.array, value)
	case index > alen:
		for i := 0; i < (index - alen); i++ {
			tb.array = append(tb.array, LNil)
		}
		tb.array = append(tb.array, value)
	case index < alen:
		tb.array[index] = value
	}
}

// RawSetString sets a given LValue to a given string index without the __newindex metamethod.
func (tb *LTable) RawSetString(key string, value LValue) {
	if tb.strdict == nil {
		tb.strdict = make(map[string]LValue, defaultHashCap)
	}
	if _, held := tb.strdict[key]; !held {
		tb.layoutSet(LString(key))
	}
	if value == LNil {
		delete(tb.strdict, key)
	} else {
		tb.strdict[key] = value
	}
}

// RawSetH sets a given LValue to a given index without the __newindex metamethod.
func (tb *LTable) RawSetH(key LValue, value LValue) {
	if s, ok := key.(LString); ok {
		tb.RawSetString(string(s), value)
		return
	}
	if tb.dict == nil {
		tb.dict = make(map[LValue]LValue, len(tb.strdict))
	}
	if _, held := tb.dict[key]; !held {
		tb.layoutSet(key)
	}
	if value == LNil {
		delete(tb.dict, key)
	} else {
		tb.dict[key] = value
	}
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGet(key LValue) LValue {
	switch v := key.(type) {
	case LNumber:
		if isArrayKey(v) {
			if tb.array == nil {
				return LNil
			}
			index := int(v) - 1
			if index >= len(tb.array) {
				return LNil
			}
			return tb.array[index]
		}
	case LString:
		if tb.strdict == nil {
			return LNil
		}
		if ret, ok := tb.strdict[string(v)]; ok {
			return ret
		}
		return LNil
	}
	if tb.dict == nil {
		return LNil
	}
	if v, ok := tb.dict[key]; ok {
		return v
	}
	return LNil
}

// RawGetInt returns an LValue at position `key` without __index metamethod.
func (tb *LTable) RawGetInt(key int) LValue {
	if tb.array == nil {
		return LNil
	}
	index := int(key) - 1
	if index >= len(tb.array) || index < 0 {
		return LNil
	}
	return tb.array[index]
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetH(key LValue) LValue {
	if s, sok := key.(LString); sok {
		if tb.strdict == nil {
			return LNil
		}
		if v, vok := tb.strdict[string(s)]; vok {
			return v
		}
		return LNil
	}
	if tb.dict == nil {
		return LNil
	}
	if v, ok := tb.dict[key]; ok {
		return v
	}
	return LNil
}

// RawGetString returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetString(key string) LValue {
	if tb.strdict == nil {
		return LNil
	}
	if v, vok := tb.strdict[string(key)]; vok {
		return v
	}
	return LNil
}

// ForEach iterates over this table of elements, yielding each in turn to a given function,
// in the order next gives (cobaltorder.go).
func (tb *LTable) ForEach(cb func(LValue, LValue)) {
	for k, v := tb.layoutNext(0); k != LNil; k, v = tb.layoutNext(tb.layoutIndex(k)) {
		cb(k, v)
	}
}

// This function is equivalent to lua_next ( http://www.lua.org/manual/5.1/manual.html#lua_next ).
// continuesTraversal says whether next may go on from key: nil (the start), a key of the
// array part, or a key the table holds or has held (one set to nil while a traversal runs
// stays valid, as in Lua), as Cobalt's findIndex.
func (tb *LTable) continuesTraversal(key LValue) bool {
	return tb.layoutIndex(key) >= 0
}

// Next is the key after key in the order Cobalt's next gives (cobaltorder.go), and its
// value; nil after the last, and for a key the table does not hold.
func (tb *LTable) Next(key LValue) (LValue, LValue) {
	i := tb.layoutIndex(key)
	if i < 0 {
		return LNil, LNil
	}
	return tb.layoutNext(i)
}
