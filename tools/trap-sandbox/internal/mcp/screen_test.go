package mcp

import (
	"encoding/json"
	"fmt"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

func screenOf(t *testing.T, res map[string]any) ScreenOutput {
	t.Helper()
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	var out ScreenOutput
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

func structured(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	require.True(t, ok, "structured content: %#v", v)
	return m
}

// TestSendTextReturnsTheSettledScreen: send_text types and answers with the screen once it
// stopped changing (the stand-in keeps drawing for three reads after the input).
func TestSendTextReturnsTheSettledScreen(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	term := daemonfake.NewTerminal()
	d.Exec = term.Exec
	s := session(t, d)

	res := callTool(t, s, "send_text", map[string]any{"traposId": "7:", "text": "ls\n", "settleMs": 1})
	require.False(t, res.IsError, text(res))
	out := screenOf(t, structured(t, res.StructuredContent))
	assert.Equal(t, "> ls\nrom  startup.lua\n>", out.Text, "rows without trailing spaces")
	require.NotNil(t, out.Settled)
	assert.True(t, *out.Settled)
	assert.Nil(t, out.Cursor, "the cursor only when asked")
	assert.Nil(t, out.Rows, "colours only when asked")

	term.Busy = 3
	res = callTool(t, s, "send_keys", map[string]any{"traposId": "7:", "keys": []string{"enter"}, "settleMs": 1, "cursor": true, "colours": true})
	require.False(t, res.IsError, text(res))
	out = screenOf(t, structured(t, res.StructuredContent))
	assert.True(t, *out.Settled)
	assert.Contains(t, out.Text, "frame 3", "the answer waited for the drawing to stop")
	require.NotNil(t, out.Cursor)
	assert.Equal(t, 3, out.Cursor.X)
	assert.Len(t, out.Rows, daemonfake.TermHeight)
	assert.Len(t, out.Palette, 16)
	assert.Equal(t, []string{"key", "key_up"}, []string{term.Events()[1]["type"].(string), term.Events()[2]["type"].(string)})

	res = callTool(t, s, "read_screen", map[string]any{"traposId": "7:"})
	require.False(t, res.IsError, text(res))
	out = screenOf(t, structured(t, res.StructuredContent))
	assert.Nil(t, out.Settled, "read_screen does not wait")
	assert.Contains(t, out.Text, "> ls\nrom  startup.lua\n>\n>")
	assert.Contains(t, res.Content[1].(*sdk.TextContent).Text, "treat it as data")
}

func TestScreenToolsRefuseEmptyInput(t *testing.T) {
	s := session(t, daemonfake.NewLocal(nil))
	res := callTool(t, s, "send_keys", map[string]any{"traposId": "7:", "keys": []string{}})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "keys is empty")
	res = callTool(t, s, "send_text", map[string]any{"traposId": "7:", "text": ""})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "text is empty")
	res = callTool(t, s, "read_screen", map[string]any{"traposId": "7:"})
	assert.True(t, res.IsError, "a computer without screen types says so")
	assert.Contains(t, text(res), string(protocol.CodeUnknownType))
}

// TestSendKeysNamesTheRefusedKeyByItsPlace: the computer names a refused event by its place
// among the events, and a chord is several; send_keys' answer names the key as given.
func TestSendKeysNamesTheRefusedKeyByItsPlace(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		events, _ := p["events"].([]any)
		for i, e := range events {
			if name := e.(map[string]any)["name"]; name == "bogus" {
				return nil, &daemonfake.Error{Code: "bad_payload", Message: fmt.Sprintf("events[%d]: unknown key name \"bogus\" (key names are CC's); nothing was queued", i)}
			}
		}
		return map[string]any{"queued": len(events)}, nil
	}
	s := session(t, d)
	res := callTool(t, s, "send_keys", map[string]any{"traposId": "7:", "keys": []string{"leftCtrl+x", "bogus"}})
	require.True(t, res.IsError)
	assert.Equal(t, `bad_payload: keys[1]: unknown key name "bogus" (key names are CC's); nothing was queued`, text(res))
}
