package integration

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// lookAlikes are traposIds a player on the same server could give a computer to pass for
// 7:kitchen in the host's lists (a name tag sets any label byte; CC shows bytes A0 and AD as
// a space and a glyph), each with the form every list shows it in.
var lookAlikes = []struct{ id, shown string }{
	{"7:kitchen", "7:kitchen"},
	{"7:kitchen\u00a0", `7:kitchen\xa0`}, // no-break space
	{"7:kit\u00adchen", `7:kit\xadchen`}, // soft hyphen
	{"7:kitchen ", `7:kitchen\x20`},      // a space at the end
	{"7:kit\u0441hen", `7:kit\u0441hen`}, // Cyrillic с: no CC label, but any client's hello
}

// TestLookAlikeComputersAreToldApartOnEverySurface: the real binary's CLI table, HTTP list and
// MCP list show each look-alike of 7:kitchen in its escaped form (cctext.ShowTraposID), and
// that form, typed back, reaches that computer and no other.
func TestLookAlikeComputersAreToldApartOnEverySurface(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	for _, c := range lookAlikes {
		answerRequests(ctx, connect(ctx, t, g, c.id), c.id)
	}
	apiURL := "--url=" + g.URL("")

	// The CLI's table: one row each, none alike.
	out, errOut, code := runCLI(ctx, t, nil, "computers", apiURL)
	require.Equal(t, 0, code, errOut)
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		rows = append(rows, strings.Fields(l)[0])
	}
	var want []string
	for _, c := range lookAlikes {
		want = append(want, c.shown)
	}
	assert.ElementsMatch(t, want, rows, out)
	assert.NotContains(t, out, "\u00a0")
	assert.NotContains(t, out, "\u00ad")

	// The HTTP list: traposId as it is, shown beside it where they differ.
	status, body := httpGet(t, g.URL("/trapos/computers"))
	require.Equal(t, 200, status, string(body))
	var listed []struct {
		TraposID string `json:"traposId"`
		Shown    string `json:"shown"`
	}
	require.NoError(t, json.Unmarshal(body, &listed))
	shownOf := map[string]string{}
	for _, c := range listed {
		shownOf[c.TraposID] = c.Shown
	}
	for _, c := range lookAlikes {
		s, ok := shownOf[c.id]
		require.True(t, ok, "%q listed", c.id)
		if c.id == c.shown {
			assert.Empty(t, s, "no shown form when it is the traposId")
		} else {
			assert.Equal(t, c.shown, s)
		}
	}

	// MCP's list: the same entries.
	s := harness.ConnectMCP(ctx, t, g, "")
	var mcpList struct {
		Computers []struct {
			TraposID string `json:"traposId"`
			Shown    string `json:"shown"`
		} `json:"computers"`
	}
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "list_computers", nil), "", &mcpList)
	require.Len(t, mcpList.Computers, len(lookAlikes))
	for _, c := range mcpList.Computers {
		assert.Equal(t, shownOf[c.TraposID], c.Shown, "%q", c.TraposID)
	}
	var pong map[string]any
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "ping", map[string]any{"traposId": "7:kitchen\u00a0"}), `7:kitchen\xa0`, &pong)
	assert.Equal(t, "7:kitchen\u00a0", pong["traposId"], "MCP's tools take the traposId itself")

	// Typed back as shown, each form reaches its own computer: the CLI, and the HTTP API's path.
	for _, c := range lookAlikes {
		out, errOut, code := runCLI(ctx, t, nil, "request", apiURL, c.shown, "whoami", `{}`)
		require.Equal(t, 0, code, errOut)
		var answer struct {
			TraposID string `json:"traposId"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &answer), out)
		assert.Equal(t, c.id, answer.TraposID, "%s reaches %q", c.shown, c.id)

		r := await(ctx, t, postRequest(ctx, t, g, c.shown, map[string]any{"type": "whoami"}))
		require.True(t, r.OK, "%+v", r.Error)
		require.NoError(t, json.Unmarshal(r.Payload, &answer))
		assert.Equal(t, c.id, answer.TraposID, "POST /trapos/computers/%s/requests", url.PathEscape(c.shown))
	}

	// A message names a computer in the same form, whoever wrote it: the gateway's hint too.
	_, errOut, code = runCLI(ctx, t, nil, "ping", apiURL, `7:kitchen\x20\x20`)
	assert.Equal(t, 1, code)
	assert.Equal(t, `trap-sandbox: computer 7:kitchen \x20 ping: the gateway answered not_connected: the computer is not connected; `+
		`did you mean "7:kitchen" or "7:kitchen\x20" or "7:kitchen\xa0" or "7:kit\xadchen" or "7:kit\u0441hen"?`+"\n", errOut)

	// A CLI message names the computer in the same form.
	out, errOut, code = runCLI(ctx, t, nil, "ping", apiURL, "7:kitchen\u00a0")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, "^"+regexp.QuoteMeta(`pong from 7:kitchen\xa0 in `), out)
}
