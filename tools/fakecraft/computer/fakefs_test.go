package computer

import (
	"io/fs"
	"path"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/romfs"
)

// memFS is a read-only in-memory fs API, just enough for the bios (loadfile, os.loadAPI),
// so the core is tested without the fsapi package. It holds the ROM's term API (and the
// cc.expect it loads), which the bios leaves the native term to, as CC's does.
type memFS map[string]string

// romTermFiles are the ROM files every memFS holds: the term API and what it loads.
var romTermFiles = []string{"apis/term.lua", "modules/main/cc/expect.lua"}

func clean(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

// isDir says whether p is a directory of files (cleaned paths to contents).
func isDir(files map[string]string, p string) bool {
	p = clean(p)
	if p == "" {
		return true
	}
	for k := range files {
		if strings.HasPrefix(clean(k), p+"/") {
			return true
		}
	}
	return false
}

func (m memFS) install(L *lua.LState, _ *Env) error {
	files := map[string]string{}
	for _, name := range romTermFiles {
		src, err := fs.ReadFile(romfs.ROM(), name)
		if err != nil {
			return err
		}
		files["rom/"+name] = string(src)
	}
	for k, v := range m {
		files[clean(k)] = v
	}
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"combine": func(L *lua.LState) int {
			parts := []string{}
			for i := 1; i <= L.GetTop(); i++ {
				parts = append(parts, L.CheckString(i))
			}
			L.Push(lua.LString(clean(path.Join(parts...))))
			return 1
		},
		"getName": func(L *lua.LState) int {
			L.Push(lua.LString(path.Base("/" + clean(L.CheckString(1)))))
			return 1
		},
		"exists": func(L *lua.LState) int {
			p := clean(L.CheckString(1))
			_, ok := files[p]
			L.Push(lua.LBool(ok || isDir(files, p)))
			return 1
		},
		"isDir": func(L *lua.LState) int { L.Push(lua.LBool(isDir(files, L.CheckString(1)))); return 1 },
		"list": func(L *lua.LState) int {
			dir := clean(L.CheckString(1))
			seen := map[string]bool{}
			for k := range files {
				rest, ok := strings.CutPrefix(k, dir+"/")
				if dir == "" {
					rest, ok = k, true
				}
				if ok {
					seen[strings.Split(rest, "/")[0]] = true
				}
			}
			names := []string{}
			for n := range seen {
				names = append(names, n)
			}
			sort.Strings(names)
			out := L.NewTable()
			for _, n := range names {
				out.Append(lua.LString(n))
			}
			L.Push(out)
			return 1
		},
		"open": func(L *lua.LState) int {
			content, ok := files[clean(L.CheckString(1))]
			if !ok {
				L.Push(lua.LNil)
				L.Push(lua.LString("/" + clean(L.CheckString(1)) + ": No such file"))
				return 2
			}
			h := L.NewTable()
			h.RawSetString("readAll", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString(content)); return 1 }))
			h.RawSetString("close", L.NewFunction(func(L *lua.LState) int { return 0 }))
			L.Push(h)
			return 1
		},
	})
	L.SetGlobal("fs", t)
	return nil
}
