package computer

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	"trap-sandbox/internal/protocol"
)

// disk is a Transport to one computer, "7:", answering fs.* as the Lua daemon does
// (libsandboxfiles) on an in-memory drive with CC's messages and CC's path rules (a leading
// slash dropped, each name cut at 255 bytes). Hooks let a test break the sequence.
type disk struct {
	mu    sync.Mutex
	files map[string][]byte // CC path without the leading slash → contents
	dirs  map[string]bool
	// oldClient answers fs.move as a client older than overwrite does.
	oldClient bool
	// failWrite makes the nth fs.write fail with Out of space (0: none).
	failWrite int
	writes    int
	// before runs before each request is served; after runs after. Either may return an
	// error, which the request then returns (before: not served; after: served, answer lost).
	before, after func(ctx context.Context, step int, typ string) error
	steps         int
	movedIn       bool
	log           []request
	computers     []Computer
}

type request struct {
	typ     string
	payload map[string]any
	timeout time.Duration
}

func newDisk(files map[string]string) *disk {
	d := &disk{files: map[string][]byte{}, dirs: map[string]bool{"": true}, computers: []Computer{{TraposID: "7:"}}}
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

func (d *disk) file(p string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.files[ccPath(p)]
	return data, ok
}

func (d *disk) names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for p := range d.files {
		out = append(out, "/"+p)
	}
	sort.Strings(out)
	return out
}

func (d *disk) types() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, r := range d.log {
		out = append(out, r.typ)
	}
	return out
}

func (d *disk) Computers(context.Context) ([]Computer, error) { return d.computers, nil }

func (d *disk) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
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
	d.log = append(d.log, request{typ, p, timeout})
	before, after := d.before, d.after
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

func (d *disk) serve(typ string, p map[string]any) (json.RawMessage, error) {
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
		if d.writes == d.failWrite {
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
		if p["overwrite"] == true && !d.oldClient {
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
	return nil, &protocol.Error{Code: protocol.CodeUnknownType, Message: typ, ByComputer: true}
}
