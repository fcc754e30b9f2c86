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

// Cobalt 0.9.3's LoadState.getShortName (CC 1.113.1's Lua; read from its source and run)
// writes a chunk's short_src into 30 bytes, where C Lua's luaO_chunkid has 60.
const (
	displayNameRoom = 29 // "=name": its first 29 bytes
	displayFileRoom = 22 // "@path": a longer path is "..." and its last 22 bytes
	displayTextRoom = 13 // source text: [string "..."] holds 13 bytes of its first line
)

// DisplayName is Cobalt's short_src of a chunk name, as error positions and debug's
// short_src show it: "=name" loses its marker (cut to 29 bytes); "@path" too, a path of more
// than 22 bytes becoming "..." and its last 22 ("...s/libsandboxscreen.lua" for
// "@/apis/libsandboxscreen.lua"); source text becomes [string "first line"], with "..."
// when it was cut at a line break or at 13 bytes.
func DisplayName(chunkName string) string {
	switch {
	case chunkName == "":
		return `[string ""]`
	case strings.HasPrefix(chunkName, "="):
		return chunkName[1:min(len(chunkName), displayNameRoom+1)]
	case strings.HasPrefix(chunkName, "@"):
		if path := chunkName[1:]; len(path) > displayFileRoom {
			return "..." + chunkName[len(chunkName)-displayFileRoom:]
		}
		return chunkName[1:]
	}
	line := chunkName
	cut := false
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line, cut = line[:i], true
	}
	if len(line) > displayTextRoom {
		line, cut = line[:displayTextRoom], true
	}
	if cut {
		line += "..."
	}
	return `[string "` + line + `"]`
}

// chunkNames maps prototypes of chunks whose name is not "@" plus the display name to that
// name (source text, "=name", a long path). Entries go when their prototype is collected.
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
