package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// TestLinkAcrossReplicas: link codes and enrollment keys live in the shared bucket: a code
// asked for on replica A is approved through replica B's API while A's long poll waits (A
// hears it by looking at the store again), accepted on A, and the credential says hello on B;
// a key made with the CLI on the bucket links a computer on B.
func TestLinkAcrossReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	alice := accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	key := accountsCLI(ctx, t, nats, "link", "key", "--account", "alice")
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")

	c, code := beginLink(ctx, t, a, "7:kitchen")

	require.NoError(t, c.WriteJSON(map[string]any{"event": "computer_request", "traposSenderId": "7:kitchen", "messageId": "poll",
		"type": "link.poll", "payload": map[string]any{"code": code, "waitMs": 5000}}))
	status, answer := approveLink(ctx, t, b, alice, code)
	require.Equal(t, http.StatusOK, status, answer)
	assert.Contains(t, answer, `"traposId":"7:kitchen"`)

	f, err := c.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "poll", f.MessageID)
	assert.JSONEq(t, `{"state":"approved","account":"alice","approvedBy":"alice"}`, string(f.Payload))
	f, err = c.Request(ctx, "link.accept", map[string]any{"code": code, "accept": true})
	require.NoError(t, err)
	require.Nil(t, f.Error)
	var accepted struct{ Credential string }
	require.NoError(t, json.Unmarshal(f.Payload, &accepted))

	onB, err := harness.Dial(ctx, b.WebSocketURL(), "7:kitchen")
	require.NoError(t, err)
	defer onB.Close()
	f, err = onB.Hello(ctx, accepted.Credential)
	require.NoError(t, err)
	require.Nil(t, f.Error)
	assert.Contains(t, string(f.Payload), `"accountId":"alice"`)

	turtle, err := harness.Dial(ctx, b.WebSocketURL(), "12:")
	require.NoError(t, err)
	defer turtle.Close()
	_, err = turtle.Request(ctx, harness.TypeHello, map[string]any{"traposId": "12:", "link": true})
	require.NoError(t, err)
	f, err = turtle.Request(ctx, "link.begin", map[string]any{"key": key})
	require.NoError(t, err)
	require.Nil(t, f.Error)
	assert.True(t, strings.Contains(string(f.Payload), `"account":"alice"`), string(f.Payload))
}

// TestALinkCodeOfAReplicaThatStoppedIsRefused: a code asked for on replica A, whose socket
// A's stop (or restart) closed, approved through replica B, is refused as one gateway refuses
// a code of its earlier run: B asks the other replicas whether one holds the code's socket,
// and none does. B approved it, and nobody could accept it.
func TestALinkCodeOfAReplicaThatStoppedIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	alice := accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")
	// A computer on A shows B's view of A: it leaves B's list when A says goodbye.
	onA, err := harness.Dial(ctx, a.WebSocketURL(), "1:keeper")
	require.NoError(t, err)
	defer onA.Close()
	require.NoError(t, onA.MustHello(ctx, ""))
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "a", listComputers(ct, b)["1:keeper"]) },
		waitLimit, testkit.Poll, "B to list the computer on A")

	_, open := beginLink(ctx, t, a, "8:attic")
	status, answer := approveLink(ctx, t, b, alice, open)
	require.Equal(t, http.StatusOK, status, "a code whose socket is open on A: %s", answer)

	_, code := beginLink(ctx, t, a, "7:kitchen")
	require.NoError(t, a.Stop())
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.NotContains(ct, listComputers(ct, b), "1:keeper") },
		waitLimit, testkit.Poll, "B to hear A's goodbye")
	refused := `{"ok":false,"error":{"code":"not_connected","message":"computer 7:kitchen, which showed this code, is not connected any more; run sandbox link on it again for a new code"}}`
	status, answer = approveLink(ctx, t, b, alice, code)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, refused, answer, "A stopped")

	// A runs again under its name: it knows nothing of the code either.
	a = startReplica(t, nats, "a")
	again, err := harness.Dial(ctx, a.WebSocketURL(), "2:keeper")
	require.NoError(t, err)
	defer again.Close()
	require.NoError(t, again.MustHello(ctx, ""))
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "a", listComputers(ct, b)["2:keeper"]) },
		waitLimit, testkit.Poll, "B to list the computer on A's new run")
	status, answer = approveLink(ctx, t, b, alice, code)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, refused, answer, "A restarted")
}

// TestACodeApprovedWithATokenRevokedSinceIsRefusedOnTheOtherReplica: a code asked for on
// replica A is approved through replica B with alice's token "laptop", which is then revoked on
// the bucket (a leaked token); the player's yes on A is refused, naming the fix, A's log names
// the token for the operator, and no credential was issued. Before, the approval was kept with
// the account, and A linked the computer.
func TestACodeApprovedWithATokenRevokedSinceIsRefusedOnTheOtherReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	laptop := accountsCLI(ctx, t, nats, "tokens", "add", "alice", "laptop")
	laptopID := strings.Split(laptop, "_")[1]
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")

	c, code := beginLink(ctx, t, a, "7:kitchen")
	status, answer := approveLink(ctx, t, b, laptop, code)
	require.Equal(t, http.StatusOK, status, answer)
	accountsCLI(ctx, t, nats, "tokens", "revoke", laptopID)

	f, err := c.Request(ctx, "link.accept", map[string]any{"code": code, "accept": true})
	require.NoError(t, err)
	require.NotNil(t, f.Error, "the computer was linked: %s", f.Payload)
	assert.Equal(t, "link_invalid", f.Error.Code)
	assert.Equal(t, "the API token that approved the link code was revoked since it approved it; "+
		"run sandbox link again for a new code, and have it approved again with a token that is not revoked", f.Error.Message)
	assert.NoError(t, a.WaitLog(ctx, `level=WARN msg="link refused: the API token that approved its code was revoked since" replica=a module=link traposId=7:kitchen accountId=alice approvedBy=alice byToken=`+laptopID))
	assert.Empty(t, accountsCLI(ctx, t, nats, "credentials", "list", "alice"), "no credential was issued: nothing is listed")
}

// beginLink opens a socket on g for traposID that asks for a link code (hello with link, then
// link.begin), and returns it, open until the test ends, with the code.
func beginLink(ctx context.Context, t *testing.T, g *harness.Gateway, traposID string) (*harness.Computer, string) {
	t.Helper()
	c, err := harness.Dial(ctx, g.WebSocketURL(), traposID)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	f, err := c.Request(ctx, harness.TypeHello, map[string]any{"traposId": traposID, "link": true})
	require.NoError(t, err)
	require.Nil(t, f.Error)
	f, err = c.Request(ctx, "link.begin", map[string]any{})
	require.NoError(t, err)
	require.Nil(t, f.Error)
	var begun struct{ Code string }
	require.NoError(t, json.Unmarshal(f.Payload, &begun))
	return c, begun.Code
}

// approveLink approves code through g's API with token, and returns the answer's status and
// body.
func approveLink(ctx context.Context, t *testing.T, g *harness.Gateway, token, code string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"code": code})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/trapos/link/approve"), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var answer bytes.Buffer
	_, _ = answer.ReadFrom(resp.Body)
	return resp.StatusCode, answer.String()
}
