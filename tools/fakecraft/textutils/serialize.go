package textutils

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luachunk"
	"fakecraft/luakit"
)

// maxNesting bounds how deep serialize recurses. CC has no such constant: its Lua
// serialiser recurses a call per table until the coroutine's stack overflows, but its
// indented output grows with the square of the depth (past 2000 levels it runs out of time
// first); fakecraft stops there so a program cannot make it build gigabytes. It is far
// deeper than real data. The JSON reader and writer, whose output grows with the depth alone,
// stop where CC's would: when the coroutine has no call frame left (jsonDepth).
const maxNesting = 1024

// jsonDepth is how deep textutils' JSON reader and writer may nest on L: a level for each call
// frame the running coroutine has left, as CC's Lua reader and writer take one call frame
// per level and overflow the coroutine's stack (32768 frames in Cobalt) past it.
func jsonDepth(L *lua.LState) int {
	return L.FramesLeft()
}

// Serialisation errors, raised at level 0 (no position), as CC raises them.
const (
	errRepeated  = "Cannot serialize table with repeated entries"
	errRecursive = "Cannot serialize table with recursive entries"
	errTooDeep   = "stack overflow"
)

// ccTextutilsChunk is the chunk CC's textutils runs as, as its errors show it: the bios
// loads the ROM's rom/apis/textutils.lua as "@/rom/apis/textutils.lua", whose short_src is
// "...rom/apis/textutils.lua".
var ccTextutilsChunk = luachunk.DisplayName("@/rom/apis/textutils.lua")

// The lines of CC 1.113.1's textutils.lua where an error the VM or another library raises
// inside it is placed (Cobalt places it at the Lua code that made the failing call; read by
// running CC's textutils.lua on Cobalt 0.9.3). A player sees the line, so fakecraft's Go
// textutils raises these errors with it, though it has no such file.
const (
	lineJSONOverflow           = 456 // serializeJSON: type(t), the first call of a table's level
	lineJSONKeyOverflow        = 450 // serializeJSON: a string key's gsub, deeper than the table's own calls
	lineJSONUnicodeKeyOverflow = 432 // the same with unicode_strings: the key's s:find comes first
	lineJSONInvalidUTF8        = 434 // serializeJSON with unicode_strings: utf8.codes of a string that is not UTF-8
	lineUnserializeOverflow    = 548 // unserializeJSON: skip's find, the deepest call of each level
)

// atCCLine is msg placed at a line of CC's textutils.lua.
func atCCLine(line int, msg string) string {
	return ccTextutilsChunk + ":" + strconv.Itoa(line) + ": " + msg
}

// luaKeywords are the reserved words that cannot be written as bare keys.
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "goto": true, "if": true, "in": true,
	"local": true, "nil": true, "not": true, "or": true, "repeat": true, "return": true,
	"then": true, "true": true, "until": true, "while": true,
}

// tableState is where a table is in a serialisation walk.
type tableState uint8

const (
	stateInProgress tableState = iota + 1 // on the current path: seeing it again is a cycle
	stateDone                             // already written: seeing it again is a repeat
)

// tracker detects repeated and recursive tables, as CC's serialisers do: every table may
// be written once unless repetitions are allowed, and never inside itself.
type tracker struct {
	L            *lua.LState
	seen         map[*lua.LTable]tableState
	allowRepeats bool
	depth        int
	maxDepth     int    // past it: stack overflow
	overflow     string // the stack overflow's message, placed where CC's is
}

func newTracker(L *lua.LState, allowRepeats bool, maxDepth int, overflow string) *tracker {
	return &tracker{L: L, seen: map[*lua.LTable]tableState{}, allowRepeats: allowRepeats, maxDepth: maxDepth, overflow: overflow}
}

func (tr *tracker) enter(t *lua.LTable) {
	switch tr.seen[t] {
	case stateInProgress:
		luakit.RaiseBare(tr.L, errRecursive)
	case stateDone:
		luakit.RaiseBare(tr.L, errRepeated)
	}
	tr.depth++
	if tr.depth > tr.maxDepth {
		luakit.RaiseBare(tr.L, tr.overflow)
	}
	tr.seen[t] = stateInProgress
}

func (tr *tracker) leave(t *lua.LTable) {
	tr.depth--
	if tr.allowRepeats {
		delete(tr.seen, t)
	} else {
		tr.seen[t] = stateDone
	}
}

// serializer writes textutils.serialize output.
type serializer struct {
	tr      *tracker
	compact bool
	b       strings.Builder
}

// serialize is textutils.serialize(t [, {compact, allow_repetitions}]).
func (a *api) serialize(L *lua.LState) int {
	v := L.Get(1)
	var opts *lua.LTable
	if o, ok := luakit.Expect(L, 2, "table", "nil").(*lua.LTable); ok {
		opts = o
	}
	s := &serializer{
		compact: optBool(L, opts, "compact", false),
		tr:      newTracker(L, optBool(L, opts, "allow_repetitions", false), maxNesting, errTooDeep),
	}
	s.value(v, "")
	L.Push(lua.LString(s.b.String()))
	return 1
}

func (s *serializer) value(v lua.LValue, indent string) {
	switch v := v.(type) {
	case *lua.LTable:
		s.table(v, indent)
	case lua.LString:
		s.b.WriteString(ccformat.Quote(string(v)))
	case lua.LNumber:
		s.b.WriteString(serializeNumber(float64(v)))
	case lua.LBool, *lua.LNilType:
		s.b.WriteString(v.String())
	default:
		luakit.RaiseBare(s.tr.L, "Cannot serialize type "+v.Type().String())
	}
}

// serializeNumber is tostring, except that the specials become expressions that
// unserialize can read back.
func serializeNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "0/0"
	case math.IsInf(f, 1):
		return "1/0"
	case math.IsInf(f, -1):
		return "-1/0"
	}
	return ccformat.FormatNumber(f)
}

func (s *serializer) table(t *lua.LTable, indent string) {
	s.tr.enter(t)
	defer s.tr.leave(t)
	if k, _ := t.Next(lua.LNil); k == lua.LNil {
		s.b.WriteString("{}")
		return
	}
	inner, nl, eq := indent+"  ", "\n", " = "
	if s.compact {
		inner, nl, eq = "", "", "="
	}
	s.b.WriteString("{" + nl)
	// The array part first, read raw and stopping at the first hole.
	n := 0
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			break
		}
		n = i
		s.b.WriteString(inner)
		s.value(v, inner)
		s.b.WriteString("," + nl)
	}
	// Then every other key in next order.
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if num, ok := k.(lua.LNumber); ok {
			f := float64(num)
			if f >= 1 && f <= float64(n) && f == math.Trunc(f) {
				continue
			}
		}
		s.b.WriteString(inner)
		if str, ok := k.(lua.LString); ok && isIdentifier(string(str)) {
			s.b.WriteString(string(str))
			s.b.WriteString(eq)
		} else {
			if s.compact {
				s.b.WriteString("[")
			} else {
				s.b.WriteString("[ ")
			}
			s.value(k, inner)
			if s.compact {
				s.b.WriteString("]=")
			} else {
				s.b.WriteString(" ] = ")
			}
		}
		s.value(v, inner)
		s.b.WriteString("," + nl)
	}
	s.b.WriteString(indent + "}")
}

// isIdentifier reports whether s can be written as a bare key: an ASCII Lua name that is
// not a reserved word.
func isIdentifier(s string) bool {
	if s == "" || luaKeywords[s] {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !alpha && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// unserializeChunkName is the chunk name CC gives the code unserialize loads.
const unserializeChunkName = "unserialize"

// unserialize is textutils.unserialize(s): it evaluates "return "..s with an empty
// environment and returns the first result, or nil on any failure (no message).
func (a *api) unserialize(L *lua.LState) int {
	s := string(luakit.Expect(L, 1, "string").(lua.LString))
	fn, err := L.Load(strings.NewReader("return "+s), unserializeChunkName)
	if err != nil {
		L.Push(lua.LNil)
		return 1
	}
	fn.Env = L.NewTable()
	top := L.GetTop()
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		L.SetTop(top)
		L.Push(lua.LNil)
		return 1
	}
	return 1
}
