// Package fsapi is CC: Tweaked's `fs` API for a fakecraft computer: a computer filesystem
// made of mounts (host directories or fs.FS trees, e.g. an embedded ROM) plus a writable
// overlay, and the Lua functions and file handles that CC programs use on it.
//
// The root "/" is a union: writes land in the overlay host directory, reads look in the
// overlay first and then in the read-only root mount, and deleting a file that only exists
// in the read-only layer hides it (a whiteout kept in memory) without touching the host
// directory. Other mounts (like /rom) are strictly read-only unless they name a writable
// host directory. No path can leave its mount: paths are sanitised as CC does, and host
// directories are opened with os.Root, so symlinks pointing outside them are not followed.
//
// fs.go is that union of mounts; space.go charges what is written against each writable
// mount's capacity, as CC does; handle.go and lua.go are the Lua side (file handles and
// the fs functions); path.go is CC's path rules.
package fsapi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"fakecraft/ccstr"
)

const (
	// MaxOpenFiles is how many file handles a computer may hold open at once (CC's default
	// maximum_open_files).
	MaxOpenFiles = 128
	// dirPerm and filePerm are the host permissions of what the computer creates.
	dirPerm  = 0o755
	filePerm = 0o644
)

// Error texts CC: Tweaked puts after "/<path>: ".
const (
	msgNoSuchFile      = "No such file"
	msgNotAFile        = "Not a file"
	msgNotDirectory    = "Not a directory"
	msgAccessDenied    = "Access denied"
	msgFileExists      = "File exists"
	msgInvalidPath     = "Invalid Path"
	msgWriteDirectory  = "Cannot write to directory"
	msgOutOfSpace      = "Out of space"
	msgCopyIntoItself  = "Can't copy a directory inside itself"
	msgMoveIntoItself  = "Can't move a directory inside itself"
	msgTooManyOpen     = "Too many files already open"
	msgClosedFile      = "attempt to use a closed file"
	msgUnsupportedMode = "Unsupported mode"
)

// Messages of a handle's read and seek, which name no path.
const (
	msgNegativeRead     = "Cannot read a negative number of bytes"
	msgNegativePosition = "Position is negative"
	// msgInvalidWhence is seek's refusal of its first argument; CC's really lacks the
	// closing parenthesis.
	msgInvalidWhence = "bad argument #1 to 'seek' (invalid option '%s'"
)

// Mount attaches a host directory or an fs.FS tree to the computer's filesystem.
type Mount struct {
	// At is the computer path, e.g. "/" or "/rom".
	At string
	// Dir is the host directory. Exactly one of Dir and FS is set.
	Dir string
	// FS is an alternative to Dir, e.g. an embed.FS sub-tree. It is always read-only.
	FS fs.FS
	// ReadOnly forbids writes. A mount at /rom is read-only whatever this says; a mount at
	// "/" is the read-only lower layer whenever New is given an overlay.
	ReadOnly bool
	// Label is what fs.getDrive reports; the default is "hdd" for "/" and the last path
	// component otherwise ("rom" for /rom).
	Label string
	// Capacity is the size in bytes of a writable mount other than the root; zero means
	// MountCapacity (a floppy disk's).
	Capacity int64
}

// PathError is an fs failure as CC words it: "/<path>: <message>".
type PathError struct {
	// Path is the sanitised computer path, without its leading slash.
	Path string
	// Message is CC's text, e.g. "No such file".
	Message string
}

// Error returns "/<path>: <message>".
func (e *PathError) Error() string { return "/" + e.Path + ": " + e.Message }

func pathErr(path, msg string) error { return &PathError{Path: path, Message: msg} }

// plainError is an fs failure whose message names no path (CC's move refusals, "Too many
// files already open").
type plainError string

func (e plainError) Error() string { return string(e) }

// FS is a computer's filesystem. It is safe for concurrent use: mu guards the whiteouts,
// the space accounting and the open-handle count, and is held for every operation.
type FS struct {
	mu     sync.Mutex
	mounts []*mountPoint // longest At first, so the first match is the deepest mount
	open   map[*handle]struct{}
	roots  []*os.Root
}

// mountPoint is one mounted tree: an optional writable upper layer over an optional
// read-only lower layer.
type mountPoint struct {
	at      string // sanitised computer path, "" for the root
	label   string
	upper   *os.Root // writable layer; nil when the mount is read-only
	upperFS fs.FS    // upper.FS(), for directory listing
	lower   fs.FS    // read-only layer; nil when there is none
	hidden  map[string]bool
	space   // a writable mount's accounting (space.go)
}

// New builds a computer filesystem from mounts plus a writable overlay host directory
// (created if missing) that receives every write under "/". With no overlay, a writable
// root mount is written in place and a read-only one makes the whole root read-only.
// Close releases the host directories.
func New(mounts []Mount, overlay string) (*FS, error) {
	f := &FS{open: map[*handle]struct{}{}}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	seen := map[string]bool{}
	var root *mountPoint
	for _, mnt := range mounts {
		at := Sanitise(mnt.At, false)
		if escapes(at) {
			return nil, fmt.Errorf("mount %q: path leaves the root", mnt.At)
		}
		if seen[strings.ToLower(at)] {
			return nil, fmt.Errorf("mount %q: mounted twice", mnt.At)
		}
		seen[strings.ToLower(at)] = true
		mp, err := f.newMountPoint(mnt, at, at == "" && overlay != "")
		if err != nil {
			return nil, err
		}
		if at == "" {
			root = mp
		}
		f.mounts = append(f.mounts, mp)
	}
	if root == nil {
		if overlay == "" {
			return nil, errors.New("no root filesystem: mount \"/\" or give an overlay")
		}
		root = &mountPoint{label: "hdd", space: newSpace(RootCapacity), hidden: map[string]bool{}}
		f.mounts = append(f.mounts, root)
	}
	root.capacity = RootCapacity
	if overlay != "" {
		if err := os.MkdirAll(overlay, dirPerm); err != nil {
			return nil, fmt.Errorf("create overlay: %w", err)
		}
		r, err := f.openRoot(overlay)
		if err != nil {
			return nil, fmt.Errorf("overlay: %w", err)
		}
		root.upper, root.upperFS = r, r.FS()
	}
	sort.SliceStable(f.mounts, func(i, j int) bool { return len(f.mounts[i].at) > len(f.mounts[j].at) })
	ok = true
	return f, nil
}

// newMountPoint opens one mount at the sanitised path at; lower says it is the read-only
// layer under an overlay.
func (f *FS) newMountPoint(mnt Mount, at string, lower bool) (*mountPoint, error) {
	if (mnt.Dir == "") == (mnt.FS == nil) {
		return nil, fmt.Errorf("mount %q: exactly one of Dir and FS must be set", mnt.At)
	}
	mp := &mountPoint{at: at, label: mnt.Label, space: newSpace(MountCapacity), hidden: map[string]bool{}}
	if mnt.Capacity > 0 {
		mp.capacity = mnt.Capacity
	}
	if mp.label == "" {
		mp.label = "hdd"
		if at != "" {
			mp.label = Name(at)
		}
	}
	readOnly := mnt.ReadOnly || mnt.FS != nil || strings.EqualFold(at, "rom") || lower
	switch {
	case mnt.FS != nil:
		mp.lower = mnt.FS
	case readOnly:
		r, err := f.openRoot(mnt.Dir)
		if err != nil {
			return nil, fmt.Errorf("mount %q: %w", mnt.At, err)
		}
		mp.lower = r.FS()
	default:
		r, err := f.openRoot(mnt.Dir)
		if err != nil {
			return nil, fmt.Errorf("mount %q: %w", mnt.At, err)
		}
		mp.upper, mp.upperFS = r, r.FS()
	}
	return mp, nil
}

// ErrMountExists is Mount's refusal: something already exists where the mount would go.
var ErrMountExists = errors.New("location already exists")

// Mount attaches mnt while the computer runs, as a peripheral mounts a disk (CC's
// IComputerAccess.mount): it is refused with ErrMountExists when a file, a directory or
// another mount already exists at mnt.At, and the root cannot be mounted this way.
func (f *FS) Mount(mnt Mount) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := Sanitise(mnt.At, false)
	if at == "" || escapes(at) {
		return fmt.Errorf("mount %q: not a place for a mount", mnt.At)
	}
	if f.exists(at) {
		return ErrMountExists
	}
	mp, err := f.newMountPoint(mnt, at, false)
	if err != nil {
		return err
	}
	f.mounts = append(f.mounts, mp)
	sort.SliceStable(f.mounts, func(i, j int) bool { return len(f.mounts[i].at) > len(f.mounts[j].at) })
	return nil
}

// Unmount removes the mount at the computer path at, as a peripheral unmounts its disk.
// Handles open on it keep working until closed; the host directory stays open until Close.
// Unmounting what is not mounted does nothing.
func (f *FS) Unmount(at string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at = Sanitise(at, false)
	if at == "" {
		return
	}
	f.mounts = slices.DeleteFunc(f.mounts, func(m *mountPoint) bool { return m.at == at })
}

func (f *FS) openRoot(dir string) (*os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open host directory: %w", err)
	}
	f.roots = append(f.roots, r)
	return r, nil
}

// Close closes every open file handle and the host directories. The FS is unusable after.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for h := range f.open {
		if err := h.release(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, r := range f.roots {
		if err := r.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	f.roots = nil
	clear(f.open)
	return errors.Join(errs...)
}

// resolve finds the deepest mount holding the sanitised path and the path inside it.
func (f *FS) resolve(path string) (*mountPoint, string, error) {
	if escapes(path) {
		return nil, "", pathErr(path, msgInvalidPath)
	}
	for _, m := range f.mounts {
		if within(m.at, path) {
			return m, strings.TrimPrefix(path[len(m.at):], "/"), nil
		}
	}
	return nil, "", pathErr(path, msgInvalidPath)
}

// entry is what a path is, as seen through every layer.
type entry struct {
	exists, dir bool
	size        int64
	modified    int64 // milliseconds since the epoch
}

// stat looks a sanitised path up: the mount's layers, then the virtual directories that
// lead to deeper mount points (so /spec exists when /spec/1 is mounted).
func (f *FS) stat(path string) (entry, error) {
	m, local, err := f.resolve(path)
	if err != nil {
		return entry{}, err
	}
	if e := m.stat(local); e.exists {
		return e, nil
	}
	for _, other := range f.mounts {
		if !strings.EqualFold(other.at, path) && within(path, other.at) {
			return entry{exists: true, dir: true}, nil
		}
	}
	return entry{}, nil
}

// osName is the host name of a path inside a mount: CC's bytes as the Java string CC
// holds them in, UTF-8 encoded, as CC: Tweaked's file system stores them (the CC name
// "k\xFCche" is the host file "küche"). ccName is the other way. Every host call goes
// through osName, every host name listed through ccName; nothing else converts.
func osName(local string) string {
	if local == "" {
		return "."
	}
	return ccstr.ToText(local)
}

// ccName is a host file name as the computer sees it: each character up to U+00FF its
// byte, any other '?', as CC: Tweaked hands a Java string to Lua.
func ccName(host string) string { return ccstr.FromText(host) }

func toEntry(fi fs.FileInfo) entry {
	e := entry{exists: true, dir: fi.IsDir(), modified: fi.ModTime().UnixMilli()}
	if fi.ModTime().IsZero() {
		e.modified = 0
	}
	if !e.dir {
		e.size = fi.Size()
	}
	return e
}

func (m *mountPoint) upperStat(local string) entry {
	if m.upper == nil {
		return entry{}
	}
	fi, err := m.upper.Stat(osName(local))
	if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
		return entry{}
	}
	return toEntry(fi)
}

// isHidden reports whether the lower layer's path (or a parent of it) was deleted.
func (m *mountPoint) isHidden(local string) bool {
	for p := local; p != ""; p = parentOf(p) {
		if m.hidden[p] {
			return true
		}
	}
	return false
}

func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func (m *mountPoint) lowerStat(local string) entry {
	if m.lower == nil || m.isHidden(local) {
		return entry{}
	}
	fi, err := fs.Stat(m.lower, osName(local))
	if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
		return entry{}
	}
	return toEntry(fi)
}

func (m *mountPoint) stat(local string) entry {
	if e := m.upperStat(local); e.exists {
		return e
	}
	return m.lowerStat(local)
}

// list merges the names of a directory in both layers (lower names that were deleted or
// that lead nowhere, like escaping symlinks, are left out).
func (m *mountPoint) list(local string, names map[string]bool) {
	add := func(fsys fs.FS, lower bool) {
		entries, err := fs.ReadDir(fsys, osName(local))
		if err != nil {
			return
		}
		for _, de := range entries {
			name := ccName(de.Name())
			child := join(local, name)
			if lower && m.isHidden(child) {
				continue
			}
			if !de.IsDir() && !de.Type().IsRegular() {
				var e entry
				if lower {
					e = m.lowerStat(child)
				} else {
					e = m.upperStat(child)
				}
				if !e.exists {
					continue
				}
			}
			names[name] = true
		}
	}
	if m.upper != nil && m.upperStat(local).dir {
		add(m.upperFS, false)
	}
	if e := m.lowerStat(local); e.dir {
		add(m.lower, true)
	}
}

func (m *mountPoint) readFile(local string) ([]byte, error) {
	if m.upperStat(local).exists {
		return m.upper.ReadFile(osName(local))
	}
	return fs.ReadFile(m.lower, osName(local))
}

// ----- operations on sanitised paths; callers hold f.mu -----

func (f *FS) exists(path string) bool {
	e, err := f.stat(path)
	return err == nil && e.exists
}

func (f *FS) isDir(path string) bool {
	e, err := f.stat(path)
	return err == nil && e.dir
}

func (f *FS) isReadOnly(path string) bool {
	m, _, err := f.resolve(path)
	return err == nil && m.upper == nil
}

func (f *FS) list(path string) ([]string, error) {
	e, err := f.stat(path)
	switch {
	case err != nil:
		return nil, err
	case !e.exists:
		return nil, pathErr(path, msgNoSuchFile)
	case !e.dir:
		return nil, pathErr(path, msgNotDirectory)
	}
	m, local, _ := f.resolve(path)
	names := map[string]bool{}
	m.list(local, names)
	for _, other := range f.mounts {
		if !strings.EqualFold(other.at, path) && within(path, other.at) {
			rest := strings.TrimPrefix(other.at[len(path):], "/")
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				rest = rest[:i]
			}
			names[rest] = true
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (f *FS) getSize(path string) (int64, error) {
	e, err := f.stat(path)
	if err != nil {
		return 0, err
	}
	if !e.exists {
		return 0, pathErr(path, msgNoSuchFile)
	}
	return e.size, nil
}

func (f *FS) readFile(path string) ([]byte, error) {
	e, err := f.stat(path)
	if err != nil {
		return nil, err
	}
	if e.dir {
		return nil, pathErr(path, msgNotAFile)
	}
	if !e.exists {
		return nil, pathErr(path, msgNoSuchFile)
	}
	m, local, _ := f.resolve(path)
	data, err := m.readFile(local)
	if err != nil {
		return nil, pathErr(path, msgNoSuchFile)
	}
	return data, nil
}

// writable resolves a path that is about to be changed.
func (f *FS) writable(path string) (*mountPoint, string, error) {
	m, local, err := f.resolve(path)
	if err != nil {
		return nil, "", err
	}
	if m.upper == nil {
		return nil, "", pathErr(path, msgAccessDenied)
	}
	return m, local, nil
}

// prepareParents makes sure every parent of local is a directory in the upper layer. As
// CC's MountWrapper makes the parent directory (WritableFileMount.makeDirectory), a parent
// that is a file is "File exists" and a file further up "Access denied", both naming the
// parent.
func (m *mountPoint) prepareParents(path, local string) error {
	parent := parentOf(local)
	if parent == "" {
		return nil
	}
	if e := m.stat(parent); e.exists && !e.dir {
		return pathErr(parentOf(path), msgFileExists)
	}
	if m.underAFile(parent) {
		return pathErr(parentOf(path), msgAccessDenied)
	}
	if err := m.upper.MkdirAll(osName(parent), dirPerm); err != nil {
		return pathErr(path, msgAccessDenied)
	}
	return nil
}

// underAFile reports whether a directory above local is a file, so that local cannot be
// made (CC: Java's mkdirs fails, "Access denied").
func (m *mountPoint) underAFile(local string) bool {
	for p := parentOf(local); p != ""; p = parentOf(p) {
		if e := m.stat(p); e.exists && !e.dir {
			return true
		}
	}
	return false
}

func (f *FS) makeDir(path string) error {
	m, local, err := f.writable(path)
	if err != nil {
		return err
	}
	if e := m.stat(local); e.exists {
		if e.dir {
			return nil
		}
		return pathErr(path, msgFileExists)
	}
	// Every directory made costs minimumFileSize, the missing parents too.
	missing := int64(1)
	for p := parentOf(local); p != "" && !m.stat(p).exists; p = parentOf(p) {
		missing++
	}
	if m.free() < missing*minimumFileSize {
		return pathErr(path, msgOutOfSpace)
	}
	if m.underAFile(local) {
		return pathErr(path, msgAccessDenied)
	}
	if err := m.prepareParents(path, local); err != nil {
		return err
	}
	m.forget()
	if err := m.upper.MkdirAll(osName(local), dirPerm); err != nil {
		return pathErr(path, msgAccessDenied)
	}
	return nil
}

func (f *FS) delete(path string) error {
	m, local, err := f.writable(path)
	if err != nil {
		return err
	}
	if local == "" {
		// A mount point (or the root) cannot be removed from inside the computer.
		return pathErr(path, msgAccessDenied)
	}
	m.forget()
	if m.upperStat(local).exists {
		if err := m.upper.RemoveAll(osName(local)); err != nil {
			return pathErr(path, msgAccessDenied)
		}
	}
	if m.lowerStat(local).exists {
		m.hidden[local] = true
	}
	return nil
}

// writeFile replaces a file's contents in the upper layer.
func (f *FS) writeFile(path string, data []byte) error {
	h, err := f.openWrite(path, modeWrite)
	if err != nil {
		return err
	}
	werr := h.writeBytes(data)
	cerr := h.release()
	delete(f.open, h)
	switch {
	case werr != nil:
		return pathErr(path, werr.Error())
	case cerr != nil:
		return pathErr(path, msgAccessDenied)
	}
	return nil
}

func (f *FS) copyChecks(src, dst, intoItself string) error {
	if !f.exists(src) {
		return pathErr(src, msgNoSuchFile)
	}
	if f.exists(dst) {
		return pathErr(dst, msgFileExists)
	}
	if within(src, dst) {
		return pathErr(src, intoItself)
	}
	return nil
}

func (f *FS) copy(src, dst string) error {
	if _, _, err := f.resolve(src); err != nil {
		return err
	}
	if _, _, err := f.writable(dst); err != nil {
		return err
	}
	if err := f.copyChecks(src, dst, msgCopyIntoItself); err != nil {
		return err
	}
	return f.copyTree(src, dst)
}

// copyTree copies through the union view, so any mount can be the source.
func (f *FS) copyTree(src, dst string) error {
	e, err := f.stat(src)
	if err != nil {
		return err
	}
	if e.dir {
		if err := f.makeDir(dst); err != nil {
			return err
		}
		names, err := f.list(src)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := f.copyTree(join(src, n), join(dst, n)); err != nil {
				return err
			}
		}
		return nil
	}
	data, err := f.readFile(src)
	if err != nil {
		return err
	}
	return f.writeFile(dst, data)
}

// move renames src to dst. Its refusals name no path, as CC's do: a read-only side
// (checked first, so a missing file on the ROM is "Access denied"), a missing source, an
// existing destination, a directory moved into itself.
func (f *FS) move(src, dst string) error {
	for _, p := range []string{src, dst} {
		m, _, err := f.resolve(p)
		if err != nil {
			return err
		}
		if m.upper == nil {
			return plainError(msgAccessDenied)
		}
	}
	switch {
	case !f.exists(src):
		return plainError(msgNoSuchFile)
	case f.exists(dst):
		return plainError(msgFileExists)
	case within(src, dst):
		return plainError(msgMoveIntoItself)
	}
	ms, local, _ := f.resolve(src)
	md, dlocal, _ := f.resolve(dst)
	// Fast path: the whole source lives in the upper layer of the same mount.
	if ms == md && ms.upperStat(local).exists && !ms.lowerStat(local).exists {
		if err := md.prepareParents(dst, dlocal); err != nil {
			return err
		}
		if err := md.upper.Rename(osName(local), osName(dlocal)); err != nil {
			return pathErr(src, msgAccessDenied)
		}
		return nil
	}
	// As CC's FileSystem.move across mounts: copy, then delete, which refuses a mount point
	// (a disk moved away leaves its copy, and stays).
	if err := f.copyTree(src, dst); err != nil {
		return err
	}
	return f.delete(src)
}

// ----- Go-side helpers for the computer -----

// ReadFile returns the contents of the file at a computer path.
func (f *FS) ReadFile(path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readFile(Sanitise(path, false))
}

// WriteFile creates or replaces the file at a computer path, creating parent directories.
func (f *FS) WriteFile(path string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writeFile(Sanitise(path, false), data)
}

// Exists reports whether a computer path names a file or directory.
func (f *FS) Exists(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exists(Sanitise(path, false))
}

// IsDir reports whether a computer path names a directory.
func (f *FS) IsDir(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.isDir(Sanitise(path, false))
}

// List returns the sorted names in the directory at a computer path.
func (f *FS) List(path string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.list(Sanitise(path, false))
}
