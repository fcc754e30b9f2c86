package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cluster"
	"trap-sandbox/internal/gateway"
)

// NATSFlags configure scale-out: several replicas behind one address share their computers
// over NATS (docs/scale-out.md). Without --nats the gateway is one process, as before.
type NATSFlags struct {
	NATS            string        `name:"nats" env:"SANDBOX_NATS_URL" group:"scale-out" help:"NATS URL(s), comma-separated (nats://host:4222, tls://…); the server needs JetStream (-js). Give its credentials in SANDBOX_NATS_USER/SANDBOX_NATS_PASSWORD (or the token, nkey or creds flags), not in the URL: a command line is readable by every user of the host. Unset: a single gateway, no NATS."`
	NATSUser        string        `name:"nats-user" env:"SANDBOX_NATS_USER" group:"scale-out" help:"NATS user (with --nats-password)."`
	NATSPassword    string        `name:"nats-password" env:"SANDBOX_NATS_PASSWORD" group:"scale-out" help:"NATS password."`
	NATSToken       string        `name:"nats-token" env:"SANDBOX_NATS_TOKEN" group:"scale-out" help:"NATS token."`
	NATSNKey        string        `name:"nats-nkey" env:"SANDBOX_NATS_NKEY" group:"scale-out" type:"existingfile" help:"NATS NKey seed file (a user seed, SU…)."`
	NATSCreds       string        `name:"nats-creds" env:"SANDBOX_NATS_CREDS" group:"scale-out" type:"existingfile" help:"NATS credentials file (JWT and NKey seed)."`
	NATSTLSCA       string        `name:"nats-tls-ca" env:"SANDBOX_NATS_TLS_CA" group:"scale-out" type:"existingfile" help:"PEM file of CAs that sign the NATS server's certificate."`
	NATSTLSCert     string        `name:"nats-tls-cert" env:"SANDBOX_NATS_TLS_CERT" group:"scale-out" type:"existingfile" help:"Client certificate (PEM) for NATS, with --nats-tls-key."`
	NATSTLSKey      string        `name:"nats-tls-key" env:"SANDBOX_NATS_TLS_KEY" group:"scale-out" type:"existingfile" help:"Client certificate key (PEM) for NATS."`
	NATSSetupBudget time.Duration `name:"nats-setup-timeout" default:"10s" env:"SANDBOX_NATS_SETUP_TIMEOUT" group:"scale-out" help:"Bound on connecting to NATS and setting up its buckets at start-up."`

	// inArgs are the flags of these given on the command line (AfterApply): the others set
	// came from their variables. A refusal names what the operator set, flag or variable.
	inArgs []string
}

// AfterApply notes the NATS flags given on the command line: kong puts them in the
// context's path; a value from the environment is not there.
func (f *NATSFlags) AfterApply(kctx *kong.Context) error {
	for _, p := range kctx.Path {
		if p.Flag != nil && natsFlagEnv(p.Flag.Name) != "" {
			f.inArgs = append(f.inArgs, p.Flag.Name)
		}
	}
	return nil
}

// natsFlagEnv is the variable of NATSFlags's flag name (as its tags say), "" for no such flag.
func natsFlagEnv(name string) string {
	fields := reflect.TypeFor[NATSFlags]()
	for i := range fields.NumField() {
		if fields.Field(i).Tag.Get("name") == name {
			return fields.Field(i).Tag.Get("env")
		}
	}
	return ""
}

// givenAs is how the operator set NATS flag name: --name on the command line, else its
// variable.
func (f *NATSFlags) givenAs(name string) string {
	if slices.Contains(f.inArgs, name) {
		return "--" + name
	}
	return natsFlagEnv(name)
}

// credentialWay is one way of giving NATS credentials as the operator gave it: what they set
// (--nats-creds, SANDBOX_NATS_PASSWORD, …) and how to take it away.
type credentialWay struct {
	set, undo []string
}

// undoOne says how to take away what s names: a flag is dropped, a variable unset.
func undoOne(s string) string {
	if strings.HasPrefix(s, "--") {
		return "drop " + s
	}
	return "unset " + s
}

// credentialsTwice refuses NATS credentials given more than one way: the connection would
// send one and leave the others unsaid, and which one the server checks would be a surprise
// (SANDBOX_NATS_PASSWORD, exported for nats-server's configuration in docs/scale-out.md, and
// --nats-nkey for the replica). The refusal names exactly the flags and variables set, and
// what to drop. A user and password are one way, as are credentials in the URL.
func (f *NATSFlags) credentialsTwice() error {
	var ways []credentialWay
	if inURL := cluster.URLCredentials(f.NATS); inURL != "" {
		where := f.givenAs("nats")
		ways = append(ways, credentialWay{set: []string{"the " + inURL + " in " + where}, undo: []string{"take the " + inURL + " out of " + where}})
	}
	var userPassword credentialWay
	for _, fl := range []flagSet{{"nats-user", f.NATSUser != ""}, {"nats-password", f.NATSPassword != ""}} {
		if fl.set {
			userPassword.set = append(userPassword.set, f.givenAs(fl.name))
			userPassword.undo = append(userPassword.undo, undoOne(f.givenAs(fl.name)))
		}
	}
	if len(userPassword.set) > 0 {
		ways = append(ways, userPassword)
	}
	for _, fl := range []flagSet{{"nats-token", f.NATSToken != ""}, {"nats-nkey", f.NATSNKey != ""}, {"nats-creds", f.NATSCreds != ""}} {
		if fl.set {
			ways = append(ways, credentialWay{set: []string{f.givenAs(fl.name)}, undo: []string{undoOne(f.givenAs(fl.name))}})
		}
	}
	if len(ways) < 2 {
		return nil
	}
	var set, undo []string
	for _, w := range ways {
		set = append(set, strings.Join(w.set, " with "))
		undo = append(undo, strings.Join(w.undo, " and "))
	}
	remove := "remove the other: " + strings.Join(undo, ", or ")
	if len(ways) > 2 {
		remove = "remove the others, all but the one kept of: " + strings.Join(undo, "; ")
	}
	return fmt.Errorf("NATS credentials given %d ways at once, %s: a connection takes one; keep the one the server expects and %s (docs/scale-out.md, Security)",
		len(ways), joinAnd(set), remove)
}

// joinAnd joins items as a sentence lists them: a, b and c.
func joinAnd(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// ReplicaFlags are the scale-out flags of a serving replica only: its name and liveness. The
// account commands reach the replicas' bucket with NATSFlags alone, so their --help lists
// none of these.
type ReplicaFlags struct {
	Replica        string        `name:"replica" env:"SANDBOX_REPLICA" group:"scale-out" help:"This replica's name, unique among the replicas (default: host name:port)."`
	NATSHeartbeat  time.Duration `name:"nats-heartbeat" default:"5s" env:"SANDBOX_NATS_HEARTBEAT" group:"scale-out" help:"How often this replica tells the others it is alive."`
	NATSReplicaTTL time.Duration `name:"nats-replica-ttl" default:"15s" env:"SANDBOX_NATS_REPLICA_TTL" group:"scale-out" help:"A replica not heard from this long is dead: its computers leave the lists (at least twice --nats-heartbeat)."`
	NATSOpTimeout  time.Duration `name:"nats-op-timeout" default:"2s" env:"SANDBOX_NATS_OP_TIMEOUT" group:"scale-out" help:"Bound on one NATS key-value read or write (a hello waits at most this for NATS)."`
}

// enabled reports whether scale-out is on.
func (f *NATSFlags) enabled() bool { return f.NATS != "" }

// natsSetupTimeoutDefault is the default of --nats-setup-timeout (its tag says it again:
// kong reads defaults only from there).
const natsSetupTimeoutDefault = 10 * time.Second

// setWithoutURL names the NATS credentials, TLS files and setup bound given without --nats,
// which alone turns scale-out on: without it they do nothing, and a gateway or an account
// command given them runs on its own data directory as if they were not there. A bound set to
// its default is not told apart from one left unset.
func (f *NATSFlags) setWithoutURL() []string {
	if f.enabled() {
		return nil
	}
	return namesOfSet([]flagSet{
		{"nats-user", f.NATSUser != ""}, {"nats-password", f.NATSPassword != ""}, {"nats-token", f.NATSToken != ""}, {"nats-nkey", f.NATSNKey != ""},
		{"nats-creds", f.NATSCreds != ""}, {"nats-tls-ca", f.NATSTLSCA != ""}, {"nats-tls-cert", f.NATSTLSCert != ""}, {"nats-tls-key", f.NATSTLSKey != ""},
		{"nats-setup-timeout", f.NATSSetupBudget != natsSetupTimeoutDefault},
	})
}

// setWithoutNATS is NATSFlags.setWithoutURL with the replica's flags (its name, heartbeat,
// TTL and operation bound), which mean something only under --nats.
func (c *ServeCmd) setWithoutNATS() []string {
	if c.NATSFlags.enabled() {
		return nil
	}
	replica := namesOfSet([]flagSet{
		{"replica", c.Replica != ""}, {"nats-heartbeat", c.NATSHeartbeat != cluster.DefaultHeartbeatInterval},
		{"nats-replica-ttl", c.NATSReplicaTTL != cluster.DefaultReplicaTTL}, {"nats-op-timeout", c.NATSOpTimeout != cluster.DefaultOpTimeout},
	})
	return append(replica, c.NATSFlags.setWithoutURL()...)
}

// replicaName is --replica, or the host name plus the port the gateway listens on.
func (f *ReplicaFlags) replicaName(l net.Listener) string {
	if f.Replica != "" {
		return f.Replica
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "gateway"
	}
	port := "0"
	if addr, ok := l.Addr().(*net.TCPAddr); ok {
		port = fmt.Sprint(addr.Port)
	}
	return net.JoinHostPort(host, port)
}

// connect opens a NATS connection named name with the flags' URL and credentials; second says
// the process has a connection to the server already (see cluster.ConnOptions).
func (f *NATSFlags) connect(ctx context.Context, name string, second bool, logger *slog.Logger) (*nats.Conn, error) {
	if err := f.credentialsTwice(); err != nil {
		return nil, err
	}
	return cluster.Connect(ctx, cluster.ConnOptions{URL: f.NATS, User: f.NATSUser, Password: f.NATSPassword, Token: f.NATSToken,
		NKeySeedFile: f.NATSNKey, CredsFile: f.NATSCreds, TLSCA: f.NATSTLSCA, TLSCert: f.NATSTLSCert, TLSKey: f.NATSTLSKey, Name: name,
		SecondConnection: second}, logger)
}

// accountStore opens the account store every replica shares: the NATS key-value bucket
// account.KVBucket on nc, created when it is missing if create says so (a replica's start,
// accounts add), else ErrNoBucket (account.OpenExistingKV says why).
func (f *NATSFlags) accountStore(ctx context.Context, nc *nats.Conn, create bool) (*account.KV, error) {
	ctx, cancel := context.WithTimeout(ctx, f.NATSSetupBudget)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	open := account.OpenExistingKV
	if create {
		open = account.OpenKV
	}
	kv, err := open(ctx, js)
	if err != nil {
		return nil, fmt.Errorf("the account store on NATS at %s: %w", cluster.RedactURL(f.NATS), err)
	}
	return kv, nil
}

// replicaSettings are what this replica's heartbeats say of the settings every replica must
// share (docs/scale-out.md): the secrets as slow hashes only, for the NATS account reads them.
func (c *ServeCmd) replicaSettings() cluster.Settings {
	return cluster.Settings{Password: cluster.PasswordTag(c.Password), APIToken: cluster.APITokenTag(c.APIToken), Version: Version(),
		AIModel: cluster.AIModelTag(c.AIModel), PasswordProofs: passwordProofsTag(c.passwordProofV1Off)}
}

// passwordProofsTag is what the heartbeat says of --password-proofs, in one spelling.
func passwordProofsTag(v1Off bool) string {
	if v1Off {
		return "v2"
	}
	return "v1,v2"
}

// router connects to NATS and returns the replica's registry; its metrics carry the replica
// label, and its heartbeats say settings, which the other replicas check against theirs.
func (f *NATSFlags) router(ctx context.Context, r ReplicaFlags, replica string, settings cluster.Settings, reg *prometheus.Registry, logger *slog.Logger) (*cluster.Router, error) {
	if r.NATSReplicaTTL < 2*r.NATSHeartbeat {
		return nil, fmt.Errorf("%s must be at least twice %s, got %s and %s", flagAndEnv("nats-replica-ttl"), flagAndEnv("nats-heartbeat"),
			r.NATSReplicaTTL, r.NATSHeartbeat)
	}
	for name, d := range map[string]time.Duration{"nats-heartbeat": r.NATSHeartbeat, "nats-op-timeout": r.NATSOpTimeout, "nats-setup-timeout": f.NATSSetupBudget} {
		if d <= 0 {
			return nil, fmt.Errorf("%s must be positive, got %s", flagAndEnv(name), d)
		}
	}
	// At 2ms (with a heartbeat of 1ms) each replica took the others for dead and back again
	// hundreds of times a second, dropping their computers from its lists each time, and logged
	// a WARN each time that blamed its own process for not running.
	if err := tooShort([]shortDuration{{"nats-replica-ttl", r.NATSReplicaTTL, time.Second, cluster.DefaultReplicaTTL,
		"is shorter than a heartbeat may take to reach the other replicas through NATS (a replica not heard from within it is taken for dead, its computers gone from the others' lists)"}}); err != nil {
		return nil, err
	}
	nc, err := f.connect(ctx, "trap-sandbox "+replica, false, logger)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.NATSSetupBudget)
	defer cancel()
	router, err := cluster.New(ctx, nc, cluster.Config{Replica: replica, HeartbeatInterval: r.NATSHeartbeat,
		ReplicaTTL: r.NATSReplicaTTL, OpTimeout: r.NATSOpTimeout, Registerer: gateway.ReplicaRegisterer(reg, replica), Settings: settings}, logger)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("NATS at %s: %w", cluster.RedactURL(f.NATS), err)
	}
	logger.Info("scale-out on", "nats", nc.ConnectedUrlRedacted(), "heartbeat", r.NATSHeartbeat, "replicaTTL", r.NATSReplicaTTL)
	return router, nil
}
