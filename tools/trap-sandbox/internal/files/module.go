package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// ModuleName is the files module's name.
const ModuleName = "trapos-files"

// FilesPattern is the route of a computer's files; {path...} is the path on the computer
// without its leading slash, percent-decoded to the bytes it names (docs/http-api.md).
const FilesPattern = "/trapos/computers/{traposId}/files/{path...}"

// Limits of the routes.
const (
	// MaxUploadBytes bounds a PUT body: far above a computer's default 1 MB drive, so the
	// computer's own "Out of space" is what a real upload meets.
	MaxUploadBytes = 16 << 20
	// DefaultTransferTimeout bounds one whole GET or PUT (each chunk's request also has the
	// gateway's request timeout).
	DefaultTransferTimeout = 5 * time.Minute
)

// Module serves GET (raw bytes; a directory lists as JSON), PUT (raw body, written to a
// temporary name and moved into place) and DELETE of a computer's files, behind the API auth.
type Module struct {
	computers gateway.Caller
	// requestTimeout bounds each chunk's request; 0 means the gateway's default.
	requestTimeout time.Duration
}

// New returns the module reaching computers through c.
func New(c gateway.Caller) *Module { return &Module{computers: c} }

// Name implements server.Module.
func (m *Module) Name() string { return ModuleName }

// Mount registers the file routes behind the server's API auth.
func (m *Module) Mount(routes *server.Routes) {
	routes.HandleAPIFunc("GET "+FilesPattern, m.serveGet)
	routes.HandleAPIFunc("PUT "+FilesPattern, m.servePut)
	routes.HandleAPIFunc("DELETE "+FilesPattern, m.serveDelete)
}

// target is the request's computer and path ("/" + the URL's decoded path).
func target(r *http.Request) (traposID, p string) {
	return r.PathValue("traposId"), "/" + r.PathValue("path")
}

func (m *Module) serveGet(w http.ResponseWriter, r *http.Request) {
	traposID, p := target(r)
	ctx, cancel := contextFor(r)
	defer cancel()
	entries, err := List(ctx, m.computers, traposID, p, m.requestTimeout)
	if err == nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "payload": map[string]any{"entries": entries}})
		return
	}
	if !isNotDirectory(err) {
		writeError(w, err)
		return
	}
	data, err := Read(ctx, m.computers, traposID, p, MaxUploadBytes, m.requestTimeout)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

func (m *Module) servePut(w http.ResponseWriter, r *http.Request) {
	traposID, p := target(r)
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxUploadBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, protocol.Errorf(protocol.CodeBadPayload, "the upload exceeds %d bytes", MaxUploadBytes))
			return
		}
		writeError(w, protocol.Errorf(protocol.CodeBadPayload, "cannot read the upload: %v", err))
		return
	}
	ctx, cancel := contextFor(r)
	defer cancel()
	if err := Write(ctx, m.computers, traposID, p, data, m.requestTimeout); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "payload": map[string]any{"size": len(data)}})
}

func (m *Module) serveDelete(w http.ResponseWriter, r *http.Request) {
	traposID, p := target(r)
	ctx, cancel := contextFor(r)
	defer cancel()
	if err := Delete(ctx, m.computers, traposID, p, m.requestTimeout); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "payload": map[string]any{}})
}

func isNotDirectory(err error) bool {
	return protocol.CodeOf(err) == protocol.CodeFSError && strings.HasSuffix(err.Error(), "Not a directory")
}

// statusOf maps an error to the route's HTTP status.
func statusOf(err error) int {
	switch protocol.CodeOf(err) {
	case protocol.CodeForbidden:
		return http.StatusForbidden
	case protocol.CodeFSError:
		msg := err.Error()
		switch {
		case strings.HasSuffix(msg, "No such file"), strings.HasSuffix(msg, "Not a directory"):
			return http.StatusNotFound
		case strings.HasSuffix(msg, "Access denied"):
			return http.StatusForbidden
		case strings.HasSuffix(msg, "Out of space"):
			return http.StatusInsufficientStorage
		}
		return http.StatusConflict
	case protocol.CodeBadPayload:
		return http.StatusBadRequest
	case protocol.CodeNotConnected:
		return http.StatusNotFound
	case protocol.CodeTimeout:
		return http.StatusGatewayTimeout
	case protocol.CodeUnknownType:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// writeError answers in the API's error shape {ok:false, error:{code, message}}.
func writeError(w http.ResponseWriter, err error) {
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		pe = protocol.Errorf(protocol.CodeInternal, "%v", err)
	}
	writeJSON(w, statusOf(err), map[string]any{"ok": false, "error": pe})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func contextFor(r *http.Request) (ctx context.Context, cancel context.CancelFunc) {
	return context.WithTimeout(r.Context(), DefaultTransferTimeout)
}
