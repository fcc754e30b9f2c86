package mcp

import (
	"context"
	"fmt"

	"trap-sandbox/internal/protocol"
)

// File transfer limits. A file crosses in chunks, one fs.read or fs.write request each, so
// every frame stays under the protocol's 128 KiB whatever the bytes.
const (
	// maxFileBytes bounds read_file and write_file: more would not fit an agent's context.
	maxFileBytes = 1 << 20
	// chunkBytes is the data in one fs.read or fs.write. On the wire a byte takes at most six
	// (a control byte is \u00XX), so a chunk stays below 96 KiB plus the path and the frame.
	chunkBytes = 16 << 10
)

// fetchFile reads the whole file at path through fs.read, chunk by chunk.
func (t *tools) fetchFile(ctx context.Context, traposID, path string) ([]byte, error) {
	var data []byte
	for {
		var ans struct {
			Data string `json:"data"`
			Size *int64 `json:"size"`
			EOF  bool   `json:"eof"`
		}
		payload := map[string]any{"path": path, "offset": len(data), "length": chunkBytes}
		if err := t.request(ctx, traposID, protocol.TypeFSRead, payload, &ans); err != nil {
			return nil, err
		}
		if ans.Size != nil && *ans.Size > maxFileBytes {
			return nil, tooBig(path, *ans.Size)
		}
		chunk, err := protocol.BytesOfWire(ans.Data)
		if err != nil {
			return nil, &RequestError{Code: protocol.CodeInternal, Message: fmt.Sprintf("fs.read of %s on %s: %v", path, traposID, err)}
		}
		data = append(data, chunk...)
		if len(data) > maxFileBytes {
			return nil, tooBig(path, int64(len(data)))
		}
		if ans.EOF {
			return data, nil
		}
		if len(chunk) == 0 {
			return nil, &RequestError{Code: protocol.CodeInternal,
				Message: fmt.Sprintf("fs.read of %s on %s returned no data at offset %d without eof", path, traposID, len(data))}
		}
	}
}

func tooBig(path string, size int64) error {
	return &RequestError{Code: CodeBadArgument,
		Message: fmt.Sprintf("%s is %d bytes; read_file reads at most %d (1 MiB)", path, size, maxFileBytes)}
}

// storeFile writes data to path through fs.write: the first chunk replaces the file, the
// rest append. An empty data still sends one write, so the file exists and is empty.
func (t *tools) storeFile(ctx context.Context, traposID, path string, data []byte) error {
	for offset := 0; ; offset += chunkBytes {
		end := min(offset+chunkBytes, len(data))
		payload := map[string]any{"path": path, "data": protocol.WireOfBytes(data[offset:end]), "append": offset > 0}
		if err := t.request(ctx, traposID, protocol.TypeFSWrite, payload, nil); err != nil {
			if offset > 0 {
				return partial(err, path, offset)
			}
			return err
		}
		if end == len(data) {
			return nil
		}
	}
}

// partial says how much of a file was written before a later chunk failed.
func partial(err error, path string, written int) error {
	re := asRequestError(err)
	return &RequestError{Code: re.Code, ByComputer: re.ByComputer,
		Message: fmt.Sprintf("%s (after %d bytes of %s were written; the file is incomplete)", re.Message, written, path)}
}
