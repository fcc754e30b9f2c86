package mcp

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/testkit/daemonfake"
)

// toolsListFile holds tools/list's answer as clients have it: every tool's name, title,
// description, annotations and input and output schemas, indented to be read (and a change
// to be seen as a diff); compacted again it is the answer's JSON byte for byte.
var toolsListFile = filepath.Join("testdata", "tools-list.json")

// updateToolsList rewrites toolsListFile with what the server answers now: for a change
// meant to alter what clients see (go test ./internal/mcp -run TestToolsListIsAsClientsHaveIt -update-tools-list).
var updateToolsList = flag.Bool("update-tools-list", false, "rewrite "+toolsListFile+" with tools/list's answer now")

// TestToolsListIsAsClientsHaveIt: tools/list answers each of several servers of one process
// with the same bytes, those of toolsListFile, so that how the servers get their schemas (built
// once a process and shared) changes nothing a client sees. A change to a tool shows here as
// the diff of its answer.
func TestToolsListIsAsClientsHaveIt(t *testing.T) {
	var answers []string
	for range 3 {
		srv := httptest.NewServer(New(computer.New(daemonfake.NewLocal(nil)), nil, clock.Real{}, nil).handler)
		status, answer := postMCP(t, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		srv.Close()
		require.Equal(t, http.StatusOK, status, answer)
		// The answer is one event of the stream: its data is the JSON-RPC message.
		data, ok := strings.CutPrefix(answer, "event: message\ndata: ")
		require.True(t, ok, "%.200s", answer)
		data, ok = strings.CutSuffix(data, "\n\n")
		require.True(t, ok, "%.200s", answer)
		answers = append(answers, data)
	}
	if *updateToolsList {
		var indented bytes.Buffer
		require.NoError(t, json.Indent(&indented, []byte(answers[0]), "", "  "))
		require.NoError(t, os.WriteFile(toolsListFile, append(indented.Bytes(), '\n'), 0o644))
	}
	file, err := os.ReadFile(toolsListFile)
	require.NoError(t, err)
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, file))
	for i, answer := range answers {
		if answer == want.String() {
			continue
		}
		// Shown indented, as the file has it, for a diff one can read.
		var got bytes.Buffer
		require.NoError(t, json.Indent(&got, []byte(answer), "", "  "))
		assert.Equal(t, string(file), got.String()+"\n", "server %d's tools/list (run with -update-tools-list for a change meant to alter it)", i+1)
		assert.Fail(t, "tools/list changed", "server %d's answer is not the file's bytes", i+1)
	}
}
