package fsapi

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// Install sets the global `fs` table of CC: Tweaked's fs API on L.
func (f *FS) Install(L *lua.LState) {
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"list":         f.luaList,
		"exists":       f.luaExists,
		"isDir":        f.luaIsDir,
		"isReadOnly":   f.luaIsReadOnly,
		"getName":      luaGetName,
		"getDir":       luaGetDir,
		"getSize":      f.luaGetSize,
		"getFreeSpace": f.luaGetFreeSpace,
		"getCapacity":  f.luaGetCapacity,
		"makeDir":      f.luaMakeDir,
		"move":         f.luaMove,
		"copy":         f.luaCopy,
		"delete":       f.luaDelete,
		"combine":      luaCombine,
		"open":         f.luaOpen,
		"getDrive":     f.luaGetDrive,
		"attributes":   f.luaAttributes,
		"find":         f.luaFind,
		"isDriveRoot":  f.luaIsDriveRoot,
		"complete":     f.luaComplete,
	}
	L.SetFuncs(t, fns) // in the names' order: the same on every run
	L.SetGlobal("fs", t)
}

// ----- errors, worded as CC: Tweaked words them -----

// Argument checks follow CC: fs functions written in Java (most of them) take luakit's
// Java rule (StrictString, OptBool, OptLong); those CC writes in Lua (fs.find,
// fs.isDriveRoot, fs.complete) take cc.expect's (luakit.Expect).

// expectString is argument n of a Lua-written fs function, a string.
func expectString(L *lua.LState, n int) string {
	return string(luakit.Expect(L, n, "string").(lua.LString))
}

// raise throws an fs failure's message at the caller's position, as CC's LuaException.
func raise(L *lua.LState, msg string) {
	luakit.RaiseMessage(L, msg)
}

// coerce is the raw tostring (no __tostring) CC applies to what a handle writes.
func coerce(v lua.LValue) []byte { return []byte(luakit.Coerced(v)) }

// ----- fs functions -----

// locked runs fn with the filesystem lock held; Lua errors are raised after it returns so
// that the lock is never held across a panic.
func (f *FS) locked(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *FS) check(L *lua.LState, err error) {
	if err != nil {
		raise(L, err.Error())
	}
}

func stringList(L *lua.LState, items []string) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for i, s := range items {
		t.RawSetInt(i+1, lua.LString(s))
	}
	return t
}

func (f *FS) luaList(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var names []string
	var err error
	f.locked(func() { names, err = f.list(path) })
	f.check(L, err)
	L.Push(stringList(L, names))
	return 1
}

func (f *FS) luaExists(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var ok bool
	f.locked(func() { ok = f.exists(path) })
	L.Push(lua.LBool(ok))
	return 1
}

func (f *FS) luaIsDir(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var ok bool
	f.locked(func() { ok = f.isDir(path) })
	L.Push(lua.LBool(ok))
	return 1
}

func (f *FS) luaIsReadOnly(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var ok bool
	f.locked(func() { ok = f.isReadOnly(path) })
	L.Push(lua.LBool(ok))
	return 1
}

func luaGetName(L *lua.LState) int {
	L.Push(lua.LString(Name(luakit.StrictString(L, 1))))
	return 1
}

func luaGetDir(L *lua.LState) int {
	L.Push(lua.LString(Dir(luakit.StrictString(L, 1))))
	return 1
}

func luaCombine(L *lua.LState) int {
	parts := make([]string, L.GetTop())
	for i := range parts {
		parts[i] = luakit.StrictString(L, i+1)
	}
	if len(parts) == 0 {
		luakit.StrictString(L, 1)
	}
	L.Push(lua.LString(Combine(parts...)))
	return 1
}

func (f *FS) luaGetSize(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var size int64
	var err error
	f.locked(func() { size, err = f.getSize(path) })
	f.check(L, err)
	L.Push(lua.LNumber(size))
	return 1
}

func (f *FS) luaGetFreeSpace(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var free int64
	var err error
	f.locked(func() {
		var m *mountPoint
		if m, _, err = f.resolve(path); err == nil {
			free = m.free()
		}
	})
	f.check(L, err)
	L.Push(lua.LNumber(free))
	return 1
}

func (f *FS) luaGetCapacity(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var m *mountPoint
	var err error
	f.locked(func() { m, _, err = f.resolve(path) })
	f.check(L, err)
	if m.upper == nil {
		L.Push(lua.LNil)
	} else {
		L.Push(lua.LNumber(m.capacity))
	}
	return 1
}

func (f *FS) luaMakeDir(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var err error
	f.locked(func() { err = f.makeDir(path) })
	f.check(L, err)
	return 0
}

func (f *FS) luaDelete(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var err error
	f.locked(func() { err = f.delete(path) })
	f.check(L, err)
	return 0
}

func (f *FS) luaMove(L *lua.LState) int {
	src := Sanitise(luakit.StrictString(L, 1), false)
	dst := Sanitise(luakit.StrictString(L, 2), false)
	var err error
	f.locked(func() { err = f.move(src, dst) })
	f.check(L, err)
	return 0
}

func (f *FS) luaCopy(L *lua.LState) int {
	src := Sanitise(luakit.StrictString(L, 1), false)
	dst := Sanitise(luakit.StrictString(L, 2), false)
	var err error
	f.locked(func() { err = f.copy(src, dst) })
	f.check(L, err)
	return 0
}

func (f *FS) luaGetDrive(L *lua.LState) int {
	label, err := f.drive(Sanitise(luakit.StrictString(L, 1), false))
	f.check(L, err)
	L.Push(label)
	return 1
}

// drive is the label of the mount holding an existing path, or nil; a path that leaves the
// root is an error ("/..: Invalid Path"), as in CC.
func (f *FS) drive(path string) (lua.LValue, error) {
	var label lua.LValue = lua.LNil
	var err error
	f.locked(func() {
		var m *mountPoint
		if m, _, err = f.resolve(path); err == nil && f.exists(path) {
			label = lua.LString(m.label)
		}
	})
	return label, err
}

func (f *FS) luaIsDriveRoot(L *lua.LState) int {
	path := expectString(L, 1)
	// As CC decides it: the root (or anything whose parent is above the root, "../x") is
	// a drive root, and so is a path on another drive than its parent.
	parent := Dir(path)
	if parent == ".." {
		L.Push(lua.LTrue)
		return 1
	}
	own, err := f.drive(Sanitise(path, false))
	f.check(L, err)
	up, err := f.drive(Sanitise(parent, false))
	f.check(L, err)
	L.Push(lua.LBool(own != up))
	return 1
}

func (f *FS) luaAttributes(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	var e entry
	var readOnly bool
	var err error
	f.locked(func() {
		if e, err = f.stat(path); err == nil && !e.exists {
			err = pathErr(path, msgNoSuchFile)
		}
		readOnly = f.isReadOnly(path)
	})
	f.check(L, err)
	// CC's FSAPI.attributes: a HashMap, in this order, copied as CC copies a map. The host
	// gives no portable creation time; the modification time stands in for it.
	L.Push(luakit.JavaMap(L, luakit.JavaDefaultCapacity,
		luakit.MapEntry{Key: "modification", Value: lua.LNumber(e.modified)},
		luakit.MapEntry{Key: "modified", Value: lua.LNumber(e.modified)},
		luakit.MapEntry{Key: "created", Value: lua.LNumber(e.modified)},
		luakit.MapEntry{Key: "size", Value: lua.LNumber(e.size)},
		luakit.MapEntry{Key: "isDir", Value: lua.LBool(e.dir)},
		luakit.MapEntry{Key: "isReadOnly", Value: lua.LBool(readOnly)}))
	return 1
}

func (f *FS) luaOpen(L *lua.LState) int {
	path := Sanitise(luakit.StrictString(L, 1), false)
	modeName := luakit.StrictString(L, 2)
	mode, ok := openModes[modeName]
	if !ok {
		raise(L, msgUnsupportedMode)
	}
	var h *handle
	var err error
	f.locked(func() {
		if len(f.open) >= MaxOpenFiles {
			err = plainError(msgTooManyOpen)
			return
		}
		if mode.write {
			h, err = f.openWrite(path, mode)
		} else {
			h, err = f.openRead(path, mode)
		}
	})
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(handleTable(L, h))
	return 1
}

// ----- file handles -----

// handleTable builds the Lua side of a handle. Like CC's, its methods are plain functions
// called with a dot (h.readLine()); a colon call passes the handle as the first argument,
// which CC rejects wherever that argument is type-checked. As in CC the arguments are
// converted first, then a closed handle is refused, then the values are checked.
func handleTable(L *lua.LState, h *handle) *lua.LTable {
	t := L.CreateTable(0, 8)
	set := func(name string, fn lua.LGFunction) { t.RawSetString(name, L.NewFunction(fn)) }
	// run performs op on an open handle under the lock, then raises op's failure, or CC's
	// closed-file error, at the caller (never while holding the lock).
	run := func(L *lua.LState, op func() error) {
		var err error
		h.locked(func() {
			if h.closed {
				err = errors.New(msgClosedFile)
				return
			}
			err = op()
		})
		if err != nil {
			raise(L, err.Error())
		}
	}
	if h.mode.read {
		set("read", func(L *lua.LState) int {
			count, hasCount := luakit.OptLong(L, 1)
			var result lua.LValue = lua.LNil
			run(L, func() error {
				switch {
				case !hasCount:
					if b := h.readUpTo(1); len(b) == 1 {
						if h.mode.binary {
							result = lua.LNumber(b[0])
						} else {
							result = lua.LString(b)
						}
					}
				case count < 0:
					return errors.New(msgNegativeRead)
				case count == 0:
					if !h.atEnd() {
						result = lua.LString("")
					}
				default:
					if b := h.readUpTo(count); len(b) > 0 {
						result = lua.LString(b)
					}
				}
				return nil
			})
			L.Push(result)
			return 1
		})
		set("readAll", func(L *lua.LState) int {
			var result []byte
			run(L, func() error { result = h.readUpTo(h.size); return nil })
			L.Push(lua.LString(result))
			return 1
		})
		set("readLine", func(L *lua.LState) int {
			withTrailing := luakit.OptBool(L, 1, false)
			var result lua.LValue = lua.LNil
			run(L, func() error {
				if line, ok := h.readLine(withTrailing); ok {
					result = lua.LString(line)
				}
				return nil
			})
			L.Push(result)
			return 1
		})
	}
	if h.mode.write {
		write := func(L *lua.LState, newline bool) {
			run(L, func() error {
				v := L.Get(1)
				var data []byte
				if n, ok := v.(lua.LNumber); ok && h.mode.binary && !newline {
					data = []byte{byte(int64(float64(n)))}
				} else {
					data = coerce(v)
				}
				if newline {
					data = append(data, '\n')
				}
				return h.writeBytes(data)
			})
		}
		set("write", func(L *lua.LState) int { write(L, false); return 0 })
		set("writeLine", func(L *lua.LState) int { write(L, true); return 0 })
		// Writes reach the host file at once, so there is nothing left to flush.
		set("flush", func(L *lua.LState) int { run(L, func() error { return nil }); return 0 })
	}
	// An append handle cannot seek: CC gives it no seek method (FSAPI.open, "a" and "ab").
	if !h.mode.append {
		set("seek", seek(h, run))
	}
	set("close", func(L *lua.LState) int {
		run(L, func() error { h.close(); return nil })
		return 0
	})
	return t
}

// seek is a handle's seek([whence [, offset]]).
func seek(h *handle, run func(*lua.LState, func() error)) lua.LGFunction {
	return func(L *lua.LState) int {
		whence := luakit.OptStrictString(L, 1, "cur")
		offset, _ := luakit.OptLong(L, 2)
		var pos int64
		var msg string
		run(L, func() error {
			if whence != "set" && whence != "cur" && whence != "end" {
				return fmt.Errorf(msgInvalidWhence, whence)
			}
			pos, msg = h.seek(whence, offset)
			return nil
		})
		if msg != "" {
			L.Push(lua.LNil)
			L.Push(lua.LString(msg))
			return 2
		}
		L.Push(lua.LNumber(pos))
		return 1
	}
}

// ----- find and complete (Lua functions in CC's bios; same behaviour here) -----

func (f *FS) luaFind(L *lua.LState) int {
	pattern := Combine(expectString(L, 1))
	if escapes(pattern) {
		raise(L, "/"+pattern+": Invalid Path")
	}
	var out []string
	f.locked(func() { out = f.find(pattern) })
	L.Push(stringList(L, out))
	return 1
}

// find lists the paths matching a sanitised pattern whose components may hold `*` (any
// run of characters) and `?` (one character), in directory-listing order.
func (f *FS) find(pattern string) []string {
	if !strings.ContainsAny(pattern, "*?") {
		if f.exists(pattern) {
			return []string{pattern}
		}
		return []string{}
	}
	parts := strings.Split(pattern, "/")
	out := []string{}
	var walk func(dir string, i int)
	walk = func(dir string, i int) {
		if i == len(parts) {
			if f.exists(dir) {
				out = append(out, dir)
			}
			return
		}
		part := parts[i]
		if !strings.ContainsAny(part, "*?") {
			walk(join(dir, part), i+1)
			return
		}
		if !f.isDir(dir) {
			return
		}
		names, _ := f.list(dir)
		for _, name := range names {
			if wildcardMatch(part, name) {
				walk(join(dir, name), i+1)
			}
		}
	}
	walk("", 0)
	return out
}

// wildcardMatch matches a whole name against a pattern of literal bytes, `*` and `?`.
func wildcardMatch(pattern, name string) bool {
	if pattern == "" {
		return name == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(name); i++ {
			if wildcardMatch(pattern[1:], name[i:]) {
				return true
			}
		}
		return false
	case '?':
		return name != "" && wildcardMatch(pattern[1:], name[1:])
	default:
		return name != "" && name[0] == pattern[0] && wildcardMatch(pattern[1:], name[1:])
	}
}

// completeOptions are fs.complete's switches; each defaults to true.
type completeOptions struct {
	files, dirs, hidden bool
}

func (f *FS) luaComplete(L *lua.LState) int {
	text := expectString(L, 1)
	location := expectString(L, 2)
	var files, dirs, hidden lua.LValue
	if t, ok := L.Get(3).(*lua.LTable); ok {
		// CC reads the fields in this order, so the first bad one is reported.
		dirs = luakit.ExpectField(L, t, "include_dirs", "boolean", "nil")
		hidden = luakit.ExpectField(L, t, "include_hidden", "boolean", "nil")
		files = luakit.ExpectField(L, t, "include_files", "boolean", "nil")
	} else {
		files = luakit.Expect(L, 3, "boolean", "nil")
		dirs = luakit.Expect(L, 4, "boolean", "nil")
	}
	// Each switch is on unless it is false.
	opts := completeOptions{files: files != lua.LFalse, dirs: dirs != lua.LFalse, hidden: hidden != lua.LFalse}
	var out []string
	f.locked(func() { out = f.complete(text, location, opts) })
	L.Push(stringList(L, out))
	return 1
}

// complete returns the suffixes that would complete text (relative to location, or to the
// root when text starts with a slash) into an existing name; directories come with a "/".
func (f *FS) complete(text, location string, opts completeOptions) []string {
	dir, rest := location, text
	if rest != "" && (rest[0] == '/' || rest[0] == '\\') {
		dir, rest = "", rest[1:]
	}
	name := rest
	if i := strings.LastIndexAny(rest, "/\\"); i >= 0 {
		for _, part := range strings.FieldsFunc(rest[:i], func(r rune) bool { return r == '/' || r == '\\' }) {
			dir = Combine(dir, part)
		}
		name = rest[i+1:]
	}
	dir = Sanitise(dir, false)
	if !f.isDir(dir) {
		return []string{}
	}
	out := []string{}
	if opts.dirs && text == "" {
		out = append(out, ".")
	}
	if dir != "" {
		switch text {
		case "":
			out = append(out, pick(opts.dirs, "..", "../"))
		case ".":
			out = append(out, pick(opts.dirs, ".", "./"))
		}
	}
	names, _ := f.list(dir)
	for _, entry := range names {
		if !strings.HasPrefix(entry, name) {
			continue
		}
		if !opts.hidden && strings.HasPrefix(entry, ".") && !strings.HasPrefix(name, ".") {
			continue
		}
		suffix := entry[len(name):]
		if f.isDir(join(dir, entry)) {
			out = append(out, suffix+"/")
			if opts.dirs && suffix != "" {
				out = append(out, suffix)
			}
		} else if opts.files && suffix != "" {
			out = append(out, suffix)
		}
	}
	return out
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}
