package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/agent"
	"trap-sandbox/internal/cluster"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"
)

// TestMain gives the package a home of its own: a gateway or account command run without
// --data-dir keeps its data in the user's data directory (DefaultDataDir), and a test must
// never write into the real user's. clearEnv gives each test that calls it a fresh one; this
// one holds for every other.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "trap-sandbox-cli-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cli tests:", err)
		os.Exit(1)
	}
	for name, value := range map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, ".local", "share"), "XDG_CONFIG_HOME": filepath.Join(home, ".config")} {
		if err := os.Setenv(name, value); err != nil {
			fmt.Fprintln(os.Stderr, "cli tests:", err)
			os.Exit(1)
		}
	}
	_ = os.Unsetenv("SANDBOX_DATA_DIR")
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(home)
		os.Exit(code)
	}))
}

func parse(t *testing.T, args ...string) (*CLI, *kong.Context) {
	t.Helper()
	root, parser := newTestParser(t, kong.Exit(func(int) { t.Fatal("kong tried to exit") }))
	kctx, err := parser.Parse(args)
	require.NoError(t, err)
	return root, kctx
}

// clearEnv unsets every variable the CLI reads, so the host's environment cannot leak in.
func clearEnv(t *testing.T) {
	for _, name := range []string{"SANDBOX_LISTEN", "SANDBOX_PASSWORD", "SANDBOX_PASSWORD_PROOFS", "OPENCODE_URL", "OPENCODE_SERVER_USERNAME",
		"OPENCODE_SERVER_PASSWORD", "SANDBOX_HELLO_TIMEOUT", "SANDBOX_PROBE_TIMEOUT", "SANDBOX_REQUEST_TIMEOUT",
		"SANDBOX_SHUTDOWN_TIMEOUT", "SANDBOX_LOG_LEVEL", "SANDBOX_API_TOKEN", "SANDBOX_URL", "SANDBOX_PING_PERIOD",
		"SANDBOX_IDLE_PROBE_AFTER", "SANDBOX_MAX_CONNECTIONS", "SANDBOX_UPGRADE_RATE", "SANDBOX_UPGRADE_BURST", "SANDBOX_MCP",
		"SANDBOX_NATS_URL", "SANDBOX_NATS_USER", "SANDBOX_NATS_PASSWORD", "SANDBOX_NATS_TOKEN", "SANDBOX_NATS_NKEY", "SANDBOX_NATS_CREDS",
		"SANDBOX_NATS_TLS_CA", "SANDBOX_NATS_TLS_CERT", "SANDBOX_NATS_TLS_KEY", "SANDBOX_REPLICA", "SANDBOX_NATS_HEARTBEAT",
		"SANDBOX_NATS_REPLICA_TTL", "SANDBOX_NATS_OP_TIMEOUT", "SANDBOX_NATS_SETUP_TIMEOUT",
		"SANDBOX_AI_MODEL", "SANDBOX_AI_DIR", "SANDBOX_AI_MCP_URL", "SANDBOX_AI_TURN_DEADLINE", "SANDBOX_AI_MAX_TURNS", "SANDBOX_AI_ALLOW_HOST_TOOLS", "SANDBOX_LINK_CODE_LIFETIME", "SANDBOX_DATA_DIR", "SANDBOX_TRUSTED_PROXIES", "SANDBOX_HEAP_FLOOR_MIB"} {
		t.Setenv(name, "") // registers the restore of the original value
		require.NoError(t, os.Unsetenv(name))
	}
	unsetEnv(t, admissionEnv)
	// Without --data-dir a gateway keeps its accounts in the user's data directory
	// (~/.local/share/trap-sandbox): a serve test would write the developer's own store, and
	// fail on one a newer trap-sandbox left there. Each test gets an empty home instead.
	home := t.TempDir()
	for _, name := range []string{"HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"} {
		t.Setenv(name, home)
	}
}

// natsDefaults are the scale-out flags' defaults (no --nats: a single gateway).
// aiDefaults are the agent's defaults: off.
var aiDefaults = AIFlags{AITurnDeadline: 180 * time.Second, AICheckWait: opencode.DefaultAgentWait, AIMaxTurns: agent.DefaultMaxTurns, AIIdleAfter: agent.DefaultIdleAfter,
	AIMaxComputers: agent.DefaultMaxComputers, AIMaxDirs: agent.DefaultMaxDirs}

var natsDefaults = NATSFlags{NATSSetupBudget: 10 * time.Second}

var replicaDefaults = ReplicaFlags{NATSHeartbeat: 5 * time.Second, NATSReplicaTTL: 15 * time.Second, NATSOpTimeout: 2 * time.Second}

func TestParseDefaults(t *testing.T) {
	clearEnv(t)
	root, kctx := parse(t)
	assert.Equal(t, "serve", kctx.Command())
	assert.Equal(t, ServeCmd{
		Listen:           ":4444",
		PasswordProofs:   "v1,v2",
		OpencodeURL:      "http://127.0.0.1:4242",
		OpencodeUsername: "opencode",
		HelloTimeout:     10 * time.Second,
		ProbeTimeout:     5 * time.Second,
		RequestTimeout:   10 * time.Second,
		ShutdownTimeout:  5 * time.Second,
		LogLevel:         "info",
		HeapFloorMiB:     32,
		PingPeriod:       30 * time.Second, IdleProbeAfter: time.Minute, MaxConnections: 20000, MaxScreenViewers: 64, UpgradeRate: 200, UpgradeBurst: 2000,
		MCP: true, NATSFlags: natsDefaults, ReplicaFlags: replicaDefaults, AIFlags: aiDefaults,
		AdmissionFlags: admissionDefaults,
	}, root.Serve)
}

func TestParseFlagsWithoutCommandName(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "pw", "--opencode-url", "http://x:1",
		"--opencode-username", "alice", "--opencode-password", "op", "--hello-timeout", "1s",
		"--probe-timeout", "2s", "--request-timeout", "3s", "--log-level", "debug", "--ping-period", "1s",
		"--idle-probe-after", "2s", "--max-connections", "7", "--max-screen-viewers", "5", "--upgrade-rate=-1", "--upgrade-burst", "3", "--mcp=false", "--heap-floor-mib", "0")
	assert.Equal(t, ServeCmd{
		Listen: "127.0.0.1:0", Password: "pw", PasswordProofs: "v1,v2", OpencodeURL: "http://x:1", OpencodeUsername: "alice",
		OpencodePassword: "op", HelloTimeout: time.Second, ProbeTimeout: 2 * time.Second,
		RequestTimeout: 3 * time.Second, ShutdownTimeout: 5 * time.Second, LogLevel: "debug",
		PingPeriod: time.Second, IdleProbeAfter: 2 * time.Second, MaxConnections: 7, MaxScreenViewers: 5, UpgradeRate: -1, UpgradeBurst: 3,
		HeapFloorMiB: 0,
		NATSFlags:    natsDefaults, ReplicaFlags: replicaDefaults, AIFlags: aiDefaults, AdmissionFlags: admissionDefaults,
		secretsInArgs: []string{"password", "opencode-password"}, // the start warns of them
	}, root.Serve)

	root, _ = parse(t, "serve", "--listen", ":1")
	assert.Equal(t, ":1", root.Serve.Listen)
}

func TestParseEnv(t *testing.T) {
	clearEnv(t)
	t.Setenv("SANDBOX_LISTEN", "127.0.0.1:9")
	t.Setenv("SANDBOX_PASSWORD", "pw")
	t.Setenv("OPENCODE_URL", "http://o:2")
	t.Setenv("OPENCODE_SERVER_USERNAME", "bob")
	t.Setenv("OPENCODE_SERVER_PASSWORD", "op")
	t.Setenv("SANDBOX_HELLO_TIMEOUT", "250ms")
	t.Setenv("SANDBOX_PROBE_TIMEOUT", "1s")
	t.Setenv("SANDBOX_REQUEST_TIMEOUT", "2s")
	t.Setenv("SANDBOX_LOG_LEVEL", "warn")
	t.Setenv("SANDBOX_PING_PERIOD", "5s")
	t.Setenv("SANDBOX_IDLE_PROBE_AFTER", "6s")
	t.Setenv("SANDBOX_MAX_CONNECTIONS", "8")
	t.Setenv("SANDBOX_MAX_SCREEN_VIEWERS", "6")
	t.Setenv("SANDBOX_UPGRADE_RATE", "2.5")
	t.Setenv("SANDBOX_UPGRADE_BURST", "9")
	t.Setenv("SANDBOX_MCP", "false")
	t.Setenv("SANDBOX_HEAP_FLOOR_MIB", "64")
	t.Setenv("SANDBOX_NATS_URL", "nats://n:4222")
	t.Setenv("SANDBOX_NATS_USER", "u")
	t.Setenv("SANDBOX_NATS_PASSWORD", "np")
	t.Setenv("SANDBOX_NATS_TOKEN", "tok")
	seed := filepath.Join(t.TempDir(), "replica.nk")
	require.NoError(t, os.WriteFile(seed, []byte("SU…"), 0o600))
	t.Setenv("SANDBOX_NATS_NKEY", seed)
	t.Setenv("SANDBOX_REPLICA", "r1")
	t.Setenv("SANDBOX_NATS_HEARTBEAT", "1s")
	t.Setenv("SANDBOX_NATS_REPLICA_TTL", "3s")
	t.Setenv("SANDBOX_AI_MODEL", "p/m")
	t.Setenv("SANDBOX_AI_DIR", "/srv/agent")
	t.Setenv("SANDBOX_AI_MCP_URL", "http://g:4444/mcp")
	t.Setenv("SANDBOX_AI_TURN_DEADLINE", "90s")
	t.Setenv("SANDBOX_AI_MAX_TURNS", "7")
	t.Setenv("SANDBOX_AI_IDLE_AFTER", "20m")
	t.Setenv("SANDBOX_AI_MAX_COMPUTERS", "50")
	t.Setenv("SANDBOX_AI_MAX_DIRS", "60")
	t.Setenv("SANDBOX_AI_ALLOW_HOST_TOOLS", "true")
	root, _ := parse(t)
	assert.Equal(t, ServeCmd{
		Listen: "127.0.0.1:9", Password: "pw", PasswordProofs: "v1,v2", OpencodeURL: "http://o:2", OpencodeUsername: "bob",
		OpencodePassword: "op", HelloTimeout: 250 * time.Millisecond, ProbeTimeout: time.Second,
		RequestTimeout: 2 * time.Second, ShutdownTimeout: 5 * time.Second, LogLevel: "warn",
		PingPeriod: 5 * time.Second, IdleProbeAfter: 6 * time.Second, MaxConnections: 8, MaxScreenViewers: 6, UpgradeRate: 2.5, UpgradeBurst: 9,
		HeapFloorMiB: 64,
		NATSFlags:    NATSFlags{NATS: "nats://n:4222", NATSUser: "u", NATSPassword: "np", NATSToken: "tok", NATSNKey: seed, NATSSetupBudget: 10 * time.Second},
		ReplicaFlags: ReplicaFlags{Replica: "r1", NATSHeartbeat: time.Second, NATSReplicaTTL: 3 * time.Second, NATSOpTimeout: 2 * time.Second},
		AIFlags: AIFlags{AIModel: "p/m", AIDir: "/srv/agent", AIMCPURL: "http://g:4444/mcp", AITurnDeadline: 90 * time.Second, AICheckWait: opencode.DefaultAgentWait,
			AIMaxTurns: 7, AIIdleAfter: 20 * time.Minute, AIMaxComputers: 50, AIMaxDirs: 60, AIAllowHostTools: true},
		AdmissionFlags: admissionDefaults,
	}, root.Serve)
}

func TestParseRejectsBadLogLevel(t *testing.T) {
	clearEnv(t)
	err := parseError(t, "--log-level", "loud")
	assert.ErrorContains(t, err, `--log-level: want debug, info, warn or error, got "loud"`)

	// Any case: SANDBOX_LOG_LEVEL=DEBUG was refused.
	t.Setenv("SANDBOX_LOG_LEVEL", "DEBUG")
	root2, _ := parse(t)
	assert.Equal(t, LogLevel("debug"), root2.Serve.LogLevel)
	root2, _ = parse(t, "--log-level", "Warn")
	assert.Equal(t, LogLevel("warn"), root2.Serve.LogLevel)
}

// startServe runs the serve command in the background and returns the bound address.
func startServe(t *testing.T, cmd ServeCmd) (addr string, logs *testkit.SyncBuffer, stop func() error) {
	t.Helper()
	logs = &testkit.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.Run(ctx, logs) }()
	stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			return errors.New("serve did not stop")
		}
	})
	t.Cleanup(func() { _ = stop() })

	addrRE := regexp.MustCompile(`msg=listening (?:\S+ )*?addr=(\S+)`) // a replica logs replica=… first
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if m := addrRE.FindStringSubmatch(logs.String()); m != nil {
			return m[1], logs, stop
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended early: %v\n%s", err, logs.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("no listening line in:\n%s", logs.String())
	return "", nil, nil
}

func TestServeEndToEnd(t *testing.T) {
	clearEnv(t)
	const sandboxPassword = "sandbox-secret-xyz"
	const opencodePassword = "opencode-secret-xyz"
	opencodeURL := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword}).URL
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", sandboxPassword,
		"--opencode-url", opencodeURL, "--opencode-password", opencodePassword, "--log-level", "debug")
	addr, logs, stop := startServe(t, root.Serve)

	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, wsResp, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+addr+"/trapos/ws", nil)
	require.NoError(t, err)
	_ = wsResp.Body.Close()
	defer conn.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))

	send := func(v map[string]any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, conn.WriteMessage(websocket.TextMessage, b))
	}
	var reply struct {
		MessageID string          `json:"messageId"`
		OK        bool            `json:"ok"`
		Payload   json.RawMessage `json:"payload"`
	}
	send(map[string]any{"event": "computer_request", "traposSenderId": "3:", "messageId": "h", "type": "hello",
		"payload": map[string]any{"traposId": "3:", "secret": sandboxPassword}})
	require.NoError(t, conn.ReadJSON(&reply))
	require.True(t, reply.OK)

	send(map[string]any{"event": "computer_request", "traposSenderId": "3:", "messageId": "p", "type": "probe_gateway", "payload": []any{}})
	require.NoError(t, conn.ReadJSON(&reply))
	assert.Equal(t, "p", reply.MessageID)
	assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":true}`, string(reply.Payload))

	require.NoError(t, stop())
	_, _, err = conn.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, websocket.CloseGoingAway, ce.Code)

	out := logs.String()
	assert.NotContains(t, out, sandboxPassword)
	assert.NotContains(t, out, opencodePassword)
	assert.NotContains(t, out, "SANDBOX_PASSWORD is not set")
	assert.Contains(t, out, "computer connected")
	assert.Contains(t, out, "msg=stopped")
	// The config line says which secret is set: the computers' password, not the API token.
	assert.Regexp(t, `msg=config .* password=true apiToken=false `, out)
	// Every setting that changes what the gateway does is in it, its default included (the
	// shutdown bound and the link codes' lifetime were in no line).
	assert.Regexp(t, `msg=config .* requestTimeout=10s shutdownTimeout=5s linkCodeLifetime=10m0s logLevel=debug pingPeriod=30s `, out)
}

// TestServeWarnsOfAProxyWithoutAnAPIToken: --public-url says computers come through a proxy
// or NAT; a reverse proxy on this host reaches the API from loopback, which needs no token
// when SANDBOX_API_TOKEN is unset, so the start says so; with the token it does not.
func TestServeWarnsOfAProxyWithoutAnAPIToken(t *testing.T) {
	const warning = `level=WARN msg="--public-url is set and SANDBOX_API_TOKEN is not: a reverse proxy on this host reaches the host API as a loopback client`
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--public-url", "https://mc.example.org/sandbox")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), warning)

	// Computers with a port of their own: the proxy of docs/reverse-proxy.md reaches no API,
	// and the start says what to keep it to, without a warning.
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--computers-listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--public-url", "https://mc.example.org/sandbox")
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), warning)
	assert.Contains(t, logs.String(), `level=INFO msg="--public-url and --computers-listen are set and SANDBOX_API_TOKEN is not: point the reverse proxy at --computers-listen's port only (docs/reverse-proxy.md)`)

	root, _ = parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--public-url", "https://mc.example.org/sandbox", "--api-token", strings.Repeat("t", 16))
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "--public-url is set")
}

// TestServeSaysEveryUserOfTheMachineIsTheHost: without SANDBOX_API_TOKEN the host API takes
// every loopback client for the host, a second Unix user of the machine included, and the
// start said nothing of it. It says so now: a warning when --listen binds beyond loopback
// (a server for computers elsewhere), at info on loopback alone, nothing with the token.
func TestServeSaysEveryUserOfTheMachineIsTheHost(t *testing.T) {
	const said = `msg="` + LoopbackIsTheHost + `" listen=`
	clearEnv(t)
	for _, c := range []struct{ listen, level string }{{":0", "WARN"}, {"127.0.0.1:0", "INFO"}} {
		root, _ := parse(t, "--listen", c.listen, "--password", "a-long-enough-password")
		_, logs, stop := startServe(t, root.Serve)
		require.NoError(t, stop())
		assert.Equal(t, 1, strings.Count(logs.String(), "level="+c.level+" "+said), "--listen %s:\n%s", c.listen, logs.String())
	}
	root, _ := parse(t, "--listen", ":0", "--password", "a-long-enough-password", "--api-token", strings.Repeat("t", 16))
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "SANDBOX_API_TOKEN is not set")
}

// TestServeWarnsOfProxiesThatAreEveryone: --trusted-proxies with a /0 believes any client's
// X-Forwarded-For, so the start says so; the config line names the set either way.
func TestServeWarnsOfProxiesThatAreEveryone(t *testing.T) {
	const warning = `level=WARN msg="--trusted-proxies (SANDBOX_TRUSTED_PROXIES) holds every address (/0): any client can name any address`
	clearEnv(t)
	t.Setenv("SANDBOX_TRUSTED_PROXIES", "127.0.0.1, ::/0")
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), warning)
	assert.Contains(t, logs.String(), "trustedProxies=127.0.0.1/32,::/0")

	clearEnv(t)
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--trusted-proxies", "127.0.0.1")
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), warning)
	assert.Contains(t, logs.String(), "trustedProxies=127.0.0.1/32")
}

// TestServeWarnsOfALinkCodeLifetimeNoPlayerCanUse: under a minute, a link code expires before
// its player reads it and has it approved; at 5ms (a slip for 5m) every code did, and the start
// said nothing. The default warns of nothing.
func TestServeWarnsOfALinkCodeLifetimeNoPlayerCanUse(t *testing.T) {
	const warning = `level=WARN msg="--link-code-lifetime (SANDBOX_LINK_CODE_LIFETIME) 5ms leaves a player too little time to read a link code off the computer and have it approved (trap-sandbox link approve): ` +
		`the codes expire first, sandbox link says The code expired; give at least 1m (the default is 10m)"`
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--link-code-lifetime", "5ms")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), warning)

	for _, args := range [][]string{nil, {"--link-code-lifetime", "1m"}} {
		clearEnv(t)
		root, _ = parse(t, append([]string{"--listen", "127.0.0.1:0", "--password", "a-long-enough-password"}, args...)...)
		_, logs, stop = startServe(t, root.Serve)
		require.NoError(t, stop())
		assert.NotContains(t, logs.String(), "--link-code-lifetime (SANDBOX_LINK_CODE_LIFETIME)", "%v", args)
	}
}

// TestServeWarnsOfAgentFlagsWithoutAModel: the --ai-* flags configure an agent that only
// --ai-model turns on; given alone they did nothing and the start said nothing of them.
func TestServeWarnsOfAgentFlagsWithoutAModel(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--ai-allow-host-tools", "--ai-turn-deadline", "90s", "--ai-check-wait", "3s", "--ai-max-turns", "5",
		"--ai-idle-after", "1m", "--ai-max-computers", "9")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), `level=WARN msg="--ai-turn-deadline (SANDBOX_AI_TURN_DEADLINE), --ai-check-wait (SANDBOX_AI_CHECK_WAIT), --ai-max-turns (SANDBOX_AI_MAX_TURNS), --ai-idle-after (SANDBOX_AI_IDLE_AFTER), --ai-max-computers (SANDBOX_AI_MAX_COMPUTERS), --ai-allow-host-tools (SANDBOX_AI_ALLOW_HOST_TOOLS) set without --ai-model (SANDBOX_AI_MODEL): the agent is off and they do nothing; set --ai-model to turn it on (docs/ai.md)"`)

	// The defaults alone warn of nothing.
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password")
	assert.Equal(t, aiTurnDeadlineDefault, root.Serve.AITurnDeadline, "the flag's tag and the constant name one default")
	assert.Equal(t, opencode.DefaultAgentWait, root.Serve.AICheckWait, "the flag's tag and the prober's constant name one default")
	assert.Equal(t, agent.DefaultMaxTurns, root.Serve.AIMaxTurns, "the flag's tag and the agent's constant name one default")
	assert.Equal(t, agent.DefaultIdleAfter, root.Serve.AIIdleAfter, "the flag's tag and the agent's constant name one default")
	assert.Equal(t, agent.DefaultMaxComputers, root.Serve.AIMaxComputers, "the flag's tag and the agent's constant name one default")
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "without --ai-model")
}

// TestServeWarnsOfSecretsOnTheCommandLine: a secret given as a flag (--password, a URL with
// a password in it) is in every user's ps for as long as the gateway runs, and its start said
// nothing; the README's advice to use the environment was all. It names the flags and the
// variables that take them instead, never the secrets; the same secrets from the environment
// warn of nothing.
func TestServeWarnsOfSecretsOnTheCommandLine(t *testing.T) {
	clearEnv(t)
	dataDir := "--data-dir=" + t.TempDir()
	root, _ := parse(t, "--listen", "127.0.0.1:0", dataDir, "--password", "pw-in-args-0123456789", "--api-token", "token-in-args-0123456789",
		"--opencode-url", "http://opencode:oc-in-url@127.0.0.1:9")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), `level=WARN msg="--password, --api-token, --opencode-url given on the command line, which every user of this host reads (ps, /proc/PID/cmdline): give the secret in the environment instead (SANDBOX_PASSWORD, SANDBOX_API_TOKEN, OPENCODE_SERVER_PASSWORD; a systemd unit's EnvironmentFile=, tools/trap-sandbox/README.md), and change it if others use this host"`)
	for _, secret := range []string{"pw-in-args", "token-in-args", "oc-in-url"} {
		assert.NotContains(t, logs.String(), secret)
	}

	t.Setenv("SANDBOX_PASSWORD", "pw-in-env-0123456789")
	t.Setenv("SANDBOX_API_TOKEN", "token-in-env-0123456789")
	t.Setenv("OPENCODE_URL", "http://opencode:oc-in-env@127.0.0.1:9")
	root, _ = parse(t, "--listen", "127.0.0.1:0", dataDir)
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "command line")
	root, _ = parse(t, "--listen", "127.0.0.1:0", dataDir, "--opencode-url", "http://127.0.0.1:9") // a URL without a password is no secret
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "command line")
}

// TestServeWarnsOfNATSSecretsOnTheCommandLine: --nats with credentials in its URL names the
// variable that takes what it carries, a token SANDBOX_NATS_TOKEN and a user and password
// SANDBOX_NATS_USER and SANDBOX_NATS_PASSWORD, once each: with --nats-token beside a token in
// the URL the line said "SANDBOX_NATS_TOKEN, SANDBOX_NATS_TOKEN". A URL without a scheme, as
// the NATS client reads it (user:password@host:4222), warns too: it did not.
func TestServeWarnsOfNATSSecretsOnTheCommandLine(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--nats", "nats://tok3n-in-url@127.0.0.1:1"}, `--nats given on the command line, which every user of this host reads (ps, /proc/PID/cmdline): give the secret in the environment instead (SANDBOX_NATS_TOKEN; `},
		{[]string{"--nats", "sandbox:pa55-in-url@127.0.0.1:1"}, `--nats given on the command line, which every user of this host reads (ps, /proc/PID/cmdline): give the secret in the environment instead (SANDBOX_NATS_USER and SANDBOX_NATS_PASSWORD; `},
		{[]string{"--nats", "nats://tok3n-in-url@127.0.0.1:1", "--nats-token", "tok3n-in-args"}, `--nats, --nats-token given on the command line, which every user of this host reads (ps, /proc/PID/cmdline): give the secret in the environment instead (SANDBOX_NATS_TOKEN; `},
	}
	for _, c := range cases {
		clearEnv(t)
		root, _ := parse(t, append([]string{"--listen", "127.0.0.1:0", "--data-dir=" + t.TempDir(), "--nats-setup-timeout", "2s"}, c.args...)...)
		var logs bytes.Buffer
		require.Error(t, root.Serve.Run(context.Background(), &logs), "nothing listens at 127.0.0.1:1")
		assert.Contains(t, logs.String(), c.want)
		for _, secret := range []string{"tok3n-in", "pa55-in"} {
			assert.NotContains(t, logs.String(), secret)
		}
	}
}

// TestServeWarnsOfScaleOutFlagsWithoutNATS: --replica, the replica's timings and the NATS
// credentials mean something only with --nats; given alone (a forgotten SANDBOX_NATS_URL in a
// unit file) the gateway ran alone and its start said nothing of them.
func TestServeWarnsOfScaleOutFlagsWithoutNATS(t *testing.T) {
	clearEnv(t)
	t.Setenv("SANDBOX_NATS_PASSWORD", "nats-secret")
	t.Setenv("SANDBOX_NATS_HEARTBEAT", "1s")
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--replica", "a", "--nats-user", "sandbox")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), `level=WARN msg="--replica (SANDBOX_REPLICA), --nats-heartbeat (SANDBOX_NATS_HEARTBEAT), --nats-user (SANDBOX_NATS_USER), --nats-password (SANDBOX_NATS_PASSWORD) set without --nats (SANDBOX_NATS_URL): this gateway runs alone, sharing its computers and accounts with no replica; set --nats to make it one (docs/scale-out.md)"`)
	assert.NotContains(t, logs.String(), "nats-secret")

	// The timings alone, by flag or by variable, are named too.
	clearEnv(t)
	t.Setenv("SANDBOX_NATS_SETUP_TIMEOUT", "30s")
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--nats-replica-ttl", "1m", "--nats-op-timeout", "5s")
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), `level=WARN msg="--nats-replica-ttl (SANDBOX_NATS_REPLICA_TTL), --nats-op-timeout (SANDBOX_NATS_OP_TIMEOUT), --nats-setup-timeout (SANDBOX_NATS_SETUP_TIMEOUT) set without --nats (SANDBOX_NATS_URL): this gateway runs alone, sharing its computers and accounts with no replica; set --nats to make it one (docs/scale-out.md)"`)

	// The defaults alone warn of nothing.
	clearEnv(t)
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password")
	assert.Equal(t, cluster.DefaultHeartbeatInterval, root.Serve.NATSHeartbeat, "the flag's tag and the cluster's constant name one default")
	assert.Equal(t, cluster.DefaultReplicaTTL, root.Serve.NATSReplicaTTL, "the flag's tag and the cluster's constant name one default")
	assert.Equal(t, cluster.DefaultOpTimeout, root.Serve.NATSOpTimeout, "the flag's tag and the cluster's constant name one default")
	assert.Equal(t, natsSetupTimeoutDefault, root.Serve.NATSSetupBudget, "the flag's tag and the constant name one default")
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "without --nats")
}

func TestServeWarnsWithoutPassword(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Regexp(t, `level=WARN msg="SANDBOX_PASSWORD is not set`, logs.String())
}

// TestServeWithoutDataDirUsesTheUsersDataDirectory: with no --data-dir the store is made in
// $XDG_DATA_HOME/trap-sandbox, which for these tests is a temporary one (clearEnv): the
// serving tests above start gateways without --data-dir and once wrote into the real user's.
func TestServeWithoutDataDirUsesTheUsersDataDirectory(t *testing.T) {
	clearEnv(t)
	want := filepath.Join(os.Getenv("XDG_DATA_HOME"), "trap-sandbox", account.DBFile)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "msg=accounts store="+want)
	assert.FileExists(t, want)
	// It made the store, and says so: a start that forgot the gateway's own --data-dir reads
	// the same "msg=accounts store=" line as every other.
	const made = `level=INFO msg="accounts: made a new, empty store: if this gateway had accounts, they are in another data directory; start it with that --data-dir (SANDBOX_DATA_DIR), or their tokens and linked computers are refused"`
	assert.Contains(t, logs.String(), made+" store="+want)

	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "msg=accounts store="+want)
	assert.NotContains(t, logs.String(), "made a new, empty store", "the store was there")
}

// TestServeSaysItUpgradedTheStore: a gateway started on the data directory of an older
// trap-sandbox upgrades its store, which that one then no longer opens: the start says so
// (once) and names the way back.
func TestServeSaysItUpgradedTheStore(t *testing.T) {
	const warning = `level=WARN msg="accounts: upgraded the store from an older trap-sandbox's schema: an older trap-sandbox no longer opens it; to go back, restore the copy made before the upgrade (docs/accounts.md, Upgrading trap-sandbox)"`
	clearEnv(t)
	dir := schema3Store(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--data-dir", dir)
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), warning+" store="+filepath.Join(dir, account.DBFile)+" from=3 to="+strconv.Itoa(account.SchemaVersion()))

	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "upgraded the store")
}

// TestServeWithoutDataDirKeepsAnExistingStore: without --data-dir, a default place that
// cannot be used (here a file where its directory would be) still serves, without accounts
// and with a WARN; a store already there that cannot be opened stops the start with the fix,
// since served without it every account token and linked computer would be refused.
func TestServeWithoutDataDirKeepsAnExistingStore(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "trap-sandbox"), nil, 0o600))
	t.Setenv("XDG_DATA_HOME", home)
	root, _ := parse(t, "--listen", "127.0.0.1:0")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), `level=WARN msg="no account store: accounts are off`)

	home = t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, "trap-sandbox"), 0o700))
	db := filepath.Join(home, "trap-sandbox", account.DBFile)
	require.NoError(t, os.WriteFile(db, []byte("not a database, but long enough to have a header of its own\n"), 0o600))
	t.Setenv("XDG_DATA_HOME", home)
	root, _ = parse(t, "--listen", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a gateway that serves anyway stops
	defer cancel()
	err := root.Serve.Run(ctx, io.Discard)
	require.Error(t, err, "served with accounts off")
	assert.Contains(t, err.Error(), db+": file is not a database (26): the file is damaged; restore it from a backup")
	assert.Contains(t, err.Error(), "the account store (the default data directory; --data-dir gives another)",
		"no --data-dir was given: the message says where the store came from")
}

// TestServeRejectsBadConfig: each bad value stops the start with an error naming its flag
// (any error passed before, such as the account store failing to open).
func TestServeRejectsBadConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"bad opencode url": {[]string{"--opencode-url", "ftp://nope"}, "--opencode-url (OPENCODE_URL): opencode url ftp://nope: scheme must be http or https"},
		"zero timeout":     {[]string{"--probe-timeout", "0s"}, "--probe-timeout (SANDBOX_PROBE_TIMEOUT) must be positive, got 0s"},
		"zero ping period": {[]string{"--ping-period", "0s"}, "--ping-period (SANDBOX_PING_PERIOD) must be positive, got 0s"},
		// At 1ms (a slip for 1s) no computer ever connected, and the log said nothing of it.
		"short ping period": {[]string{"--ping-period", "30ms"}, "--ping-period (SANDBOX_PING_PERIOD) 30ms is shorter than a computer's pong may take to come back across the network (a socket silent for twice it is dropped): give at least 1s (the default is 30s)"},
		// At 5ms every socket was closed 4008 before its hello, and the log said nothing of it.
		"short hello timeout": {[]string{"--hello-timeout", "5ms"}, "--hello-timeout (SANDBOX_HELLO_TIMEOUT) 5ms is shorter than a computer may take to say hello once its socket opens (the gateway's proof checked in Lua, a lagging Minecraft server; a socket without a hello within it is closed 4008): give at least 1s (the default is 10s)"},
		// The same under pressure: every computer of a server back from its restart was closed.
		"short pressure hello timeout": {[]string{"--pressure-hello-timeout", "5ms"}, "--pressure-hello-timeout (SANDBOX_PRESSURE_HELLO_TIMEOUT) 5ms is shorter than a computer may take to say hello once its socket opens (the gateway's proof checked in Lua, a lagging Minecraft server; a socket opened under pressure without a hello within it is closed 4008): give at least 1s (the default is 3s)"},
		"zero pressure hello timeout":  {[]string{"--pressure-hello-timeout", "0s"}, "--pressure-hello-timeout (SANDBOX_PRESSURE_HELLO_TIMEOUT) must be positive, got 0"},
		// At 1ms every computer was closed 4010 at its first idle probe, its daemon blamed.
		"short request timeout": {[]string{"--request-timeout", "1ms"}, "--request-timeout (SANDBOX_REQUEST_TIMEOUT) 1ms is shorter than a computer may take to answer a request (its daemon's turn on a lagging Minecraft server; a computer that has not answered the idle probe within it is closed 4010): give at least 1s (the default is 10s)"},
		"zero idle probe":       {[]string{"--idle-probe-after", "0s"}, "--idle-probe-after (SANDBOX_IDLE_PROBE_AFTER) must be positive, got 0s"},
		// At 1ms one idle computer was pinged some 400 times a second, for as long as it stayed.
		"short idle probe":    {[]string{"--idle-probe-after", "1ms"}, "--idle-probe-after (SANDBOX_IDLE_PROBE_AFTER) 1ms would have the gateway ping every idle computer without end (a ping request each time it is silent this long, and its answer starts the silence again: at 1ms some 400 a second a computer, all work for its Minecraft server): give at least 1s (the default is 1m)"},
		"zero max conns":      {[]string{"--max-connections", "0"}, "--max-connections (SANDBOX_MAX_CONNECTIONS) must be positive, got 0"},
		"zero screen viewers": {[]string{"--max-screen-viewers", "0"}, "--max-screen-viewers (SANDBOX_MAX_SCREEN_VIEWERS) must be positive, got 0"},
		"negative heap floor": {[]string{"--heap-floor-mib=-1"}, "--heap-floor-mib (SANDBOX_HEAP_FLOOR_MIB) must be 0 (off) to 1048576 (1 TiB), got -1"},
		"huge heap floor":     {[]string{"--heap-floor-mib", "17592186044416"}, "--heap-floor-mib (SANDBOX_HEAP_FLOOR_MIB) must be 0 (off) to 1048576 (1 TiB), got 17592186044416"}, // 2^64 bytes: wrapped around to a floor of 0
		"zero rate":           {[]string{"--upgrade-rate", "0"}, "--upgrade-rate (SANDBOX_UPGRADE_RATE) must be non-zero"},
		"bad listen":          {[]string{"--listen", "definitely not an address"}, `--listen (SANDBOX_LISTEN) "definitely not an address": want host:port`},
		"bad proxies":         {[]string{"--trusted-proxies", "127.0.0.1,nginx"}, `--trusted-proxies (SANDBOX_TRUSTED_PROXIES): "nginx" is no IP address or CIDR prefix (e.g. 127.0.0.1, 10.0.0.0/8, ::1)`},
		// These named the flag alone, though either may have set it (TestBadValuesNameTheirVariable).
		"bad public url": {[]string{"--public-url", "ftp://mc.example.org"}, `--public-url (SANDBOX_PUBLIC_URL): "ftp://mc.example.org": want an http:// or https:// URL`},
		"no public url":  {[]string{"--public-url", "http://%zz"}, `--public-url (SANDBOX_PUBLIC_URL): not a URL (invalid URL escape "%zz")`},
		"bad ai model":   {[]string{"--ai-model", "claude"}, `--ai-model (SANDBOX_AI_MODEL) "claude": give PROVIDER/MODEL`},
		"bad ai mcp url": {[]string{"--ai-model", "a/b", "--ai-mcp-url", "ftp://x/mcp"}, `--ai-mcp-url (SANDBOX_AI_MCP_URL) "ftp://x/mcp": give the gateway's /mcp`},
		// At 180ms (a slip for 180s) every turn was aborted before the model could answer.
		"short ai turn deadline": {[]string{"--ai-model", "a/b", "--ai-turn-deadline", "180ms"}, `--ai-turn-deadline (SANDBOX_AI_TURN_DEADLINE) 180ms is shorter than a model takes to answer (a turn is aborted at it; keep it above opencode's ~70 s of provider retries): give at least 1s (the default is 3m)`},
		"ai without mcp":         {[]string{"--ai-model", "a/b", "--mcp=false"}, `--ai-model (SANDBOX_AI_MODEL) needs the MCP module (the agent acts on computers through /mcp): drop --mcp=false (SANDBOX_MCP=false)`},
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			root, _ := parse(t, append([]string{"--listen", "127.0.0.1:0"}, tc.args...)...)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a gateway that serves anyway stops
			defer cancel()
			err := root.Serve.Run(ctx, io.Discard)
			require.Error(t, err, "served with %s", strings.Join(tc.args, " "))
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestAIDirWithoutADefaultNamesItsVariable: with no config directory to put the agent's
// directory under (neither XDG_CONFIG_HOME nor HOME), the refusal names --ai-dir's variable
// too, as every refused value does; it named the flag alone.
func TestAIDirWithoutADefaultNamesItsVariable(t *testing.T) {
	clearEnv(t)
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--ai-model", "a/b")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a gateway that serves anyway stops
	defer cancel()
	err := root.Serve.Run(ctx, io.Discard)
	require.Error(t, err, "served with no --ai-dir and no config directory")
	assert.Contains(t, err.Error(), "--ai-dir (SANDBOX_AI_DIR): no default (")
}

// TestArgumentBytesStandForThemselves: a byte of an argument that is not UTF-8 reaches the
// command as it is (kong's own mapper would make it U+FFFD), as the text rule says.
func TestArgumentBytesStandForThemselves(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "cat", "0:", "/a\xe9b")
	assert.Equal(t, "/a\xe9b", root.Cat.Path)
	root, _ = parse(t, "exec", "0:", "return 'é'")
	assert.Equal(t, "return 'é'", root.Exec.Code)
}

// TestBadValuesNameTheirVariable: a refused value names the environment variable beside the
// flag, since either may have set it (SANDBOX_MAX_CONNECTIONS=-1 was refused as
// "--max-connections must be positive"; a bad OPENCODE_URL named neither).
func TestBadValuesNameTheirVariable(t *testing.T) {
	clearEnv(t)
	t.Setenv("SANDBOX_MAX_CONNECTIONS", "-1")
	root, _ := parse(t, "--listen", "127.0.0.1:0")
	require.EqualError(t, root.Serve.Run(t.Context(), io.Discard), "--max-connections (SANDBOX_MAX_CONNECTIONS) must be positive, got -1")

	clearEnv(t)
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--hello-timeout=-1s")
	require.EqualError(t, root.Serve.Run(t.Context(), io.Discard), "--hello-timeout (SANDBOX_HELLO_TIMEOUT) must be positive, got -1s")

	clearEnv(t)
	t.Setenv("OPENCODE_URL", "localhost:4242")
	root, _ = parse(t, "--listen", "127.0.0.1:0")
	require.EqualError(t, root.Serve.Run(t.Context(), io.Discard), "--opencode-url (OPENCODE_URL): opencode url localhost:4242: scheme must be http or https")

	// A replica's service file sets its NATS timings in variables (docs/scale-out.md).
	clearEnv(t)
	t.Setenv("SANDBOX_NATS_URL", "nats://127.0.0.1:1")
	t.Setenv("SANDBOX_NATS_REPLICA_TTL", "9s")
	root, _ = parse(t, "--listen", "127.0.0.1:0")
	require.EqualError(t, root.Serve.Run(t.Context(), io.Discard),
		"--nats-replica-ttl (SANDBOX_NATS_REPLICA_TTL) must be at least twice --nats-heartbeat (SANDBOX_NATS_HEARTBEAT), got 9s and 5s")

	// At 2ms the replicas took each other for dead and back hundreds of times a second.
	clearEnv(t)
	t.Setenv("SANDBOX_NATS_URL", "nats://127.0.0.1:1")
	t.Setenv("SANDBOX_NATS_HEARTBEAT", "1ms")
	t.Setenv("SANDBOX_NATS_REPLICA_TTL", "2ms")
	root, _ = parse(t, "--listen", "127.0.0.1:0")
	require.EqualError(t, root.Serve.Run(t.Context(), io.Discard),
		"--nats-replica-ttl (SANDBOX_NATS_REPLICA_TTL) 2ms is shorter than a heartbeat may take to reach the other replicas through NATS "+
			"(a replica not heard from within it is taken for dead, its computers gone from the others' lists): give at least 1s (the default is 15s)")
}

// TestAnAPITokenNoClientCanSendIsRefusedAtStart: HTTP drops the spaces at a header's ends and
// carries no control character, so a SANDBOX_API_TOKEN with either (an environment file's
// trailing space or CRLF) started silently and refused every client, the CLI with the same
// variable too. The token itself is never in the message.
func TestAnAPITokenNoClientCanSendIsRefusedAtStart(t *testing.T) {
	for token, why := range map[string]string{
		"0123456789abcdef-secret ":  "has a space or tab at its start or end",
		"\t0123456789abcdef-secret": "has a space or tab at its start or end",
		"0123456789abcdef-secret\r": "holds a control character (a line break or carriage return copied with it?)",
		"0123456789abcdef\nsecret":  "holds a control character (a line break or carriage return copied with it?)",
	} {
		clearEnv(t)
		t.Setenv("SANDBOX_API_TOKEN", token)
		root, _ := parse(t, "--listen", "127.0.0.1:0")
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // refused before it serves; a gateway that started stops at once, with no error
		err := root.Serve.Run(ctx, io.Discard)
		require.EqualError(t, err, "--api-token (SANDBOX_API_TOKEN) "+why+": no client can send it in an Authorization header (HTTP carries no control character and drops the spaces at a header's ends); remove it", "%q", token)
	}
}

// TestOpencodeCredentialsInTheURLAreNamed: a user and password written into OPENCODE_URL are
// sent (Go's client makes them Basic Auth), so the start-up line does not say "without
// credentials"; the password itself is never logged.
func TestOpencodeCredentialsInTheURLAreNamed(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--opencode-url", "http://oc:hunter2@127.0.0.1:1")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "probing opencode with the user and password in OPENCODE_URL")
	assert.NotContains(t, logs.String(), "without credentials")
	assert.NotContains(t, logs.String(), "hunter2")
}

// usageError parses args as the binary does and requires a usage error of them (ExitUsage),
// reported as main reports it: what went to stdout and to stderr.
func usageError(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	p := takeParser(t, kong.Writers(&out, &errOut), kong.Exit(func(int) { t.Fatal("kong tried to exit") }))
	defer p.giveBack()
	_, err := p.parser.Parse(args)
	require.Error(t, err, args)
	assert.Equal(t, ExitUsage, ReportUsageError(err, &errOut), args)
	return out.String(), errOut.String()
}

// TestAUsageErrorIsAllOnStderr: a missing argument prints the command's usage and the error on
// stderr and nothing on stdout, which a script may be redirecting into a file
// (`trap-sandbox cat 7: > door.lua` wrote the usage into door.lua).
func TestAUsageErrorIsAllOnStderr(t *testing.T) {
	clearEnv(t)
	stdout, stderr := usageError(t, "cat", "7:")
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "Usage: trap-sandbox cat <traposId> <path> [flags]")
	assert.Contains(t, stderr, "trap-sandbox: expected \"<path>\"\n(a usage error: exit status 2; `trap-sandbox cat --help` lists its arguments and flags)\n")
}

// TestAClientCommandsUsageErrorPointsAtItsHelp: a client command's wrong flag (tokens add
// --ttl 1h, the flag being --expires) ended with "`trap-sandbox serve --help` the gateway's
// flags", which sent the operator to a list without the flag meant; it names the command's own.
func TestAClientCommandsUsageErrorPointsAtItsHelp(t *testing.T) {
	clearEnv(t)
	for args, want := range map[string]string{
		"tokens add bob laptop --ttl 1h":   "trap-sandbox: unknown flag --ttl, did you mean \"--url\"?\n(a usage error: exit status 2; `trap-sandbox tokens add --help` lists its arguments and flags)\n",
		"computers --urll x":               "trap-sandbox: unknown flag --urll, did you mean \"--url\"?\n(a usage error: exit status 2; `trap-sandbox computers --help` lists its commands)\n",
		"get 7:kitchen /f out --timeout 0": "trap-sandbox: --timeout: 0 is out of range: give more than 0 and at most 60s\n(a usage error: exit status 2; `trap-sandbox get --help` lists its arguments and flags)\n",
		"--listen":                         "(a usage error: exit status 2; `trap-sandbox --help` lists the commands, `trap-sandbox serve --help` the gateway's flags)\n",
		"serve --max-connections x":        "(a usage error: exit status 2; `trap-sandbox --help` lists the commands, `trap-sandbox serve --help` the gateway's flags)\n",
	} {
		_, stderr := usageError(t, strings.Fields(args)...)
		assert.True(t, strings.HasSuffix(stderr, want), "%s:\n%s", args, stderr)
	}
}

// TestAFlagWithoutItsValueSaysSo: a flag at the end of the command line without its value
// (an ExecStart= or a shell variable that was empty: trap-sandbox --listen $ADDR) read in
// kong's words, "--listen: expected string value but got \"EOL\" (<EOL>)", naming an "EOL"
// nobody typed. It says that the value is missing and how to give it.
func TestAFlagWithoutItsValueSaysSo(t *testing.T) {
	clearEnv(t)
	for args, want := range map[string]string{
		"--listen":                    "trap-sandbox: --listen: no value after it (the command line ends there): give it one, as --listen VALUE or --listen=VALUE\n",
		"serve --hello-timeout":       "trap-sandbox: --hello-timeout: no value after it (the command line ends there): give it a duration (10s, 2m), as --hello-timeout VALUE or --hello-timeout=VALUE\n",
		"--max-connections":           "trap-sandbox: --max-connections: no value after it (the command line ends there): give it a number, as --max-connections VALUE or --max-connections=VALUE\n",
		"tokens add bob laptop --url": "trap-sandbox: --url: no value after it (the command line ends there): give it one, as --url VALUE or --url=VALUE\n",
	} {
		_, stderr := usageError(t, strings.Fields(args)...)
		assert.Contains(t, stderr, want, args)
		assert.NotContains(t, stderr, "EOL", args)
	}
}

// TestABadFlagOfTheGatewayShowsTheGatewaysUsage: serve is the default command, so a flag of
// the gateway's with a bad value (the unit file's ExecStart=trap-sandbox --request-timeout 10)
// showed the list of commands, which names none of its flags; it shows serve's usage, as the
// same value from the environment did.
func TestABadFlagOfTheGatewayShowsTheGatewaysUsage(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{{"--request-timeout", "10"}, {"--listen", "127.0.0.1:0", "--log-level", "verbose"}, {"serve", "--request-timeout", "10"}} {
		stdout, stderr := usageError(t, args...)
		assert.True(t, strings.HasPrefix(stderr, "Usage: trap-sandbox serve [flags]\n"), "%v:\n%s", args, stderr)
		assert.Contains(t, stderr, "Run \"trap-sandbox serve --help\" for more information.", args)
		assert.Empty(t, stdout)
	}
}

// TestAnUnknownCommandIsNamed: serve is the default command, so a mistyped command reached it
// and was told as serve's "unexpected argument", with serve's usage. A word near a command
// names it, as kong does for a subcommand (accounts lst: did you mean "list"?); it did not
// for a top-level one (computer, for computers).
func TestAnUnknownCommandIsNamed(t *testing.T) {
	clearEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pign", "7:"}, "trap-sandbox: unknown command \"pign\": `trap-sandbox --help` lists the commands; did you mean \"ping\"?\n(a usage error: exit status 2)\n"},
		{[]string{"computer"}, "trap-sandbox: unknown command \"computer\": `trap-sandbox --help` lists the commands; did you mean \"computers\"?\n"},
		{[]string{"Acounts", "list"}, "trap-sandbox: unknown command \"Acounts\": `trap-sandbox --help` lists the commands; did you mean \"accounts\"?\n"},
		{[]string{"lnk"}, "trap-sandbox: unknown command \"lnk\": `trap-sandbox --help` lists the commands; did you mean \"link\"?\n"},
		{[]string{"door.lua"}, "trap-sandbox: unknown command \"door.lua\": `trap-sandbox --help` lists the commands\n(a usage error: exit status 2)\n"},
		{[]string{"c"}, "trap-sandbox: unknown command \"c\": `trap-sandbox --help` lists the commands\n(a usage error: exit status 2)\n"},
		{[]string{"version"}, "trap-sandbox: unknown command \"version\": `trap-sandbox --help` lists the commands; the version is a flag: trap-sandbox --version\n(a usage error: exit status 2)\n"},
		{[]string{"serve", "extra"}, "trap-sandbox: unexpected argument extra\n"},
	} {
		stdout, stderr := usageError(t, tc.args...)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.Empty(t, stdout)
	}
}

// TestHelpIsHelp: `trap-sandbox help [command]` prints what --help prints, on stdout (it was
// an unknown command), and a command that does not exist is a usage error naming it.
func TestHelpIsHelp(t *testing.T) {
	clearEnv(t)
	helpFlag := func(args ...string) string {
		var stdout strings.Builder
		p := takeParser(t, kong.Writers(&stdout, io.Discard), kong.Exit(func(int) {}))
		defer p.giveBack()
		_, _ = p.parser.Parse(append(args, "--help")) // the help is printed before any check of the arguments
		return stdout.String()
	}
	for _, command := range [][]string{nil, {"serve"}, {"accounts"}, {"accounts", "add"}, {"link", "revoke-key"}} {
		root, kctx := parse(t, append([]string{"help"}, command...)...)
		var stdout strings.Builder
		kctx.Bind(Stdout{Writer: &stdout})
		require.NoError(t, kctx.Run(), command)
		assert.Equal(t, helpFlag(command...), stdout.String(), command)
		assert.NotEmpty(t, stdout.String())
		assert.Equal(t, command, root.Help.Command)
	}
	assert.Contains(t, helpFlag(), "  help [<command> ...] [flags]\n")

	for _, command := range []string{"pign", "accounts zz"} {
		_, parser := newTestParser(t, kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) { t.Fatal("kong tried to exit") }))
		_, err := parser.Parse(append([]string{"help"}, strings.Fields(command)...))
		var stderr strings.Builder
		assert.Equal(t, ExitUsage, ReportUsageError(err, &stderr))
		assert.Contains(t, stderr.String(), "trap-sandbox: help: no command \""+command+"\": trap-sandbox help lists the commands\n")
	}
}
