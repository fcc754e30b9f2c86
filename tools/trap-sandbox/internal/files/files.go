// Package files moves whole files between the host and a computer over the request
// vocabulary (fs.list, fs.read, fs.write, fs.move, fs.delete), chunk by chunk so that every
// frame stays under 128 KiB, and serves them as a module: byte-level HTTP routes under
// /trapos/computers/{traposId}/files/ for people and scripts.
package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path"
	"strings"
	"time"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
)

// ChunkBytes is the data one fs.read or fs.write carries. A byte takes at most six on the
// wire (a control byte, or < > & in Go's encoding, is \u00XX), so a chunk stays below 96 KiB,
// leaving room for the path and the frame within 128 KiB. The computer caps fs.read at the
// same 16 KiB.
const ChunkBytes = 16 << 10

// uploadSuffix marks the temporary file a Write fills before moving it into place.
const uploadSuffix = ".upload"

// Entry is one fs.list entry. Name follows the byte rule (one code point per byte).
type Entry struct {
	Name  string `json:"name"`
	IsDir bool   `json:"isDir"`
	Size  int64  `json:"size"`
}

// call sends one request and decodes a successful answer into out (nil: ignore it). The
// computer's ok:false and the gateway's own failures both come back as a *protocol.Error.
func call(ctx context.Context, c gateway.Caller, traposID, typ string, payload any, timeout time.Duration, out any) error {
	resp, err := c.Call(ctx, traposID, typ, payload, timeout)
	if err != nil {
		return err
	}
	if !resp.OK {
		if resp.Error == nil {
			return protocol.Errorf(protocol.CodeInternal, "%s failed without an error", typ)
		}
		return resp.Error
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Payload, out); err != nil {
		return protocol.Errorf(protocol.CodeInternal, "%s answered an unexpected payload: %v", typ, err)
	}
	return nil
}

// wire is a computer path in its wire form.
func wire(p string) string { return protocol.WireOfBytes([]byte(p)) }

// List lists the directory at p.
func List(ctx context.Context, c gateway.Caller, traposID, p string, timeout time.Duration) ([]Entry, error) {
	var ans struct {
		Entries []Entry `json:"entries"`
	}
	if err := call(ctx, c, traposID, protocol.TypeFSList, map[string]any{"path": wire(p)}, timeout, &ans); err != nil {
		return nil, err
	}
	if ans.Entries == nil {
		ans.Entries = []Entry{}
	}
	return ans.Entries, nil
}

// Read reads the whole file at p, ChunkBytes per request. limit bounds its size (0: none).
func Read(ctx context.Context, c gateway.Caller, traposID, p string, limit int64, timeout time.Duration) ([]byte, error) {
	var data []byte
	for {
		var ans struct {
			Data string `json:"data"`
			Size int64  `json:"size"`
			EOF  bool   `json:"eof"`
		}
		payload := map[string]any{"path": wire(p), "offset": len(data), "length": ChunkBytes}
		if err := call(ctx, c, traposID, protocol.TypeFSRead, payload, timeout, &ans); err != nil {
			return nil, err
		}
		if limit > 0 && ans.Size > limit {
			return nil, protocol.Errorf(protocol.CodeInternal, "%s is %d bytes, over the limit of %d", p, ans.Size, limit)
		}
		chunk, err := protocol.BytesOfWire(ans.Data)
		if err != nil {
			return nil, protocol.Errorf(protocol.CodeInternal, "fs.read of %s: %v", p, err)
		}
		data = append(data, chunk...)
		if ans.EOF {
			return data, nil
		}
		if len(chunk) == 0 {
			return nil, protocol.Errorf(protocol.CodeInternal, "fs.read of %s returned nothing at offset %d before the end", p, len(data))
		}
	}
}

// Write replaces the file at p with data. The data goes to a temporary file beside it first
// (ChunkBytes per request) and is moved into place only once complete, so a broken upload
// leaves the old file as it was (and removes the temporary one when it can). A directory at
// p is refused as CC refuses to open one for writing: deleting it to make room would delete
// everything in it.
func Write(ctx context.Context, c gateway.Caller, traposID, p string, data []byte, timeout time.Duration) error {
	if err := refuseDirectory(ctx, c, traposID, p, timeout); err != nil {
		return err
	}
	temp := tempName(p)
	for offset := 0; ; offset += ChunkBytes {
		end := min(offset+ChunkBytes, len(data))
		payload := map[string]any{"path": wire(temp), "data": protocol.WireOfBytes(data[offset:end]), "append": offset > 0}
		if err := call(ctx, c, traposID, protocol.TypeFSWrite, payload, timeout, nil); err != nil {
			cleanup(c, traposID, temp, timeout)
			return asTarget(err, temp, p)
		}
		if end == len(data) {
			break
		}
	}
	// fs.move refuses an existing target: the old file goes only now that the new one is whole.
	if err := Delete(ctx, c, traposID, p, timeout); err != nil && !isMissing(err) {
		cleanup(c, traposID, temp, timeout)
		return err
	}
	if err := call(ctx, c, traposID, protocol.TypeFSMove, map[string]any{"from": wire(temp), "to": wire(p)}, timeout, nil); err != nil {
		cleanup(c, traposID, temp, timeout)
		return asTarget(err, temp, p)
	}
	return nil
}

// refuseDirectory answers CC's fs_error for writing over a directory when p lists as one.
// A refused fs.list (allow_files none) says nothing about p: fs.write's own refusal follows.
func refuseDirectory(ctx context.Context, c gateway.Caller, traposID, p string, timeout time.Duration) error {
	_, err := List(ctx, c, traposID, p, timeout)
	switch protocol.CodeOf(err) {
	case "":
		return protocol.Errorf(protocol.CodeFSError, "%s: Cannot write to directory", wire(p))
	case protocol.CodeFSError, protocol.CodeForbidden:
		return nil
	}
	return err
}

// asTarget words a file-system failure on the temporary file as one on p, the file the
// host asked for (`/rom/x: Access denied`, not the hidden upload's name).
func asTarget(err error, temp, p string) error {
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeFSError {
		return err
	}
	return &protocol.Error{Code: pe.Code, Message: strings.ReplaceAll(pe.Message, wire(temp), wire(p))}
}

// Delete deletes the file or directory at p.
func Delete(ctx context.Context, c gateway.Caller, traposID, p string, timeout time.Duration) error {
	return call(ctx, c, traposID, protocol.TypeFSDelete, map[string]any{"path": wire(p)}, timeout, nil)
}

// cleanup removes a temporary upload, even after the caller's context ended.
func cleanup(c gateway.Caller, traposID, temp string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Second)
	defer cancel()
	_ = Delete(ctx, c, traposID, temp, timeout)
}

// tempName is a fresh hidden name beside p.
func tempName(p string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	dir, base := path.Split(p)
	return dir + "." + base + "." + hex.EncodeToString(b[:]) + uploadSuffix
}

// isMissing reports a computer's fs_error for a path that does not exist.
func isMissing(err error) bool {
	return protocol.CodeOf(err) == protocol.CodeFSError && strings.HasSuffix(err.Error(), "No such file")
}
