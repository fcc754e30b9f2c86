// Package transfer makes CC: Tweaked's file_transfer event: what a computer receives when
// a player drops files on its screen. The event's one argument is a TransferredFiles
// object; its getFiles() lists one TransferredFile per file, a binary read handle on the
// file's bytes (read, readAll, readLine, seek, close) with getName added. As in CC every
// method is a plain function called with a dot (file.read(8192)).
package transfer

import (
	"bytes"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccstr"
	"fakecraft/host"
	"fakecraft/luakit"
)

// Event is the event's name.
const Event = "file_transfer"

// Messages of CC's read handles.
const (
	msgClosedFile    = "attempt to use a closed file"
	msgNegativeRead  = "Cannot read a negative number of bytes"
	msgNegativeSeek  = "Position is negative"
	msgInvalidWhence = "bad argument #1 to 'seek' (invalid option '%s'" // sic: CC's lacks the ')'
)

// File is one dropped file.
type File struct {
	// Name is the file's name without a directory, as the player's client sends it
	// (UTF-8 text; it reaches Lua as CC's bytes).
	Name string
	// Data is the file's contents.
	Data []byte
}

// Queue drops files on the computer: one file_transfer event carrying them all. Safe from
// any goroutine; the objects are built on the Lua goroutine.
func Queue(h host.Host, files []File) {
	h.Do(func(L *lua.LState) {
		h.QueueEvent(Event, Files(L, files))
	})
}

// Files builds the TransferredFiles object for files. Lua goroutine only.
func Files(L *lua.LState, files []File) *lua.LTable {
	objects := make([]*lua.LTable, len(files))
	for i, f := range files {
		objects[i] = fileObject(L, f)
	}
	obj := L.CreateTable(0, 1)
	// Like CC's, each call hands over a new list of the same file objects.
	obj.RawSetString("getFiles", L.NewFunction(func(L *lua.LState) int {
		list := L.CreateTable(len(objects), 0)
		for _, o := range objects {
			list.Append(o)
		}
		L.Push(list)
		return 1
	}))
	return obj
}

// reader is the read position over one file's bytes.
type reader struct {
	data   []byte
	pos    int
	closed bool
}

// rest is what is left to read; nothing once the position is at or past the end.
func (r *reader) rest() []byte {
	if r.pos >= len(r.data) {
		return nil
	}
	return r.data[r.pos:]
}

// take returns up to n bytes from the position and moves past them.
func (r *reader) take(n int) []byte {
	b := r.rest()
	b = b[:min(n, len(b))]
	r.pos += len(b)
	return b
}

// fileObject is one TransferredFile: getName plus the methods of CC's binary read handle.
func fileObject(L *lua.LState, f File) *lua.LTable {
	r := &reader{data: f.Data}
	t := L.CreateTable(0, 6)
	set := func(name string, fn lua.LGFunction) { t.RawSetString(name, L.NewFunction(fn)) }
	// open raises CC's closed-file error once the handle is closed.
	open := func(L *lua.LState) {
		if r.closed {
			luakit.Raise(L, "%s", msgClosedFile)
		}
	}
	name := ccstr.FromText(f.Name)
	set("getName", func(L *lua.LState) int {
		L.Push(lua.LString(name))
		return 1
	})
	set("read", func(L *lua.LState) int {
		open(L)
		if L.Get(1) == lua.LNil {
			// No count: one byte, as a number (a binary handle).
			if b := r.take(1); len(b) == 1 {
				L.Push(lua.LNumber(b[0]))
			} else {
				L.Push(lua.LNil)
			}
			return 1
		}
		long, _ := luakit.OptLong(L, 1)
		count := int(min(long, int64(len(r.data)+1)))
		switch {
		case count < 0:
			luakit.Raise(L, "%s", msgNegativeRead)
		case len(r.rest()) == 0:
			L.Push(lua.LNil)
		default:
			L.Push(lua.LString(r.take(count)))
		}
		return 1
	})
	set("readAll", func(L *lua.LState) int {
		open(L)
		L.Push(lua.LString(r.take(len(r.data))))
		return 1
	})
	set("readLine", func(L *lua.LState) int {
		open(L)
		withTrailing := luakit.OptBool(L, 1, false)
		rest := r.rest()
		if len(rest) == 0 {
			L.Push(lua.LNil)
			return 1
		}
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			L.Push(lua.LString(r.take(len(rest))))
			return 1
		}
		line := r.take(end + 1)
		if !withTrailing {
			line = bytes.TrimSuffix(line[:end], []byte{'\r'})
		}
		L.Push(lua.LString(line))
		return 1
	})
	set("seek", func(L *lua.LState) int {
		open(L)
		whence := luakit.OptStrictString(L, 1, "cur")
		offset, _ := luakit.OptLong(L, 2)
		var base int64
		switch whence {
		case "set":
		case "cur":
			base = int64(r.pos)
		case "end":
			base = int64(len(r.data))
		default:
			luakit.Raise(L, msgInvalidWhence, whence)
		}
		target := base + offset
		if target < 0 {
			L.Push(lua.LNil)
			L.Push(lua.LString(msgNegativeSeek))
			return 2
		}
		r.pos = int(target) // past the end reads nothing, as a file's would
		L.Push(lua.LNumber(target))
		return 1
	})
	set("close", func(L *lua.LState) int {
		open(L)
		r.closed = true
		return 0
	})
	return t
}
