package files

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// disk answers fs.* requests like the Lua daemon (libsandboxfiles), on a map of files keyed
// by their bytes, with CC's messages; failWrite makes the nth fs.write fail with Out of space.
type disk struct {
	mu        sync.Mutex
	files     map[string][]byte
	writes    int
	failWrite int
	log       []string
}

func (d *disk) Computers() []gateway.Computer { return nil }

func (d *disk) Call(_ context.Context, traposID, typ string, payload any, _ time.Duration) (gateway.Response, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if traposID != "7:" {
		return gateway.Response{}, protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected", traposID)
	}
	p := payload.(map[string]any)
	path := func(name string) string {
		b, err := protocol.BytesOfWire(p[name].(string))
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	fail := func(msg string) (gateway.Response, error) {
		return gateway.Response{Error: &protocol.Error{Code: protocol.CodeFSError, Message: msg}}, nil
	}
	ok := func(v any) (gateway.Response, error) {
		b, _ := json.Marshal(v)
		return gateway.Response{OK: true, Payload: b}, nil
	}
	d.log = append(d.log, typ)
	switch typ {
	case protocol.TypeFSList:
		dir := strings.TrimSuffix(path("path"), "/") + "/"
		if dir != "/dir/" && dir != "/" {
			return fail(path("path") + ": Not a directory")
		}
		entries := []Entry{}
		for name, data := range d.files {
			if rest, found := strings.CutPrefix(name, dir); found && !strings.Contains(rest, "/") {
				entries = append(entries, Entry{Name: protocol.WireOfBytes([]byte(rest)), Size: int64(len(data))})
			}
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		return ok(map[string]any{"entries": entries})
	case protocol.TypeFSRead:
		data, found := d.files[path("path")]
		if !found {
			return fail(path("path") + ": No such file")
		}
		offset := p["offset"].(int)
		end := min(offset+p["length"].(int), len(data))
		return ok(map[string]any{"data": protocol.WireOfBytes(data[offset:end]), "size": len(data), "eof": end == len(data)})
	case protocol.TypeFSWrite:
		d.writes++
		if d.writes == d.failWrite {
			return fail(path("path") + ": Out of space")
		}
		data, _ := protocol.BytesOfWire(p["data"].(string))
		if p["append"] == true {
			data = append(d.files[path("path")], data...)
		}
		d.files[path("path")] = data
		return ok(map[string]any{"size": len(data)})
	case protocol.TypeFSDelete:
		if path("path") == "/dir" { // CC deletes a directory with all it holds
			for name := range d.files {
				if strings.HasPrefix(name, "/dir/") {
					delete(d.files, name)
				}
			}
			return ok(map[string]any{})
		}
		if _, found := d.files[path("path")]; !found {
			return fail(path("path") + ": No such file")
		}
		delete(d.files, path("path"))
		return ok(map[string]any{})
	case protocol.TypeFSMove:
		if _, found := d.files[path("to")]; found {
			return fail(path("to") + ": File exists")
		}
		d.files[path("to")] = d.files[path("from")]
		delete(d.files, path("from"))
		return ok(map[string]any{})
	}
	return gateway.Response{Error: &protocol.Error{Code: protocol.CodeUnknownType, Message: typ}}, nil
}

func bigData(n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 31 % 256)
	}
	return data
}

func TestWriteThenReadInChunks(t *testing.T) {
	d := &disk{files: map[string][]byte{}}
	data := bigData(3*ChunkBytes + 5)
	require.NoError(t, Write(t.Context(), d, "7:", "/dir/f.bin", data, time.Second))
	got, err := Read(t.Context(), d, "7:", "/dir/f.bin", 0, time.Second)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Len(t, d.files, 1, "the temporary file was moved into place")
}

func TestBrokenUploadLeavesTheOldFile(t *testing.T) {
	d := &disk{files: map[string][]byte{"/dir/f.bin": []byte("old")}, failWrite: 3}
	err := Write(t.Context(), d, "7:", "/dir/f.bin", bigData(4*ChunkBytes), time.Second)
	require.Error(t, err)
	assert.Equal(t, protocol.CodeFSError, protocol.CodeOf(err))
	assert.EqualError(t, err, "fs_error: /dir/f.bin: Out of space", "the error names the file asked for, not the hidden upload")
	assert.Equal(t, map[string][]byte{"/dir/f.bin": []byte("old")}, d.files, "old file kept, temporary file removed")
}

func TestWriteNeverReplacesADirectory(t *testing.T) {
	d := &disk{files: map[string][]byte{"/dir/a": []byte("a")}}
	err := Write(t.Context(), d, "7:", "/dir", []byte("new"), time.Second)
	assert.EqualError(t, err, "fs_error: /dir: Cannot write to directory")
	assert.Equal(t, map[string][]byte{"/dir/a": []byte("a")}, d.files, "the directory and its files stay")
	assert.Equal(t, []string{protocol.TypeFSList}, d.log, "nothing was uploaded")
}

func TestReadRefusesAFileOverTheLimit(t *testing.T) {
	d := &disk{files: map[string][]byte{"/big": bigData(100)}}
	_, err := Read(t.Context(), d, "7:", "/big", 10, time.Second)
	assert.ErrorContains(t, err, "over the limit")
}

func serveFiles(t *testing.T, d *disk) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, New(d)).Handler())
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, method, url string, body []byte) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), data
}

func TestRoutesMoveRawBytesUnderPercentDecodedPaths(t *testing.T) {
	d := &disk{files: map[string][]byte{}}
	srv := serveFiles(t, d)
	data := bigData(2*ChunkBytes + 1)
	status, _, body := do(t, http.MethodPut, srv.URL+"/trapos/computers/7:/files/dir/%FF%20x.bin", data)
	require.Equal(t, http.StatusOK, status, string(body))
	assert.JSONEq(t, `{"ok":true,"payload":{"size":32769}}`, string(body))
	assert.Contains(t, d.files, "/dir/\xff x.bin", "the path is the URL's decoded bytes")

	status, kind, body := do(t, http.MethodGet, srv.URL+"/trapos/computers/7:/files/dir/%FF%20x.bin", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "application/octet-stream", kind)
	assert.Equal(t, data, body)

	status, kind, body = do(t, http.MethodGet, srv.URL+"/trapos/computers/7:/files/dir", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "application/json", kind)
	assert.JSONEq(t, `{"ok":true,"payload":{"entries":[{"name":"ÿ x.bin","isDir":false,"size":32769}]}}`, string(body))

	status, _, _ = do(t, http.MethodDelete, srv.URL+"/trapos/computers/7:/files/dir/%FF%20x.bin", nil)
	assert.Equal(t, http.StatusOK, status)
	assert.Empty(t, d.files)
}

func TestRoutesAnswerErrorsWithCodesAndStatuses(t *testing.T) {
	d := &disk{files: map[string][]byte{"/dir/a": []byte("a")}, failWrite: 1}
	srv := serveFiles(t, d)
	status, _, body := do(t, http.MethodGet, srv.URL+"/trapos/computers/7:/files/nope", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, string(body), `"code":"fs_error"`)
	assert.Contains(t, string(body), "/nope: No such file")

	status, _, body = do(t, http.MethodPut, srv.URL+"/trapos/computers/7:/files/dir/a", []byte("new"))
	assert.Equal(t, http.StatusInsufficientStorage, status, string(body))
	assert.Equal(t, []byte("a"), d.files["/dir/a"])

	status, _, body = do(t, http.MethodGet, srv.URL+"/trapos/computers/8:/files/x", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, string(body), `"code":"not_connected"`)

	req := httptest.NewRequest(http.MethodGet, "/trapos/computers/7:/files/dir/a", nil)
	req.RemoteAddr = "192.0.2.1:4000"
	rec := httptest.NewRecorder()
	server.New(slog.New(slog.DiscardHandler), server.Config{}, New(d)).Handler().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusForbidden, rec.Code, "the API's auth applies")
}
