package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
)

// maxFileBytes bounds a file get, cat or put moves: the HTTP API's own bound.
const maxFileBytes = hostapi.MaxUploadBytes

// Paths on a computer are host text by the path rule (cctext.PathToCC): é is the byte E9, and
// \xNN names any byte, which is how ls prints a name's control bytes; so what ls prints is a
// path every command accepts back.

// LsCmd lists a directory.
type LsCmd struct {
	APIFlags
	TraposID string      `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Path     string      `arg:"" optional:"" default:"/" help:"The directory on the computer (default /); \\xNN names a byte."`
	Timeout  CallTimeout `default:"10s" help:"How long the whole call may take (more than 0, at most 60s)."`
}

// Run prints one line per entry: directories with a trailing slash, files with their size;
// a name no path on the computer reaches (computer.Entry.ReadsAs) is said on stderr after it.
func (c *LsCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	entries, err := c.client().List(ctx, c.TraposID, c.Path, c.Timeout.Duration())
	if err != nil {
		if protocol.CodeOf(err) == protocol.CodeFSError && strings.HasSuffix(err.Error(), "Not a directory") {
			return named("computer "+typedID(c.TraposID)+" ls "+cctext.StoredPath(c.Path), errors.New("not a directory (use cat or get for a file)"))
		}
		return callFailure(c.TraposID, "ls "+c.Path, c.Timeout, err)
	}
	if err := writeListing(out, entries); err != nil {
		return err
	}
	dir := strings.TrimSuffix(cctext.StoredPath(c.Path), "/")
	for _, e := range entries {
		if e.ReadsAs != "" {
			fmt.Fprintf(stderr, "trap-sandbox: %s: a name no path on the computer reaches (%s), so its path reads %s, another file or none (what ls shows of it is that path's): %s\n",
				cctext.Show(dir+"/"+e.Name, false), cctext.NameRules, cctext.Show(e.ReadsAs, false), cctext.Unreachable)
		}
	}
	return nil
}

// writeListing prints one line per entry: the size right-aligned in a column (blank for a
// directory), two spaces, then the name as a path argument (cctext.ShowPath: control bytes
// as \xNN), a directory's with a trailing slash.
func writeListing(out io.Writer, entries []computer.Entry) error {
	width := 0
	for _, e := range entries {
		if !e.IsDir {
			width = max(width, len(strconv.FormatInt(e.Size, 10)))
		}
	}
	var b bytes.Buffer
	for _, e := range entries {
		name := cctext.ShowWirePath(e.Name)
		if e.IsDir {
			fmt.Fprintf(&b, "%*s  %s/\n", width, "", name)
		} else {
			fmt.Fprintf(&b, "%*d  %s\n", width, e.Size, name)
		}
	}
	_, err := out.Write(b.Bytes())
	return err
}

// FileFlags are what cat, get and put share.
type FileFlags struct {
	Binary  bool        `help:"Move the file's bytes unchanged instead of as text (text: the computer's byte E9 is é in UTF-8 and back)."`
	Timeout CallTimeout `default:"60s" help:"How long the whole transfer may take (more than 0, at most 60s)."`
}

// CatCmd prints a file.
type CatCmd struct {
	APIFlags
	FileFlags
	TraposID string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Path     string `arg:"" help:"The file on the computer; \\xNN names a byte."`
}

// Run prints the file as text (control characters but \n and \t as \xNN), or its bytes with
// --binary.
func (c *CatCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	data, err := c.client().Read(ctx, c.TraposID, c.Path, maxFileBytes, c.Timeout.Duration())
	if err != nil {
		return readFailure(c.TraposID, "cat", c.Path, c.Timeout, err)
	}
	if note := readsAnother(c.Path); note != "" {
		fmt.Fprintln(stderr, "trap-sandbox: "+note)
	}
	if !c.Binary {
		data = []byte(cctext.Show(cctext.FromCC(data), true))
	}
	_, err = out.Write(data)
	return err
}

// readsAnother says, for a read of remote, a path one of whose names CC's fs reads as another
// (cctext.ReadsAnother), which path it read and that a file listed under the name given is
// another, which nothing opens: cat of a\x01b.txt, put on the drive from outside CC, printed
// ab.txt's bytes without a word. "" for a path whose names name themselves.
func readsAnother(remote string) string {
	stored, ok := cctext.ReadsAnother(remote)
	if !ok {
		return ""
	}
	cc, _ := cctext.PathToCC(remote)
	return fmt.Sprintf("%s reads %s (%s): this is that file's content; a file the computer lists as %s, put on its drive from outside CC, is another: %s",
		cctext.ShowPath([]byte(cc)), cctext.Show(stored, false), cctext.NameRules, cctext.ShowPath([]byte(path.Base(cc))), cctext.Unreachable)
}

// readFailure is failure of cat's or get's read of remote: a directory, which the computer
// answers "Not a file", is named so with what lists it, as ls names cat and get for a file
// (CC's words alone left the person to guess).
func readFailure(traposID, command, remote string, timeout CallTimeout, err error) error {
	if protocol.CodeOf(err) == protocol.CodeFSError && strings.HasSuffix(err.Error(), "Not a file") {
		fix := "use ls to list it"
		if command == "get" {
			fix = "get -r copies it with everything in it; ls lists it"
		}
		return named("computer "+typedID(traposID)+" "+command+" "+cctext.StoredPath(remote), errors.New("a directory, not a file ("+fix+")"))
	}
	return callFailure(traposID, command+" "+remote, timeout, err)
}

// GetCmd copies a computer's file to a local file.
type GetCmd struct {
	APIFlags
	FileFlags
	Recursive bool   `short:"r" help:"Copy a directory with everything in it, each file's bytes unchanged (a backup), into Local as cp -r does; each file may take --timeout."`
	TraposID  string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Remote    string `arg:"" help:"The file on the computer; \\xNN names a byte."`
	Local     string `arg:"" help:"The local file to write, or a directory to write it into ('-' for stdout)."`
}

// Run fetches the file and writes it locally (as UTF-8 text, or its bytes with --binary),
// into Local when it is a directory, as cp does, or through the open descriptor Local names
// (/dev/stdout as '-', /dev/fd/N: descriptorOf); it prints what it copied. Text that goes to
// a terminal is shown as cat shows it (shownOn).
func (c *GetCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	if c.Recursive {
		return c.runTree(ctx, out, stderr)
	}
	if err := c.checkLocal(); err != nil {
		return err // before the file is read: a transfer of up to 60 s that no file can take
	}
	fd, isDescriptor := descriptorOf(c.Local)
	var passed *os.File // a descriptor the command was started with, other than stdout and stderr
	if isDescriptor && fd != 1 && fd != 2 {
		var err error
		if passed, err = takeDescriptor(fd); err != nil {
			return fmt.Errorf("%s names descriptor %d, which this command cannot write to (%w): open it for writing in the shell (get … %s %d>>FILE) or name a file", localName(c.Local), fd, pathless(err), localName(c.Local), fd)
		}
		defer passed.Close()
	}
	data, err := c.client().Read(ctx, c.TraposID, c.Remote, maxFileBytes, c.Timeout.Duration())
	if err != nil {
		return readFailure(c.TraposID, "get", c.Remote, c.Timeout, err)
	}
	size, raw := len(data), data
	// A file that is not text (control bytes, as MCP's read_file judges it) changes when
	// written as text: said once it is written, with the fix, as put says it of a local file.
	warning := func() {}
	if !c.Binary {
		if !cctext.IsText(data) {
			warning = func() {
				fmt.Fprintf(stderr, "trap-sandbox: warning: %s holds control bytes (it looks binary) and was written as text, which changed its bytes; get --binary copies them unchanged\n",
					cctext.Show(c.Remote, false))
			}
		}
		data = []byte(cctext.FromCC(data))
	}
	if c.Local == "-" || (isDescriptor && fd == 1) {
		if _, err = out.Write(c.shownOn(isTerminal(out.Writer), data)); err != nil {
			return err
		}
		warning()
		return nil // stdout holds the file alone
	}
	local := c.Local
	switch {
	case isDescriptor && fd == 2:
		_, err = stderr.Write(c.shownOn(isTerminal(stderr), data))
	case passed != nil:
		if _, err = passed.Write(c.shownOn(isTerminal(passed), data)); err != nil {
			err = fmt.Errorf("write %s: %w", localName(local), pathless(err))
		}
	default:
		if local, err = c.localFile(); err == nil {
			st, statErr := os.Stat(local)
			toDevice := statErr == nil && isCharDevice(st)
			err = writeLocal(local, c.shownOn(toDevice, data))
			if !c.Binary && !toDevice && len(data) != size && cctext.IsText(raw) {
				// A text file with bytes 80-FF (a player's é) is longer in UTF-8: right for
				// reading, a trap for a backup, which put back as text does not always restore.
				// Said once, as the control bytes' warning is, with how to keep the bytes.
				warning = func() {
					fmt.Fprintf(stderr, "trap-sandbox: note: %s was written as UTF-8 text, so its %s are %d here (each byte 80-FF is two); get --binary, or get -r for a directory, copies the bytes unchanged\n",
						cctext.Show(c.Remote, false), count(size, "byte"), len(data))
				}
			}
		}
	}
	if err != nil {
		return err
	}
	warning()
	// The path the computer read (cctext.StoredPath), as put prints the one it wrote.
	_, err = fmt.Fprintf(out, "%s %s -> %s (%s)\n", typedID(c.TraposID), cctext.StoredPath(c.Remote), localName(local), count(size, "byte"))
	return err
}

// shownOn is data as get writes it where onTerminal says it goes: to a terminal, a file going
// as text is shown as cat shows it (control bytes but tab and line breaks as \xNN), since the
// terminal takes the bytes a computer's file holds as its own commands ("\x1b]52;c;…\a" set
// the operator's clipboard, "\x1b]0;…\a" the window's title, "\x1b[2J" cleared the screen,
// "\r" wrote the rest of a line over its start); anywhere else, and with --binary, which asks
// for the bytes, unchanged.
func (c *GetCmd) shownOn(onTerminal bool, data []byte) []byte {
	if c.Binary || !onTerminal {
		return data
	}
	return []byte(cctext.Show(string(data), true))
}

// isTerminal reports whether w is an open file that is a terminal, judged as isCharDevice.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && isCharDevice(st)
}

// isCharDevice reports whether st is a character device: a terminal (/dev/tty, /dev/pts/N),
// or another device no file is kept on (/dev/null), where text shown as cat shows it loses
// nothing. A pipe or a file is not one.
func isCharDevice(st os.FileInfo) bool {
	return st.Mode()&os.ModeCharDevice != 0
}

// localFile is the local file to write: Local, or in it when it is a directory, named after
// the file the computer read, as cp does.
func (c *GetCmd) localFile() (string, error) {
	// (A name ending in a slash means a directory, as cp reads it: checkLocal refused one that
	// is not there, which writing as a file fails with "is a directory", naming no fix.)
	st, err := os.Stat(c.Local)
	if err != nil || !st.IsDir() {
		return c.Local, nil
	}
	cc, err := cctext.PathToCC(c.Remote)
	if err != nil {
		return "", err
	}
	// Named after the file the computer read, as CC resolved the path: "/door.lua/." is
	// door.lua, where the path's last part, ".", named the directory itself.
	name := cctext.PathName(cc)
	if name == "" {
		return "", fmt.Errorf("%s names no file to call the local one after: name the local file to write", cctext.Show(c.Remote, false))
	}
	return filepath.Join(c.Local, cctext.FromCC([]byte(name))), nil
}

// checkLocal refuses a local name whose directory does not exist, naming it and the fix
// ("write /tmp/nodir/x: no such file or directory" named neither, and came after the read).
func (c *GetCmd) checkLocal() error {
	local := c.Local
	if local == "-" {
		return nil
	}
	if _, err := os.Stat(local); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or a failure the write names
	}
	dir := local
	if !strings.HasSuffix(local, "/") && !strings.HasSuffix(local, string(filepath.Separator)) {
		dir = filepath.Dir(local)
		if _, err := os.Stat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	return fmt.Errorf("the local directory %s does not exist: create it (mkdir -p %s) or name the file to write", localName(dir), localName(dir))
}

// writeLocal replaces the local file name with data as a whole, as put does on the computer:
// the data goes to a temporary file beside it, renamed over it only once complete, so a write
// that fails (a full disk, a file size limit) leaves the old file byte for byte. A symbolic
// link is written through, as cp does, and a replaced file keeps its permissions; a device or
// a pipe is written to in place. A file it makes is the host user's alone (copiedFileMode), as
// get -r's: get 7:kitchen /.settings . would otherwise hand every user of the host the
// computer's credential.
func writeLocal(name string, data []byte) error { return writeLocalAs(name, data, copiedFileMode) }

// writeLocalAs is writeLocal with perm the permissions of a file it makes (a file there keeps
// its own).
func writeLocalAs(name string, data []byte, made os.FileMode) error {
	target := name
	if st, err := os.Lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
		if resolved, err := filepath.EvalSymlinks(name); err == nil {
			target = resolved
		} else if dest, err := os.Readlink(name); err == nil {
			// A link to nothing yet: its file is created, as writing through it would.
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(name), dest)
			}
			target = dest
		}
	}
	perm := made
	keepPerm := false
	if st, err := os.Stat(target); err == nil {
		if !st.Mode().IsRegular() {
			// A device or a pipe (/dev/null, a FIFO) is written to, never replaced.
			if err := os.WriteFile(target, data, perm); err != nil {
				return fmt.Errorf("write %s: %w", localName(name), pathless(err))
			}
			return nil
		}
		perm, keepPerm = st.Mode().Perm(), true
	}
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	// A short name of its own, not the target's with more: that could pass the 255 bytes a
	// name may have.
	temp := filepath.Join(filepath.Dir(target), ".trap-sandbox-get-"+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", localName(name), pathless(err))
	}
	_, err = f.Write(data)
	if err == nil && keepPerm {
		err = f.Chmod(perm) // the umask applied to the new file; the old file's permissions stand
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(temp, target)
	}
	if err != nil {
		_ = os.Remove(temp)
		return fmt.Errorf("write %s: %w (the local file is unchanged)", localName(name), pathless(err))
	}
	return nil
}

// pathless is an os error without the path it names (the temporary file's, or the one the
// caller's message already names).
func pathless(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// PutCmd copies a local file to a computer.
type PutCmd struct {
	APIFlags
	FileFlags
	Recursive bool   `short:"r" help:"Copy a local directory with everything in it, each file's bytes unchanged (get -r's way back), into Remote as cp -r does; each file may take --timeout."`
	TraposID  string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Local     string `arg:"" help:"The local file to send ('-' for stdin)."`
	Remote    string `arg:"" help:"The path on the computer, or a directory to put the file into; \\xNN names a byte."`
}

// Run sends the file (UTF-8 text by the text rule, or its bytes with --binary) into Remote,
// or into Remote/<the local name> when Remote is a directory, as cp does. The file is written
// to a temporary name and moved into place, so the old one is never lost. A file that is not
// UTF-8 text sent as text gets one warning naming --binary, not one per character.
func (c *PutCmd) Run(ctx context.Context, out Stdout, in Stdin, stderr io.Writer) error {
	if c.Recursive {
		return c.runTree(ctx, out, in, stderr)
	}
	data, err := readLocal(c.Local, in)
	if err != nil {
		return c.swapped(err)
	}
	if len(data) > maxFileBytes {
		return fmt.Errorf("%s holds more than %d bytes (16 MiB), the most put moves: send a smaller file", localName(c.Local), maxFileBytes)
	}
	client := c.client()
	remote := c.Remote
	// --timeout bounds the whole put, the look at whether Remote is a directory included.
	ctx, cancel := context.WithTimeout(ctx, c.Timeout.Duration())
	defer cancel()
	isDir := c.namesDirectory()
	var looked *computer.Look // what Remote names, when the computer said
	if !isDir {
		if looked, err = c.look(ctx, client); err != nil {
			return callFailure(c.TraposID, "put "+remote, c.Timeout, computer.NothingWritten(err, remote))
		}
		isDir = looked != nil && looked.IsDir()
	}
	if isDir {
		if c.Local == "-" {
			return namedf("computer "+typedID(c.TraposID)+" put", "%s is a directory; name the file to write from stdin", cctext.Show(remote, false))
		}
		remote = strings.TrimSuffix(remote, "/") + "/" + filepath.Base(c.Local)
	}
	// What the text rule changed is said once the file is on the computer: a write the
	// computer refuses changed nothing.
	var warnings func()
	if !c.Binary {
		// Whether the file is Lua code is read from the name it is written under
		// (cctext.LuaFile): notes.txt put into /docs is text, put as /programs/snow or into
		// /startup a program.
		cc, reps := cctext.FileToCC(remote, string(data))
		warnings = func() { warn(stderr, reps, nil) } // said once the write is done
		if !utf8.Valid(data) && cc != string(data) {
			// A binary file's bytes read as text hold thousands of characters CC cannot hold:
			// one line says what the fix is, not one per character. (A Latin-1 text file, whose
			// bytes are not UTF-8 and stand for themselves, arrives unchanged: no warning.)
			replaced := ""
			if n := cctext.Count(reps); n > 0 {
				replaced = fmt.Sprintf(" (%d characters CC cannot hold became %q)", n, string(cctext.Unmappable))
			}
			warnings = func() {
				fmt.Fprintf(stderr, "trap-sandbox: warning: %s is not UTF-8 text (it looks binary) and was sent as text, which changed its bytes%s; put --binary sends them unchanged\n",
					localName(c.Local), replaced)
			}
		}
		data = []byte(cc)
	}
	if isDir || looked == nil {
		err = client.Write(ctx, c.TraposID, remote, data, c.Timeout.Duration())
	} else {
		err = client.WriteLooked(ctx, c.TraposID, *looked, data, c.Timeout.Duration())
	}
	if err != nil {
		return callFailure(c.TraposID, "put "+remote, c.Timeout, err)
	}
	if warnings != nil {
		warnings()
	}
	_, err = fmt.Fprintf(out, "%s -> %s %s (%s)\n", localName(c.Local), typedID(c.TraposID), cctext.StoredPath(remote), count(len(data), "byte"))
	return err
}

// localName is a local path as put and get print it: control bytes and bytes that are not
// UTF-8 as \xNN (cctext.Show), as a computer's names are, so that a name holding an escape
// sequence (one made from a computer's file name by get into a directory) cannot act on the
// terminal; and "-" as stdin.
func localName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return cctext.Show(name, false)
}

// readLocal reads what put sends: the local file, or stdin for "-". It reads at most one byte
// more than maxFileBytes, so a file too big to send, or one without an end (/dev/zero, a pipe
// that never closes after that much), is refused at once instead of filling the memory.
// swapped is err, opening Local, with the order of put's arguments named when Local is no
// local file and reads as a computer's id (7:kitchen): put 7:kitchen ./notes.txt /notes.txt
// takes the computer first, and put ./notes.txt 7:kitchen /notes.txt, the order of scp,
// said only "open 7:kitchen: no such file or directory".
func (c *PutCmd) swapped(err error) error {
	id, _, found := strings.Cut(c.Local, ":")
	if !errors.Is(err, fs.ErrNotExist) || !found || id == "" || strings.Trim(id, "0123456789") != "" {
		return err
	}
	return fmt.Errorf("%w: put takes the computer first (trap-sandbox put %s %s %s)", err, typedID(c.Local), localName(c.TraposID), cctext.Show(c.Remote, false))
}

func readLocal(name string, in io.Reader) ([]byte, error) {
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", localName(name), pathless(err)) // "open NAME: no such file or directory"
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.IsDir() {
			return nil, fmt.Errorf("%s is a directory: give a file, or copy it with everything in it with put -r", localName(name))
		}
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", localName(name), pathless(err))
	}
	return data, nil
}

// namesDirectory reports whether Remote can only name a directory, whatever the computer
// holds: it ends in '/', '.' or '..' (cctext.DirectoryEnding, the rule the file routes refuse
// to write such a path by). A path CC cannot hold is left to Write, which names it.
func (c *PutCmd) namesDirectory() bool {
	cc, err := cctext.PathToCC(c.Remote)
	if err != nil {
		return false
	}
	_, ok := cctext.DirectoryEnding(cc)
	return ok
}

// look asks what Remote names (computer.Client.Look), in the time ctx has left; the write
// of a file there does not ask again. The computer's refusal to look says nothing (nil: no
// permission to read, which Write answers); anything else (no answer in time, a computer not
// connected, a busy one) ends the put.
func (c *PutCmd) look(ctx context.Context, client *computer.Client) (*computer.Look, error) {
	deadline, _ := ctx.Deadline()
	l, err := client.Look(ctx, c.TraposID, c.Remote, time.Until(deadline))
	if pe, ok := errors.AsType[*protocol.Error](err); ok && (pe.ByComputer || pe.Code == protocol.CodeBadPayload) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// RmCmd deletes a file on a computer.
type RmCmd struct {
	APIFlags
	Recursive bool        `short:"r" help:"Delete a directory too, with everything in it (without it, a directory is refused)."`
	TraposID  string      `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Path      string      `arg:"" help:"The file on the computer; \\xNN names a byte."`
	Timeout   CallTimeout `default:"10s" help:"How long the whole call may take (more than 0, at most 60s)."`
}

// Run deletes the file, and prints nothing, as rm does. CC's fs.delete takes a directory with
// everything in it; so does rm -r, and only it, so that a slip of the path (a directory where
// a file was meant) does not empty a program's directory.
func (c *RmCmd) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout.Duration())
	defer cancel()
	client := c.client()
	deadline, _ := ctx.Deadline()
	// A directory in /rom is not one rm -r deletes either: its delete is refused at once, with
	// why (computer.Delete), where "rm -r deletes it" sent the user on to that refusal.
	if !c.Recursive && !computer.InROM(c.Path) {
		isDir, err := client.IsDir(ctx, c.TraposID, c.Path, time.Until(deadline))
		if isDir {
			return named("computer "+typedID(c.TraposID)+" rm "+cctext.Show(c.Path, false), errors.New("it is a directory: rm -r deletes it with everything in it"))
		}
		if pe, ok := errors.AsType[*protocol.Error](err); err != nil && (!ok || !(pe.ByComputer || pe.Code == protocol.CodeBadPayload)) {
			return callFailure(c.TraposID, "rm "+c.Path, c.Timeout, computer.NothingDeleted(err, c.Path))
		}
	}
	if err := client.Delete(ctx, c.TraposID, c.Path, time.Until(deadline)); err != nil {
		return callFailure(c.TraposID, "rm "+c.Path, c.Timeout, err)
	}
	return nil
}

// ExecCmd runs a Lua chunk.
type ExecCmd struct {
	APIFlags
	TraposID string      `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Code     string      `arg:"" help:"The Lua code, e.g. 'os.getComputerLabel()', or '-' to read it from stdin; text (é is the byte E9)."`
	Timeout  CallTimeout `default:"10s" help:"How long the whole call may take (more than 0, at most 60s); the computer stops the chunk 2s before it, or halfway through a timeout under 4s."`
}

// Run prints the chunk's output, then its return values one per line as JSON; a chunk that
// raised prints its error and fails.
func (c *ExecCmd) Run(ctx context.Context, out Stdout, in Stdin, stderr io.Writer) error {
	code := c.Code
	if code == "-" {
		data, err := io.ReadAll(in)
		if err != nil {
			return fmt.Errorf("read the code from stdin: %w", err)
		}
		code = string(data)
	}
	ans, err := c.client().Exec(ctx, c.TraposID, code, c.Timeout.Duration())
	warn(stderr, ans.Warnings, err)
	if err != nil {
		return c.runFailure(c.TraposID, "exec", "", c.Timeout.Duration(), err)
	}
	if _, err := io.WriteString(out, cctext.Show(ans.Output, true)); err != nil {
		return err
	}
	if ans.OutputTruncated {
		outputCut(stderr)
	}
	poweredOff(stderr, c.TraposID, ans.PowerOff)
	relabelled(ctx, stderr, c.client(), c.TraposID, ans.PowerOff)
	if ans.Error != "" {
		// The traposId first, as failure words it: "on 7:: lua:1: …" doubled an unlabelled
		// computer's colon.
		return namedf("computer "+typedID(c.TraposID)+" exec", "the chunk failed: %s", cctext.Show(ans.Error, false))
	}
	for _, r := range ans.Returns {
		fmt.Fprintln(out, cctext.Show(readableJSON(r), false))
	}
	return nil
}

// outputCut says on stderr that the output printed is not all there was, and where it was
// cut, as MCP's outputCut says it: stdout holds only what the computer printed, which a
// script may be reading. It said only that it was cut, and the rows on each side of the cut
// read as one run of lines.
func outputCut(stderr io.Writer) {
	fmt.Fprintln(stderr, "trap-sandbox: warning: "+computer.OutputCutNote("trap-sandbox get"))
}

// poweredOff says on stderr that the run turned the computer off or restarted it: the code
// ran, and the computer goes away as the call ends. traposID is as typed: the note names the
// computer it reads as (7:kitchen\x20, where the typed form shown again was 7:kitchen\x5cx20).
func poweredOff(stderr io.Writer, traposID, powerOff string) {
	if note := computer.PowerOffNote(cctext.TraposID(traposID), powerOff); note != "" {
		fmt.Fprintln(stderr, "trap-sandbox: "+note)
	}
}

// relabelled says on stderr that the run changed the computer's label, with its new traposId
// (computer.Client.RelabelledByRun), unless it turned the computer off: the next call to the
// old id is not_connected once the computer says hello under the new one.
func relabelled(ctx context.Context, stderr io.Writer, client *computer.Client, traposID, powerOff string) {
	if powerOff != "" {
		return
	}
	if note := client.RelabelledByRun(ctx, traposID); note != "" {
		fmt.Fprintln(stderr, "trap-sandbox: "+cctext.Show(note, false)) // the note names the computer
	}
}

// RunCmd runs a shell command line.
type RunCmd struct {
	APIFlags
	TraposID string      `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Command  string      `arg:"" help:"The command line, e.g. 'ls /rom' (not empty); text (é is the byte E9)."`
	Timeout  CallTimeout `default:"10s" help:"How long the whole call may take (more than 0, at most 60s); the computer stops the program 2s before it, or halfway through a timeout under 4s."`
}

// Validate refuses a command line that is empty or only spaces as the command line is read: a
// usage error (exit status 2, with the usage), as request's <json> that is no JSON is; the
// computer refuses it all the same (payload.command must be a non-empty string), and that was a
// failed call (exit status 1). The spaces are Lua's %s, which the computer's check matches.
func (c *RunCmd) Validate() error {
	if strings.Trim(c.Command, " \t\n\v\f\r") == "" {
		return errors.New("<command>: give the command line to run, e.g. 'ls /rom'")
	}
	return nil
}

// Run prints the program's output and fails when it did.
func (c *RunCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	ans, err := c.client().Run(ctx, c.TraposID, c.Command, c.Timeout.Duration())
	warn(stderr, ans.Warnings, err)
	if err != nil {
		return c.runFailure(c.TraposID, "run", c.Command, c.Timeout.Duration(), err)
	}
	if _, err := io.WriteString(out, cctext.Show(ans.Output, true)); err != nil {
		return err
	}
	if ans.OutputTruncated {
		outputCut(stderr)
	}
	poweredOff(stderr, c.TraposID, ans.PowerOff)
	relabelled(ctx, stderr, c.client(), c.TraposID, ans.PowerOff)
	if !ans.Success && ans.PowerOff == "" {
		return namedf("computer "+typedID(c.TraposID)+" run", "%q failed", c.Command)
	}
	return nil
}
