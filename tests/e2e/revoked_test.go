package e2e

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAWatchedComputerCutOffForItsCredentialSaysSo: alice watches her computer's screen (as
// the web console does) when its credential is revoked (computers revoke; accounts remove and
// credentials revoke close it the same way): the stream ends saying that its credential was
// revoked and how it comes back. It said "computer 11:desk disconnected", and the web console
// then waited for a computer that does not come back by itself.
func TestAWatchedComputerCutOffForItsCredentialSaysSo(t *testing.T) {
	ctx := testContext(t)
	_, alice, g, _ := accountsDesk(ctx, t, "alice")

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL("/trapos/computers/"+deskTraposID+"/screen"), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r := bufio.NewReader(resp.Body)
	assert.Contains(t, readEvent(t, r), markerAtPrompt, "the first frame is the screen")

	gatewayCLI(ctx, t, "computers", "revoke", deskTraposID, "--url="+g.URL(""), "--api-token="+alice)
	end := readEvent(t, r)
	for !strings.HasPrefix(end, `{"ok":false`) { // frames drawn before the revocation
		end = readEvent(t, r)
	}
	assert.JSONEq(t, `{"ok":false,"error":{"code":"not_connected","message":"computer 11:desk was cut off: its credential was revoked; it connects again once linked anew (sandbox link on it) or given a new credential"}}`, end)
}
