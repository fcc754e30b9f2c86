package peripheral

import (
	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// Value is a Lua value on its way from one computer to another (a modem message's payload,
// an event's arguments): nil, bool, float64, string or *Table. CC turns what crosses
// between computers into Java objects and back the same way: numbers, strings, booleans
// and tables survive, a table seen twice stays one table, and everything else (functions,
// coroutines, metatables) is lost.
type Value = any

// Table is a Lua table as a Value: its entries in the order they were read. A Table is
// never changed once made, so one may be handed to many computers.
type Table struct {
	Keys, Values []Value
}

// Export turns a Lua value into a Value, as CC's toObject does: a table is copied without
// its metatable, entries whose key or value cannot cross (a function, nil) are dropped, and
// the same table met twice (a cycle too) becomes the same *Table. Lua goroutine only.
func Export(v lua.LValue) Value {
	return export(v, nil)
}

func export(v lua.LValue, seen map[*lua.LTable]*Table) Value {
	switch t := v.(type) {
	case lua.LBool:
		return bool(t)
	case lua.LNumber:
		return float64(t)
	case lua.LString:
		return string(t)
	case *lua.LTable:
		if seen == nil {
			seen = map[*lua.LTable]*Table{}
		} else if done, ok := seen[t]; ok {
			return done
		}
		out := &Table{}
		seen[t] = out
		t.ForEach(func(k, val lua.LValue) {
			ek, ev := export(k, seen), export(val, seen)
			if ek != nil && ev != nil {
				out.Keys = append(out.Keys, ek)
				out.Values = append(out.Values, ev)
			}
		})
		return out
	}
	return nil
}

// Import builds the Lua value of a Value in L, a fresh table for each *Table (one per
// distinct *Table, so shared tables and cycles come back as they left). Lua goroutine of L
// only (L may be nil for a Value holding no table). An int is taken as a number, for Go
// callers' convenience.
func Import(L *lua.LState, v Value) lua.LValue {
	return importValue(L, v, nil)
}

func importValue(L *lua.LState, v Value, seen map[*Table]*lua.LTable) lua.LValue {
	switch t := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(t)
	case float64:
		return lua.LNumber(t)
	case int:
		return lua.LNumber(t)
	case string:
		return lua.LString(t)
	case *Table:
		if seen == nil {
			seen = map[*Table]*lua.LTable{}
		} else if done, ok := seen[t]; ok {
			return done
		}
		out := L.NewTable()
		seen[t] = out
		for _, i := range t.javaOrder() {
			out.RawSet(importValue(L, t.Keys[i], seen), importValue(L, t.Values[i], seen))
		}
		return out
	}
	return lua.LNil
}

// javaOrder is the order CC hands a table's entries to Lua in: its toObject put them, in
// the order Lua's next gave them, in a Java HashMap, and toValue copies that map into a new
// table in the map's iteration order, which follows from the keys' Java hashCodes (a
// table's pairs walk, which depends on the order its keys were set, so goes as in CC).
func (t *Table) javaOrder() []int {
	hashes := make([]int32, len(t.Keys))
	for i, k := range t.Keys {
		hashes[i] = javaHash(k, nil)
	}
	return luakit.JavaHashMapOrder(luakit.JavaDefaultCapacity, hashes)
}

// javaHash is the hashCode of the Java object CC makes of v: a String's, a Double's, a
// Boolean's, or for a table a HashMap's, the sum of its entries' (key's hash ^ value's). A
// table met again inside itself counts 0 (Java's hashCode would overflow its stack there).
func javaHash(v Value, inside map[*Table]bool) int32 {
	switch v := v.(type) {
	case string:
		return luakit.JavaStringHash(v)
	case float64:
		return luakit.JavaDoubleHash(v)
	case int:
		return luakit.JavaDoubleHash(float64(v))
	case bool:
		return luakit.JavaBooleanHash(v)
	case *Table:
		if inside[v] {
			return 0
		}
		if inside == nil {
			inside = map[*Table]bool{}
		}
		inside[v] = true
		defer delete(inside, v)
		var sum int32
		for i, k := range v.Keys {
			sum += javaHash(k, inside) ^ javaHash(v.Values[i], inside)
		}
		return sum
	}
	return 0
}
