package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/cluster"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/daemonfake"
	"trap-sandbox/testkit/twinfake"
)

// startNATS runs an embedded NATS server with JetStream on a free port for the test; it asks
// for no credentials.
func startNATS(t *testing.T) string {
	t.Helper()
	return startNATSWith(t, &natsserver.Options{})
}

// startNATSWith is startNATS with opts (e.g. a user and password); it fills in the rest.
func startNATSWith(t *testing.T, opts *natsserver.Options) string {
	t.Helper()
	return startNATSServer(t, opts).ClientURL()
}

// startNATSServer is startNATSWith returning the server, for a test that changes it as it runs.
func startNATSServer(t *testing.T, opts *natsserver.Options) *natsserver.Server {
	t.Helper()
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", natsserver.RANDOM_PORT, true, t.TempDir(), true, true
	ns, err := natsserver.NewServer(opts)
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// TestServeWithNATSSharesComputersAcrossReplicas runs two replicas as `trap-sandbox serve
// --nats` does, in this process, on an embedded NATS server: a computer on A is listed, pinged
// and read through B's HTTP API, CLI and MCP.
func TestServeWithNATSSharesComputersAcrossReplicas(t *testing.T) {
	clearEnv(t)
	url := startNATS(t)
	var logs *testkit.SyncBuffer
	replica := func(name string) string {
		root, _ := parse(t, "--listen", "127.0.0.1:0", "--nats", url, "--replica", name, "--nats-heartbeat", "50ms")
		var addr string
		addr, logs, _ = startServe(t, root.Serve)
		return addr
	}
	a, b := replica("a"), replica("b")
	// Once, though a replica opens two connections (the router's, the account store's).
	assert.Equal(t, 1, strings.Count(logs.String(), `level=WARN msg="`+cluster.UnauthenticatedWarning), logs.String())
	// Every line of a replica's log names it, the warnings at start too (docs/scale-out.md).
	assert.Contains(t, logs.String(), "SANDBOX_PASSWORD is not set")
	for line := range strings.Lines(strings.TrimSpace(logs.String())) {
		assert.Contains(t, line, " replica=b", "a line of B's log without its name")
	}
	// With no computer yet, B's CLI prints no table, whose columns would read as a single
	// gateway's (no REPLICA), but says so on stderr.
	var none, noneErr bytes.Buffer
	require.NoError(t, (&ComputersCmd{APIFlags: APIFlags{URL: "http://" + b}}).Run(t.Context(), Stdout{&none}, &noneErr))
	assert.Empty(t, none.String())
	assert.Equal(t, "no computers connected\n", noneErr.String())

	vault := &daemonfake.Daemon{ID: 4, Label: "vault", AllowFiles: daemonfake.AllowFilesRead}
	vault.PutFile("/notes.txt", []byte("diamonds at -12 64 300\n"))
	connectComputer(t, "ws://"+a, vault)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// B's CLI lists it with its replica.
	var out bytes.Buffer
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "4:vault") && time.Now().Before(deadline) {
		out.Reset()
		require.NoError(t, (&ComputersCmd{APIFlags: APIFlags{URL: "http://" + b}}).Run(ctx, Stdout{&out}, io.Discard))
		time.Sleep(10 * time.Millisecond)
	}
	assert.Contains(t, out.String(), "REPLICA")
	assert.Regexp(t, `4:vault\s.*\sa\n`, out.String())

	// B's HTTP API pings it.
	out.Reset()
	require.NoError(t, (&PingCmd{APIFlags: APIFlags{URL: "http://" + b}, TraposID: "4:vault", Timeout: CallTimeout(10 * time.Second)}).Run(ctx, Stdout{&out}))
	assert.Regexp(t, `^pong from 4:vault in \S+: \{"traposId":"4:vault"\}\n$`, out.String())

	// B's MCP lists it with its replica, pings it and reads its file.
	client := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + b + "/mcp",
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer s.Close()
	call := func(name string, args map[string]any) string {
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %+v", name, res.Content)
		if res.StructuredContent == nil { // read_file: its JSON once, as text
			return res.Content[0].(*sdk.TextContent).Text
		}
		b, _ := json.Marshal(res.StructuredContent)
		return string(b)
	}
	assert.Contains(t, call("list_computers", nil), `"replica":"a"`)
	assert.Contains(t, call("ping", map[string]any{"traposId": "4:vault"}), `"traposId":"4:vault"`)
	assert.Contains(t, call("read_file", map[string]any{"traposId": "4:vault", "path": "/notes.txt"}), "diamonds at -12 64 300")

	// B's metrics and health name the replica and NATS.
	body := get(t, "http://"+b+"/metrics")
	assert.Contains(t, body, `trapos_gateway_nats_connected{replica="b"} 1`)
	assert.Contains(t, body, `trapos_gateway_routed_request_duration_seconds_count{outcome="ok",replica="b"}`)
	assert.Contains(t, body, `trapos_gateway_claims_unannounced{replica="b"} 0`+"\n") // NATS took every claim
	// A and B share their settings (no password, no API token, this binary, no agent): neither
	// differs.
	for _, setting := range []string{"password", "api_token", "version", "ai_model", "password_proofs"} {
		assert.Contains(t, body, `trapos_gateway_replica_settings_differ{replica="b",setting="`+setting+`"} 0`+"\n")
	}
	assert.NotContains(t, logs.String(), "differs from this one's")
	assert.NotContains(t, logs.String(), "another replica runs another version")
	// Every series names it: the gateway's, the agent's, the screens', the links', the API
	// auth's, the opencode probes' and the account store's.
	for _, name := range []string{"trapos_gateway_ai_turns_running", "trapos_gateway_screen_updates_total",
		"trapos_gateway_link_codes_total", "trapos_api_auth_refused_total", "trapos_gateway_opencode_probes_total", "trapos_accounts"} {
		assert.Contains(t, body, "\n"+name+"{", "a series of %s", name)
	}
	for line := range strings.Lines(body) {
		if !strings.HasPrefix(line, "#") {
			assert.Contains(t, line, `replica="b"`, "a series without the replica's name")
		}
	}
	assert.Contains(t, get(t, "http://"+b+"/healthz"), "nats: connected (replica b")
}

// A NATS server that asks for credentials takes the replica's from the environment, and the
// replica does not warn.
func TestServeWithNATSCredentialsFromTheEnvironment(t *testing.T) {
	clearEnv(t)
	url := startNATSWith(t, &natsserver.Options{Username: "sandbox", Password: "nats-secret-xyz"})
	t.Setenv("SANDBOX_NATS_URL", url)
	t.Setenv("SANDBOX_NATS_USER", "sandbox")
	t.Setenv("SANDBOX_NATS_PASSWORD", "nats-secret-xyz")
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--replica", "a")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "scale-out on")
	assert.NotContains(t, logs.String(), "asks for no credentials")
	assert.NotContains(t, logs.String(), "nats-secret-xyz")

	t.Setenv("SANDBOX_NATS_PASSWORD", "wrong")
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--replica", "a")
	err := root.Serve.Run(context.Background(), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Authorization Violation")
}

// NATS credentials given two ways at once are refused before any connection, naming exactly
// the flags and variables the operator set and what to remove: the refusal named kinds
// ("a user and password (--nats-user/--nats-password, SANDBOX_NATS_USER/SANDBOX_NATS_PASSWORD)"),
// leaving the operator to find which of four names they had set.
func TestNATSCredentialsGivenTwoWaysNameWhatWasSet(t *testing.T) {
	dir := t.TempDir()
	nkey, creds := filepath.Join(dir, "sandbox.nk"), filepath.Join(dir, "sandbox.creds")
	require.NoError(t, os.WriteFile(nkey, nil, 0o600))
	require.NoError(t, os.WriteFile(creds, nil, 0o600))
	const port = "nats://127.0.0.1:1" // never dialled: the refusal comes first
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{{
		name: "two flags",
		args: []string{"--nats", port, "--nats-nkey", nkey, "--nats-creds", creds},
		want: "NATS credentials given 2 ways at once, --nats-nkey and --nats-creds: a connection takes one; keep the one the server expects and " +
			"remove the other: drop --nats-nkey, or drop --nats-creds (docs/scale-out.md, Security)",
	}, {
		// docs/scale-out.md's shell exports SANDBOX_NATS_PASSWORD for nats-server.
		name: "a variable and a flag",
		env:  map[string]string{"SANDBOX_NATS_URL": port, "SANDBOX_NATS_PASSWORD": "p"},
		args: []string{"--nats-creds", creds},
		want: "NATS credentials given 2 ways at once, SANDBOX_NATS_PASSWORD and --nats-creds: a connection takes one; keep the one the server expects and " +
			"remove the other: unset SANDBOX_NATS_PASSWORD, or drop --nats-creds (docs/scale-out.md, Security)",
	}, {
		name: "a user and password half by flag, half by variable",
		env:  map[string]string{"SANDBOX_NATS_PASSWORD": "p", "SANDBOX_NATS_TOKEN": "t"},
		args: []string{"--nats", port, "--nats-user", "sandbox"},
		want: "NATS credentials given 2 ways at once, --nats-user with SANDBOX_NATS_PASSWORD and SANDBOX_NATS_TOKEN: a connection takes one; keep the one the server expects and " +
			"remove the other: drop --nats-user and unset SANDBOX_NATS_PASSWORD, or unset SANDBOX_NATS_TOKEN (docs/scale-out.md, Security)",
	}, {
		name: "in the URL and a file",
		args: []string{"--nats", "nats://sandbox:secret-in-url@127.0.0.1:1", "--nats-creds", creds},
		want: "NATS credentials given 2 ways at once, the user and password in --nats and --nats-creds: a connection takes one; keep the one the server expects and " +
			"remove the other: take the user and password out of --nats, or drop --nats-creds (docs/scale-out.md, Security)",
	}, {
		name: "three ways",
		env:  map[string]string{"SANDBOX_NATS_URL": "nats://t0ken@127.0.0.1:1", "SANDBOX_NATS_NKEY": nkey},
		args: []string{"--nats-token", "t"},
		want: "NATS credentials given 3 ways at once, the token in SANDBOX_NATS_URL, --nats-token and SANDBOX_NATS_NKEY: a connection takes one; keep the one the server expects and " +
			"remove the others, all but the one kept of: take the token out of SANDBOX_NATS_URL; drop --nats-token; unset SANDBOX_NATS_NKEY (docs/scale-out.md, Security)",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			root, _ := parse(t, append([]string{"--listen", "127.0.0.1:0"}, c.args...)...)
			err := root.Serve.Run(context.Background(), io.Discard)
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
			assert.NotContains(t, err.Error(), "secret-in-url")

			// The account commands reach the same bucket with the same flags, and say the same.
			root, _ = parse(t, append([]string{"accounts", "list"}, c.args...)...)
			err = root.Accounts.List.Run(context.Background(), Stdout{io.Discard}, io.Discard)
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}

func TestServeWithAnUnreachableNATSFailsClearly(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--nats", "nats://user:pw@127.0.0.1:1", "--nats-setup-timeout", "2s")
	err := root.Serve.Run(context.Background(), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect to NATS at nats://user:xxxxx@127.0.0.1:1")
	assert.NotContains(t, err.Error(), "pw@")
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestAccountsRemoveWithNATSNamesOlderReplicas: accounts remove --nats announces the removal
// to the replicas; one of a trap-sandbox from before accounts remove (its heartbeat does not
// say closesRemoved) ignores it, and the command names it.
func TestAccountsRemoveWithNATSNamesOlderReplicas(t *testing.T) {
	clearEnv(t)
	url := startNATS(t)
	nats := "--nats=" + url
	mustRun(t, "accounts", "add", "bob", nats)
	mustRun(t, "accounts", "add", "carol", nats)
	out := mustRun(t, "accounts", "remove", "bob", nats)
	assert.Contains(t, out, "\nthe replicas that hold its computers close them now (4003 revoked) and refuse its tokens from the next request\n")
	assert.NotContains(t, out, "older trap-sandbox", "no replica at all")

	nc, err := natsgo.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: cluster.ReplicasBucket})
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), "a", []byte(`{"replica":"a","started":"2026-01-01T00:00:00Z","closesRemoved":true}`))
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), "old", []byte(`{"replica":"old","started":"2026-01-01T00:00:00Z"}`))
	require.NoError(t, err)
	out = mustRun(t, "accounts", "remove", "carol", nats)
	assert.Contains(t, out, "\nbut replica old, of an older trap-sandbox, does not close those it holds (refused when they reconnect): upgrade it to close them now\n")
}

// TestAccountsRemoveWithNATSWarnsWhenItCannotLookForOlderReplicas: after the removal the
// command reads the replicas' heartbeats, to name an older replica that leaves the account's
// computers connected. When that read fails (seen with one NATS server of the cluster paused:
// "read the replicas' heartbeats: context deadline exceeded", as the command's error, exit
// status 1), the removal is still said first, and the failure is a warning saying what it
// means, the exit status 0: the account is gone. Here the bucket is a stream of its name that
// is no key-value bucket, which fails the read at once.
func TestAccountsRemoveWithNATSWarnsWhenItCannotLookForOlderReplicas(t *testing.T) {
	clearEnv(t)
	url := startNATS(t)
	nats := "--nats=" + url
	mustRun(t, "accounts", "add", "bob", nats)
	nc, err := natsgo.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "KV_" + cluster.ReplicasBucket, Subjects: []string{"not.heartbeats"}})
	require.NoError(t, err)

	out, stderr, err := runWith(t, "", "accounts", "remove", "bob", nats)
	require.NoError(t, err, "the account is removed")
	assert.Regexp(t, `^account bob \(user\) removed from .*\nthe replicas that hold its computers close them now \(4003 revoked\) and refuse its tokens from the next request\n$`, out)
	assert.Regexp(t, `^trap-sandbox: warning: account bob is removed, but this command could not look for replicas of an older trap-sandbox, which leave its connected computers connected until they reconnect \(NATS bucket trapos_replicas, the replicas' heartbeats, did not answer: [^\n]+\); `+"`trap-sandbox computers`"+` through a replica shows any still connected\n$`, stderr)
	_, err = runClient(t, "accounts", "remove", "bob", nats)
	require.ErrorContains(t, err, `no account "bob"`)
}

// TestAccountCommandsOnNATSCreateTheBucketOnlyToAdd: on a NATS without the account bucket (a
// first install, or a NATS that lost its store), a command that reads or changes what is there
// says so, naming the fixes, and leaves NATS as it was: an empty bucket in a lost one's place
// would refuse every token and credential. accounts add creates it, as a replica's start does.
func TestAccountCommandsOnNATSCreateTheBucketOnlyToAdd(t *testing.T) {
	clearEnv(t)
	url := startNATS(t)
	nats := "--nats=" + url
	nc, err := natsgo.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"accounts", "list"}, {"accounts", "remove", "bob"}, {"tokens", "list"}, {"tokens", "add", "bob", "laptop"},
		{"tokens", "revoke", "abc"}, {"credentials", "list"}, {"credentials", "add", "bob"}, {"link", "key", "--account", "bob"},
	} {
		_, err := runClient(t, append(args, nats)...)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), "NATS has no bucket trapos_accounts (no replica has started on it yet, or NATS lost its store", "%v", args)
		assert.Contains(t, err.Error(), "no empty one was made in its place. If it lost its store, give it back and its accounts come back", "%v", args)
		_, err = js.KeyValue(t.Context(), "trapos_accounts")
		require.ErrorIs(t, err, jetstream.ErrBucketNotFound, "%v made the bucket", args)
	}
	mustRun(t, "accounts", "add", "bob", nats)
	assert.Contains(t, mustRun(t, "accounts", "list", nats), "bob")
}

// A replica that finds, once running, an older replica of its own name (the two started at
// the same moment, so both passed the start-time check) stops as that check would have
// stopped it: its sockets close with 1001 (the computers reconnect elsewhere), the command
// fails naming the fix, and its goodbye leaves the name's heartbeat, the older one's, alone.
func TestServeWithNATSStopsForAnOlderReplicaOfItsName(t *testing.T) {
	clearEnv(t)
	url := startNATS(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--nats", url, "--replica", "a", "--nats-heartbeat", "50ms")
	addr, logs, stop := startServe(t, root.Serve)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, wsResp, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+addr+gateway.WebSocketPath, nil)
	require.NoError(t, err)
	_ = wsResp.Body.Close()
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(map[string]any{"event": "computer_request", "traposSenderId": "3:", "messageId": "h", "type": "hello",
		"payload": map[string]any{"traposId": "3:", "secret": ""}}))
	var reply struct {
		OK bool `json:"ok"`
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	require.NoError(t, conn.ReadJSON(&reply))
	require.True(t, reply.OK)

	// The older replica of the name beats over each of this one's heartbeats (so it is no
	// heartbeat left by a previous run), as a replica started a moment before it does.
	nc, err := natsgo.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, cluster.ReplicasBucket)
	require.NoError(t, err)
	require.NoError(t, twinfake.Outbeat(ctx, kv, "a", []byte(`{"replica":"a","started":"2026-01-01T00:00:00Z","closesRemoved":true,"instance":"0123456789abcdef"}`)))

	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, _, err = conn.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce, "the socket closes when the replica gives its name up")
	assert.Equal(t, websocket.CloseGoingAway, ce.Code)
	err = stop()
	require.Error(t, err)
	assert.Regexp(t, `^`+regexp.QuoteMeta(`the replica name "a" is taken: another replica runs under it, started before this one, and the older of the two keeps it (started 2026-01-01T00:00:00Z; this one `)+
		`\S+\)\. `+regexp.QuoteMeta(`Give each replica its own --replica (SANDBOX_REPLICA), or stop the other one first`)+`$`, err.Error())
	assert.Contains(t, logs.String(), `level=ERROR msg="another replica runs under this replica's name: this one, the newer, stops"`)
	e, err := kv.Get(ctx, "a")
	require.NoError(t, err, "the heartbeat under the name is not deleted")
	assert.Contains(t, string(e.Value()), `"yielded":true`, "its last heartbeat says it gave the name up")
}
