package world

import (
	"errors"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/computer"
	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// periphemu installs CraftOS-PC's periphemu API, so tests written for CraftOS-PC attach
// and detach peripherals here unchanged:
//
//	periphemu.create(side, type [, args...]) -> true | false, message
//	periphemu.remove(side) -> boolean
//	periphemu.names() -> { type... }
//
// As in CraftOS-PC, a number (or a string of digits) for side means the name TYPE_N
// ("monitor_2"), and a name that is not a side is reached by that name through the
// peripheral API. The arguments after type are those of the kind (Kinds), numbers as CC
// writes them.
//
// CraftOS-PC has no cables; fakecraft's own two functions put a peripheral on a named cable
// (a world file's cables), where a wired modem on that cable (periphemu.create(side,
// "wired_modem", cable)) reaches it by its network name, as a player's modem on the
// block does in CC, so a spec can draw on a cable's monitor_0 without a world file:
//
//	periphemu.createRemote(cable, name, type [, args...]) -> true | false, message
//	periphemu.removeRemote(cable, name) -> boolean
func (p *Place) periphemu(L *lua.LState, _ *computer.Env) error {
	fns := map[string]lua.LGFunction{
		"create": func(L *lua.LState) int {
			// The side is checked first: periphemu.create() is about argument #1.
			if _, ok := L.Get(1).(lua.LString); !ok {
				if _, ok := L.Get(1).(lua.LNumber); !ok {
					luakit.ArgError(L, 1, "string or number")
				}
			}
			kind := craftosString(L, 2)
			name := sideArgument(L, kind)
			return created(L, p.attach(name, kindSpec(L, kind, 3), true, ""))
		},
		"remove": func(L *lua.LState) int {
			L.Push(lua.LBool(p.Detach(craftosString(L, 1))))
			return 1
		},
		"createRemote": func(L *lua.LState) int {
			cable, name, kind := craftosString(L, 1), craftosString(L, 2), craftosString(L, 3)
			per, err := site{w: p.w, fromLua: true}.make(kindSpec(L, kind, 4))
			if err == nil {
				if err = p.w.Cable(cable).AttachRemote(name, per); err != nil {
					discard(per)
				}
			}
			return created(L, err)
		},
		"removeRemote": func(L *lua.LState) int {
			L.Push(lua.LBool(p.w.Cable(craftosString(L, 1)).DetachRemote(craftosString(L, 2))))
			return 1
		},
		"names": func(L *lua.LState) int {
			names := KindNames()
			t := L.CreateTable(len(names), 0)
			for _, n := range names {
				t.Append(lua.LString(n))
			}
			L.Push(t)
			return 1
		},
	}
	t := L.CreateTable(0, len(fns))
	L.SetFuncs(t, fns) // in the names' order: the same on every run
	L.SetGlobal("periphemu", t)
	return nil
}

// kindSpec is a peripheral spec (TYPE[:ARG...], as Kinds read it) of kind and the
// arguments from the from-th on.
func kindSpec(L *lua.LState, kind string, from int) string {
	parts := []string{kind}
	for i := from; i <= L.GetTop(); i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			parts = append(parts, string(v))
		case lua.LNumber:
			parts = append(parts, ccformat.FormatNumber(float64(v)))
		default:
			luakit.ArgError(L, i, "string or number")
		}
	}
	return strings.Join(parts, ":")
}

// created answers a create: true, or false and why, in CraftOS-PC's words.
func created(L *lua.LState, err error) int {
	if err != nil {
		var taken peripheral.ErrTaken
		if !errors.As(err, &taken) && !strings.HasPrefix(err.Error(), "No peripheral named") {
			err = errors.New("Could not create peripheral: " + err.Error())
		}
		L.Push(lua.LFalse)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(lua.LTrue)
	return 1
}

// sideArgument is periphemu.create's first argument as a name: a side, a name, or a
// number (or digits) meaning kind_N.
func sideArgument(L *lua.LState, kind string) string {
	switch v := L.Get(1).(type) {
	case lua.LNumber:
		return kind + "_" + ccformat.FormatNumber(float64(v))
	case lua.LString:
		s := string(v)
		if s != "" && strings.Trim(s, "0123456789") == "" {
			return kind + "_" + s
		}
		return s
	}
	luakit.ArgError(L, 1, "string or number")
	return ""
}

// craftosString is argument n as CraftOS-PC's luaL_checkstring reads it, a number as its
// text, refused in PUC Lua's words (periphemu runs on PUC Lua there, not on Cobalt).
func craftosString(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(v))
	}
	luakit.ArgError(L, n, "string")
	return ""
}
