package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
)

// putTree is put -r's copy of a local directory to a computer, the way back of get -r: each
// file's bytes unchanged, each written whole (Write's temporary name and move).
type putTree struct {
	put    *PutCmd
	client *computer.Client
	out    io.Writer
	stderr io.Writer

	tally
}

// runTree copies Local with all it holds to the computer, as cp -r does: into Remote/<Local's
// name> when Remote is a directory there, else as Remote. A file named with -r is put as one
// file (as bytes). A local name the path rule cannot give CC (a character above U+00FF), a
// symbolic link, or a file the computer refuses (a protected path) is left out, said on stderr;
// any other failure ends the copy with what was copied.
func (c *PutCmd) runTree(ctx context.Context, out Stdout, in Stdin, stderr io.Writer) error {
	st, err := os.Stat(c.Local)
	if err != nil {
		return c.swapped(fmt.Errorf("open %s: %w", localName(c.Local), pathless(err)))
	}
	if !st.IsDir() {
		c.Binary, c.Recursive = true, false
		return c.Run(ctx, out, in, stderr)
	}
	client := c.client()
	remote := strings.TrimSuffix(c.Remote, "/")
	lookCtx, cancel := context.WithTimeout(ctx, c.Timeout.Duration())
	looked, err := c.look(lookCtx, client)
	cancel()
	if err != nil {
		return callFailure(c.TraposID, "put -r "+c.Remote, c.Timeout, computer.NothingWritten(err, c.Remote))
	}
	if looked != nil && looked.IsDir() {
		base := filepath.Base(filepath.Clean(c.Local))
		name, ok := ccName(base)
		if !ok {
			return fmt.Errorf("%s: %s: name the directory to write on the computer", localName(c.Local), cannotName)
		}
		remote += "/" + name
	}
	if remote == "" {
		remote = "/"
	}
	t := &putTree{put: c, client: client, out: out, stderr: stderr}
	err = t.dir(ctx, c.Local, remote)
	return t.finish(out, localName(c.Local), typedID(c.TraposID)+" "+cctext.StoredPath(remote), err)
}

// ccName is a local name as a path argument (cctext.ShowPath) of the bytes the text rule gives
// CC; false when CC cannot name a file so: a character it cannot hold, or a name CC's fs reads
// as another (cctext.NamesItself: a backslash, which it reads as /, a directory; a character
// it drops from paths; a space around the name, which it trims), which would write the file
// under another name (get -r leaves such a name out the same way). Dots alone ("." and "..",
// the directory named as cp -r reads them) are kept.
func ccName(name string) (string, bool) {
	cc, reps := cctext.ToCC("path", name)
	if len(reps) > 0 || !cctext.NamesItself(cc) && strings.Trim(cc, ".") != "" {
		return "", false
	}
	return cctext.ShowPath([]byte(cc)), true
}

// cannotName is why put -r leaves out a local name ccName refuses.
const cannotName = "CC cannot name a file so (a character it cannot hold, a control character, a backslash, one of " +
	cctext.DroppedFromPaths + ", or a space at either end)"

// dir copies the local directory local to the computer's remote, which it makes.
func (t *putTree) dir(ctx context.Context, local, remote string) error {
	if remote != "/" {
		if err := t.client.MakeDir(ctx, t.put.TraposID, remote, t.put.Timeout.Duration()); err != nil {
			if t.dirs > 0 && t.leftOut(remote, err) { // the top's refusal (a file there) ends the copy
				return nil
			}
			return callFailure(t.put.TraposID, "put -r "+remote, t.put.Timeout, err)
		}
	}
	t.dirs++
	entries, err := os.ReadDir(local)
	if err != nil {
		return fmt.Errorf("read %s: %w", localName(local), pathless(err))
	}
	for _, e := range entries {
		here := filepath.Join(local, e.Name())
		name, ok := ccName(e.Name())
		if !ok {
			t.skipped++
			fmt.Fprintf(t.stderr, "trap-sandbox: %s left out: %s\n", localName(here), cannotName)
			continue
		}
		there := strings.TrimSuffix(remote, "/") + "/" + name
		switch {
		case e.IsDir():
			if err := t.dir(ctx, here, there); err != nil {
				return err
			}
			continue
		case !e.Type().IsRegular():
			t.skipped++
			fmt.Fprintf(t.stderr, "trap-sandbox: %s left out: not a file or a directory (a link, a device or a pipe)\n", localName(here))
			continue
		}
		data, err := readLocal(here, nil)
		if err != nil {
			return err
		}
		if len(data) > maxFileBytes {
			return fmt.Errorf("%s holds more than %d bytes (16 MiB), the most put moves", localName(here), maxFileBytes)
		}
		if err := t.client.Write(ctx, t.put.TraposID, there, data, t.put.Timeout.Duration()); err != nil {
			if t.leftOut(there, err) {
				continue
			}
			return callFailure(t.put.TraposID, "put -r "+there, t.put.Timeout, err)
		}
		t.files++
		t.bytes += int64(len(data))
		if _, err := fmt.Fprintf(t.out, "%s -> %s %s (%s)\n", localName(here), typedID(t.put.TraposID), cctext.StoredPath(there), count(len(data), "byte")); err != nil {
			return err
		}
	}
	return nil
}

// leftOut reports, and says on stderr, a write the computer refused (a protected path, a full
// drive's fs_error is one too): the copy goes on without it, as cp -r goes on past a file it
// cannot write.
func (t *putTree) leftOut(remote string, err error) bool {
	return t.refusedByComputer(t.stderr, remote, err)
}

// directories is n directories, "1 directory".
func directories(n int) string {
	if n == 1 {
		return "1 directory"
	}
	return fmt.Sprintf("%d directories", n)
}
