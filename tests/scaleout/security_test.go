package scaleout

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/daemonfake"

	"tests/internal/harness"
	"tests/internal/repo"
)

// documentedConfig matches the nats-server configuration docs/scale-out.md gives: the ```conf
// block that starts with "# nats-server.conf".
var documentedConfig = regexp.MustCompile("(?s)```conf\n(# nats-server\\.conf.*?)```")

// documentedNATSConfig writes the nats-server configuration of docs/scale-out.md, as it is
// there, to a file of the test and returns its path.
func documentedNATSConfig(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "scale-out.md"))
	require.NoError(t, err)
	m := documentedConfig.FindSubmatch(doc)
	require.NotNil(t, m, "docs/scale-out.md has no ```conf block that starts with # nats-server.conf")
	path := filepath.Join(t.TempDir(), "nats-server.conf")
	require.NoError(t, os.WriteFile(path, m[1], 0o600))
	return path
}

// The passwords the documented configuration reads from nats-server's environment.
const (
	replicaPassword = "replica-secret-xyz"
	appsPassword    = "apps-secret-xyz"
)

// The replicas on nats-server with the configuration docs/scale-out.md gives: a client of the
// other account, subscribed to everything and answering every request, sees none of their
// traffic, cannot reach a replica, its claim closes nothing and its revocations are not heard; a client without credentials
// is refused; the replicas log no warning about credentials.
func TestTheDocumentedNATSConfigFencesOtherClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	bus := harness.StartNATSWith(t, natsBin, harness.NATSOptions{Config: documentedNATSConfig(t),
		Env: []string{"SANDBOX_NATS_PASSWORD=" + replicaPassword, "APPS_NATS_PASSWORD=" + appsPassword}})
	a, b := behindDocumentedConfig(t, bus, "a"), behindDocumentedConfig(t, bus, "b")

	_, err := nats.Connect(bus.URL)
	require.Error(t, err, "a client without credentials gets in")
	assert.Contains(t, err.Error(), "Authorization Violation")

	d := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 4, Label: "vault", AllowFiles: harness.AllowFilesRead}}
	d.PutFile("/notes.txt", []byte("diamonds at -12 64 300\n"))
	stop, err := d.Serve(ctx, a.WebSocketURL(), "")
	require.NoError(t, err)
	defer stop()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, "a", listComputers(c, b)["4:vault"])
	}, waitLimit, testkit.Poll, "B to list A's computer")

	// A client of the other account asks A for the file on A's subject: nobody there answers.
	rogue, err := nats.Connect(bus.URL, nats.UserInfo("apps", appsPassword), nats.NoEcho())
	require.NoError(t, err)
	defer rogue.Close()
	_, err = rogue.Request("trapos.replica.a.computer.local.4_3Avault",
		[]byte(`{"type":"fs.read","payload":{"path":"/notes.txt"},"timeoutMs":5000}`), 5*time.Second)
	assert.ErrorIs(t, err, nats.ErrNoResponders, "a replica's subject reached from the other account")

	// It claims the computer in the bucket of that name that its own account has.
	js, err := jetstream.New(rogue)
	require.NoError(t, err)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "trapos_computers"})
	require.NoError(t, err)
	_, err = kv.Put(ctx, "local.4_3Avault", []byte(`{"replica":"evil","accountId":"local","traposId":"4:vault"}`))
	require.NoError(t, err)

	// And it listens to every subject, answering every request at once in A's name.
	var seen atomic.Int64
	_, err = rogue.Subscribe(">", func(m *nats.Msg) {
		if strings.HasPrefix(m.Subject, "trapos.") || strings.HasPrefix(m.Subject, "$KV.trapos_") {
			seen.Add(1)
		}
		if m.Reply != "" {
			_ = m.Respond([]byte(`{"replica":"a","ok":true,"type":"fs.read","payload":{"data":"forged","size":6,"eof":true}}`))
		}
	})
	require.NoError(t, err)
	require.NoError(t, rogue.Flush())

	// It announces revocations of credentials that computers on A said hello with (a client
	// on the bus learns them from the claims): A never hears them. A made-up revocation from
	// the replicas' own account, of the other credential, is heard and ignored (the bucket
	// says it is not revoked), so the line is there for the first if A had heard it.
	ids := revocationsTarget(ctx, t, bus, a)
	require.NoError(t, rogue.Publish("trapos.revoked", []byte(`{"credential":"`+ids[0]+`"}`)))
	require.NoError(t, rogue.Flush())
	insider, err := nats.Connect(bus.URL, nats.UserInfo("sandbox", replicaPassword))
	require.NoError(t, err)
	defer insider.Close()
	require.NoError(t, insider.Publish("trapos.revoked", []byte(`{"credential":"`+ids[1]+`"}`)))
	require.NoError(t, insider.Flush())
	const ignored = "ignored a revocation heard on the bus: the account store says the credential is not revoked"
	require.Eventually(t, func() bool { return strings.Contains(a.Log(), "credential="+ids[1]) }, waitLimit, testkit.Poll,
		"A to hear the revocation from its own account")
	assert.NotContains(t, a.Log(), "credential="+ids[0], "A heard a revocation from the other account")
	assert.Equal(t, 1, strings.Count(a.Log(), ignored))

	// 20 reads through B: each is the computer's own file.
	for i := range 20 {
		status, body := get(t, b, "/trapos/computers/4:vault/files/notes.txt")
		require.Equal(t, http.StatusOK, status, "read %d: %s", i, body)
		assert.Equal(t, "diamonds at -12 64 300\n", body, "read %d", i)
	}
	assert.Zero(t, seen.Load(), "the other account saw the replicas' traffic")
	assert.Equal(t, "a", listComputers(t, b)["4:vault"], "the rogue's claim moved the computer")
	for _, g := range []*harness.Gateway{a, b} {
		assert.NotContains(t, g.Log(), "asks for no credentials")
		assert.NotContains(t, g.Log(), "ignored an answer")
		assert.NotContains(t, g.Log(), replicaPassword)
	}
}

// configSize is a size in a nats-server configuration written in G or M (decimal units).
var configSize = regexp.MustCompile(`\b(\d+)([GM])\b`)

// TestTheDocumentedNATSConfigKeepsTheReplicasRoom: accounts share the server's JetStream
// storage, and a client of the other account filled it (a stream of its own, published to
// until refused): the replicas' next writes failed with insufficient resources, so no account
// or credential could be made and no claim written. Behind the documented configuration, run
// at a thousandth of its sizes (G as M, M as K: 20 MB for the server, 16 MB for the other
// account), the other account stops at its own limit and the replicas write on: an account and
// its credentials are made on their bucket, and the computers that say hello with them on
// replica a are listed by b (their claims). docs/scale-out.md, Security.
func TestTheDocumentedNATSConfigKeepsTheReplicasRoom(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	path := documentedNATSConfig(t)
	conf, err := os.ReadFile(path)
	require.NoError(t, err)
	sizes := 0
	conf = configSize.ReplaceAllFunc(conf, func(size []byte) []byte {
		sizes++
		m := configSize.FindSubmatch(size)
		return append(m[1], map[string]byte{"G": 'M', "M": 'K'}[string(m[2])])
	})
	require.Equal(t, 4, sizes, "the server's two stores and the other account's two limits:\n%s", conf)
	require.NoError(t, os.WriteFile(path, conf, 0o600))
	bus := harness.StartNATSWith(t, natsBin, harness.NATSOptions{Config: path,
		Env: []string{"SANDBOX_NATS_PASSWORD=" + replicaPassword, "APPS_NATS_PASSWORD=" + appsPassword}})
	a, b := behindDocumentedConfig(t, bus, "a"), behindDocumentedConfig(t, bus, "b")

	rogue, err := nats.Connect(bus.URL, nats.UserInfo("apps", appsPassword))
	require.NoError(t, err)
	defer rogue.Close()
	js, err := jetstream.New(rogue)
	require.NoError(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "FILL", Subjects: []string{"fill"}, Storage: jetstream.FileStorage})
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	published := 0
	for ; published < 200; published++ { // 50 MB, past the server's 20
		if _, err = js.Publish(ctx, "fill", chunk); err != nil {
			break
		}
	}
	require.Error(t, err, "the other account published 50 MB")
	t.Logf("the other account stored %d KiB: %v", published*256, err)
	assert.Contains(t, err.Error(), "resource limits exceeded for account", "it stops at its own limit, not the server's")

	ids := revocationsTarget(ctx, t, bus, a) // account alice and two credentials on the bucket, two hellos on a
	require.Len(t, ids, 2)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		listed := listComputers(c, b)
		assert.Equal(c, "a", listed["8:"])
		assert.Equal(c, "a", listed["9:"])
	}, waitLimit, testkit.Poll, "B to list the computers that said hello on A")
}

// behindDocumentedConfig starts replica name on bus, which runs the documented configuration,
// as the replicas' NATS user.
func behindDocumentedConfig(t *testing.T, bus *harness.NATS, name string) *harness.Gateway {
	t.Helper()
	return harness.Start(t, gatewayBin, harness.Options{
		Args: append([]string{"--nats", bus.URL, "--nats-user", "sandbox", "--replica", name}, replicaFlags...),
		Env:  []string{"SANDBOX_NATS_PASSWORD=" + replicaPassword},
	})
}

// revocationsTarget makes account alice with two credentials on the replicas' bucket behind the
// documented configuration (the account commands as the replicas' NATS user), connects a
// computer to g with each, and returns the credentials' selectors.
func revocationsTarget(ctx context.Context, t *testing.T, bus *harness.NATS, g *harness.Gateway) []string {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.CommandContext(ctx, gatewayBin, append(args, "--nats", bus.URL, "--nats-user", "sandbox")...)
		cmd.Env = append(harness.CleanEnv(), "GORACE=atexit_sleep_ms=0", "SANDBOX_NATS_PASSWORD="+replicaPassword)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Run(), errOut.String())
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		return lines[len(lines)-1]
	}
	run("accounts", "add", "alice")
	var selectors []string
	for _, id := range []string{"8:", "9:"} {
		credential := run("credentials", "add", "alice")
		c, err := harness.Dial(ctx, g.WebSocketURL(), id)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.MustHello(ctx, credential))
		selectors = append(selectors, strings.SplitN(credential, "_", 3)[1])
	}
	return selectors
}
