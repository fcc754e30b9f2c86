package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

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
		AIModel: cluster.AIModelTag(c.AIModel)}
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
