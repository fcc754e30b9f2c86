package peripheral

import (
	lua "github.com/yuin/gopher-lua"
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
		out := L.CreateTable(0, len(t.Keys))
		seen[t] = out
		for i, k := range t.Keys {
			out.RawSet(importValue(L, k, seen), importValue(L, t.Values[i], seen))
		}
		return out
	}
	return lua.LNil
}
