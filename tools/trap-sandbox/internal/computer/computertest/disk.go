// Package computertest holds the test stand-ins of a computer for the packages built on
// internal/computer: Disk, a Transport answering the fs.* vocabulary as the Lua daemon does.
package computertest

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// Disk is a computer.Transport to one computer, "7:", answering ping and fs.* as the Lua daemon
// does (libsandboxfiles) on an in-memory drive, with CC's messages and CC's path rules (a
// leading slash dropped, each name cut at 255 bytes). Hooks let a test break a sequence.
// Fields are guarded by mu once requests run; set them before.
type Disk struct {
	mu    sync.Mutex
	files map[string][]byte // CC path without the leading slash → contents
	dirs  map[string]bool
	// OldClient answers fs.move as a client older than overwrite does.
	OldClient bool
	// FailWrite makes the nth fs.write fail with Out of space (0: none).
	FailWrite int
	writes    int
	// Before runs before each request is served; After runs after. Either may return an
	// error, which the request then returns (Before: not served; After: served, answer lost).
	Before, After func(ctx context.Context, step int, typ string) error
	// Answer, when set, answers a type the Disk does not serve (or returns nil to let it).
	Answer  func(typ string, payload map[string]any) (json.RawMessage, error)
	steps   int
	movedIn bool
	log     []Request
	// List is the computer list Computers returns.
	List []computer.Computer
}

// Request is one request the Disk received.
type Request struct {
	Type    string
	Payload map[string]any
	Timeout time.Duration
}

// NewDisk returns a Disk holding files (host paths as CC bytes → contents).
func NewDisk(files map[string]string) *Disk {
	d := &Disk{files: map[string][]byte{}, dirs: map[string]bool{"": true}, List: []computer.Computer{{AccountID: "local", TraposID: "7:"}}}
	for p, data := range files {
		d.files[ccPath(p)] = []byte(data)
		for dir := parent(ccPath(p)); dir != ""; dir = parent(dir) {
			d.dirs[dir] = true
		}
	}
	return d
}

func parent(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// ccPath is p as CC's sanitizePath leaves it: no leading or doubled slash, each name cut
// at 255 bytes.
func ccPath(p string) string {
	var parts []string
	for _, part := range strings.Split(p, "/") {
		if part == "" {
			continue
		}
		if len(part) > 255 {
			part = part[:255]
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "/")
}

// File returns the contents at p (CC bytes) and whether it exists.
func (d *Disk) File(p string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.files[ccPath(p)]
	return data, ok
}

// Names lists every file's path, sorted.
func (d *Disk) Names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for p := range d.files {
		out = append(out, "/"+p)
	}
	sort.Strings(out)
	return out
}

// Types lists the types of the requests received, in order.
func (d *Disk) Types() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, r := range d.log {
		out = append(out, r.Type)
	}
	return out
}

// Log returns the requests received, in order.
func (d *Disk) Log() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Request(nil), d.log...)
}

// Writes is how many fs.write requests have been served (FailWrite counts them too).
func (d *Disk) Writes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writes
}

// Moved reports whether an fs.move has run.
func (d *Disk) Moved() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.movedIn
}

// Computers implements computer.Transport.
func (d *Disk) Computers(context.Context) ([]computer.Computer, error) { return d.List, nil }

// Request implements computer.Transport.
func (d *Disk) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if traposID != "7:" {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected", traposID)
	}
	var p map[string]any
	if err := json.Unmarshal(payload, &p); err != nil {
		panic(err)
	}
	d.mu.Lock()
	d.steps++
	step := d.steps
	d.log = append(d.log, Request{typ, p, timeout})
	before, after := d.Before, d.After
	d.mu.Unlock()
	if before != nil {
		if err := before(ctx, step, typ); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	answer, err := d.serve(typ, p)
	d.mu.Unlock()
	if after != nil {
		if err := after(ctx, step, typ); err != nil {
			return nil, err
		}
	}
	return answer, err
}

func (d *Disk) serve(typ string, p map[string]any) (json.RawMessage, error) {
	path := func(name string) string {
		b, err := protocol.BytesOfWire(p[name].(string))
		if err != nil {
			panic(err)
		}
		return ccPath(string(b))
	}
	fail := func(msg string) (json.RawMessage, error) {
		return nil, &protocol.Error{Code: protocol.CodeFSError, Message: msg, ByComputer: true}
	}
	ok := func(v any) (json.RawMessage, error) {
		b, err := json.Marshal(v)
		return b, err
	}
	switch typ {
	case protocol.TypePing:
		return ok(map[string]any{"traposId": "7:"})
	case protocol.TypeFSList:
		dir := path("path")
		if !d.dirs[dir] {
			if _, isFile := d.files[dir]; isFile {
				return fail("/" + dir + ": Not a directory")
			}
			return fail("/" + dir + ": No such file")
		}
		entries := []map[string]any{}
		for name, data := range d.files {
			if parent(name) == dir {
				base := strings.TrimPrefix(name[len(dir):], "/")
				entries = append(entries, map[string]any{"name": protocol.WireOfBytes([]byte(base)), "isDir": false, "size": len(data)})
			}
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i]["name"].(string) < entries[j]["name"].(string) }) // as CC's fs.list
		return ok(map[string]any{"entries": entries})
	case protocol.TypeFSRead:
		data, found := d.files[path("path")]
		if !found {
			return fail("/" + path("path") + ": No such file")
		}
		offset := int(p["offset"].(float64))
		end := min(offset+int(p["length"].(float64)), len(data))
		return ok(map[string]any{"data": protocol.WireOfBytes(data[offset:end]), "size": len(data), "eof": end == len(data)})
	case protocol.TypeFSWrite:
		d.writes++
		if d.writes == d.FailWrite {
			return fail("/" + path("path") + ": Out of space")
		}
		if d.dirs[path("path")] {
			return fail("/" + path("path") + ": Cannot write to directory")
		}
		data, _ := protocol.BytesOfWire(p["data"].(string))
		if p["append"] == true {
			data = append(append([]byte(nil), d.files[path("path")]...), data...)
		}
		d.files[path("path")] = data
		return ok(map[string]any{"size": len(data)})
	case protocol.TypeFSDelete:
		target := path("path")
		if d.dirs[target] {
			for name := range d.files {
				if strings.HasPrefix(name, target+"/") {
					delete(d.files, name)
				}
			}
			delete(d.dirs, target)
			return ok(map[string]any{})
		}
		if _, found := d.files[target]; !found {
			return fail("/" + target + ": No such file")
		}
		delete(d.files, target)
		return ok(map[string]any{})
	case protocol.TypeFSMove:
		from, to := path("from"), path("to")
		if _, found := d.files[from]; !found {
			return fail("No such file")
		}
		if p["overwrite"] == true && !d.OldClient {
			if d.dirs[to] {
				return fail("/" + to + ": Cannot write to directory")
			}
			delete(d.files, to)
		}
		if _, found := d.files[to]; found || d.dirs[to] {
			return fail("File exists")
		}
		d.files[to] = d.files[from]
		delete(d.files, from)
		d.movedIn = true
		return ok(map[string]any{})
	}
	if d.Answer != nil {
		if answer, err := d.Answer(typ, p); answer != nil || err != nil {
			return answer, err
		}
	}
	return nil, &protocol.Error{Code: protocol.CodeUnknownType, Message: "this computer does not handle requests of type " + typ, ByComputer: true}
}
