package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientVersionIsShownAndOlderLoggedOnce: hello's optional clientVersion appears in
// GET /trapos/computers and `trap-sandbox computers`; a client older than the one the gateway
// serves, or one sending none, is logged once per computer however often it reconnects.
func TestClientVersionIsShownAndOlderLoggedOnce(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	hello := func(id string, payload map[string]any) {
		c := dial(ctx, t, g, id)
		payload["traposId"], payload["secret"] = id, sandboxPassword
		f, err := c.Request(ctx, "hello", payload)
		require.NoError(t, err)
		require.True(t, f.OK != nil && *f.OK, "hello refused: %+v", f.Error)
	}
	hello("1:old", map[string]any{"clientVersion": "0.0.1"})
	hello("1:old", map[string]any{"clientVersion": "0.0.1"}) // a reconnect: replaces the first
	hello("2:none", map[string]any{})
	hello("3:new", map[string]any{"clientVersion": "999.0.0"})
	hello("4:odd", map[string]any{"clientVersion": 7})

	code, body := httpGet(t, g.URL("/trapos/computers"))
	require.Equal(t, http.StatusOK, code)
	var list []map[string]any
	require.NoError(t, json.Unmarshal(body, &list))
	versions := map[string]any{}
	for _, c := range list {
		versions[c["traposId"].(string)] = c["clientVersion"]
	}
	assert.Equal(t, map[string]any{"1:old": "0.0.1", "2:none": nil, "3:new": "999.0.0", "4:odd": nil}, versions)

	out, errOut, exit := runCLI(ctx, t, nil, "computers", "--url="+g.URL(""))
	require.Equal(t, 0, exit, errOut)
	assert.Regexp(t, `(?m)^1:old\s+local\s+0\.0\.1\s`, out)
	assert.Regexp(t, `(?m)^2:none\s+local\s+-\s`, out)

	require.NoError(t, g.Stop())
	log := g.Log()
	assert.Equal(t, 1, strings.Count(log, `traposId=1:old clientVersion=0.0.1 served=`), log)
	assert.Equal(t, 1, strings.Count(log, `traposId=2:none clientVersion="unknown (sends no clientVersion)"`), log)
	assert.NotContains(t, log, "traposId=3:new clientVersion=999.0.0 served")
}
