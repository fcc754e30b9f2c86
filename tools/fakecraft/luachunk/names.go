package luachunk

import (
	"runtime"
	"strings"
	"sync"
	"weak"

	lua "github.com/yuin/gopher-lua"
)

// A Lua chunk has a name ("@/path" for a file, "=name" for a name shown as it is, anything
// else is source text) and a display name that error positions and debug's short_src show.
// gopher-lua keeps one SourceName per prototype and prints it in error positions, so it
// gets the display name; the chunk name, which debug.getinfo reports as `source`, is kept
// here beside the prototype.

// displayRoom is the room C Lua's luaO_chunkid leaves for source text inside
// [string "..."] (LUA_IDSIZE 60, less the brackets, quotes, "..." and the terminator).
const displayRoom = 45

// DisplayName is Lua's short_src of a chunk name: "@path" and "=name" lose their marker;
// source text becomes [string "first line"], with "..." when it was cut.
func DisplayName(chunkName string) string {
	if strings.HasPrefix(chunkName, "@") || strings.HasPrefix(chunkName, "=") {
		return chunkName[1:]
	}
	line, _, cut := strings.Cut(chunkName, "\n")
	if cut || len(line) >= displayRoom {
		if len(line) > displayRoom {
			line = line[:displayRoom]
		}
		line += "..."
	}
	return `[string "` + line + `"]`
}

// chunkNames maps prototypes of chunks whose name is not "@" plus the display name to that
// name. Entries go when their prototype is collected.
var chunkNames sync.Map // weak.Pointer[lua.FunctionProto] -> string

// rememberName records chunkName for p and the functions defined inside it.
func rememberName(p *lua.FunctionProto, chunkName string) {
	key := weak.Make(p)
	if _, loaded := chunkNames.LoadOrStore(key, chunkName); !loaded {
		runtime.AddCleanup(p, func(k weak.Pointer[lua.FunctionProto]) { chunkNames.Delete(k) }, key)
	}
	for _, child := range p.FunctionPrototypes {
		rememberName(child, chunkName)
	}
}

// Source is the chunk name a function was loaded under, as debug.getinfo's `source`
// reports it: the name given to Load, or "@" and the display name for chunks compiled
// elsewhere.
func Source(p *lua.FunctionProto) string {
	if name, ok := chunkNames.Load(weak.Make(p)); ok {
		return name.(string)
	}
	return "@" + p.SourceName
}
