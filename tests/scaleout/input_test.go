package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/embeddednats"

	"tests/internal/harness"
)

// postInput types events on traposID through g's POST …/input and returns the status and body.
func postInput(ctx context.Context, g *harness.Gateway, traposID string, events []map[string]any, timeoutMs int) (int, string, error) {
	return postInputAs(ctx, g, "", traposID, events, timeoutMs)
}

// postInputAs is postInput with an account's API token (none when token is empty).
func postInputAs(ctx context.Context, g *harness.Gateway, token, traposID string, events []map[string]any, timeoutMs int) (int, string, error) {
	body, _ := json.Marshal(map[string]any{"events": events, "timeoutMs": timeoutMs})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/trapos/computers/"+traposID+"/input"), bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := harness.HTTPClient().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// TestTheInputTurnIsHeldWhereTheComputerIs: a caller's input of several screen.input requests
// typed through replica a, on a computer whose socket replica b holds, holds the computer's
// input turn where its socket is: another caller's input through b waits for it and is never
// typed between its parts. (The turn was held per replica: b sent the other caller's key while
// a's first part was still unanswered.)
func TestTheInputTurnIsHeldWhereTheComputerIs(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a, b := startReplica(t, nats, "a"), startReplica(t, nats, "b")

	c, err := harness.Dial(ctx, b.WebSocketURL(), "7:kitchen")
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.MustHello(ctx, ""))
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["7:kitchen"]) }, waitLimit, testkit.Poll, "a to list b's computer")

	requests, stop := answerHoldingTheFirstInput(ctx, c)
	defer stop()

	// 200 characters: two screen.input requests (128 events each at most).
	long := strings.Repeat("a", 200)
	longDone := make(chan string, 1)
	go func() {
		status, body, err := postInput(ctx, a, "7:kitchen", []map[string]any{{"type": "char", "text": long}}, int(waitLimit.Milliseconds()))
		if err != nil {
			body = err.Error()
		}
		longDone <- strings.Join([]string{http.StatusText(status), body}, " ")
	}()
	var first harness.Frame
	select {
	case first = <-requests:
	case out := <-longDone:
		t.Fatal("the long input ended before its first part reached the computer: " + out)
	}
	require.Equal(t, "screen.input", first.Type)
	require.Contains(t, string(first.Payload), strings.Repeat("a", 128))

	// While its first part is unanswered, another caller types a key through b, the holder.
	status, body, err := postInput(ctx, b, "7:kitchen", []map[string]any{{"type": "key", "name": "enter"}}, 3000)
	require.NoError(t, err)
	select {
	case f := <-requests:
		t.Fatalf("another caller's input reached the computer between the parts of a's input: %s %s", f.Type, f.Payload)
	default:
	}
	assert.Equal(t, http.StatusGatewayTimeout, status, body)
	assert.Contains(t, body, "was still typing another caller's input")
	// A single screen.input on …/requests through a, which holds no turn of its own while a's
	// input is typed on b, waits for b's turn as well.
	resp, err := harness.HTTPClient().Post(a.URL("/trapos/computers/7:kitchen/requests"), "application/json",
		strings.NewReader(`{"type":"screen.input","payload":{"events":[{"type":"key","name":"tab"}]},"timeoutMs":3000}`))
	require.NoError(t, err)
	single, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	select {
	case f := <-requests:
		t.Fatalf("a single screen.input reached the computer between the parts of a's input: %s %s", f.Type, f.Payload)
	default:
	}
	assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(single))
	assert.Contains(t, string(single), "was still typing another caller's input")

	// The first part answered, the second follows; nothing else comes.
	require.NoError(t, c.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": c.TraposID,
		"messageId": first.MessageID, "type": first.Type, "ok": true, "payload": map[string]any{}}))
	var second harness.Frame
	select {
	case second = <-requests:
	case <-ctx.Done():
		t.Fatal("the long input's second part never reached the computer")
	}
	assert.Equal(t, "screen.input", second.Type)
	assert.Contains(t, string(second.Payload), strings.Repeat("a", 72))
	assert.NotContains(t, string(second.Payload), "enter")
	select {
	case out := <-longDone:
		assert.Contains(t, out, `"queued":200`)
	case <-ctx.Done():
		t.Fatal("the long input never ended")
	}
}

// TestAnInputTypedOnTheHolderStopsWhenItsTokenIsRevoked: alice's input of three screen.input
// requests, through replica a, to her computer whose socket replica b holds, is typed on b
// (the input turn's relay). Her token is revoked (on the bucket the replicas share) while the
// computer has not answered the first part: b sends no part more, and alice gets the answer
// she gets on a gateway alone in the same moment, word for word (unauthorized, the token
// revoked, the rest of the input not sent, 128 events typed). Without the check on the holder,
// b typed all three parts and answered queued 384.
func TestAnInputTypedOnTheHolderStopsWhenItsTokenIsRevoked(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()

	dir := t.TempDir()
	aliceAlone := lastLine(cli(ctx, t, "accounts", "add", "alice", "--data-dir", dir))
	credAlone := lastLine(cli(ctx, t, "credentials", "add", "alice", "--data-dir", dir))
	alone := harness.Start(t, gatewayBin, harness.Options{Env: []string{"SANDBOX_DATA_DIR=" + dir}})
	aloneStatus, aloneBody, aloneParts := typeWhileRevoked(ctx, t, alone, alone, credAlone, aliceAlone, func() {
		cli(ctx, t, "tokens", "revoke", tokenID(aliceAlone), "--data-dir", dir)
	})
	require.Equal(t, 1, aloneParts, "alone: no part after the revocation")
	require.Equal(t, http.StatusUnauthorized, aloneStatus, aloneBody)
	require.Contains(t, aloneBody, "revoked")
	require.Contains(t, aloneBody, "the rest of the input was not sent")

	nats := harness.StartNATS(t, natsBin)
	alice := accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	cred := accountsCLI(ctx, t, nats, "credentials", "add", "alice")
	a, b := startReplica(t, nats, "a"), startReplica(t, nats, "b")
	status, body, parts := typeWhileRevoked(ctx, t, a, b, cred, alice, func() {
		accountsCLI(ctx, t, nats, "tokens", "revoke", tokenID(alice))
	})
	assert.Equal(t, aloneParts, parts, "the holder sends no part after the revocation")
	assert.Equal(t, aloneStatus, status, body)
	assert.Equal(t, aloneBody, body, "the answer of a gateway alone")
}

// TestAnInputTypedOnItsOwnReplicaStopsWhenAFollowerLagsTheRevocation: on a NATS cluster whose
// account bucket has three stream replicas, replica b's connection is on a follower that has
// not applied a revocation of alice's token (its Raft traffic from the bucket's leader held),
// written a moment before on the bucket (tokens revoke --nats, on the leader). Alice types
// three parts on her computer through b itself, the replica holding its socket: b reads the
// token between the parts as last written, through the bucket's stream leader, and makes no
// direct get (which any of the stream's replicas may answer, the lagging follower from what it
// has applied: the input typed on), and stops before the second part with the answer of a
// gateway alone. Without it, b's check was the ordinary read, a direct get.
func TestAnInputTypedOnItsOwnReplicaStopsWhenAFollowerLagsTheRevocation(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	cluster := embeddednats.StartCluster(t, 3)
	leader, follower := cluster.ReplicatedBucket(accountsBucket)
	onLeader := &harness.NATS{URL: cluster.URL(leader)}
	alice := accountsCLI(ctx, t, onLeader, "accounts", "add", "alice")
	cred := accountsCLI(ctx, t, onLeader, "credentials", "add", "alice")
	b := startReplica(t, &harness.NATS{URL: cluster.URL(follower)}, "b")

	var directGets uint64
	status, body, parts := typeWhileRevoked(ctx, t, b, b, cred, alice, func() {
		cluster.HoldStreamRaft(leader, follower, accountsStream)
		accountsCLI(ctx, t, onLeader, "tokens", "revoke", tokenID(alice))
		require.Less(t, cluster.LastSeq(follower, accountsStream), cluster.LastSeq(leader, accountsStream),
			"b's server has not applied the revocation: the lag this test plays")
		directGets = cluster.DirectGets(accountsStream)
	})
	assert.Equal(t, directGets, cluster.DirectGets(accountsStream), "b's check between the parts made no direct get")
	assert.Equal(t, 1, parts, "no part after the revocation")
	assert.Equal(t, http.StatusUnauthorized, status, body)
	assert.Contains(t, body, `the token \"first\" was revoked`)
	assert.Contains(t, body, "the rest of the input was not sent")
}

// accountsBucket is the NATS key-value bucket of the replicas' accounts, and accountsStream
// its stream.
const (
	accountsBucket = "trapos_accounts"
	accountsStream = "KV_" + accountsBucket
)

// answerHoldingTheFirstInput makes computer c answer every request at once (the gateway's
// pings) but its first screen.input, which the test answers itself; every screen.input it gets
// comes on requests. stop closes c and waits for its answering to end.
func answerHoldingTheFirstInput(ctx context.Context, c *harness.Computer) (requests <-chan harness.Frame, stop func()) {
	got := make(chan harness.Frame, 16)
	answering := make(chan struct{})
	go func() {
		defer close(answering)
		first := true
		_ = c.Answer(ctx, func(f harness.Frame) *harness.Reply {
			if f.Type != "screen.input" {
				return &harness.Reply{Payload: json.RawMessage(`{}`)}
			}
			got <- f
			if first { // the test answers it
				first = false
				return nil
			}
			return &harness.Reply{Payload: json.RawMessage(`{}`)}
		})
	}()
	return got, func() { _ = c.Close(); <-answering }
}

// tokenID is the id of an account API token (tsa_<id>_<secret>).
func tokenID(token string) string { return strings.SplitN(token, "_", 3)[1] }

// typeWhileRevoked connects computer 7:kitchen with credential cred to holder, types 384
// characters (three screen.input requests) on it through through with token, and calls revoke
// while the computer holds its answer to the first part, which it gives once revoke returned;
// it answers every later part at once. It returns the input's status and body, and how many
// parts reached the computer.
func typeWhileRevoked(ctx context.Context, t *testing.T, through, holder *harness.Gateway, cred, token string, revoke func()) (status int, body string, parts int) {
	t.Helper()
	c, err := harness.Dial(ctx, holder.WebSocketURL(), "7:kitchen")
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.MustHello(ctx, cred))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		status, body := getWithToken(ctx, ct, through, token)
		assert.Equal(ct, http.StatusOK, status, body)
		assert.Contains(ct, body, `"traposId":"7:kitchen"`)
	}, waitLimit, testkit.Poll, "the caller's gateway to list the computer")

	requests, stop := answerHoldingTheFirstInput(ctx, c)
	defer stop()

	type outcome struct {
		status int
		body   string
	}
	done := make(chan outcome, 1)
	go func() {
		status, body, err := postInputAs(ctx, through, token, "7:kitchen", []map[string]any{{"type": "char", "text": strings.Repeat("a", 3*128)}}, int(waitLimit.Milliseconds()))
		if err != nil {
			body = err.Error()
		}
		done <- outcome{status, body}
	}()
	var first harness.Frame
	select {
	case first = <-requests:
	case out := <-done:
		t.Fatalf("the input ended before its first part reached the computer: %d %s", out.status, out.body)
	}
	revoke()
	require.NoError(t, c.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": c.TraposID,
		"messageId": first.MessageID, "type": first.Type, "ok": true, "payload": map[string]any{"queued": 128}}))
	var out outcome
	select {
	case out = <-done:
	case <-ctx.Done():
		t.Fatal("the input never ended")
	}
	return out.status, out.body, 1 + len(requests)
}
