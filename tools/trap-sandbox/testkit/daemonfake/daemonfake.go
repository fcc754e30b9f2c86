// Package daemonfake is the Go stand-in of a computer's sandbox daemon
// (trapos/apis/libsandboxdaemon.lua and the handlers it serves with), for host-side tests
// that need no Lua. It answers the computer vocabulary (docs/capabilities.md) on an in-memory
// disk, behind the owner's two settings, with the daemon's answers and CC's own messages.
//
// It is held to trapos/tests/fixtures/vocabulary.json, the table the Lua daemon runs too
// (trapos/tests/vocabulary_spec.lua), so the two cannot drift: a change to the daemon's
// answers changes the table, and this package's test then fails until the stand-in follows.
// It runs no Lua: lua.exec and shell.run go to the Exec hook once their payload passes the
// daemon's checks, and so do the types a program on the computer would answer. Local serves
// it in process as a computer.Transport, with hooks to break a sequence at any step.
package daemonfake

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// The owner's sandbox.allow_files levels; any other value reads as AllowFilesNone, named in
// the refusal.
const (
	AllowFilesNone  = "none"
	AllowFilesRead  = "read"
	AllowFilesWrite = "write"
)

// Limits the daemon applies, as the Lua side names them.
const (
	// MaxReadBytes is what one fs.read answers at most (libsandboxfiles' MAX_READ_BYTES).
	MaxReadBytes = 16 << 10
	// maxTimeoutMs is the largest lua.exec / shell.run timeoutMs (libsandboxexec's MAX_TIMEOUT_MS).
	maxTimeoutMs = 60000
)

// RootFreeSpace is the free space computer.info reports of the stand-in's root drive.
const RootFreeSpace = 1000000

// host and clientVersion are what computer.info reports for the stand-in.
const (
	host          = "ComputerCraft 1.115.1 (Minecraft 1.21.1)"
	clientVersion = "test"
)

// payloadAboveByte is the daemon's answer to a payload string that is not bytes.
const payloadAboveByte = "the payload holds a character above U+00FF; strings carry bytes as code points U+0000-U+00FF"

// Error is a refused request's error object.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Reply is the daemon's answer to one request: Payload (ok:true) when Error is nil.
type Reply struct {
	Payload any
	Error   *Error
}

// Daemon answers requests as a computer's daemon does. Set the fields before the first
// Answer; SetPermissions changes the settings later, as `set` does on a computer.
type Daemon struct {
	// ID and Label make the computer's traposId "<ID>:<Label>"; an empty Label is none.
	ID    int
	Label string
	// AllowFiles is sandbox.allow_files; AllowExec is sandbox.allow_exec.
	AllowFiles string
	AllowExec  bool
	// AllowExecStray is a hand-edited sandbox.allow_exec that is no boolean ("true"): exec is
	// refused, naming it, as libsandboxrequests does (AllowExec must be false).
	AllowExecStray string
	// Exec answers lua.exec and shell.run payloads that passed the daemon's checks, and the
	// types the daemon itself does not serve (those a program on the computer registers), as
	// decoded JSON (strings in their wire form, as the answer's must be). Nil, or a nil
	// payload and error for a type the daemon does not serve, answers unknown_type. It runs
	// without the daemon's lock, so it may look at the disk.
	Exec func(typ string, payload map[string]any) (any, *Error)
	// Pocket makes the computer a pocket computer (computer.info's pocket, a 26x20 screen).
	Pocket bool
	// AllowScreen is sandbox.allow_screen: none ("" too), view or control, as computer.info
	// reports it. The stand-in watches no screen: a Terminal on the Exec hook refuses
	// screen.input by it with ScreenInputRefused, as the daemon does.
	AllowScreen string
	// OldInfo answers computer.info as a client before 0.5.15: without pocket, the screen's
	// size and allowed, and (as before 0.5.23) ignoring a path, its freeSpace the root drive's.
	OldInfo bool
	// Drives are the disks mounted beside the root drive, each by its top-level directory
	// ("disk", as CC mounts a drive's floppy disk) with its free bytes: computer.info with a
	// path under one reports that drive's freeSpace, as CC's fs.getFreeSpace(path) does; any
	// other path is on the root drive (RootFreeSpace bytes free).
	Drives map[string]int
	// InfoFields replaces computer.info's fields by these, as a hostile or altered client
	// answers them (allowed as a string, pocket as "yes"); set before the first Answer.
	InfoFields map[string]any
	// OldClient answers fs.move as a client older than its overwrite field: it ignores it.
	OldClient bool
	// ClientVersion is the version the hello names (clientVersion) and computer.info reports;
	// empty names none in the hello, as a client before 0.3.0.
	ClientVersion string
	// FSErrorPosition is put in front of an fs.* request's fs_error, as a client before 0.5.3
	// sent one on CC ("...is/libsandboxfiles.lua:59: "): CC placed the error its fs function
	// raised under the library's pcall at the library's line. (That client sent its own words,
	// such as fs.delete's No such file, without it; the stand-in puts it on every one.)
	FSErrorPosition string
	// FailWrite makes the nth fs.write (counting from 1, as Writes does) answer Out of space,
	// as a full disk does; 0 never.
	FailWrite int

	mu     sync.Mutex        // guards the settings once serving, files, dirs, stamps, clock and writes
	files  map[string][]byte // clean path (no leading "/") → contents
	dirs   map[string]bool   // clean path → exists; "" (the root) always does
	stamps map[string]int64  // clean path → the file's modification stamp (fs.read's stamp)
	clock  int64             // the last stamp given: every change of a file takes the next
	writes int               // fs.write requests that reached the disk
}

// TraposID is the id the computer says hello with.
func (d *Daemon) TraposID() string { return fmt.Sprintf("%d:%s", d.ID, d.Label) }

// SetPermissions changes the owner's settings while the daemon serves.
func (d *Daemon) SetPermissions(allowFiles string, allowExec bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.AllowFiles, d.AllowExec = allowFiles, allowExec
}

// SetScreen changes sandbox.allow_screen while the daemon serves, as `set` does.
func (d *Daemon) SetScreen(level string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.AllowScreen = level
}

// ScreenInputRefused is the daemon's refusal of screen.input, which needs
// sandbox.allow_screen control, or nil when the owner allows it.
func (d *Daemon) ScreenInputRefused() *Error {
	d.mu.Lock()
	defer d.mu.Unlock()
	level := d.screenLevel()
	if level == screenControl {
		return nil
	}
	return &Error{Code: string(protocol.CodeForbidden), Message: fmt.Sprintf(
		"%s needs sandbox.allow_screen %s (it is %s); the owner can allow it with: set sandbox.allow_screen %s",
		protocol.TypeScreenInput, screenControl, level, screenControl)}
}

// screenControl is the sandbox.allow_screen level that lets the host type on the screen.
const screenControl = "control"

// screenLevel is sandbox.allow_screen as it applies (unset: none).
func (d *Daemon) screenLevel() string { return cmp.Or(d.AllowScreen, "none") }

// PutFile stores a file (p as bytes, not a wire string), making its directories.
func (d *Daemon) PutFile(p string, data []byte) {
	d.setUp(p, func(clean string) {
		d.mkdirs(parent(clean))
		d.files[clean] = slices.Clone(data)
		d.touch(clean)
	})
}

// MakeDir makes a directory and its parents.
func (d *Daemon) MakeDir(p string) { d.setUp(p, d.mkdirs) }

// setUp runs a test's setup step fn on the disk with p resolved; a path CC would refuse is
// the test's own mistake, and panics.
func (d *Daemon) setUp(p string, fn func(clean string)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	clean, err := sanitize(p)
	if err != nil {
		panic(err)
	}
	fn(clean)
}

// Names lists every file's path ("/a/b"), sorted by bytes.
func (d *Daemon) Names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for p := range d.files {
		out = append(out, display(p))
	}
	slices.Sort(out)
	return out
}

// Writes is how many fs.write requests have reached the disk (FailWrite counts them too).
func (d *Daemon) Writes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writes
}

// File returns a file's contents.
func (d *Daemon) File(p string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	clean, err := sanitize(p)
	if err != nil {
		return nil, false
	}
	b, ok := d.files[clean]
	return slices.Clone(b), ok
}

func (d *Daemon) init() {
	if d.files == nil {
		d.files = map[string][]byte{}
		d.dirs = map[string]bool{"": true}
		d.stamps = map[string]int64{}
	}
}

// touch gives a file that changed the next stamp, as a write sets its modification time.
func (d *Daemon) touch(clean string) {
	d.clock++
	d.stamps[clean] = d.clock
}

func (d *Daemon) mkdirs(p string) {
	for ; p != ""; p = parent(p) {
		d.dirs[p] = true
	}
}

// Answer serves one gateway_request of type typ whose payload is the frame's raw JSON (nil
// when absent), in the daemon's order: the byte rule, the owner's settings, the fields, the
// work.
func (d *Daemon) Answer(typ string, payload json.RawMessage) Reply {
	r := d.answer(typ, payload)
	if d.FSErrorPosition != "" && r.Error != nil && r.Error.Code == string(protocol.CodeFSError) && slices.Contains(served, typ) {
		placed := *r.Error
		placed.Message = d.FSErrorPosition + placed.Message
		r.Error = &placed
	}
	return r
}

func (d *Daemon) answer(typ string, payload json.RawMessage) Reply {
	p, bytesOnly := decodePayload(payload)
	if !bytesOnly {
		return fail(protocol.CodeBadPayload, payloadAboveByte)
	}
	d.mu.Lock()
	d.init()
	if r := d.refusal(typ); r != nil {
		d.mu.Unlock()
		return *r
	}
	if !slices.Contains(served, typ) {
		hook := d.Exec
		d.mu.Unlock()
		return exec(hook, typ, p)
	}
	defer d.mu.Unlock()
	switch typ {
	case protocol.TypePing:
		return ok(map[string]any{"traposId": d.TraposID()})
	case protocol.TypeComputerInfo:
		if complaint := checkOptionalString(p, "path"); complaint != "" {
			return fail(protocol.CodeBadPayload, complaint)
		}
		return ok(d.info(p))
	case protocol.TypeFSList:
		return serveFS(p, []string{checkString(p, "path"), checkBool(p, "absentOk")}, []string{"path"}, func(c []string) Reply { return d.list(c[0], p["absentOk"] == true) })
	case protocol.TypeFSRead:
		return serveFS(p, []string{checkString(p, "path"), checkCount(p, "offset"), checkCount(p, "length"), checkBool(p, "stamp")}, []string{"path"},
			func(c []string) Reply {
				return d.read(c[0], count(p, "offset", 0), min(count(p, "length", MaxReadBytes), MaxReadBytes), p["stamp"] == true)
			})
	case protocol.TypeFSWrite:
		return serveFS(p, []string{checkString(p, "path"), checkString(p, "data"), checkBool(p, "append")}, []string{"path"},
			func(c []string) Reply { return d.write(c[0], p["data"].(string), p["append"] == true) })
	case protocol.TypeFSDelete:
		return serveFS(p, []string{checkString(p, "path")}, []string{"path"}, func(c []string) Reply { return d.delete(c[0]) })
	case protocol.TypeFSMove:
		return serveFS(p, []string{checkBool(p, "overwrite"), checkString(p, "from"), checkString(p, "to")}, []string{"from", "to"},
			func(c []string) Reply { return d.move(c[0], c[1], p["overwrite"] == true && !d.OldClient) })
	}
	// protocol.TypeFSMakeDir, the last of served.
	return serveFS(p, []string{checkString(p, "path")}, []string{"path"}, func(c []string) Reply { return d.makeDir(c[0]) })
}

// served are the types the daemon answers itself; the others go to the Exec hook.
var served = []string{protocol.TypePing, protocol.TypeComputerInfo, protocol.TypeFSList, protocol.TypeFSRead,
	protocol.TypeFSWrite, protocol.TypeFSDelete, protocol.TypeFSMove, protocol.TypeFSMakeDir}

// refusal is the forbidden answer naming the setting typ needs, or nil when it is allowed.
func (d *Daemon) refusal(typ string) *Reply {
	need := ""
	switch typ {
	case protocol.TypeFSList, protocol.TypeFSRead:
		need = AllowFilesRead
	case protocol.TypeFSWrite, protocol.TypeFSDelete, protocol.TypeFSMove, protocol.TypeFSMakeDir:
		need = AllowFilesWrite
	case protocol.TypeLuaExec, protocol.TypeShellRun:
		if d.AllowExec {
			return nil
		}
		shown := "false"
		if d.AllowExecStray != "" {
			shown = fmt.Sprintf("false, as %q is not the boolean true", d.AllowExecStray)
		}
		r := fail(protocol.CodeForbidden, typ+" needs sandbox.allow_exec true (it is "+shown+"); the owner can allow it with: set sandbox.allow_exec true")
		return &r
	default:
		return nil
	}
	have, shown := d.filesLevel()
	if have == AllowFilesWrite || have == need {
		return nil
	}
	r := fail(protocol.CodeForbidden, fmt.Sprintf("%s needs sandbox.allow_files %s (it is %s); the owner can allow it with: set sandbox.allow_files %s",
		typ, need, shown, need))
	return &r
}

// filesLevel is the file access the settings allow, as libsandboxsettings reads them: the
// level, and the level as the owner reads it (another value is none, and named).
func (d *Daemon) filesLevel() (have, shown string) {
	switch d.AllowFiles {
	case "":
		return AllowFilesNone, AllowFilesNone // not set
	case AllowFilesNone, AllowFilesRead, AllowFilesWrite:
		return d.AllowFiles, d.AllowFiles
	}
	return AllowFilesNone, fmt.Sprintf("none, as %q is not none/read/write", d.AllowFiles)
}

func (d *Daemon) info(p map[string]any) map[string]any {
	info := map[string]any{"traposId": d.TraposID(), "id": d.ID, "host": host, "clientVersion": cmp.Or(d.ClientVersion, clientVersion),
		"uptime": 1.5, "day": 3, "time": 6.25, "freeSpace": RootFreeSpace, "colour": true,
		"peripherals": []any{map[string]any{"name": "left", "types": []string{"modem"}}}}
	if d.Label != "" {
		info["label"] = d.Label
	}
	if path, given := p["path"].(string); given && !d.OldInfo {
		top, _, _ := strings.Cut(strings.Trim(path, "/"), "/")
		if free, mounted := d.Drives[top]; mounted {
			info["freeSpace"] = free
		}
		info["freeSpacePath"] = path
	}
	if !d.OldInfo {
		files, _ := d.filesLevel()
		info["pocket"], info["screenWidth"], info["screenHeight"] = d.Pocket, 51, 19
		if d.Pocket {
			info["screenWidth"], info["screenHeight"] = 26, 20
		}
		info["allowed"] = map[string]any{"files": files, "exec": d.AllowExec, "screen": d.screenLevel()}
	}
	maps.Copy(info, d.InfoFields)
	return info
}

// The fs handlers below take paths already resolved by serveFS.

func (d *Daemon) list(clean string, absentOK bool) Reply {
	if _, isFile := d.files[clean]; isFile {
		return fsError(display(clean) + ": Not a directory")
	}
	if !d.dirs[clean] && absentOK {
		return ok(map[string]any{"entries": []map[string]any{}, "absent": true})
	}
	if !d.dirs[clean] {
		return fsError(display(clean) + ": No such file")
	}
	entries := []map[string]any{}
	for _, name := range d.children(clean) {
		full := join(clean, name)
		data, isFile := d.files[full]
		entries = append(entries, map[string]any{"name": protocol.WireOfBytes([]byte(name)), "isDir": !isFile, "size": len(data)})
	}
	return ok(map[string]any{"entries": entries})
}

// children are the names directly inside dir, sorted as CC's fs.list sorts them (by bytes).
func (d *Daemon) children(dir string) []string {
	var names []string
	for p := range d.files {
		if p != "" && parent(p) == dir {
			names = append(names, base(p))
		}
	}
	for p := range d.dirs {
		if p != "" && parent(p) == dir {
			names = append(names, base(p))
		}
	}
	slices.Sort(names)
	return names
}

func (d *Daemon) read(clean string, offset, length int, stamp bool) Reply {
	data, found := d.files[clean]
	if !found {
		if d.dirs[clean] {
			return fsError(display(clean) + ": Not a file")
		}
		return fsError(display(clean) + ": No such file")
	}
	chunk := data[min(offset, len(data)):min(offset+length, len(data))]
	answer := map[string]any{"data": protocol.WireOfBytes(chunk), "size": len(data), "eof": offset+len(chunk) >= len(data)}
	if stamp {
		answer["stamp"] = d.stamps[clean]
	}
	return ok(answer)
}

func (d *Daemon) write(clean, data string, appendTo bool) Reply {
	d.writes++
	if d.writes == d.FailWrite {
		return fsError(display(clean) + ": Out of space")
	}
	if d.dirs[clean] {
		return fsError(display(clean) + ": Cannot write to directory")
	}
	if readOnly(clean) {
		return fsError(display(clean) + ": Access denied")
	}
	contents := []byte(data)
	if appendTo {
		contents = append(slices.Clone(d.files[clean]), contents...)
	}
	d.mkdirs(parent(clean))
	d.files[clean] = contents
	d.touch(clean)
	return ok(map[string]any{"size": len(contents)})
}

func (d *Daemon) delete(clean string) Reply {
	if !d.exists(clean) {
		return fsError(display(clean) + ": No such file")
	}
	if readOnly(clean) || clean == "" { // CC's root, as a mount point, cannot be removed
		return fsError(display(clean) + ": Access denied")
	}
	d.removeTree(clean)
	return ok(map[string]any{})
}

// exists reports whether a file or a directory is at clean path p.
func (d *Daemon) exists(p string) bool {
	_, isFile := d.files[p]
	return isFile || d.dirs[p]
}

// removeTree removes p and, for a directory, all it holds.
func (d *Daemon) removeTree(p string) {
	for f := range d.files {
		if within(f, p) {
			delete(d.files, f)
			delete(d.stamps, f)
		}
	}
	for dir := range d.dirs {
		if dir != "" && within(dir, p) {
			delete(d.dirs, dir)
		}
	}
}

// move moves a file or a directory; CC's refusals here name no path. With overwrite, as
// libsandboxfiles does it, a file at dst is deleted first in the same step, but only when
// the move can then succeed, and a directory at dst is refused.
func (d *Daemon) move(src, dst string, overwrite bool) Reply {
	if overwrite && d.dirs[dst] {
		return fsError(display(dst) + ": Cannot write to directory")
	}
	// Onto or into itself, or from the read-only ROM, the move fails after the delete.
	if overwrite && d.exists(src) && d.exists(dst) && !within(dst, src) && !readOnly(src) {
		if readOnly(dst) {
			return fsError(display(dst) + ": Access denied")
		}
		d.removeTree(dst)
	}
	switch {
	case !d.exists(src):
		return fsError("No such file")
	case d.exists(dst):
		return fsError("File exists")
	case within(dst, src):
		return fsError("Can't move a directory inside itself")
	case readOnly(src) || readOnly(dst):
		return fsError("Access denied")
	}
	moved := map[string][]byte{}
	movedStamps := map[string]int64{} // a move keeps a file's modification time, as CC's does
	var dirs []string
	for f, data := range d.files {
		if within(f, src) {
			moved[dst+strings.TrimPrefix(f, src)] = data
			movedStamps[dst+strings.TrimPrefix(f, src)] = d.stamps[f]
		}
	}
	for dir := range d.dirs {
		if dir != "" && within(dir, src) {
			dirs = append(dirs, dst+strings.TrimPrefix(dir, src))
		}
	}
	d.removeTree(src)
	d.mkdirs(parent(dst))
	for _, dir := range dirs {
		d.mkdirs(dir)
	}
	for f, data := range moved {
		d.files[f] = data
		d.stamps[f] = movedStamps[f]
	}
	return ok(map[string]any{})
}

func (d *Daemon) makeDir(clean string) Reply {
	if _, isFile := d.files[clean]; isFile {
		return fsError(display(clean) + ": File exists")
	}
	if readOnly(clean) {
		return fsError(display(clean) + ": Access denied")
	}
	d.mkdirs(clean)
	return ok(map[string]any{})
}

// unknownType is the daemon's message for a type nothing on the computer answers: for a name a
// program may serve (libsandboxserve's router), it names the fix.
func unknownType(typ string) string {
	message := "this computer does not handle requests of type " + typ
	if protocol.ReservedType(typ) {
		return message
	}
	return message + ": no program on it serves that type now (start the program that serves it with libsandbox.serve)"
}

// exec checks a lua.exec / shell.run payload as libsandboxexec does, then hands it, or any
// type the daemon does not serve, to hook.
func exec(hook func(string, map[string]any) (any, *Error), typ string, p map[string]any) Reply {
	unknown := fail(protocol.CodeUnknownType, unknownType(typ))
	if typ != protocol.TypeLuaExec && typ != protocol.TypeShellRun {
		if hook == nil {
			return unknown
		}
		payload, e := hook(typ, toWire(p).(map[string]any))
		if payload == nil && e == nil {
			return unknown
		}
		return Reply{Payload: payload, Error: e}
	}
	if typ == protocol.TypeLuaExec {
		if why := checkString(p, "code"); why != "" {
			return fail(protocol.CodeBadPayload, why)
		}
	} else if command, _ := p["command"].(string); strings.TrimSpace(command) == "" {
		return fail(protocol.CodeBadPayload, "payload.command must be a non-empty string")
	}
	if ms := p["timeoutMs"]; ms != nil {
		if n, isNumber := ms.(float64); !isNumber || n <= 0 || n > maxTimeoutMs {
			return fail(protocol.CodeBadPayload, fmt.Sprintf("payload.timeoutMs must be a number between 1 and %d", maxTimeoutMs))
		}
	}
	if hook == nil {
		return unknown
	}
	payload, e := hook(typ, toWire(p).(map[string]any))
	if e != nil {
		return Reply{Error: e}
	}
	return ok(payload)
}

func ok(payload any) Reply { return Reply{Payload: payload} }

// fail is a refusal with message, the daemon's words in CC's bytes (a path it names is the
// bytes the payload's string stood for), in its wire form as the client sends every string
// (byte A0 is U+00A0), where a path's byte A0 went as a byte that is no UTF-8.
func fail(code protocol.Code, message string) Reply {
	return Reply{Error: &Error{Code: string(code), Message: protocol.WireOfBytes([]byte(message))}}
}

func fsError(message string) Reply { return fail(protocol.CodeFSError, message) }

// decodePayload is the payload as the daemon sees it: anything but a non-empty JSON object
// counts as {} (the empty-payload rule), and every string, keys too, becomes the bytes it
// stands for. ok is false when a string holds a character above U+00FF.
func decodePayload(raw json.RawMessage) (p map[string]any, bytesOnly bool) {
	var v any
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &v) != nil {
		return map[string]any{}, true
	}
	object, isObject := v.(map[string]any)
	if !isObject {
		return map[string]any{}, true
	}
	v, bytesOnly = fromWire(object)
	return v.(map[string]any), bytesOnly
}

// fromWire turns every string in a decoded JSON value into its bytes (the byte rule).
func fromWire(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		b, err := protocol.BytesOfWire(v)
		return string(b), err == nil
	case []any:
		ok := true
		for i, x := range v {
			var good bool
			v[i], good = fromWire(x)
			ok = ok && good
		}
		return v, ok
	case map[string]any:
		out, ok := make(map[string]any, len(v)), true
		for k, x := range v {
			key, goodKey := fromWire(k)
			val, goodVal := fromWire(x)
			out[key.(string)] = val
			ok = ok && goodKey && goodVal
		}
		return out, ok
	}
	return v, true
}

// toWire is fromWire undone: every string back in its wire form.
func toWire(v any) any {
	switch v := v.(type) {
	case string:
		return protocol.WireOfBytes([]byte(v))
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = toWire(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[toWire(k).(string)] = toWire(x)
		}
		return out
	}
	return v
}

// serveFS answers an fs request as libsandboxfiles does: the payload's field checks in order
// (each "" or the complaint), then the path fields resolved as CC's fs resolves them, then fn
// with those paths.
func serveFS(p map[string]any, checks, pathFields []string, fn func(paths []string) Reply) Reply {
	for _, why := range checks {
		if why != "" {
			return fail(protocol.CodeBadPayload, why)
		}
	}
	paths := make([]string, len(pathFields))
	for i, name := range pathFields {
		clean, err := sanitize(p[name].(string))
		if err != nil {
			return fsError(err.Error())
		}
		paths[i] = clean
	}
	return fn(paths)
}

// luaType names a decoded JSON value's type as Lua's type() does.
func luaType(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "table"
}

func checkString(p map[string]any, name string) string {
	v := p[name]
	if _, isString := v.(string); isString {
		return ""
	}
	return fmt.Sprintf("payload.%s must be a string, got %s", name, luaType(v))
}

func checkOptionalString(p map[string]any, name string) string {
	v, given := p[name]
	if _, isString := v.(string); isString || !given || v == nil {
		return ""
	}
	return fmt.Sprintf("payload.%s must be a string when given, got %s", name, luaType(v))
}

func checkBool(p map[string]any, name string) string {
	v, given := p[name]
	if _, isBool := v.(bool); isBool || !given || v == nil {
		return ""
	}
	return fmt.Sprintf("payload.%s must be a boolean when given, got %s", name, luaType(v))
}

func checkCount(p map[string]any, name string) string {
	v, given := p[name]
	if !given || v == nil {
		return ""
	}
	if n, isNumber := v.(float64); isNumber && n >= 0 && n == math.Floor(n) {
		return ""
	}
	return fmt.Sprintf("payload.%s must be a whole number >= 0 when given", name)
}

// count is a checked whole-number field, or def when absent.
func count(p map[string]any, name string, def int) int {
	if n, isNumber := p[name].(float64); isNumber {
		return int(min(n, math.MaxInt32))
	}
	return def
}

// sanitize is a path as CC's fs resolves it (cctext.ResolvePath), relative to the root. A
// path that climbs above the root is invalid; its error names the resolved path
// ("/../x: Invalid Path"), as CC's does.
func sanitize(p string) (string, error) {
	names := cctext.ResolvePath(p)
	clean := strings.Join(names, "/")
	if len(names) > 0 && names[0] == ".." {
		return "", fmt.Errorf("%s: Invalid Path", display(clean))
	}
	return clean, nil
}

// display is a clean path as CC's messages show it.
func display(clean string) string { return "/" + clean }

// readOnly reports whether a clean path lies in the computer's read-only /rom.
func readOnly(clean string) bool { return within(clean, "rom") }

// within reports whether clean path p is dir or lies inside it.
func within(p, dir string) bool { return p == dir || dir == "" || strings.HasPrefix(p, dir+"/") }

func parent(clean string) string {
	i := strings.LastIndexByte(clean, '/')
	if i < 0 {
		return ""
	}
	return clean[:i]
}

func base(clean string) string { return clean[strings.LastIndexByte(clean, '/')+1:] }

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
