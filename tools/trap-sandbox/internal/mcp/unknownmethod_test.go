package mcp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/testkit/daemonfake"
)

// TestAMethodTheServerDoesNotHaveIsAJSONRPCError: a request of a method the server does not
// have, or a call without its params, is answered as JSON-RPC answers it, the error of its id
// (-32601 method not found, -32600 invalid request) with the SDK's status and words, where the
// SDK answered plain text, where the rest of the API answers JSON. The MCP Go SDK's client
// fails the call with the error and its session goes on.
func TestAMethodTheServerDoesNotHaveIsAJSONRPCError(t *testing.T) {
	srv := httptest.NewServer(New(computer.New(daemonfake.NewLocal(nil)), nil, clock.Real{}, nil).handler)
	defer srv.Close()
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/cal","params":{}}`: `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"JSON RPC not handled: \"tools/cal\" unsupported"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`:          `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"invalid request: missing required \"params\""}}`,
	} {
		resp, err := http.DefaultClient.Do(newMCPPost(t, srv.URL, strings.NewReader(body)))
		require.NoError(t, err)
		answer, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), body)
		assert.JSONEq(t, want, string(answer), body)
	}

	// A client whose ping is a method this server does not have, as a newer client's may be
	// (the SDK's client sends none it does not know itself).
	renaming := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Body != nil {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			body = bytes.Replace(body, []byte(`"method":"ping"`), []byte(`"method":"pings"`), 1)
			req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: renaming, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close() }()
	err = cs.Ping(t.Context(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `JSON RPC not handled: "pings" unsupported`)
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err, "the session goes on")
	assert.NotEmpty(t, tools.Tools)
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
