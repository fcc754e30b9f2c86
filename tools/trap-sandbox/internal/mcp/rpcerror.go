package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"trap-sandbox/internal/protocol"
)

// rpcError is a failed resources/read or prompts/get as the JSON-RPC error MCP gives it (a
// tool's failure is a tool result instead): a file or computer that is not there, and an
// argument or URI that cannot be used, are invalid params (the MCP specification's code for a
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
	switch {
	case pe.Code == protocol.CodeNotConnected,
		pe.Code == protocol.CodeFSError && (strings.HasSuffix(pe.Message, "No such file") || strings.HasSuffix(pe.Message, "Not a directory") ||
			strings.HasSuffix(pe.Message, "Not a file")),
		pe.Code == protocol.CodeBadPayload, pe.Code == CodeBadArgument:
		code = jsonrpc.CodeInvalidParams
	}
	e := &jsonrpc.Error{Code: code, Message: pe.Error()}
	if uri != "" {
		e.Data, _ = json.Marshal(map[string]string{"uri": uri})
	}
	return e
}

// explainResourceErrors adds the fix to the SDK's own "Resource not found" for a trapos://
// URI that is not percent-encoded: a traposId's ':', or a character no URI holds as it is
// (é, a space, '\'), keeps the URI from matching the file template, so the read never
// reaches a computer (readResource never sees such a URI).
func explainResourceErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		rr, ok := req.(*sdk.ReadResourceRequest)
		je, isRPC := errors.AsType[*jsonrpc.Error](err)
		if !ok || !isRPC || rr.Params == nil {
			return res, err
		}
		uri := rr.Params.URI
		rest, ok := strings.CutPrefix(uri, URIScheme+"://")
		if !ok {
			return res, err
		}
		host, _, hasPath := strings.Cut(rest, "/")
		var hint string
		if !hasPath && host != "" && !strings.Contains(host, ":") {
			// No template matches a URI without a path: the computer alone names no file.
			return res, &jsonrpc.Error{Code: je.Code, Data: je.Data, Message: fmt.Sprintf(
				"resource not found: %s names a computer but no file: add the path, as in %s/startup.lua (%s/ lists its root)", uri, uri, uri)}
		}
		if strings.Contains(host, ":") {
			hint = fmt.Sprintf("resource not found: %s names no computer: percent-encode its traposId (':' is %%3A)", uri)
		} else if r, found := firstUnencoded(rest); found {
			hint = fmt.Sprintf("resource not found: %s is not percent-encoded: a URI holds %q as %s", uri, string(r), escape(string(r), false))
		} else {
			return res, err
		}
		if traposID, path, perr := ParseFileURI(uri); perr == nil {
			hint += ", as in " + FileURI(traposID, path)
		}
		return res, &jsonrpc.Error{Code: je.Code, Message: hint, Data: je.Data}
	}
}

// firstUnencoded is the first character of s that a URI cannot hold as it is (RFC 3986 keeps
// ASCII letters, digits, "-._~", the reserved characters and %XX escapes): one the file
// template does not match, which percent-encoding fixes.
func firstUnencoded(s string) (rune, bool) {
	for _, r := range s {
		if r >= utf8.RuneSelf || r <= ' ' || r == 0x7f || strings.ContainsRune("\"<>\\^`{|}", r) {
			return r, true
		}
	}
	return 0, false
}
