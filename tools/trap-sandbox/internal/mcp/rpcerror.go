package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// rpcError is a failed resources/read or prompts/get as the JSON-RPC error MCP gives it (a
// tool's failure is a tool result instead): a file or computer that is not there, and an
// argument or URI that cannot be used (a path above the root too), are invalid params (the MCP specification's code for a
// resource not found since SEP-2164, as sdk.ResourceNotFoundError has it); anything else is
// an internal error. The message is the protocol's "code: message"; uri, when set, is the
// error's data, as the SDK's own not-found error has it.
func rpcError(err error, uri string) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return err
	}
	pe := asError(err)
	code := int64(jsonrpc.CodeInternalError)
	// CC's words end the computer's, before any the gateway added after them (a path above
	// the root's why).
	_, said, _ := pe.Said()
	switch {
	case pe.Code == protocol.CodeNotConnected,
		pe.Code == protocol.CodeFSError && (strings.HasSuffix(said, "No such file") || strings.HasSuffix(said, "Not a directory") ||
			strings.HasSuffix(said, "Not a file") || strings.HasSuffix(said, "Invalid Path")),
		pe.Code == protocol.CodeBadPayload, pe.Code == CodeBadArgument:
		code = jsonrpc.CodeInvalidParams
	}
	e := &jsonrpc.Error{Code: code, Message: pe.Error()}
	if uri != "" {
		e.Data, _ = json.Marshal(map[string]string{"uri": uri})
	}
	return e
}

// explainResourceErrors adds the fix to the SDK's own "Resource not found" for a URI that
// matches no resource: one of another scheme, a computer's without a path, or a trapos:// URI
// that is not percent-encoded: a traposId's ':' (or its label's ', ?, a space), a raw '%',
// or a character no URI holds as it is (é, '\\') keeps the URI from matching the file
// template, so the read never reaches a computer (readResource never sees such a URI).
func explainResourceErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		rr, ok := req.(*sdk.ReadResourceRequest)
		je, isRPC := errors.AsType[*jsonrpc.Error](err)
		if !ok || !isRPC || rr.Params == nil {
			return res, err
		}
		if hint := uriHint(rr.Params.URI); hint != "" {
			return res, &jsonrpc.Error{Code: je.Code, Message: hint, Data: je.Data}
		}
		return res, err
	}
}

// uriHint is what is wrong with a URI that matches no resource, and the URI that works when
// there is one; "" for a URI that matches the file template (its read failed on the computer).
func uriHint(uri string) string {
	rest, ok := strings.CutPrefix(uri, URIScheme+"://")
	if !ok {
		return fmt.Sprintf("resource not found: %s is not a computer's file: a file's URI is %s://<traposId, percent-encoded>/<path>, e.g. %s",
			uri, URIScheme, FileURI("7:kitchen", "/startup.lua"))
	}
	host, path, hasPath := strings.Cut(rest, "/")
	if !hasPath && host == "" {
		// trapos:// alone: the SDK's bare "Resource not found" named nothing to add.
		return fmt.Sprintf("resource not found: %s names no computer and no file: a file's URI is %s://<traposId, percent-encoded>/<path>, e.g. %s",
			uri, URIScheme, FileURI("7:kitchen", "/startup.lua"))
	}
	if !hasPath && !strings.Contains(host, ":") {
		// No template matches a URI without a path: the computer alone names no file.
		return fmt.Sprintf("resource not found: %s names a computer but no file: add the path, as in %s/startup.lua (%s/ lists its root)", uri, uri, uri)
	}
	var hint string
	if strings.Contains(host, ":") {
		hint = fmt.Sprintf("resource not found: %s names no computer: percent-encode its traposId (':' is %%3A)", uri)
	} else if what, encoded, found := firstUnencoded(host, path); found {
		hint = fmt.Sprintf("resource not found: %s is not percent-encoded: a URI holds %s as %s", uri, what, encoded)
	} else {
		return ""
	}
	if traposID := unescapeLeniently(host); traposID != "" {
		hint += ", as in " + FileURI(traposID, "/"+unescapeLeniently(path))
	}
	return hint
}

// firstUnencoded is the first character of a trapos:// URI's traposId (host) or path that
// the file template does not match as it is, quoted, and its percent-encoding: in either, a
// character no URI holds as it is (RFC 3986 keeps ASCII letters, digits, "-._~", the reserved
// characters and %XX escapes) and a '%' that starts no %XX; in the traposId, also a reserved
// character (a label's ', ?, a space: the template's {traposId} takes unreserved ones and
// escapes alone).
func firstUnencoded(host, path string) (what, encoded string, found bool) {
	for part, s := range []string{host, path} {
		for i, r := range s {
			switch {
			case r == '%':
				if _, escape := cctext.HexByte(s[i+1:]); escape {
					continue
				}
				return `"%" (when it is not the start of an escape like %C3)`, "%25", true
			case r >= utf8.RuneSelf || r <= ' ' || r == 0x7f || strings.ContainsRune("\"<>\\^`{|}", r),
				part == 0 && !unreserved(r):
				return strconv.Quote(string(r)), escape(string(r), false), true
			}
		}
	}
	return "", "", false
}

// unreserved reports whether r is one of RFC 3986's unreserved characters.
func unreserved(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-._~", r)
}

// unescapeLeniently decodes the %XX escapes of s and keeps every other byte as it is (a '%'
// that starts none too): what a URI that is not percent-encoded meant, to show the one that is.
func unescapeLeniently(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if b, escape := cctext.HexByte(s[i+1:]); s[i] == '%' && escape {
			sb.WriteByte(b)
			i += 2
			continue
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}
