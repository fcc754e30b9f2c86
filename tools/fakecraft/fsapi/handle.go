package fsapi

import (
	"bytes"
	"errors"
	"io"
	"os"

	lua "github.com/yuin/gopher-lua"
)

// openMode is what an fs.open mode string asks for.
type openMode struct {
	read, write, truncate, append, binary bool
}

var (
	modeWrite = openMode{write: true, truncate: true, binary: true}
	// openModes are the mode strings CC: Tweaked 1.113 accepts; anything else raises
	// "Unsupported mode".
	openModes = map[string]openMode{
		"r":   {read: true},
		"rb":  {read: true, binary: true},
		"w":   {write: true, truncate: true},
		"wb":  {write: true, truncate: true, binary: true},
		"a":   {write: true, append: true},
		"ab":  {write: true, append: true, binary: true},
		"r+":  {read: true, write: true},
		"r+b": {read: true, write: true, binary: true},
		"w+":  {read: true, write: true, truncate: true},
		"w+b": {read: true, write: true, truncate: true, binary: true},
	}
)

// lineChunk is how many bytes readLine looks at per read while searching for "\n".
const lineChunk = 256

// handle is an open file. Since CC: Tweaked 1.109 text and binary handles both read and
// write raw bytes; binary mode only changes read() without a count (a byte as a number)
// and write(number) (a single byte). Every method runs with fs.mu held (see locked).
type handle struct {
	fs     *FS // nil for a handle outside any filesystem (ReadHandle)
	m      *mountPoint
	path   string
	mode   openMode
	stream io.ReadSeeker // *bytes.Reader for read-only handles, *os.File otherwise
	file   *os.File      // nil for read-only handles
	size   int64         // the file's size, kept for space accounting while writing
	closed bool
}

// ReadHandle is CC's read handle over data (read, readAll, readLine, seek, close), as
// fs.open(path, "rb") (binary) or fs.open(path, "r") returns for a file holding data; the
// modes differ only in read() without a count. It belongs to no filesystem: it holds no
// lock and counts against no open-file limit, so it is for Lua objects CC builds on its
// ReadHandle, such as a file_transfer's files and an HTTP response; the caller may add
// methods to the table. Lua goroutine only.
func ReadHandle(L *lua.LState, data []byte, binary bool) *lua.LTable {
	mode := openModes["r"]
	if binary {
		mode = openModes["rb"]
	}
	h := &handle{mode: mode, stream: bytes.NewReader(data), size: int64(len(data))}
	return handleTable(L, h)
}

// openRead opens a read-only handle on a snapshot of the file.
func (f *FS) openRead(path string, mode openMode) (*handle, error) {
	data, err := f.readFile(path)
	if err != nil {
		return nil, err
	}
	h := &handle{fs: f, path: path, mode: mode, stream: bytes.NewReader(data), size: int64(len(data))}
	f.open[h] = struct{}{}
	return h, nil
}

// openWrite opens a handle that writes to the host file in the upper layer, copying a file
// that only exists in the lower layer up first when its contents are kept.
func (f *FS) openWrite(path string, mode openMode) (*handle, error) {
	m, local, err := f.writable(path)
	if err != nil {
		return nil, err
	}
	e := m.stat(local)
	if e.dir && mode.read && !mode.truncate {
		return nil, pathErr(path, msgNotAFile)
	}
	if e.dir {
		return nil, pathErr(path, msgWriteDirectory)
	}
	if !e.exists && mode.read && !mode.truncate {
		return nil, pathErr(path, msgNoSuchFile)
	}
	if !e.exists && m.free() < minimumFileSize {
		return nil, pathErr(path, msgOutOfSpace)
	}
	if err := m.prepareParents(path, local); err != nil {
		return nil, err
	}
	var keep []byte
	if e.exists && !mode.truncate && !m.upperStat(local).exists {
		if keep, err = m.readFile(local); err != nil {
			return nil, pathErr(path, msgAccessDenied)
		}
	}
	flags := os.O_CREATE
	switch {
	case mode.read:
		flags |= os.O_RDWR
	default:
		flags |= os.O_WRONLY
	}
	if mode.truncate {
		flags |= os.O_TRUNC
	}
	if mode.append {
		flags |= os.O_APPEND
	}
	file, err := m.upper.OpenFile(osName(local), flags, filePerm)
	if err != nil {
		return nil, pathErr(path, msgAccessDenied)
	}
	if keep != nil {
		if _, err := file.Write(keep); err != nil {
			file.Close()
			return nil, pathErr(path, msgAccessDenied)
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			file.Close()
			return nil, pathErr(path, msgAccessDenied)
		}
	}
	h := &handle{fs: f, m: m, path: path, mode: mode, stream: file, file: file}
	if fi, err := file.Stat(); err == nil {
		h.size = fi.Size()
	}
	m.forget()
	f.open[h] = struct{}{}
	return h, nil
}

// release closes the underlying file; the caller removes h from fs.open.
func (h *handle) release() error {
	if h.closed {
		return nil
	}
	h.closed = true
	if h.file != nil {
		return h.file.Close()
	}
	return nil
}

func (h *handle) close() {
	_ = h.release() // the data is already with the host; a close failure loses nothing
	if h.fs != nil {
		delete(h.fs.open, h)
	}
}

// locked runs fn with the filesystem's lock held, as every method of a handle on one runs.
func (h *handle) locked(fn func()) {
	if h.fs == nil {
		fn()
		return
	}
	h.fs.locked(fn)
}

func (h *handle) position() int64 {
	pos, _ := h.stream.Seek(0, io.SeekCurrent)
	return pos
}

// readUpTo reads at most n bytes from the current position.
func (h *handle) readUpTo(n int64) []byte {
	if rest := h.size - h.position(); n > rest {
		n = max(rest, 0)
	}
	buf := make([]byte, n)
	got, _ := io.ReadFull(h.stream, buf)
	return buf[:got]
}

func (h *handle) atEnd() bool {
	return h.position() >= h.size
}

// readLine returns the next line and whether there was one. Without withTrailing the "\n"
// (and a "\r" just before it) is dropped; a last line without "\n" is returned as is.
func (h *handle) readLine(withTrailing bool) ([]byte, bool) {
	start := h.position()
	var line []byte
	found := false
	buf := make([]byte, lineChunk)
	for !found {
		n, err := h.stream.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			line = append(line, buf[:i+1]...)
			found = true
		} else {
			line = append(line, buf[:n]...)
		}
		if err != nil || n == 0 {
			break
		}
	}
	if len(line) == 0 {
		return nil, false
	}
	_, _ = h.stream.Seek(start+int64(len(line)), io.SeekStart)
	if found && !withTrailing {
		line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
	}
	return line, true
}

// writeBytes writes at the current position (or the end, in append mode), refusing to go
// over the mount's capacity as CC does.
func (h *handle) writeBytes(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	pos := h.size
	if !h.mode.append {
		pos = h.position()
	}
	newSize := max(h.size, pos+int64(len(data)))
	if delta := max(newSize, minimumFileSize) - max(h.size, minimumFileSize); delta > 0 {
		if delta > h.m.free() {
			return errors.New(msgOutOfSpace)
		}
		h.m.charge(delta)
	}
	if _, err := h.file.Write(data); err != nil {
		h.m.forget()
		return errors.New(msgAccessDenied)
	}
	h.size = newSize
	return nil
}

// seek moves the position; it reports CC's soft failure for a negative position.
func (h *handle) seek(whence string, offset int64) (int64, string) {
	var base int64
	switch whence {
	case "set":
	case "cur":
		base = h.position()
	case "end":
		base = h.size
	}
	target := base + offset
	if target < 0 {
		return 0, msgNegativePosition
	}
	if _, err := h.stream.Seek(target, io.SeekStart); err != nil {
		return 0, err.Error()
	}
	return target, ""
}
