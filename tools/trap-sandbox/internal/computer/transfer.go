package computer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// ChunkBytes is the data one fs.read or fs.write carries. A byte takes at most six on the
// wire (a control byte, or < > & in Go's encoding, is \u00XX), so a chunk stays below 96 KiB,
// leaving room for the path and the frame within 128 KiB. The computer caps fs.read at the
// same 16 KiB.
const ChunkBytes = 16 << 10

// TempPrefix starts the name of the temporary file a Write fills beside its target before
// moving it into place: TempPrefix and 16 hex digits, 37 bytes, so it fits CC's 255-byte
// name limit whatever the target's name, and no two uploads share one. Names with this
// prefix are reserved (docs/capabilities.md).
const TempPrefix = ".trap-sandbox-upload-"

// cleanupTimeout bounds the clean-up of an abandoned write (removing its temporary file, or
// an older client's delete-then-move), which runs after the caller has gone.
const cleanupTimeout = DefaultTimeout

// Read reads the whole file at path, ChunkBytes per request, and never holds more than limit
// bytes (plus one chunk) whatever the computer claims: a file over limit, or a computer that
// never says eof, is cut off with an error naming the limit. A file that changes between two
// chunks (its size, or the stamp the computer gives it) is read again from its start, up to
// maxRereads times, so a read never splices an old file and the new one written meanwhile.
// timeout bounds the whole read (0: TransferTimeout).
func (c *Client) Read(ctx context.Context, traposID, path string, limit int64, timeout time.Duration) ([]byte, error) {
	data, _, err := c.read(ctx, traposID, path, 0, -1, limit, timeout)
	return data, err
}

// ReadPart reads at most length bytes of the file at path from offset (0 the first byte), as
// Read reads a whole file, and the whole file's size: a part of a file of any size, so that
// a file too long for the caller (an agent's client cuts a tool's result past some 50 KB) is
// read a part at a time. A part past the file's end is empty.
func (c *Client) ReadPart(ctx context.Context, traposID, path string, offset, length int64, timeout time.Duration) ([]byte, int64, error) {
	return c.read(ctx, traposID, path, offset, length, length, timeout)
}

// read is Read (length < 0: to the file's end, which must hold no more than limit bytes) and
// ReadPart (length bytes at most from offset); size is the whole file's.
func (c *Client) read(ctx context.Context, traposID, path string, offset, length, limit int64, timeout time.Duration) (data []byte, size int64, err error) {
	wire, err := cctext.PathWire(path)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, bound(timeout, TransferTimeout))
	defer cancel()
	var first readAnswer // the first chunk's size and stamp, which every later chunk must have
	for rereads := 0; ; {
		var ans readAnswer
		ask := int64(ChunkBytes)
		if length >= 0 {
			ask = min(ask, length-int64(len(data)))
		}
		payload := map[string]any{"path": wire, "offset": offset + int64(len(data)), "length": ask, "stamp": true}
		if len(data) > 0 || rereads > 0 {
			if err := c.StillAuthorized(ctx); err != nil {
				return nil, 0, stopped(err, "the read of %s on %s stopped before its end", path, c.shownID(traposID))
			}
		}
		if err := c.call(ctx, traposID, protocol.TypeFSRead, payload, remaining(ctx), &ans); err != nil {
			if len(data) == 0 && rereads == 0 {
				return nil, 0, goneDuring(err, c.listedID(traposID), false, "the read of %s: read it again once it is back%s", path, c.backWait())
			}
			err = timedOutDuring(err, "the read of %s stopped at %d of its %d bytes", path, len(data), first.Size)
			return nil, 0, goneDuring(err, c.listedID(traposID), true, "the read of %s (%d of its %d bytes read): read it again once it is back%s", path, len(data), first.Size, c.backWait())
		}
		if len(data) == 0 {
			first = ans
		} else if ans.Size != first.Size || !ans.sameStamp(first) {
			if rereads == maxRereads {
				return nil, 0, protocol.Errorf(protocol.CodeFSError, "%s kept changing while it was read (%d times: something on the computer is writing it): "+
					"read it again once that is done", path, maxRereads+1)
			}
			rereads++
			data = data[:0]
			continue
		}
		if length < 0 && ans.Size > limit {
			return nil, 0, tooBig(path, ans.Size, limit)
		}
		chunk, err := protocol.BytesOfWire(ans.Data)
		if err != nil {
			return nil, 0, protocol.Errorf(protocol.CodeInternal, "fs.read of %s on %s: %v", path, traposID, err)
		}
		if int64(len(chunk)) > ask {
			return nil, 0, protocol.Errorf(protocol.CodeInternal, "fs.read of %s on %s answered %d bytes where %d were asked for", path, traposID, len(chunk), ask)
		}
		if int64(len(data)+len(chunk)) > limit {
			return nil, 0, tooBig(path, int64(len(data)+len(chunk)), limit)
		}
		data = append(data, chunk...)
		if ans.EOF || (length >= 0 && int64(len(data)) >= length) {
			return data, first.Size, nil
		}
		if len(chunk) == 0 {
			return nil, 0, protocol.Errorf(protocol.CodeInternal, "fs.read of %s on %s returned nothing at offset %d before the end", path, traposID, offset+int64(len(data)))
		}
	}
}

// goneDuring words the gateway's not_connected failure of one request of a transfer whose
// computer went away during it: "computer 7:kitchen disconnected during the read of /f (…)",
// what (a format and its args) saying what became of the transfer. It went away during the
// request ("disconnected before it answered; it may have done what it was asked all the
// same", which a read, or a chunk written to the temporary file, cannot have done to the
// file), or, once the transfer had begun, between two requests (the bare "is not connected",
// whose hint reads as if the caller had named a wrong computer). Any other error, a relabel or
// the gateway's shutdown included, is returned as it is.
// traposID is as the lists give it (Client.listedID).
func goneDuring(err error, traposID string, begun bool, what string, args ...any) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer || pe.RelabelledTo != "" || len(pe.Accounts) > 0 {
		return err
	}
	if !pe.Left && !(begun && pe.Absent) {
		return err
	}
	gone := *pe
	gone.Message = fmt.Sprintf("computer %s disconnected during ", cctext.ShowTraposID(traposID)) + fmt.Sprintf(what, args...)
	gone.Hint, gone.Meant = "", nil // its own words say what happened
	return &gone
}

// stoppedDuring words the gateway's not_connected of one request of a write under way that
// ended for the gateway's reason, not the computer's (the gateway shutting down, the replica
// holding the computer stopped): its "it may have done what it was asked all the same"
// (MayHaveDoneIt) is true of the one chunk, but of the file what the write says instead. A
// computer that went away is goneDuring's; any other error is returned as it is.
func stoppedDuring(err error, what string, args ...any) error {
	if dropped, ok := errors.AsType[mayHaveRunError](err); ok { // a gateway killed mid-request
		return reworded{error: err, message: dropped.WithoutMayHaveRun() + "; " + fmt.Sprintf(what, args...)}
	}
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer || pe.Left {
		return err
	}
	// MayHaveDoneIt, or a read's words in its place where the caller's client words its reads
	// (WithReadWait: the look before a write or a delete).
	said, ok := cutMayHaveRun(pe.Message)
	if !ok {
		return err
	}
	return pe.WithMessage(said + "; " + fmt.Sprintf(what, args...))
}

// NothingWritten words the failure of a write of path before any of its data was sent (the
// look at whether path is a directory: Write's, the CLI put's): a gateway killed or stopping,
// or a computer that went away before it answered the look, then says the request it cut may
// have been done (MayHaveDoneIt), which of a look is true and says nothing, or, where the
// caller's client words its reads (WithReadWait), that a read changes nothing, said of a
// write; it says instead that nothing was written. Any other error is returned as it is.
func NothingWritten(err error, path string) error {
	return nothingDone(err, "the write of %s stopped before any of it was sent: nothing was written; write it again once it is back", path)
}

// NothingDeleted words, as NothingWritten does, the failure of a delete of path before the
// delete was sent (rm's look at whether path is a directory): nothing was removed then.
func NothingDeleted(err error, path string) error {
	return nothingDone(err, "the delete of %s stopped before it was sent: nothing was deleted; delete it again once it is back", path)
}

// nothingDone is NothingWritten and NothingDeleted: what (a format and its args) says what
// became of the write or the delete, in place of what the look's failure said of the look, a
// computer gone before it answered (Left: "computer 7:kitchen disconnected before it answered;
// the write of /door.lua stopped before any of it was sent: …") or a gateway that stopped
// (stoppedDuring).
func nothingDone(err error, what string, args ...any) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer || !pe.Left {
		return stoppedDuring(err, what, args...)
	}
	said, _ := strings.CutSuffix(pe.Message, pe.Hint)
	gone, found := cutMayHaveRun(said)
	if !found {
		return err
	}
	return pe.WithMessage(gone + "; " + fmt.Sprintf(what, args...) + pe.Hint)
}

// mayHaveRunError is a transport's error about a request that may have reached the computer
// before the gateway went, said in its message (hostapi.DroppedGatewayError: a gateway killed
// or crashed mid-request); WithoutMayHaveRun is that message without saying so.
type mayHaveRunError interface {
	error
	WithoutMayHaveRun() string
}

// reworded is a transport's error (kept for errors.As) in words that say what became of the
// request it cut: a write's (stoppedDuring), a read's (ReadAgain).
type reworded struct {
	error
	message string
}

func (s reworded) Error() string { return s.message }
func (s reworded) Unwrap() error { return s.error }

// timedOutDuring words a timeout of one request of a transfer under way (its deadline, the
// caller's --timeout or timeoutMs, bounds the whole transfer): how far it got, after the
// request that did not answer in time. Any other error is returned as it is.
func timedOutDuring(err error, what string, args ...any) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeTimeout || pe.ByComputer {
		return err
	}
	return pe.WithMessage(pe.Message + "; " + fmt.Sprintf(what, args...))
}

// maxRereads is how many times Read starts again when the file changed between its chunks.
const maxRereads = 2

// readAnswer is an fs.read answer. Stamp is the file's modification time (a client older
// than the stamp field gives none: size alone then tells a change).
type readAnswer struct {
	Data  string   `json:"data"`
	Size  int64    `json:"size"`
	EOF   bool     `json:"eof"`
	Stamp *float64 `json:"stamp"`
}

func (a readAnswer) sameStamp(b readAnswer) bool {
	return (a.Stamp == nil) == (b.Stamp == nil) && (a.Stamp == nil || *a.Stamp == *b.Stamp)
}

func tooBig(path string, size, limit int64) error {
	return protocol.Errorf(protocol.CodeBadPayload, "%s holds more than the %d bytes a read may take (at least %d)", path, limit, size)
}

// tooBigWords end tooBig's message.
var tooBigWords = regexp.MustCompile(` holds more than the \d+ bytes a read may take \(at least \d+\)$`)

// TooBig reports whether err is Read's refusal of a file above its limit (tooBig), as this
// gateway says it or, through the host API, the stdio bridge's gateway: a gateway's own
// error, never a computer's words.
func TooBig(err error) bool {
	pe, ok := errors.AsType[*protocol.Error](err)
	return ok && !pe.ByComputer && pe.Code == protocol.CodeBadPayload && tooBigWords.MatchString(pe.Message)
}

// remaining is the time left before ctx's deadline.
func remaining(ctx context.Context) time.Duration {
	deadline, ok := ctx.Deadline()
	if !ok {
		return MaxTimeout
	}
	return min(time.Until(deadline), MaxTimeout)
}

// Write replaces the file at path with data, and never loses it: the data goes to a temporary
// file beside it first (TempPrefix, ChunkBytes per request), which replaces the old file in
// one step on the computer (fs.move with overwrite) only once complete. A write abandoned at
// any step (the caller gone, a timeout, the gateway stopping) leaves the old file as it was and
// removes the temporary one when it can; errors name path, never the temporary file. A
// directory at path is refused, as CC refuses to open one for writing. timeout bounds the
// whole write (0: TransferTimeout).
func (c *Client) Write(ctx context.Context, traposID, path string, data []byte, timeout time.Duration) error {
	return romExplained(fileInTheWayExplained(c.write(ctx, traposID, path, data, timeout, nil), path), romWriteFix, path)
}

// WriteLooked is Write of the path l looked at (Look, just before), which it does not look at
// again: the CLI's put looks whether its path is a directory to put the file into, and Write
// then listed the same directory a second time, one round trip more to a computer that
// answers between its program's events (and, for a put that makes its directories, a second
// fs_error in the gateway's debug log).
func (c *Client) WriteLooked(ctx context.Context, traposID string, l Look, data []byte, timeout time.Duration) error {
	return romExplained(fileInTheWayExplained(c.write(ctx, traposID, l.path, data, timeout, &l.kind), l.path), romWriteFix, l.path)
}

// write is Write; looked, when not nil, is what path names, already looked at.
func (c *Client) write(ctx context.Context, traposID, path string, data []byte, timeout time.Duration, looked *pathKind) error {
	target, err := cctext.PathToCC(path)
	if err != nil {
		return err
	}
	// Written to, such a path put the temporary file inside a directory of that name, which
	// fs.write made, and the move then failed on it.
	if end, ok := cctext.DirectoryEnding(target); ok {
		why := ""
		if cctext.DropsFromPaths(end) {
			why = ` (CC drops "*:<>?| and control characters from paths)`
		}
		return protocol.Errorf(protocol.CodeBadPayload, "the path %q ends in %q, so it names a directory, not a file%s: name the file to write", path, end, why)
	}
	ctx, cancel := context.WithTimeout(ctx, bound(timeout, TransferTimeout))
	defer cancel()
	replacing, err := c.refuseDirectory(ctx, traposID, path, looked)
	if err != nil {
		return NothingWritten(err, path)
	}
	w := upload{c: c, traposID: traposID, path: path, target: target, temp: tempName(target), replacing: replacing, size: len(data)}
	for offset := 0; ; offset += ChunkBytes {
		end := min(offset+ChunkBytes, len(data))
		if err := w.stillAuthorized(ctx); err != nil {
			return err
		}
		payload := map[string]any{"path": w.wire(w.temp), "data": protocol.WireOfBytes(data[offset:end]), "append": offset > 0}
		if err := c.call(ctx, traposID, protocol.TypeFSWrite, payload, remaining(ctx), nil); err != nil {
			// Only the temporary file was written to, so the old file is as it was.
			kept := "the old file is kept"
			if !replacing {
				kept = "no file was made there"
			}
			if offset > 0 {
				err = timedOutDuring(err, "the write of %s stopped with at least %d of its %d bytes written, as the computer confirmed: %s", path, offset, len(data), kept)
				err = stoppedDuring(err, "the write of %s stopped with at least %d of its %d bytes written, as the computer confirmed: %s; write it again once it is back",
					path, offset, len(data), kept)
			} else {
				err = stoppedDuring(err, "the write of %s stopped: %s; write it again once it is back", path, kept)
			}
			// offset counts the chunks the computer confirmed; the one in flight may have
			// been written before it went, so the temporary file may hold more ("at least").
			return w.fail(ctx, goneDuring(err, c.listedID(traposID), offset > 0,
				"the write of %s (at least %d of its %d bytes written, as the computer confirmed): %s; write it again once it is back", path, offset, len(data), kept))
		}
		w.written = true
		if end == len(data) {
			break
		}
	}
	if err := w.stillAuthorized(ctx); err != nil {
		return err
	}
	err = c.call(ctx, traposID, protocol.TypeFSMove,
		map[string]any{"from": w.wire(w.temp), "to": w.wire(target), "overwrite": true}, remaining(ctx), nil)
	if isFileExists(err) {
		// A client older than overwrite refuses to move onto the old file: delete it, then
		// move, on a context of their own, so that a caller leaving between the two cannot
		// leave the path empty.
		return w.replace(ctx)
	}
	if err != nil {
		// Unanswered (a timeout, the computer or the caller gone), the move may have run all
		// the same: fail then finds the temporary file gone.
		w.moveUnanswered = !answeredByComputer(err)
		return w.fail(ctx, w.refusedAsAWrite(err))
	}
	return nil
}

// WritePart appends data to the file at path, which must hold offset bytes (offset > 0): the
// next part of a file written in parts, as ReadPart reads one, so that a file too long for one
// call of the caller's (an agent's, whose every argument it writes out) can be copied a part
// at a time. It looks at the file's size first (one fs.read), and a file of another size is
// PartOffsetError, nothing written: a part sent twice, or one left out, would splice the file.
// The part is appended to the file itself, ChunkBytes per request: unlike Write's, it is not
// all or nothing, and an error after a chunk went says how much of the part the file holds.
// timeout bounds the whole part (0: TransferTimeout).
func (c *Client) WritePart(ctx context.Context, traposID, path string, data []byte, offset int64, timeout time.Duration) error {
	target, err := cctext.PathToCC(path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, bound(timeout, TransferTimeout))
	defer cancel()
	_, size, err := c.ReadPart(ctx, traposID, path, offset, 1, remaining(ctx))
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.ByComputer && pe.Code == protocol.CodeFSError {
		// No file there (or a directory): the parts before this one were never written.
		return pe.WithHostWords("", fmt.Sprintf(" (a part at offset %d is appended to the file its earlier parts wrote: write the first part without offset)", offset))
	}
	if err != nil {
		return NothingWritten(err, path)
	}
	if size != offset {
		return &PartOffsetError{Path: path, Size: size, Offset: offset}
	}
	wire := protocol.WireOfBytes([]byte(target))
	for sent := 0; sent < len(data); sent += ChunkBytes {
		if err := c.StillAuthorized(ctx); err != nil {
			return stopped(err, "the part written to %s on %s stopped with %d of its %d bytes appended", path, c.shownID(traposID), sent, len(data))
		}
		end := min(sent+ChunkBytes, len(data))
		payload := map[string]any{"path": wire, "data": protocol.WireOfBytes(data[sent:end]), "append": true}
		err := c.call(ctx, traposID, protocol.TypeFSWrite, payload, remaining(ctx), nil)
		if err == nil {
			continue
		}
		if answeredByComputer(err) {
			// Refused (out of space, a path only exec may change, /rom): that chunk was not appended.
			err = romExplained(err, romWriteFix, path)
			if pe, ok := errors.AsType[*protocol.Error](err); ok && sent > 0 {
				err = pe.WithHostWords("", fmt.Sprintf("; the part stopped with %d of its %d bytes appended: the file holds %d bytes", sent, len(data), offset+int64(sent)))
			}
			return err
		}
		// Unanswered, the chunk in flight may have been appended: "at least".
		said := fmt.Sprintf("the part written to %s stopped with at least %d of its %d bytes appended, as the computer confirmed (the file holds at least %d bytes, "+
			"and the chunk it did not confirm may be there too): list_files gives its size, the offset to write on from", path, sent, len(data), offset+int64(sent))
		return goneDuring(stoppedDuring(timedOutDuring(err, "%s", said), "%s", said), c.listedID(traposID), true, "%s", said)
	}
	return nil
}

// PartOffsetError is WritePart's refusal of a part whose offset is not the file's size: the
// next part of a file written in parts begins where the file ends.
type PartOffsetError struct {
	Path         string
	Size, Offset int64
}

func (e *PartOffsetError) Error() string {
	return fmt.Sprintf("%s holds %d bytes, not %d: a part is appended where the file ends, so write this one with offset %d "+
		"(or the whole file, or its first part, without offset)", e.Path, e.Size, e.Offset, e.Size)
}

// answeredByComputer reports whether err is the computer's own answer.
func answeredByComputer(err error) bool {
	pe, ok := errors.AsType[*protocol.Error](err)
	return ok && pe.ByComputer
}

// stillAuthorized stops the write, as fail does, when its caller is no longer authorized (its
// token revoked or expired since the write began): no chunk more, no move into place.
func (w upload) stillAuthorized(ctx context.Context) error {
	err := w.c.StillAuthorized(ctx)
	if err == nil {
		return nil
	}
	err = stopped(err, "the write of %s on %s stopped before it was complete; the old file is kept", w.path, w.c.shownID(w.traposID))
	if !w.written {
		return err // no temporary file yet
	}
	return w.fail(ctx, err)
}

// refusedAsAWrite words the computer's refusal of the move into place (a path whose change
// needs sandbox.allow_exec, which the temporary file's is not) as of the write the caller
// asked for: "fs.write of /startup.lua needs …", as a one-request write is refused, not
// "fs.move to /startup.lua", a step it never asked for.
func (w upload) refusedAsAWrite(err error) error {
	var pe *protocol.Error
	if !errors.As(err, &pe) || !pe.ByComputer || pe.Code != protocol.CodeForbidden {
		return err
	}
	moved := protocol.TypeFSMove + " to " + w.wire(w.target) + " "
	if rest, ok := strings.CutPrefix(pe.Message, moved); ok {
		return pe.WithMessage(rest).WithHostWords(protocol.TypeFSWrite+" of "+w.wire(w.target)+" ", "")
	}
	return err
}

// upload is one Write's state: the player's path, and the temporary file beside it.
type upload struct {
	c              *Client
	traposID, path string
	// target and temp are CC bytes.
	target, temp string
	// replacing is whether a file was at path when the write began.
	replacing bool
	// size is the bytes of the new file.
	size int
	// written is whether the computer took a chunk: the temporary file exists.
	written bool
	// moveUnanswered is whether the move into place was asked for, every chunk written, and
	// its answer never came.
	moveUnanswered bool
}

func (w upload) wire(cc string) string { return protocol.WireOfBytes([]byte(cc)) }

// replace deletes the old file and moves the new one into place, detached from the caller:
// an older client's two steps. Should the move still fail (the gateway stopped between
// them), the temporary file holds the only copy, so it is kept and the error names it.
func (w upload) replace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	// The delete may have run even when its answer is an error (it was lost), so the move is
	// tried either way: "File exists" then means the old file is still there.
	deleteErr := w.c.call(ctx, w.traposID, protocol.TypeFSDelete, map[string]any{"path": w.wire(w.target)}, cleanupTimeout, nil)
	err := w.c.call(ctx, w.traposID, protocol.TypeFSMove, map[string]any{"from": w.wire(w.temp), "to": w.wire(w.target)}, cleanupTimeout, nil)
	if isFileExists(err) {
		if deleteErr != nil {
			err = deleteErr
		}
		return w.fail(ctx, err)
	}
	if err != nil {
		deleted := "the old file was deleted but"
		if deleteErr != nil {
			// Neither step answered (the computer went away): the delete may or may not have run.
			deleted = "the old file may have been deleted, and"
		}
		return fmt.Errorf("write %s on %s: %s the new one could not be moved into place; "+
			"its contents are in %s (this computer's client is older than fs.move's overwrite: update it): %w",
			w.path, w.traposID, deleted, cctext.ShowPath([]byte(w.temp)), err)
	}
	return nil
}

// fail removes the temporary file (after the caller's context ended too) and returns err
// worded for the player's path.
//
// A computer that went away (shut down, its connection lost), or a gateway that did (a host
// writing through the HTTP API), cannot be told to remove it: the error then says where what
// was sent of the new file may stay, so it can be deleted. (fail runs only once a chunk was
// sent; not_connected cannot tell whether it arrived.)
func (w upload) fail(ctx context.Context, err error) error {
	cleanCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	cleanErr := w.c.call(cleanCtx, w.traposID, protocol.TypeFSDelete, map[string]any{"path": w.wire(w.temp)}, cleanupTimeout, nil)
	left := ""
	// Only the computer's own answer says what became of the file (removed, or never made:
	// No such file); any other failure (not connected, a timeout, the gateway gone or busy)
	// left it there. So did a refusal once a chunk was written: the owner took write back
	// during the write, and deleting needs it too, so only the owner can remove the file.
	var answered *protocol.Error
	switch {
	case cleanErr == nil:
	case w.moveUnanswered && errors.As(cleanErr, &answered) && answered.ByComputer && answered.Code == protocol.CodeFSError &&
		strings.HasSuffix(answered.Message, "No such file"):
		// The temporary file, whole once every chunk was answered, is gone: only the move
		// takes it, so the move ran and the new file is in place; its answer alone was lost
		// (a --timeout that ran out on it said the write failed, and the file was new).
		return nil
	case errors.As(cleanErr, &answered) && answered.ByComputer && answered.Code == protocol.CodeForbidden:
		if !w.written {
			break
		}
		left = fmt.Sprintf("; the owner no longer allows the host to remove what was sent: it stays beside the file as %s (delete it on the computer)",
			cctext.ShowPath([]byte(w.temp)))
	case !(errors.As(cleanErr, &answered) && answered.ByComputer):
		shown := cctext.ShowPath([]byte(w.temp))
		fix := "delete it once the computer is back"
		if w.c.removeLine != nil {
			fix += ": " + w.c.removeLine(w.traposID, shown)
		}
		left = fmt.Sprintf("; the computer could not be told to remove what was sent: it may be left beside the file as %s (%s)", shown, fix)
	}
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("write %s on %s abandoned (the old file is kept): %w%s", w.path, w.traposID, err, left)
		}
		if left != "" {
			return fmt.Errorf("%w%s", err, left)
		}
		return err
	}
	tempName := w.wire(path.Base(w.temp))
	// The computer's words name the file it was sent as the caller's; the rest is the host's.
	said := pe.WithComputerWordsReplaced(tempName, w.wire(path.Base(w.target)))
	var named, hint string
	if pe.Code == protocol.CodeFSError && strings.HasSuffix(said.Message, outOfSpace) {
		if said.Message == outOfSpace {
			// CC names no path when a handle's write meets the full drive (only its open does).
			named = w.wire(w.target) + ": "
		}
		hint = w.outOfSpaceHint(cleanCtx)
	}
	return said.WithHostWords(named, hint+left)
}

// outOfSpace is CC's word for a full drive.
const outOfSpace = "Out of space"

// outOfSpaceHint follows a write's "Out of space" (its temporary file removed): the file's size
// and the room the computer says the drive the file goes on has (a disk in a drive has its
// own; a client before 0.5.23 reports only its root drive's, said as such), that a file
// replacing another needs room beside it, and what the temporary files of host writes cut
// off midway (the computer shut down, the gateway stopped) take in the target's directory,
// since those are not shown by CC's ls and may be what fills the drive.
func (w upload) outOfSpaceHint(ctx context.Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, " (the file is %d bytes", w.size)
	if free, err := w.c.freeSpace(ctx, w.traposID, w.wire(w.target)); err == nil && free.known {
		if free.onDrive {
			fmt.Fprintf(&b, "; the drive it goes on has %d bytes free", free.bytes)
		} else {
			fmt.Fprintf(&b, "; the computer's root drive has %d bytes free", free.bytes)
		}
	}
	if w.replacing {
		// One that fits the free space may still not fit beside the one it replaces.
		b.WriteString(", and the new file is written whole beside the old one before it replaces it, so the drive needs room for both")
	}
	b.WriteString(": delete files on the computer, or write a smaller file")
	dirCC, _ := path.Split(w.target)
	dir := "/" + strings.Trim(cctext.ShowPath([]byte(dirCC)), "/")
	b.WriteString("; a host write cut off midway (its computer or the gateway gone) leaves what it sent beside its file as " + TempPrefix + "…")
	entries, err := w.c.list(ctx, w.traposID, dir, cleanupTimeout)
	if err != nil {
		b.WriteString(": list_files (CLI ls) shows them in a directory, which CC's own ls hides)")
		return b.String()
	}
	var found []string
	var taken int64
	unnamed := 0
	for _, e := range entries {
		if e.IsDir || !isTempName(e.Name) {
			continue
		}
		taken += e.Size
		if len(found) == leftoversNamed {
			unnamed++
			continue
		}
		found = append(found, fmt.Sprintf("%s (%d bytes)", path.Join(dir, e.Name), e.Size))
	}
	if unnamed > 0 {
		found[len(found)-1] += fmt.Sprintf(" and %d more", unnamed)
	}
	if len(found) == 0 {
		b.WriteString(", none of them in " + dir + ": list_files (CLI ls) shows them in a directory, which CC's own ls hides)")
		return b.String()
	}
	fmt.Fprintf(&b, ", and in %s they take %d bytes: %s; delete them with trap-sandbox rm, MCP delete_file, or rm %s on the computer)",
		dir, taken, strings.Join(found, ", "), path.Join(dir, TempPrefix+"*"))
	return b.String()
}

// isTempName reports whether name is one tempName makes: TempPrefix and 16 hex digits. Only
// those are named in outOfSpaceHint, the gateway's own words (protocol.Error.WithHostWords),
// so a name the computer's owner gave a file of their own (".trap-sandbox-upload-x: now run
// …") is never shown to an agent as the gateway's.
func isTempName(name string) bool {
	digits, ok := strings.CutPrefix(name, TempPrefix)
	if !ok || len(digits) != 16 {
		return false
	}
	_, err := hex.DecodeString(digits)
	return err == nil && strings.ToLower(digits) == digits
}

// leftoversNamed bounds the temporary files outOfSpaceHint names: each write cut off midway
// leaves one of its own name, and a directory of many named them all, tens of KB of names in
// one error. The rest are counted, their bytes summed with the named ones'.
const leftoversNamed = 5

// driveRoom is what computer.info says of the free space at a path.
type driveRoom struct {
	bytes   int64
	known   bool // a number: not "unlimited", nor null (fs.getFreeSpace raised)
	onDrive bool // measured on the path's drive; else the root drive's (a client before 0.5.23)
}

// freeSpace asks the computer for the free space of the drive wirePath is on (computer.info
// with a path, which a client before 0.5.23 ignores, answering its root drive's).
func (c *Client) freeSpace(ctx context.Context, traposID, wirePath string) (driveRoom, error) {
	var ans struct {
		FreeSpace     any     `json:"freeSpace"`
		FreeSpacePath *string `json:"freeSpacePath"`
	}
	if err := c.call(ctx, traposID, protocol.TypeComputerInfo, map[string]any{"path": wirePath}, cleanupTimeout, &ans); err != nil {
		return driveRoom{}, err
	}
	free, known := ans.FreeSpace.(float64)
	return driveRoom{bytes: int64(free), known: known, onDrive: ans.FreeSpacePath != nil && *ans.FreeSpacePath == wirePath}, nil
}

// refuseDirectory answers CC's fs_error for writing over a directory when path is one;
// otherwise it says whether a file is there. A refused fs.list (allow_files none) says nothing
// about path: fs.write's own refusal follows. looked, when not nil, is what path names,
// already looked at: nothing is asked.
func (c *Client) refuseDirectory(ctx context.Context, traposID, path string, looked *pathKind) (isFile bool, err error) {
	var kind pathKind
	if looked != nil {
		kind = *looked
	} else {
		kind, err = c.kindOf(ctx, traposID, path, remaining(ctx))
	}
	switch {
	case protocol.CodeOf(err) == protocol.CodeForbidden:
		return false, nil
	case err != nil:
		return false, err
	case kind == kindDirectory:
		wire, _ := cctext.PathWire(path)
		if wire == "" {
			wire = "/" // the root, as CC names it
		}
		return false, &protocol.Error{Code: protocol.CodeFSError, Message: wire + ": Cannot write to directory"}
	}
	return kind == kindFile, nil
}

// IsDir reports whether path names a directory on the computer (kindOf): a file, or nothing
// there, is false. timeout bounds it (0: DefaultTimeout).
func (c *Client) IsDir(ctx context.Context, traposID, path string, timeout time.Duration) (bool, error) {
	l, err := c.Look(ctx, traposID, path, timeout)
	return l.IsDir(), err
}

// Look is what a path named on a computer when Client.Look asked: a file, a directory or
// nothing. WriteLooked writes it without asking again.
type Look struct {
	path string
	kind pathKind
}

// IsDir reports whether the path looked at is a directory.
func (l Look) IsDir() bool { return l.kind == kindDirectory }

// Look asks what path names on the computer (kindOf: one fs.list of the directory it is in,
// as a rule). timeout bounds it (0: DefaultTimeout).
func (c *Client) Look(ctx context.Context, traposID, path string, timeout time.Duration) (Look, error) {
	kind, err := c.kindOf(ctx, traposID, path, bound(timeout, DefaultTimeout))
	return Look{path: path, kind: kind}, err
}

// pathKind is what a path names on a computer.
type pathKind int

const (
	kindNothing pathKind = iota
	kindFile
	kindDirectory
)

// kindOf says what path names by the listing of the directory it is in, which answers a
// file, a directory and nothing there alike. An fs.list of path itself answers a file, or
// nothing, with CC's fs_error ("Not a directory", "No such file"): the gateway's debug log
// showed that as a failed request for every put that worked. A parent that is not there is
// nothing there (answered absent, or by a client older than absentOk with its fs_error); a parent
// the computer cannot list in one answer (more names than a frame holds), or a name listed
// only in another case (a drive that ignores case, which the host cannot tell), is judged by
// the fs.list of path itself, as before.
func (c *Client) kindOf(ctx context.Context, traposID, path string, timeout time.Duration) (pathKind, error) {
	cc, err := cctext.PathToCC(path)
	if err != nil {
		return kindNothing, err
	}
	names := cctext.ResolvePath(cc)
	if len(names) == 0 {
		return kindDirectory, nil // the root
	}
	name := names[len(names)-1]
	if names[0] != ".." { // above the root: the fs.list of path names CC's refusal
		parent := "/" + strings.Join(names[:len(names)-1], "/")
		var ans struct {
			Entries []struct {
				Name  string `json:"name"`
				IsDir bool   `json:"isDir"`
			} `json:"entries"`
			Absent bool `json:"absent"`
		}
		// absentOk: a parent that is not there is an answer (absent), not CC's fs_error, which
		// the gateway's debug log showed as a failed request of a put that made its
		// directories. A client older than 0.5.28 ignores it and answers the fs_error below.
		err := c.call(ctx, traposID, protocol.TypeFSList, map[string]any{"path": protocol.WireOfBytes([]byte(parent)), "absentOk": true}, timeout, &ans)
		if err == nil && ans.Absent {
			return kindNothing, nil
		}
		if err == nil {
			otherCase := false
			for _, e := range ans.Entries {
				listed, err := protocol.BytesOfWire(e.Name)
				if err != nil {
					return kindNothing, protocol.Errorf(protocol.CodeInternal, "fs.list of %s on %s: %v", cctext.ShowPath([]byte(parent)), traposID, err)
				}
				if string(listed) == name {
					if e.IsDir {
						return kindDirectory, nil
					}
					return kindFile, nil
				}
				otherCase = otherCase || strings.EqualFold(string(listed), name)
			}
			if !otherCase {
				return kindNothing, nil
			}
		} else if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.ByComputer && pe.Code == protocol.CodeFSError {
			return kindNothing, nil
		} else if !ok || !pe.ByComputer || pe.Code != protocol.CodeInternal {
			return kindNothing, err
		}
	}
	_, err = c.list(ctx, traposID, path, timeout)
	switch protocol.CodeOf(err) {
	case "":
		return kindDirectory, nil
	case protocol.CodeFSError:
		if strings.HasSuffix(err.Error(), "Not a directory") {
			return kindFile, nil
		}
		return kindNothing, nil
	}
	return kindNothing, err
}

// tempName is a fresh temporary name beside target (CC bytes).
func tempName(target string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir, _ := path.Split(target)
	return dir + TempPrefix + hex.EncodeToString(b[:])
}

// isFileExists reports fs.move's refusal of an existing target, as CC words it (without a
// path) and as a client older than overwrite answers it.
func isFileExists(err error) bool {
	var pe *protocol.Error
	return errors.As(err, &pe) && pe.Code == protocol.CodeFSError && pe.ByComputer && pe.Message == "File exists"
}
