package mcp

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/testkit/daemonfake"
)

// TestArgumentsOutsideTheSchemaAreNamed: arguments the input schema refuses are answered
// bad_argument naming each argument, what it must be and what it was, not the SDK's validator
// chain ('validating "arguments": validating root: validating /properties/timeoutMs: minimum:
// 0/1 is less than 1.000000'); nothing is sent to the computer. A monitor given to send_keys,
// send_text or click is told why none of them takes one.
func TestArgumentsOutsideTheSchemaAreNamed(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	s := session(t, d)
	const timeoutMs = "how long the whole call may take, in milliseconds (default 10000)"
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ping", map[string]any{}, "bad_argument: traposId is missing: the computer, as list_computers shows it (e.g. 7:kitchen)"},
		{"ping", map[string]any{"traposId": 7}, "bad_argument: traposId must be a string, not the number 7: the computer, as list_computers shows it (e.g. 7:kitchen)"},
		{"ping", map[string]any{"traposId": nil}, "bad_argument: traposId must be a string, not null: the computer, as list_computers shows it (e.g. 7:kitchen)"},
		{"ping", map[string]any{"traposId": "7:", "timeoutMs": 0}, "bad_argument: timeoutMs must be a whole number from 1 to 60000, not the number 0: " + timeoutMs},
		{"ping", map[string]any{"traposId": "7:", "timeoutMs": 90000}, "bad_argument: timeoutMs must be a whole number from 1 to 60000, not the number 90000: " + timeoutMs},
		{"ping", map[string]any{"traposId": "7:", "timeoutMs": 1.5}, "bad_argument: timeoutMs must be a whole number from 1 to 60000, not the number 1.5: " + timeoutMs},
		{"ping", map[string]any{"traposId": "7:", "timeoutMs": "5000"}, `bad_argument: timeoutMs must be a whole number from 1 to 60000, not the string "5000": ` + timeoutMs},
		{"ping", map[string]any{"traposID": "7:", "timeout": 5000}, `bad_argument: "timeout" is not an argument of ping (did you mean timeoutMs?); "traposID" is not an argument of ping (did you mean traposId?); ping takes traposId, wait, timeoutMs; traposId is missing: the computer, as list_computers shows it (e.g. 7:kitchen)`},
		{"list_computers", map[string]any{"all": true}, `bad_argument: "all" is not an argument of list_computers; list_computers takes match, limit, offset`},
		// A typo of two letters at most, and the tools' British spelling, name the argument meant
		// (they were told only that they are no argument); a word near none still names none.
		{"read_file", map[string]any{"traposId": "7:", "path": "/x", "lenght": 5}, `bad_argument: "lenght" is not an argument of read_file (did you mean length?); read_file takes traposId, path, offset, length, timeoutMs`},
		{"read_screen", map[string]any{"traposId": "7:", "colors": true}, `bad_argument: "colors" is not an argument of read_screen (did you mean colours?); read_screen takes traposId, monitor, colours, cursor, timeoutMs`},
		{"list_computers", map[string]any{"filter": "x"}, `bad_argument: "filter" is not an argument of list_computers; list_computers takes match, limit, offset`},
		{"list_computers", map[string]any{"limit": 5000}, "bad_argument: limit must be a whole number from 1 to 1000, not the number 5000: list at most this many computers (default 100)"},
		// A whole number past 2^53 - 1 is no exact number for the computer, nor one a tool's int
		// may hold: named as the argument's, not as Go's decoder's overflow.
		{"click", map[string]any{"traposId": "7:", "x": 1e20, "y": 9007199254740993}, "bad_argument: x must be a whole number, at most 9007199254740991 in size, not the number 100000000000000000000: the cell's column, 1 at the left, as read_screen's cursor counts; " +
			"y must be a whole number, at most 9007199254740991 in size, not the number 9007199254740993: the cell's row, 1 at the top (multishell's tab bar is row 1 while two programs run)"},
		{"read_file", map[string]any{"traposId": "7:", "path": "/x", "offset": 1e300}, "bad_argument: offset must be a whole number from 0 on, at most 9007199254740991 in size, not the number 1e+300: read from this byte of the file on (default 0, its first byte): with length, the next part of a file read in parts"},
		{"send_keys", map[string]any{"traposId": "7:", "keys": []any{"a", 5}}, "bad_argument: keys[1] must be a string, not the number 5"},
		// A monitor given to a tool that types: why it takes none, and where a monitor is read.
		{"send_keys", map[string]any{"traposId": "7:", "keys": []any{"a"}, "monitor": "top"}, `bad_argument: "monitor" is not an argument of send_keys: it types on the computer's own screen, and a monitor takes no keys (a player touches an advanced one; read a monitor with read_screen's or wait_for_screen's monitor); send_keys takes traposId, keys, settleMs, colours, cursor, timeoutMs`},
		{"send_text", map[string]any{"traposId": "7:", "text": "a", "monitor": "top"}, `bad_argument: "monitor" is not an argument of send_text: it types on the computer's own screen, and a monitor takes no keys (a player touches an advanced one; read a monitor with read_screen's or wait_for_screen's monitor); send_text takes traposId, text, settleMs, colours, cursor, timeoutMs`},
		{"click", map[string]any{"traposId": "7:", "x": 1, "y": 1, "monitor": "top"}, `bad_argument: "monitor" is not an argument of click: it clicks the computer's own screen, and a monitor takes no clicks from here (a player touches an advanced one; read a monitor with read_screen's or wait_for_screen's monitor); click takes traposId, x, y, button, settleMs, colours, cursor, timeoutMs`},
		{"read_screen", map[string]any{"traposId": "7:", "colours": "yes"}, `bad_argument: colours must be true or false, not the string "yes": also return each row's colours (blit strings) and the palette`},
	} {
		res := callTool(t, s, c.tool, c.args)
		require.True(t, res.IsError, "%s %v", c.tool, c.args)
		assert.Equal(t, c.want, text(res), "%s %v", c.tool, c.args)
	}
	assert.Empty(t, d.Types(), "nothing reached the computer")

	// Arguments within the schema go on: 1.0 is a whole number, null an optional content's absence.
	res := callTool(t, s, "ping", map[string]any{"traposId": "7:", "timeoutMs": 1000.0})
	assert.False(t, res.IsError, text(res))
	res = callTool(t, s, "write_file", map[string]any{"traposId": "7:", "path": "/x", "content": nil, "contentBase64": "eA=="})
	assert.False(t, res.IsError, text(res))
}

// TestAnOptionalArgumentGivenNullIsNotGiven: a model that fills every argument, null for those
// it leaves out (OpenAI's strict function calling has it so), is answered as if it had left
// them out, over real HTTP; a required one given null is still refused.
func TestAnOptionalArgumentGivenNullIsNotGiven(t *testing.T) {
	d := daemonfake.NewLocal(nil)
	term := daemonfake.NewTerminal()
	d.Exec = term.Exec
	srv := httptest.NewServer(New(computer.New(d), nil, clock.Real{}, nil).handler)
	defer srv.Close()
	s := connectHTTP(t, srv)
	res := callTool(t, s, "ping", map[string]any{"traposId": "7:", "timeoutMs": nil})
	assert.False(t, res.IsError, text(res))
	res = callTool(t, s, "send_keys", map[string]any{"traposId": "7:", "keys": []string{"enter"}, "settleMs": 1, "colours": nil, "cursor": nil, "timeoutMs": nil})
	require.False(t, res.IsError, text(res))
	assert.NotContains(t, text(res), `"rows"`, "colours null is colours not given")
	res = callTool(t, s, "ping", map[string]any{"traposId": nil})
	require.True(t, res.IsError)
	assert.Equal(t, "bad_argument: traposId must be a string, not null: the computer, as list_computers shows it (e.g. 7:kitchen)", text(res))
}

// TestEveryArgumentOfTheWrongTypeIsNamed: every argument of every tool, given an object, is
// named by the check (an argument of a type it does not know would fall through to the SDK's
// validator chain).
func TestEveryArgumentOfTheWrongTypeIsNamed(t *testing.T) {
	s := session(t, daemonfake.NewLocal(nil))
	list, err := s.ListTools(t.Context(), nil)
	require.NoError(t, err)
	for _, tool := range list.Tools {
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		raw, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &schema))
		for name := range schema.Properties {
			args := map[string]any{"traposId": "7:", name: map[string]any{}}
			res := callTool(t, s, tool.Name, args)
			require.True(t, res.IsError, "%s %s", tool.Name, name)
			assert.Regexp(t, "^bad_argument: (.*; )?"+name+" must be [^:]*, not an object", text(res), "%s %s", tool.Name, name)
		}
	}
}
