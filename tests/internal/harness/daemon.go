package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// Request types a TrapOS computer answers (docs/capabilities.md), as on the wire.
const (
	TypeComputerInfo = "computer.info"
	TypeFSList       = "fs.list"
	TypeFSRead       = "fs.read"
	TypeFSWrite      = "fs.write"
	TypeFSDelete     = "fs.delete"
	TypeFSMove       = "fs.move"
	TypeFSMakeDir    = "fs.makeDir"
	TypeLuaExec      = "lua.exec"
	TypeShellRun     = "shell.run"
)

// Error codes a computer answers with.
const (
	CodeForbidden   = "forbidden"
	CodeFSError     = "fs_error"
	CodeUnknownType = "unknown_type"
)

// The owner's settings (sandbox.allow_files) and the chunk a computer reads at most.
const (
	AllowFilesNone  = "none"
	AllowFilesRead  = "read"
	AllowFilesWrite = "write"
	// maxReadChunk is what one fs.read answers at most, as the daemon caps it to fit a frame.
	maxReadChunk = 16 << 10
)

// Daemon answers gateway_requests the way the TrapOS sandbox daemon does (issue 12's types,
// docs/capabilities.md): ping and computer.info always, the fs.* types on an in-memory disk
// as far as AllowFiles permits, lua.exec and shell.run through Exec when AllowExec is set.
// Byte strings cross as the protocol says: one code point U+0000-U+00FF per byte. It stands
// in for the Lua daemon in host-side tests that need no Lua.
type Daemon struct {
	// Label is the computer's label (its traposId is "<ID>:<Label>").
	ID    int
	Label string
	// AllowFiles is sandbox.allow_files: none, read or write; AllowExec is sandbox.allow_exec.
	// Set them before Serve, or through SetPermissions after.
	AllowFiles string
	AllowExec  bool
	// Exec answers lua.exec and shell.run payloads when AllowExec is set; nil answers
	// unknown_type for them.
	Exec func(typ string, payload map[string]any) (any, *Error)
	// Silent lists types the daemon never answers (to provoke timeouts).
	Silent []string
	// OnRequest, if set, sees every gateway_request as it arrives (from the answering goroutine).
	OnRequest func(Frame)

	mu    sync.Mutex        // guards files and dirs
	files map[string][]byte // absolute clean path → contents
	dirs  map[string]bool   // absolute clean path → exists; "/" always does
}

// TraposID is the id the daemon says hello with.
func (d *Daemon) TraposID() string { return fmt.Sprintf("%d:%s", d.ID, d.Label) }

// PutFile stores a file on the daemon's disk, creating its directories.
func (d *Daemon) PutFile(p string, data []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	p = path.Clean("/" + p)
	d.mkdirs(path.Dir(p))
	d.files[p] = slices.Clone(data)
}

// SetPermissions changes the owner's settings while the daemon serves, as `set` does.
func (d *Daemon) SetPermissions(allowFiles string, allowExec bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.AllowFiles, d.AllowExec = allowFiles, allowExec
}

// File returns a file on the daemon's disk.
func (d *Daemon) File(p string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.files[path.Clean("/"+p)]
	return slices.Clone(b), ok
}

func (d *Daemon) init() {
	if d.files == nil {
		d.files = map[string][]byte{}
		d.dirs = map[string]bool{"/": true}
	}
}

func (d *Daemon) mkdirs(p string) {
	for ; p != "/"; p = path.Dir(p) {
		d.dirs[p] = true
	}
}

// Serve connects to url, says hello with secret, and answers requests until ctx ends or the
// socket closes. It returns once connected; the returned function closes the socket and waits
// for the answering goroutine.
func (d *Daemon) Serve(ctx context.Context, url, secret string) (stop func(), err error) {
	c, err := Dial(ctx, url, d.TraposID())
	if err != nil {
		return nil, err
	}
	if err := c.MustHello(ctx, secret); err != nil {
		_ = c.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Answer(ctx, d.answer)
	}()
	return func() { _ = c.Close(); <-done }, nil
}

// Answer reads gateway_requests until reading fails (ctx's deadline, a closed socket) and
// answers each with handle; a nil answer leaves the request unanswered.
func (c *Computer) Answer(ctx context.Context, handle func(Frame) *Reply) error {
	for {
		f, err := c.Next(ctx)
		if err != nil {
			return err
		}
		if f.Event != EventGatewayRequest {
			continue
		}
		r := handle(f)
		if r == nil {
			continue
		}
		msg := map[string]any{"event": EventComputerResponse, "traposSenderId": c.TraposID,
			"messageId": f.MessageID, "type": f.Type, "ok": r.Error == nil}
		if r.Error != nil {
			msg["error"] = r.Error
		} else {
			msg["payload"] = r.Payload
		}
		if err := c.WriteJSON(msg); err != nil {
			return err
		}
	}
}

// Reply is a computer's answer: Payload when Error is nil.
type Reply struct {
	Payload any
	Error   *Error
}

func fail(code, format string, args ...any) *Reply {
	return &Reply{Error: &Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func ok(payload any) *Reply { return &Reply{Payload: payload} }

// needFiles is the forbidden answer naming the setting, worded as the daemon words it, or
// nil when level is allowed.
func (d *Daemon) needFiles(typ, level string) *Reply {
	have := d.AllowFiles
	if have == AllowFilesWrite || (have == AllowFilesRead && level == AllowFilesRead) {
		return nil
	}
	if have != AllowFilesRead {
		have = AllowFilesNone
	}
	return fail(CodeForbidden, "%s needs sandbox.allow_files %s (it is %s); the owner can allow it with: set sandbox.allow_files %s",
		typ, level, have, level)
}

// Reply is the daemon's answer to a gateway_request f, for a test that reads the socket itself
// (a computer that also sends requests of its own).
func (d *Daemon) Reply(f Frame) *Reply { return d.answer(f) }

func (d *Daemon) answer(f Frame) *Reply {
	if d.OnRequest != nil {
		d.OnRequest(f)
	}
	if slices.Contains(d.Silent, f.Type) {
		return nil
	}
	var p map[string]any
	if len(f.Payload) > 0 {
		if err := json.Unmarshal(f.Payload, &p); err != nil {
			return fail("internal", "bad payload: %v", err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	switch f.Type {
	case TypePing:
		return ok(map[string]any{"traposId": d.TraposID()})
	case TypeComputerInfo:
		return ok(map[string]any{"traposId": d.TraposID(), "id": d.ID, "label": d.Label, "host": "ComputerCraft 1.115.1 (Minecraft 1.21.1)",
			"clientVersion": "test", "uptime": 1.5, "day": 3, "time": 6.25, "freeSpace": 1000000, "colour": true,
			"peripherals": []any{map[string]any{"name": "left", "types": []string{"modem"}}}})
	case TypeFSList, TypeFSRead:
		if r := d.needFiles(f.Type, AllowFilesRead); r != nil {
			return r
		}
	case TypeFSWrite, TypeFSDelete, TypeFSMove, TypeFSMakeDir:
		if r := d.needFiles(f.Type, AllowFilesWrite); r != nil {
			return r
		}
	case TypeLuaExec, TypeShellRun:
		if !d.AllowExec {
			return fail(CodeForbidden, "%s is not allowed on this computer; its owner can allow it with: set sandbox.allow_exec true", f.Type)
		}
		if d.Exec == nil {
			break
		}
		payload, e := d.Exec(f.Type, p)
		if e != nil {
			return &Reply{Error: e}
		}
		return ok(payload)
	}
	switch f.Type {
	case TypeFSList:
		return d.list(str(p, "path"))
	case TypeFSRead:
		return d.read(str(p, "path"), num(p, "offset"), num(p, "length"))
	case TypeFSWrite:
		return d.write(str(p, "path"), str(p, "data"), p["append"] == true)
	case TypeFSDelete:
		return d.delete(str(p, "path"))
	case TypeFSMove:
		return d.move(str(p, "from"), str(p, "to"))
	case TypeFSMakeDir:
		return d.makeDir(str(p, "path"))
	}
	return fail(CodeUnknownType, "this computer does not handle requests of type %s", f.Type)
}

func str(p map[string]any, k string) string { s, _ := p[k].(string); return s }

func num(p map[string]any, k string) int {
	n, _ := p[k].(float64)
	return int(n)
}

// clean resolves p like CC's fs.combine: a path that climbs above the root is an error.
func clean(p string) (string, error) {
	depth := 0
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return "", errors.New("/" + strings.TrimPrefix(p, "/") + ": Invalid Path")
			}
		default:
			depth++
		}
	}
	return path.Clean("/" + p), nil
}

func (d *Daemon) list(p string) *Reply {
	p, err := clean(p)
	if err != nil {
		return fail(CodeFSError, "%v", err)
	}
	if _, isFile := d.files[p]; isFile {
		return fail(CodeFSError, "%s: Not a directory", p)
	}
	if !d.dirs[p] {
		return fail(CodeFSError, "%s: No such file", p)
	}
	entries := []map[string]any{}
	names := map[string]bool{}
	for f := range d.files {
		if path.Dir(f) == p {
			names[f] = false
		}
	}
	for dir := range d.dirs {
		if dir != "/" && path.Dir(dir) == p {
			names[dir] = true
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		entries = append(entries, map[string]any{"name": path.Base(k), "isDir": names[k], "size": len(d.files[k])})
	}
	return ok(map[string]any{"entries": entries})
}

func (d *Daemon) read(p string, offset, length int) *Reply {
	p, err := clean(p)
	if err != nil {
		return fail(CodeFSError, "%v", err)
	}
	data, found := d.files[p]
	if !found {
		if d.dirs[p] {
			return fail(CodeFSError, "%s: Is a directory", p)
		}
		return fail(CodeFSError, "%s: No such file", p)
	}
	if length <= 0 || length > maxReadChunk {
		length = maxReadChunk
	}
	offset = min(max(offset, 0), len(data))
	end := min(offset+length, len(data))
	return ok(map[string]any{"data": wireString(data[offset:end]), "size": len(data), "eof": end == len(data)})
}

func (d *Daemon) write(p, data string, appendTo bool) *Reply {
	p, err := clean(p)
	if err != nil {
		return fail(CodeFSError, "%v", err)
	}
	if d.dirs[p] {
		return fail(CodeFSError, "%s: Cannot write to directory", p)
	}
	if strings.HasPrefix(p, "/rom") {
		return fail(CodeFSError, "%s: Access denied", p)
	}
	b, err := bytesString(data)
	if err != nil {
		return fail("internal", "%v", err)
	}
	if appendTo {
		b = append(d.files[p], b...)
	}
	d.mkdirs(path.Dir(p))
	d.files[p] = b
	return ok(map[string]any{"size": len(b)})
}

func (d *Daemon) delete(p string) *Reply {
	p, err := clean(p)
	if err != nil {
		return fail(CodeFSError, "%v", err)
	}
	if _, isFile := d.files[p]; !isFile && !d.dirs[p] {
		return fail(CodeFSError, "%s: No such file", p)
	}
	for f := range d.files {
		if f == p || strings.HasPrefix(f, p+"/") {
			delete(d.files, f)
		}
	}
	for dir := range d.dirs {
		if dir != "/" && (dir == p || strings.HasPrefix(dir, p+"/")) {
			delete(d.dirs, dir)
		}
	}
	return ok(map[string]any{})
}

func (d *Daemon) move(from, to string) *Reply {
	from, err := clean(from)
	if err == nil {
		to, err = clean(to)
	}
	if err != nil {
		return fail(CodeFSError, "%v", err)
	}
	// CC's fs.move names no path in these refusals.
	data, isFile := d.files[from]
	if !isFile {
		return fail(CodeFSError, "No such file")
	}
	if _, exists := d.files[to]; exists || d.dirs[to] {
		return fail(CodeFSError, "File exists")
	}
	delete(d.files, from)
	d.mkdirs(path.Dir(to))
	d.files[to] = data
	return ok(map[string]any{})
}

func (d *Daemon) makeDir(p string) *Reply {
	p, err := clean(p)
	if err != nil {
		return fail(CodeFSError, "%v", err)
	}
	if _, isFile := d.files[p]; isFile {
		return fail(CodeFSError, "%s: File exists", p)
	}
	d.mkdirs(p)
	return ok(map[string]any{})
}

// wireString and bytesString are the protocol's byte rule: one code point per byte.
func wireString(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

func bytesString(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			return nil, fmt.Errorf("code point U+%04X is not a byte", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}
