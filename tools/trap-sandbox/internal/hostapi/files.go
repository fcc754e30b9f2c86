package hostapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Content types of the file routes. A file's body is text by the rule (cctext) unless the
// caller names octet-stream: Accept on GET, Content-Type on PUT.
const (
	textType  = "text/plain; charset=utf-8"
	bytesType = "application/octet-stream"
)

// ReadAgain is a read route's failure (GET …/files, GET …/screen): a computer that went away
// before it answered says so as a read, "a read changes nothing: ask again once it is back",
// with the API's way to see it back (computer.ReadAgain, computer.APIBackWait), where the
// gateway's words told the caller to check what it may have done. The requests route answers
// the gateway's words for every type: its caller knows what it asked (the CLI's and the stdio
// bridge's reads word it for their users).
func ReadAgain(err error) error { return computer.ReadAgain(err, computer.APIBackWait) }

// target is the request's computer and host path ("/" + the URL's decoded path).
func target(r *http.Request) (traposID, path string) {
	return cctext.TraposID(r.PathValue("traposId")), "/" + r.PathValue("path")
}

// serveGet answers a directory as its JSON listing, a file as text by the rule, or as its raw
// bytes when Accept names application/octet-stream. A read: its computer gone before it
// answered says so as a read (ReadAgain).
func (m *Module) serveGet(w http.ResponseWriter, r *http.Request) {
	traposID, path := target(r)
	entries, err := m.client.List(r.Context(), traposID, path, 0)
	err = ReadAgain(err)
	if err == nil {
		payload, err := json.Marshal(map[string]any{"entries": entries})
		if err != nil {
			writeError(w, err, nil)
			return
		}
		server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: payload})
		return
	}
	if !isNotDirectory(err) {
		writeError(w, err, nil)
		return
	}
	data, err := m.client.Read(r.Context(), traposID, path, MaxUploadBytes, 0)
	if err != nil {
		writeError(w, err, nil) // computer.Read's words say how far it got, a read's already
		return
	}
	if accepts(r.Header.Get("Accept"), bytesType) {
		w.Header().Set("Content-Type", bytesType)
	} else {
		w.Header().Set("Content-Type", textType)
		data = []byte(cctext.FromCC(data))
	}
	// The bytes are the computer's, anyone's to write: a browser that opened the URL must not
	// sniff a file of <script> into a page of the gateway's origin. Only here: the JSON
	// answers carry no such header, which each client of the requests route would parse.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// servePut writes the body to the file: raw bytes for Content-Type application/octet-stream,
// else UTF-8 text by the rule (what CC's charset cannot hold is '?' and a warning).
func (m *Module) servePut(w http.ResponseWriter, r *http.Request) {
	traposID, path := target(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxUploadBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			server.WriteBodyTooLarge(w, &server.BodyTooLarge{Limit: MaxUploadBytes})
			return
		}
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, server.ReadBodyError(err))
		return
	}
	var warnings []cctext.Replacement
	if mediaType(r.Header.Get("Content-Type")) != bytesType {
		var cc string
		cc, warnings = cctext.FileToCC(path, string(body))
		body = []byte(cc)
	}
	if err := m.client.Write(r.Context(), traposID, path, body, 0); err != nil {
		writeError(w, err, warnings)
		return
	}
	// The path the file is at, which CC's fs made of the one asked for (it drops "*:<>?| from
	// names, trims them, resolves . and ..).
	payload, _ := json.Marshal(map[string]any{"path": cctext.StoredPath(path), "size": len(body)})
	server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: payload, Warnings: warnings})
}

func (m *Module) serveDelete(w http.ResponseWriter, r *http.Request) {
	traposID, path := target(r)
	if err := m.client.Delete(r.Context(), traposID, path, 0); err != nil {
		writeError(w, err, nil)
		return
	}
	server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: protocol.EmptyPayload})
}

func isNotDirectory(err error) bool {
	return protocol.CodeOf(err) == protocol.CodeFSError && strings.HasSuffix(err.Error(), "Not a directory")
}

// accepts reports whether an Accept header names mediaType (q=0 excluded).
func accepts(accept, want string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == want && params["q"] != "0" {
			return true
		}
	}
	return false
}

// mediaType is a Content-Type's media type, lower-case, without parameters.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}
