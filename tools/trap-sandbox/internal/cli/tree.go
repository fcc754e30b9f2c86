package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// treeCopy is get -r's copy of a directory of a computer to a local directory: a backup, so
// each file's bytes go unchanged (text by the text rule would change every byte 80-FF), and
// each is written whole or not at all (writeLocal).
type treeCopy struct {
	get    *GetCmd
	client *computer.Client
	out    io.Writer
	stderr io.Writer

	tally
}

// tally counts what a copy of a tree (get -r, put -r) did, for its last line.
//
// skipped counts the entries the copy was asked to copy and left out, each said on stderr: one
// gone or refused while the copy ran, a name that would be written elsewhere or that reaches
// another file, a link, a device or a pipe. A copy that left one out exits with status 3
// (LeftOut). What a copy leaves out by design, /rom of a copy of / (which get -r ID /rom copies),
// is said too but not counted: the copy is whole without it.
type tally struct {
	files, dirs int
	bytes       int64
	skipped     int
}

// finish ends a copy from one place to another (as its last line names them) that ended with
// err: the total on out, or err with the total copied before it. A copy that failed before it
// copied anything (the computer not connected at its first call) is err alone: "0 files and 0
// directories (0 bytes)" added nothing to why. A copy that completed but left something out
// returns LeftOut after its total.
func (t *tally) finish(out io.Writer, from, to string, err error) error {
	if err != nil && t.files == 0 && t.dirs == 0 && t.skipped == 0 {
		return err
	}
	total := fmt.Sprintf("%s -> %s: %s and %s (%s)", from, to, count(t.files, "file"), directories(t.dirs), count(int(t.bytes), "byte"))
	if t.skipped > 0 {
		total += fmt.Sprintf(", %d left out (said above)", t.skipped)
	}
	if err != nil {
		return fmt.Errorf("%w; copied before it: %s", err, total)
	}
	if _, err := fmt.Fprintln(out, total); err != nil {
		return err
	}
	if t.skipped > 0 {
		return &LeftOut{N: t.skipped}
	}
	return nil
}

// runTree copies Remote with all it holds into Local, as cp -r does: into Local/<Remote's
// name> when Local is a directory that exists, else as Local itself (its parent must exist).
// A file named with -r is copied as one file (as bytes). /rom, the ROM every computer reads
// and no backup restores, is left out of a copy of / (said on stderr); a disk in a drive is
// part of the tree and copied. Each file takes up to --timeout.
func (c *GetCmd) runTree(ctx context.Context, out Stdout, stderr io.Writer) error {
	if c.Local == "-" || isDescriptorName(c.Local) {
		to := localName(c.Local)
		if c.Local == "-" {
			to = "stdout"
		}
		return namedf("computer "+typedID(c.TraposID)+" get -r", "a directory goes to a local directory, not to %s: name one", to)
	}
	client := c.client()
	remote := c.Remote
	entries, err := client.List(ctx, c.TraposID, remote, c.Timeout.Duration())
	if err != nil {
		if protocol.CodeOf(err) == protocol.CodeFSError && strings.HasSuffix(err.Error(), "Not a directory") {
			c.Binary = true // a file: get's own copy, as bytes
			c.Recursive = false
			return c.Run(ctx, out, stderr)
		}
		return callFailure(c.TraposID, "get -r "+remote, c.Timeout, err)
	}
	local := c.Local
	if st, err := os.Stat(local); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s is a file, not a directory: a directory cannot be copied over it (name a directory)", localName(local))
		}
		cc, err := cctext.PathToCC(remote)
		if err != nil {
			return err
		}
		if name := cctext.PathName(cc); name != "" {
			local = filepath.Join(local, cctext.FromCC([]byte(name)))
		} // else Remote is / (or names it): its files go into Local itself
	} else if err := c.checkLocal(); err != nil {
		return err
	}
	t := &treeCopy{get: c, client: client, out: out, stderr: stderr}
	err = t.dir(ctx, cctext.StoredPath(remote), local, entries)
	return t.finish(out, typedID(c.TraposID)+" "+cctext.StoredPath(remote), localName(local), err)
}

// A copy of a computer's files is its owner's alone: its /.settings holds the computer's
// credential (sandbox.password), which a copy readable by every user of the host would hand
// them. The files get makes and the directories and files a get -r makes are the host user's
// only (a file there already keeps its own permissions).
const (
	copiedDirMode  os.FileMode = 0o700
	copiedFileMode os.FileMode = 0o600
)

// isDescriptorName reports whether name is a descriptor get writes to (descriptorOf).
func isDescriptorName(name string) bool {
	_, ok := descriptorOf(name)
	return ok
}

// dir copies the listed entries of the computer's directory remote (a stored path) into the
// local directory local, which it makes.
func (t *treeCopy) dir(ctx context.Context, remote, local string, entries []computer.Entry) error {
	if err := os.Mkdir(local, copiedDirMode); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("make %s: %w", localName(local), pathless(err))
	} else if err != nil {
		if st, statErr := os.Stat(local); statErr != nil || !st.IsDir() {
			return fmt.Errorf("%s is a file, not a directory: a directory cannot be copied over it", localName(local))
		}
	}
	t.dirs++
	for _, e := range entries {
		child := strings.TrimSuffix(remote, "/") + "/" + cctext.ShowWirePath(e.Name)
		if !oneLevel(e.Name) {
			t.skipped++
			fmt.Fprintf(t.stderr, "trap-sandbox: %s left out: the computer listed %s in %s, which is no name of one level: it would be written outside %s\n",
				cctext.Show(child, false), cctext.Show(strconv.Quote(e.Name), false), cctext.Show(remote, false), localName(local))
			continue
		}
		if e.ReadsAs != "" {
			t.skipped++
			fmt.Fprintf(t.stderr, "trap-sandbox: %s left out: %s, so that path reads %s, another file or none: %s\n",
				cctext.Show(child, false), cctext.NameRules, cctext.Show(e.ReadsAs, false), cctext.Unreachable)
			continue
		}
		if child == "/rom" {
			fmt.Fprintln(t.stderr, "trap-sandbox: /rom left out: it is the ROM every computer reads, not this computer's files (get -r "+typedID(t.get.TraposID)+" /rom copies it)")
			continue
		}
		there := filepath.Join(local, e.Name)
		if e.IsDir {
			sub, err := t.client.List(ctx, t.get.TraposID, child, t.get.Timeout.Duration())
			if err != nil {
				if t.gone(child, err) {
					continue
				}
				return callFailure(t.get.TraposID, "get -r "+child, t.get.Timeout, err)
			}
			if err := t.dir(ctx, child, there, sub); err != nil {
				return err
			}
			continue
		}
		data, err := t.client.Read(ctx, t.get.TraposID, child, maxFileBytes, t.get.Timeout.Duration())
		if err != nil {
			if t.gone(child, err) {
				continue
			}
			return callFailure(t.get.TraposID, "get -r "+child, t.get.Timeout, err)
		}
		if err := writeLocalAs(there, data, copiedFileMode); err != nil {
			return err
		}
		t.files++
		t.bytes += int64(len(data))
		if _, err := fmt.Fprintf(t.out, "%s %s -> %s (%s)\n", typedID(t.get.TraposID), cctext.Show(child, false), localName(there), count(len(data), "byte")); err != nil {
			return err
		}
	}
	return nil
}

// oneLevel reports whether name, an entry of a computer's fs.list, names one file or directory
// in the directory listed, as every name a CC drive holds does (fs.combine reads / and \ as
// separators, and "." and ".." are no names): joined to a local directory, any other ("..",
// "../../x", "", one with a separator) is a path out of it, or the directory itself, and a
// hostile or altered client's answer would have the copy write there, bytes of its choosing.
func oneLevel(name string) bool {
	return name != "." && !strings.ContainsAny(name, "/\\\x00") && filepath.IsLocal(name)
}

// gone reports, and says on stderr, an entry the computer answered it no longer has (deleted,
// or made a file where it was a directory, while the copy ran) or refuses to be read: the
// copy goes on without it, as cp -r goes on past a file it cannot read.
func (t *treeCopy) gone(remote string, err error) bool {
	return t.refusedByComputer(t.stderr, remote, err)
}

// refusedByComputer reports whether err is the computer's refusal of remote (an fs_error or
// forbidden in its words), and if so counts remote left out and says why on stderr: get -r's
// and put -r's copy go on without it.
func (t *tally) refusedByComputer(stderr io.Writer, remote string, err error) bool {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || (pe.Code != protocol.CodeFSError && pe.Code != protocol.CodeForbidden) {
		return false
	}
	t.skipped++
	fmt.Fprintf(stderr, "trap-sandbox: %s left out: %s\n", cctext.ShowComposed(remote, false), cctext.ShowComposed(pe.Message, false))
	return true
}
