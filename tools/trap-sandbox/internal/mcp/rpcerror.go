package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
		pe.Code == protocol.CodeFSError && (strings.HasSuffix(pe.Message, "No such file") || strings.HasSuffix(pe.Message, "Not a directory")),
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
// URI whose traposId is not percent-encoded: its ':' keeps the URI from matching the file
// template, so the read never reaches a computer (readResource never sees such a URI).
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
		host, _, _ := strings.Cut(rest, "/")
		if !ok || !strings.Contains(host, ":") {
			return res, err
		}
		hint := fmt.Sprintf("resource not found: %s names no computer: percent-encode its traposId (':' is %%3A)", uri)
		if traposID, path, perr := ParseFileURI(uri); perr == nil {
			hint += ", as in " + FileURI(traposID, path)
		}
		return res, &jsonrpc.Error{Code: je.Code, Message: hint, Data: je.Data}
	}
}
