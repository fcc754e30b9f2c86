package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
)

// connectTimeout bounds the first connection to NATS at start-up.
const connectTimeout = 5 * time.Second

// reconnectWait is the pause between two reconnection attempts; a replica retries forever.
const reconnectWait = time.Second

// ConnOptions say how to reach NATS: the usual credentials options, each optional.
type ConnOptions struct {
	// URL is one NATS URL or a comma-separated list (nats://host:4222, tls://…). It may carry
	// a user and password (nats://user:password@host:4222) or a token (nats://token@host:4222).
	URL string
	// User and Password, or Token, or NKeySeedFile (a user's NKey seed, SU…), or CredsFile (a
	// .creds file: JWT and NKey seed): at most one of them, and none with credentials in URL
	// (the caller refuses more, naming the flags or variables that set them).
	User, Password, Token, NKeySeedFile, CredsFile string
	// TLSCA is a PEM file of CAs to trust; TLSCert and TLSKey a client certificate.
	TLSCA, TLSCert, TLSKey string
	// Name names the connection on the server (its monitoring pages).
	Name string
	// ReconnectWait is the pause between reconnection attempts; zero is reconnectWait.
	ReconnectWait time.Duration
	// SecondConnection leaves out the warning about a server that asks for no credentials:
	// the process's first connection to the same server has logged it.
	SecondConnection bool
	// Clock times the log's repeated slow-consumer lines (errorHandler); nil is the wall clock.
	Clock clock.Clock
}

// Connect opens the replica's NATS connection. It reconnects by itself for as long as the
// process runs; the Router reports the gaps. ctx cut short (a signal at start) ends the first
// connection at once, and Connect says it was interrupted; once connected, ctx plays no part.
func Connect(ctx context.Context, o ConnOptions, logger *slog.Logger) (*nats.Conn, error) {
	wait := o.ReconnectWait
	if wait <= 0 {
		wait = reconnectWait
	}
	opts := []nats.Option{
		nats.Name(o.Name),
		nats.Timeout(connectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(wait),
		// Nothing is kept to publish once reconnected: a publish while NATS is away fails at
		// once. Replayed later, a claim written as the link dropped would land after the claim
		// of the computer's newer hello on another replica and close that socket (claims.go),
		// and a routed request the asker has failed would still reach the computer.
		nats.ReconnectBufSize(-1),
		nats.ErrorHandler(errorHandler(logger, o.Clock)),
	}
	if err := checkKeyFiles(o); err != nil {
		return nil, err
	}
	switch {
	case o.User != "" || o.Password != "":
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	case o.Token != "":
		opts = append(opts, nats.Token(o.Token))
	case o.NKeySeedFile != "":
		nkey, err := nats.NkeyOptionFromSeed(o.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("NATS NKey seed file %s: %w", o.NKeySeedFile, err)
		}
		opts = append(opts, nkey)
	case o.CredsFile != "":
		opts = append(opts, nats.UserCredentials(o.CredsFile))
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, errors.New("a NATS client certificate needs both --nats-tls-cert and --nats-tls-key")
	}
	if err := checkTLSFiles(o); err != nil {
		return nil, err
	}
	if o.TLSCA != "" {
		opts = append(opts, nats.RootCAs(o.TLSCA))
	}
	if o.TLSCert != "" {
		opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	if err := checkURLSchemes(o.URL); err != nil {
		return nil, err
	}
	dialer := &interruptibleDialer{ctx: ctx}
	opts = append(opts, nats.SetCustomDialer(dialer))
	nc, err := nats.Connect(o.URL, opts...)
	dialer.connected()
	if ctx.Err() != nil {
		// The dial or the handshake was cut short, or ended as the signal came.
		if nc != nil {
			nc.Close()
		}
		return nil, fmt.Errorf("connect to NATS at %s: interrupted before NATS answered", RedactURL(o.URL))
	}
	if err != nil {
		// A URL that does not parse is quoted whole in url.Error's text, password and all:
		// keep only why it does not parse.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			return nil, fmt.Errorf("connect to NATS: --nats (SANDBOX_NATS_URL) holds a URL that does not parse (%w): give nats://host:4222, or several such URLs separated by commas", ue.Err)
		}
		return nil, fmt.Errorf("connect to NATS at %s: %w", RedactURL(o.URL), explainConnectError(o, err))
	}
	// A server that asks for no credentials lets every client that reaches it into the
	// replicas' account. (With a client certificate and no credentials, the server is trusted
	// to verify the certificate: nats-server's tls { verify: true }.)
	if !nc.AuthRequired() && o.TLSCert == "" && !o.SecondConnection {
		logger.Warn(UnauthenticatedWarning, "nats", nc.ConnectedUrlRedacted())
	}
	return nc, nil
}

// natsSchemes are the schemes the NATS client dials (a URL without one is nats://).
var natsSchemes = []string{"nats", "tls", "ws", "wss"}

// checkURLSchemes refuses a URL of raw (comma-separated, as --nats takes them) whose scheme
// the NATS client does not dial. The client reads any other scheme as nats:// (http:// too),
// so nats-server's monitoring address pasted for its client one (http://host:8222) read as a
// server that does not answer NATS, and http://host:4222 worked as if it were right.
func checkURLSchemes(raw string) error {
	for _, p := range strings.Split(raw, ",") {
		scheme, _, found := strings.Cut(strings.TrimSpace(p), "://")
		if !found || slices.Contains(natsSchemes, strings.ToLower(scheme)) {
			continue
		}
		return fmt.Errorf("NATS URL %s starts with %s://, which is no NATS client's: give nats://host:4222 (tls:// for TLS, ws:// or wss:// for a websocket listener); nats-server's http:// address (8222) is its monitoring, not its clients'",
			RedactURL(strings.TrimSpace(p)), scheme)
	}
	return nil
}

// interruptibleDialer dials as the NATS client's own dialer does (connectTimeout), and until
// connected is called, a cancelled ctx fails a dial and closes the connections it made: the
// handshake on one, bounded by connectTimeout too, then ends at once. Later dials, the
// reconnections, do not depend on ctx.
type interruptibleDialer struct {
	mu    sync.Mutex
	ctx   context.Context // nil once connected was called
	stops []func() bool
}

func (d *interruptibleDialer) Dial(network, address string) (net.Conn, error) {
	d.mu.Lock()
	ctx := d.ctx
	d.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	conn, err := (&net.Dialer{Timeout: connectTimeout}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx != nil {
		d.stops = append(d.stops, context.AfterFunc(d.ctx, func() { _ = conn.Close() }))
	}
	return conn, nil
}

// connected ends ctx's hold on the connections: the first connection is made or has failed.
func (d *interruptibleDialer) connected() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, stop := range d.stops {
		stop()
	}
	d.ctx, d.stops = nil, nil
}

// explainConnectError adds to the NATS client's reason for a failed first connection what the
// operator should check: the address, or which of the credentials the server refused (never
// their value).
func explainConnectError(o ConnOptions, err error) error {
	if why := explainTLSError(o, err); why != "" {
		return fmt.Errorf("%w: %s", err, why)
	}
	switch {
	case errors.Is(err, nats.ErrNkeysNotSupported):
		return fmt.Errorf("%w: the server's configuration gives no user an NKey: give the credentials it names, or add the seed's public key to it ({ nkey: U… }, docs/scale-out.md, Security)", err)
	case errors.Is(err, nats.ErrNoServers):
		return fmt.Errorf("%w: nothing accepts connections there: is nats-server running at that address, and does --nats (SANDBOX_NATS_URL) name it?", err)
	case !errors.Is(err, nats.ErrAuthorization):
		return err
	case o.Password != "" && o.User == "":
		// SANDBOX_NATS_PASSWORD exported (as for nats-server), --nats-user forgotten.
		return fmt.Errorf("%w: a password was given (--nats-password, SANDBOX_NATS_PASSWORD) but no user: add --nats-user (SANDBOX_NATS_USER)", err)
	case o.User != "" && o.Password == "":
		// A shell that did not export SANDBOX_NATS_PASSWORD.
		return fmt.Errorf("%w: a user was given (--nats-user) but no password: set SANDBOX_NATS_PASSWORD (or --nats-password)", err)
	case o.User != "":
		return fmt.Errorf("%w: the server refused user %q with the password given (--nats-password, SANDBOX_NATS_PASSWORD): check both against its configuration%s", err, o.User, paddedSecret("password", o.Password))
	case o.Token != "":
		return fmt.Errorf("%w: the server refused the token given (--nats-token, SANDBOX_NATS_TOKEN): check it against its configuration%s", err, paddedSecret("token", o.Token))
	case o.NKeySeedFile != "":
		return fmt.Errorf("%w: the server refused the NKey of %s (--nats-nkey): is its public key in the server's configuration?", err, o.NKeySeedFile)
	case o.CredsFile != "":
		return fmt.Errorf("%w: the server refused the credentials file %s (--nats-creds)", err, o.CredsFile)
	case strings.Contains(o.URL, "@"):
		return fmt.Errorf("%w: the server refused the credentials in the URL (--nats, SANDBOX_NATS_URL)", err)
	default:
		return fmt.Errorf("%w: the server asks for credentials and none were given: --nats-user with SANDBOX_NATS_PASSWORD, SANDBOX_NATS_TOKEN, --nats-nkey or --nats-creds (docs/scale-out.md, Security)", err)
	}
}

// checkTLSFiles reads the TLS files given before any dial, so that one that cannot serve is
// named by its flag: the NATS client's own words ("failed to find any PEM data in certificate
// input", "failed to parse root certificate") name no flag, and two of the files none at all.
func checkTLSFiles(o ConnOptions) error {
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return fmt.Errorf("--nats-tls-ca (SANDBOX_NATS_TLS_CA): %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return fmt.Errorf("--nats-tls-ca (SANDBOX_NATS_TLS_CA): %s holds no PEM certificate: give the PEM file of the CA that signed the NATS server's certificate", o.TLSCA)
		}
	}
	if o.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err != nil {
			return fmt.Errorf("--nats-tls-cert (SANDBOX_NATS_TLS_CERT) %s and --nats-tls-key (SANDBOX_NATS_TLS_KEY) %s: %w: give a PEM certificate and the PEM private key that goes with it", o.TLSCert, o.TLSKey, err)
		}
	}
	return nil
}

// checkKeyFiles reads an NKey seed or credentials file before any dial, so that one that holds
// no user's seed is named by its flag: the NATS client said "nkeys: no nkey seed found" for
// the one, and "error signing nonce: unable to extract key pair from file …" for the other,
// naming neither.
func checkKeyFiles(o ConnOptions) error {
	for _, f := range []struct{ flag, path, want string }{
		{"--nats-nkey (SANDBOX_NATS_NKEY)", o.NKeySeedFile, "SU…, the first line of what nk -gen user -pubout prints"},
		{"--nats-creds (SANDBOX_NATS_CREDS)", o.CredsFile, "the .creds file nsc makes for the replicas' user holds one"},
	} {
		if f.path == "" {
			continue
		}
		data, err := os.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
		kp, err := nkeys.ParseDecoratedNKey(data)
		if err != nil {
			return fmt.Errorf("%s: %s holds no user's NKey seed (%s): %w", f.flag, f.path, f.want, err)
		}
		pub, err := kp.PublicKey()
		_, seedErr := kp.Seed()
		kp.Wipe()
		if err != nil || seedErr != nil || !nkeys.IsValidPublicUserKey(pub) {
			return fmt.Errorf("%s: %s holds a key that is not a user's seed (a public key, or an account's or operator's seed): give a user's NKey seed (%s)", f.flag, f.path, f.want)
		}
	}
	return nil
}

// explainTLSError says which setting to change when the first connection's TLS failed: the
// server offers none, its certificate is not trusted here or not for the host --nats names,
// or it refused the replica's (missing) client certificate. "" when err is no such failure.
func explainTLSError(o ConnOptions, err error) string {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var remote *net.OpError
	switch {
	case errors.Is(err, nats.ErrSecureConnWanted):
		return "this replica asks for TLS (a tls:// URL, or --nats-tls-ca, --nats-tls-cert) and the server at that address offers none: give a nats:// URL without the TLS flags, or give nats-server a tls block (docs/scale-out.md, Security)"
	case errors.As(err, &unknownCA) && o.TLSCA == "":
		return "the NATS server's certificate is signed by no CA this host trusts: give the PEM file of the CA that signed it with --nats-tls-ca (SANDBOX_NATS_TLS_CA)"
	case errors.As(err, &unknownCA):
		return fmt.Sprintf("the NATS server's certificate is signed by no CA of %s (--nats-tls-ca, SANDBOX_NATS_TLS_CA): give the PEM file of the CA that signed it", o.TLSCA)
	case errors.As(err, &hostname):
		return "the NATS server's certificate is not for the host that --nats (SANDBOX_NATS_URL) names: give --nats a name or address its certificate is for"
	}
	// With TLS 1.3 the server refuses a client certificate (or its lack) after the handshake:
	// the client reads its alert ("certificate required"), or finds the connection closed.
	refused := errors.As(err, &remote) && remote.Op == "remote error" ||
		errors.Is(err, nats.ErrTLS) && strings.Contains(err.Error(), "connection closed by remote after TLS handshake")
	switch {
	case refused && o.TLSCert == "":
		return "the NATS server refused this replica's TLS connection: a server whose tls block has verify: true wants a client certificate signed by a CA of its ca_file: give --nats-tls-cert and --nats-tls-key (SANDBOX_NATS_TLS_CERT, SANDBOX_NATS_TLS_KEY)"
	case refused:
		return fmt.Sprintf("the NATS server refused this replica's TLS connection with the client certificate %s (--nats-tls-cert, SANDBOX_NATS_TLS_CERT): is it signed by a CA of the server's ca_file?", o.TLSCert)
	}
	return ""
}

// paddedSecret is a note for a refused secret with a space or line break at its start or end,
// which an environment file with CRLF line ends gives every value (never the secret itself).
func paddedSecret(kind, secret string) string {
	if strings.TrimSpace(secret) == secret {
		return ""
	}
	return "; the " + kind + " given has a space, tab or line break at its start or end (an environment file with CRLF line ends?): give it without"
}

// errorHandler logs the NATS client's asynchronous errors. A bucket watcher whose consumer
// went quiet because NATS is away says so every ten seconds until NATS is back, when the router
// watches again (rewatch): that is at debug, the connection's loss having been logged once.
// A subscription whose buffer overflows (a flood on the bus: whoever can publish on the
// replicas' subjects can send one) is reported each time it overflows again after taking a
// message: measured, a flood of 1 000 000 routed requests made 56 such lines in 20 s, and a
// flood of revocations thousands. One line a minute for each subject says it, with the count
// of the others (logthrottle); the router handles a drop on RevocationSubject itself.
func errorHandler(logger *slog.Logger, clk clock.Clock) nats.ErrHandler {
	if clk == nil {
		clk = clock.Real{}
	}
	slow := logthrottle.New(logger, clk)
	return func(nc *nats.Conn, sub *nats.Subscription, err error) {
		attrs := []any{"err", err}
		subject := ""
		if sub != nil {
			subject = sub.Subject
			attrs = append(attrs, "subject", subject)
		}
		if errors.Is(err, nats.ErrSlowConsumer) {
			slow.Log(slog.LevelWarn, subject, slowConsumerLine, attrs...)
			return
		}
		level := slog.LevelWarn
		if errors.Is(err, nats.ErrConsumerNotActive) && !nc.IsConnected() {
			level = slog.LevelDebug
		}
		logger.Log(context.Background(), level, "NATS error", attrs...)
	}
}

// slowConsumerLine is errorHandler's line for a subscription whose buffer overflowed.
const slowConsumerLine = "NATS dropped messages on a subject: this replica's buffer of it overflowed (a flood on the bus, or the replica too slow); requests dropped so end at their timeout"

// UnauthenticatedWarning is logged when the NATS server lets the replica in without
// credentials.
const UnauthenticatedWarning = "the NATS server asks for no credentials: any client that reaches it can answer requests for the computers, read their files and close their sockets. " +
	"Give the replicas a NATS account of their own and pass its credentials with --nats-creds, --nats-nkey, --nats-user and --nats-password, or --nats-token (docs/scale-out.md, Security)"

// URLCredentials says which credentials raw (a NATS URL, or a comma-separated list of them)
// carries: "user and password", "token" (a user part alone), or "" for none.
func URLCredentials(raw string) string {
	for _, p := range strings.Split(raw, ",") {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "://") {
			p = "nats://" + p // as the NATS client reads host:port and user:password@host:port
		}
		u, err := url.Parse(p)
		if err != nil || u.User == nil {
			continue
		}
		if _, hasPassword := u.User.Password(); hasPassword {
			return "user and password"
		}
		return "token"
	}
	return ""
}

// RedactURL hides a password or token written into a NATS URL (or a comma-separated list of
// them), for logs and errors.
func RedactURL(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "://") {
			p = "nats://" + p // as the NATS client reads host:port and user:password@host:port
		}
		u, err := url.Parse(p)
		switch {
		case err != nil:
			parts[i] = "(unparsable URL)"
		case u.User != nil:
			if _, hasPassword := u.User.Password(); !hasPassword {
				u.User = url.UserPassword("token", "xxxxx") // a bare user part is a token
			}
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}
