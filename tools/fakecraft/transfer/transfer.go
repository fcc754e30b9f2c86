// Package transfer makes CC: Tweaked's file_transfer event: what a computer receives when
// a player drops files on its screen. The event's one argument is a TransferredFiles
// object; its getFiles() lists one TransferredFile per file, a binary read handle on the
// file's bytes (read, readAll, readLine, seek, close) with getName added. As in CC every
// method is a plain function called with a dot (file.read(8192)).
package transfer

import (
	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccstr"
	"fakecraft/fsapi"
	"fakecraft/host"
)

// Event is the event's name.
const Event = "file_transfer"

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

// fileObject is one TransferredFile: fs's binary read handle on the file's bytes, with
// getName added, as CC's TransferredFile extends its ReadHandle.
func fileObject(L *lua.LState, f File) *lua.LTable {
	t := fsapi.ReadHandle(L, f.Data, true)
	name := ccstr.FromText(f.Name)
	t.RawSetString("getName", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(name))
		return 1
	}))
	return t
}
