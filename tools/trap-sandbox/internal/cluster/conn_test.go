package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/testkit"
)

// startAuthNATS runs an embedded NATS server with opts (host, port and logging filled in) and
// returns its host:port.
func startAuthNATS(t *testing.T, opts *natsserver.Options) string {
	t.Helper()
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", natsserver.RANDOM_PORT, true, true
	ns, err := natsserver.NewServer(opts)
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(waitLimit), "the embedded NATS server did not start")
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns.Addr().String()
}

// writeFile writes data into a new file of the test's temporary directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// Each usual way of giving NATS credentials gets the replica in (and none gets it refused);
// only the server that asks for none draws the warning.
func TestConnectTakesEachKindOfCredentialAndWarnsWhenNoneIsAsked(t *testing.T) {
	type credentialCase struct {
		with    ConnOptions // URL "nats://HOST" or "tls://HOST" is completed with the address
		without ConnOptions // the same server, credentials left out
		refused string      // part of the error without them
	}
	const noCredentials = "Authorization Violation: the server asks for credentials and none were given: --nats-user with SANDBOX_NATS_PASSWORD, SANDBOX_NATS_TOKEN, --nats-nkey or --nats-creds (docs/scale-out.md, Security)"
	cases := map[string]func(t *testing.T) (string, credentialCase){
		"user and password": func(t *testing.T) (string, credentialCase) {
			addr := startAuthNATS(t, &natsserver.Options{Username: "sandbox", Password: "pa55"})
			return addr, credentialCase{with: ConnOptions{URL: "nats://HOST", User: "sandbox", Password: "pa55"},
				without: ConnOptions{URL: "nats://HOST"}, refused: noCredentials}
		},
		"user and password in the URL": func(t *testing.T) (string, credentialCase) {
			addr := startAuthNATS(t, &natsserver.Options{Username: "sandbox", Password: "pa55"})
			return addr, credentialCase{with: ConnOptions{URL: "nats://sandbox:pa55@HOST"},
				without: ConnOptions{URL: "nats://sandbox:wrong@HOST"}, refused: "Authorization Violation: the server refused the credentials in the URL (--nats, SANDBOX_NATS_URL)"}
		},
		"token": func(t *testing.T) (string, credentialCase) {
			addr := startAuthNATS(t, &natsserver.Options{Authorization: "t0ken"})
			return addr, credentialCase{with: ConnOptions{URL: "nats://HOST", Token: "t0ken"},
				without: ConnOptions{URL: "nats://HOST"}, refused: noCredentials}
		},
		"NKey seed file": func(t *testing.T) (string, credentialCase) {
			user, err := nkeys.CreateUser()
			require.NoError(t, err)
			pub, err := user.PublicKey()
			require.NoError(t, err)
			seed, err := user.Seed()
			require.NoError(t, err)
			addr := startAuthNATS(t, &natsserver.Options{Nkeys: []*natsserver.NkeyUser{{Nkey: pub}}})
			return addr, credentialCase{with: ConnOptions{URL: "nats://HOST", NKeySeedFile: writeFile(t, "replica.nk", seed)},
				without: ConnOptions{URL: "nats://HOST"}, refused: noCredentials}
		},
		"credentials file": func(t *testing.T) (string, credentialCase) {
			operator, err := nkeys.CreateOperator()
			require.NoError(t, err)
			operatorPub, err := operator.PublicKey()
			require.NoError(t, err)
			account, err := nkeys.CreateAccount()
			require.NoError(t, err)
			accountPub, err := account.PublicKey()
			require.NoError(t, err)
			accountJWT, err := jwt.NewAccountClaims(accountPub).Encode(operator)
			require.NoError(t, err)
			user, err := nkeys.CreateUser()
			require.NoError(t, err)
			userPub, err := user.PublicKey()
			require.NoError(t, err)
			userSeed, err := user.Seed()
			require.NoError(t, err)
			userJWT, err := jwt.NewUserClaims(userPub).Encode(account)
			require.NoError(t, err)
			creds, err := jwt.FormatUserConfig(userJWT, userSeed)
			require.NoError(t, err)
			resolver := &natsserver.MemAccResolver{}
			require.NoError(t, resolver.Store(accountPub, accountJWT))
			addr := startAuthNATS(t, &natsserver.Options{TrustedOperators: []*jwt.OperatorClaims{jwt.NewOperatorClaims(operatorPub)},
				AccountResolver: resolver})
			return addr, credentialCase{with: ConnOptions{URL: "nats://HOST", CredsFile: writeFile(t, "replica.creds", creds)},
				without: ConnOptions{URL: "nats://HOST"}, refused: noCredentials}
		},
		"TLS with a CA and a client certificate": func(t *testing.T) (string, credentialCase) {
			pki := newTestPKI(t)
			tlsConfig, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{CertFile: pki.serverCert, KeyFile: pki.serverKey,
				CaFile: pki.ca, Verify: true})
			require.NoError(t, err)
			addr := startAuthNATS(t, &natsserver.Options{TLS: true, TLSVerify: true, TLSConfig: tlsConfig})
			return addr, credentialCase{with: ConnOptions{URL: "tls://HOST", TLSCA: pki.ca, TLSCert: pki.clientCert, TLSKey: pki.clientKey},
				without: ConnOptions{URL: "tls://HOST", TLSCA: pki.ca}, refused: "tls"} // TLS 1.3 names the missing certificate, or only a closed connection
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			addr, c := setup(t)
			logs := &testkit.SyncBuffer{}
			logger := slog.New(slog.NewTextHandler(logs, nil))
			c.with.URL = strings.Replace(c.with.URL, "HOST", addr, 1)
			nc, err := Connect(context.Background(), c.with, logger)
			require.NoError(t, err)
			nc.Close()
			assert.NotContains(t, logs.String(), "asks for no credentials")

			c.without.URL = strings.Replace(c.without.URL, "HOST", addr, 1)
			_, err = Connect(context.Background(), c.without, logger)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.refused)
			assert.NotContains(t, err.Error(), "pa55")
		})
	}

	t.Run("no credentials asked", func(t *testing.T) {
		addr := startAuthNATS(t, &natsserver.Options{})
		logs := &testkit.SyncBuffer{}
		nc, err := Connect(context.Background(), ConnOptions{URL: "nats://" + addr}, slog.New(slog.NewTextHandler(logs, nil)))
		require.NoError(t, err)
		nc.Close()
		assert.Contains(t, logs.String(), "level=WARN msg=\"the NATS server asks for no credentials: any client that reaches it can answer requests for the computers")
		assert.Contains(t, logs.String(), "--nats-creds")
	})

	t.Run("a password without its user, a user without its password", func(t *testing.T) {
		addr := startAuthNATS(t, &natsserver.Options{Username: "sandbox", Password: "pa55"})
		_, err := Connect(context.Background(), ConnOptions{URL: "nats://" + addr, Password: "pa55"}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Authorization Violation: a password was given (--nats-password, SANDBOX_NATS_PASSWORD) but no user: add --nats-user (SANDBOX_NATS_USER)")
		assert.NotContains(t, err.Error(), "pa55")

		_, err = Connect(context.Background(), ConnOptions{URL: "nats://" + addr, User: "sandbox"}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Authorization Violation: a user was given (--nats-user) but no password: set SANDBOX_NATS_PASSWORD (or --nats-password)")
	})

	t.Run("wrong credentials name which ones, never their value", func(t *testing.T) {
		addr := startAuthNATS(t, &natsserver.Options{Username: "sandbox", Password: "pa55"})
		_, err := Connect(context.Background(), ConnOptions{URL: "nats://" + addr, User: "sandbox", Password: "wr0ng"}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Equal(t, "connect to NATS at nats://"+addr+`: nats: Authorization Violation: the server refused user "sandbox" with the password given (--nats-password, SANDBOX_NATS_PASSWORD): check both against its configuration`, err.Error())

		addr = startAuthNATS(t, &natsserver.Options{Authorization: "t0ken"})
		_, err = Connect(context.Background(), ConnOptions{URL: "nats://" + addr, Token: "wr0ng"}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Equal(t, "connect to NATS at nats://"+addr+": nats: Authorization Violation: the server refused the token given (--nats-token, SANDBOX_NATS_TOKEN): check it against its configuration", err.Error())

		allowed, err := nkeys.CreateUser()
		require.NoError(t, err)
		pub, err := allowed.PublicKey()
		require.NoError(t, err)
		other, err := nkeys.CreateUser()
		require.NoError(t, err)
		seed, err := other.Seed()
		require.NoError(t, err)
		seedFile := writeFile(t, "other.nk", seed)
		addr = startAuthNATS(t, &natsserver.Options{Nkeys: []*natsserver.NkeyUser{{Nkey: pub}}})
		_, err = Connect(context.Background(), ConnOptions{URL: "nats://" + addr, NKeySeedFile: seedFile}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Equal(t, "connect to NATS at nats://"+addr+": nats: Authorization Violation: the server refused the NKey of "+seedFile+" (--nats-nkey): is its public key in the server's configuration?", err.Error())
	})

	t.Run("a password or token with a carriage return says so", func(t *testing.T) {
		// An environment file with CRLF line ends gives SANDBOX_NATS_PASSWORD a carriage
		// return, which the refusal alone did not show (the password is never printed).
		addr := startAuthNATS(t, &natsserver.Options{Username: "sandbox", Password: "pa55"})
		_, err := Connect(context.Background(), ConnOptions{URL: "nats://" + addr, User: "sandbox", Password: "pa55\r"}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "check both against its configuration; the password given has a space, tab or line break at its start or end (an environment file with CRLF line ends?): give it without")
		assert.NotContains(t, err.Error(), "pa55")

		addr = startAuthNATS(t, &natsserver.Options{Authorization: "t0ken"})
		_, err = Connect(context.Background(), ConnOptions{URL: "nats://" + addr, Token: "t0ken "}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "check it against its configuration; the token given has a space, tab or line break at its start or end")
		assert.NotContains(t, err.Error(), "t0ken")

		_, err = Connect(context.Background(), ConnOptions{URL: "nats://" + addr, Token: "wr0ng"}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "line break", "a wrong secret without one is not told so")
	})

	t.Run("nothing listening at the address", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close()) // a port nothing listens on
		_, err = Connect(context.Background(), ConnOptions{URL: "nats://" + addr, User: "sandbox", Password: "pa55"}, slog.New(slog.DiscardHandler))
		require.Error(t, err)
		assert.Equal(t, "connect to NATS at nats://"+addr+": nats: no servers available for connection: nothing accepts connections there: is nats-server running at that address, and does --nats (SANDBOX_NATS_URL) name it?", err.Error())
	})
}

// testPKI is a throw-away CA with a server certificate for 127.0.0.1 and a client certificate,
// as PEM files.
type testPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, kind string, der []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	now := time.Now()
	caKey := newKey()
	caTemplate := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	issue := func(serial int64, name string, usage x509.ExtKeyUsage, ips []net.IP) (string, string) {
		key := newKey()
		template := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		require.NoError(t, err)
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "PRIVATE KEY", keyDER)
	}
	p := testPKI{ca: write("ca.pem", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = issue(2, "server", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.clientCert, p.clientKey = issue(3, "client", x509.ExtKeyUsageClientAuth, nil)
	return p
}

// While NATS is away, each bucket watcher reports "consumer not active" every ten seconds:
// that is at debug, not a WARN pair per interval for as long as the outage lasts; any other
// asynchronous error, and this one while connected, stays a WARN.
func TestAQuietWatcherWhileNATSIsAwayIsNotAWarning(t *testing.T) {
	addr := startAuthNATS(t, &natsserver.Options{})
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	handle := errorHandler(logger, nil)
	nc, err := Connect(context.Background(), ConnOptions{URL: "nats://" + addr}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)

	handle(nc, nil, nats.ErrConsumerNotActive)
	nc.Close()
	handle(nc, nil, nats.ErrConsumerNotActive)
	handle(nc, nil, nats.ErrSlowConsumer)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], "level=WARN")
	assert.Contains(t, lines[1], "level=DEBUG")
	assert.Contains(t, lines[1], "consumer not active")
	assert.Contains(t, lines[2], "level=WARN")
}

// A subscription whose buffer overflows is reported each time it overflows again after taking
// a message: a flood on the bus (1 000 000 routed requests made 56 lines in 20 s, revocations
// thousands) was as many WARN lines. Now each subject has one line a minute, the next one
// counting those left out.
func TestSlowConsumerLinesAreOneAMinuteASubject(t *testing.T) {
	addr := startAuthNATS(t, &natsserver.Options{})
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	handle := errorHandler(logger, clk)
	nc, err := Connect(context.Background(), ConnOptions{URL: "nats://" + addr}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	own, err := nc.SubscribeSync("trapos.replica.a.>")
	require.NoError(t, err)
	other, err := nc.SubscribeSync("trapos.revoked")
	require.NoError(t, err)

	for range 1000 {
		handle(nc, own, nats.ErrSlowConsumer)
	}
	handle(nc, other, nats.ErrSlowConsumer)
	clk.Advance(logthrottle.Every)
	handle(nc, own, nats.ErrSlowConsumer)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 3, logs.String())
	assert.Contains(t, lines[0], slowConsumerLine)
	assert.Contains(t, lines[0], "subject=trapos.replica.a.>")
	assert.Contains(t, lines[1], "subject=trapos.revoked")
	assert.Contains(t, lines[2], "subject=trapos.replica.a.>")
	assert.Contains(t, lines[2], "suppressedSinceLast=999")
}

// TestConnectStopsAtOnceWhenInterrupted: a signal (ctx cancelled) while the first connection
// waits for the server, here one that accepts and never speaks, ends Connect at once saying so,
// not after connectTimeout with an i/o timeout; the connection it made is closed.
func TestConnectStopsAtOnceWhenInterrupted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			accepted <- conn
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := Connect(ctx, ConnOptions{URL: "nats://" + ln.Addr().String()}, slog.New(slog.DiscardHandler))
		done <- result{nc, err}
	}()
	server := <-accepted // the client waits for the server's INFO
	defer server.Close()
	start := time.Now()
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(connectTimeout):
		t.Fatal("Connect waited for its timeout after the interrupt")
	}
	assert.Less(t, time.Since(start), connectTimeout/2)
	assert.Nil(t, r.nc)
	require.Error(t, r.err)
	assert.Equal(t, "connect to NATS at nats://"+ln.Addr().String()+": interrupted before NATS answered", r.err.Error())
	_, err = server.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the client's connection is closed")
}

// TestConnectRefusesAURLOfAnotherScheme: the NATS client dials any scheme but its own as
// nats://, so http://host:4222 worked and http://host:8222 (nats-server's monitoring, pasted
// for its client address) read as a NATS server that does not answer. A URL of another scheme
// is refused before a dial, naming it; the client's own schemes, and none, are dialled.
func TestConnectRefusesAURLOfAnotherScheme(t *testing.T) {
	addr := startAuthNATS(t, &natsserver.Options{})
	for _, bad := range []string{"http://" + addr, "nats://" + addr + ",https://user:pa55@" + addr} {
		_, err := Connect(context.Background(), ConnOptions{URL: bad}, slog.New(slog.DiscardHandler))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "which is no NATS client's: give nats://host:4222", bad)
		assert.NotContains(t, err.Error(), "pa55", "the password is not shown")
	}
	for _, good := range []string{"nats://" + addr, addr, "NATS://" + addr} {
		nc, err := Connect(context.Background(), ConnOptions{URL: good}, slog.New(slog.DiscardHandler))
		require.NoError(t, err, good)
		nc.Close()
	}
}

// TestConnectNamesTheTLSSettingToFix: a first connection whose TLS fails, or whose TLS files
// cannot serve, names the flag to change, where the NATS client's words named none ("failed to
// find any PEM data in certificate input", "secure connection not available", "certificate
// signed by unknown authority", "remote error: tls: certificate required"). Each is one line.
func TestConnectNamesTheTLSSettingToFix(t *testing.T) {
	pki, other := newTestPKI(t), newTestPKI(t)
	serverTLS := func(verify bool) string {
		tlsConfig, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{CertFile: pki.serverCert, KeyFile: pki.serverKey,
			CaFile: pki.ca, Verify: verify})
		require.NoError(t, err)
		return startAuthNATS(t, &natsserver.Options{TLS: true, TLSVerify: verify, TLSConfig: tlsConfig})
	}
	plain, tlsOnly, verifying := startAuthNATS(t, &natsserver.Options{}), serverTLS(false), serverTLS(true)
	_, port, err := net.SplitHostPort(tlsOnly)
	require.NoError(t, err)
	notPEM := writeFile(t, "ca.txt", []byte("not a certificate\n"))
	cases := map[string]struct {
		o    ConnOptions
		want string
	}{
		"tls:// to a server without TLS": {ConnOptions{URL: "tls://" + plain},
			"the server at that address offers none: give a nats:// URL without the TLS flags, or give nats-server a tls block"},
		"a server certificate of no CA this host trusts": {ConnOptions{URL: "tls://" + tlsOnly},
			"the NATS server's certificate is signed by no CA this host trusts: give the PEM file of the CA that signed it with --nats-tls-ca (SANDBOX_NATS_TLS_CA)"},
		"a server certificate of another CA than --nats-tls-ca's": {ConnOptions{URL: "tls://" + tlsOnly, TLSCA: other.ca},
			"the NATS server's certificate is signed by no CA of " + other.ca + " (--nats-tls-ca, SANDBOX_NATS_TLS_CA)"},
		"a server certificate for another host": {ConnOptions{URL: "tls://localhost:" + port, TLSCA: pki.ca},
			"the NATS server's certificate is not for the host that --nats (SANDBOX_NATS_URL) names"},
		"no client certificate for a server that verifies": {ConnOptions{URL: "tls://" + verifying, TLSCA: pki.ca},
			"wants a client certificate signed by a CA of its ca_file: give --nats-tls-cert and --nats-tls-key (SANDBOX_NATS_TLS_CERT, SANDBOX_NATS_TLS_KEY)"},
		"a client certificate of another CA": {ConnOptions{URL: "tls://" + verifying, TLSCA: pki.ca, TLSCert: other.clientCert, TLSKey: other.clientKey},
			"the NATS server refused this replica's TLS connection with the client certificate " + other.clientCert + " (--nats-tls-cert, SANDBOX_NATS_TLS_CERT): is it signed by a CA of the server's ca_file?"},
		"a CA file that holds no certificate": {ConnOptions{URL: "tls://" + tlsOnly, TLSCA: notPEM},
			"--nats-tls-ca (SANDBOX_NATS_TLS_CA): " + notPEM + " holds no PEM certificate"},
		"a key that is not the certificate's": {ConnOptions{URL: "tls://" + verifying, TLSCA: pki.ca, TLSCert: pki.clientCert, TLSKey: other.clientKey},
			"--nats-tls-cert (SANDBOX_NATS_TLS_CERT) " + pki.clientCert + " and --nats-tls-key (SANDBOX_NATS_TLS_KEY) " + other.clientKey + ": tls: private key does not match public key: give a PEM certificate and the PEM private key that goes with it"},
		"a URL that does not parse": {ConnOptions{URL: "nats://not a host:4222"},
			"--nats (SANDBOX_NATS_URL) holds a URL that does not parse"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			nc, err := Connect(context.Background(), c.o, slog.New(slog.DiscardHandler))
			if nc != nil {
				nc.Close()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

// TestConnectNamesAKeyFileThatHoldsNoUsersSeed: an NKey seed or credentials file that holds no
// user's seed (the public key's line of nk's output, an account's seed, anything else) is
// refused before a dial, naming its flag, where the NATS client said "nkeys: no nkey seed
// found" or "error signing nonce: unable to extract key pair …"; a seed for a server that gives
// no user an NKey says so.
func TestConnectNamesAKeyFileThatHoldsNoUsersSeed(t *testing.T) {
	user, err := nkeys.CreateUser()
	require.NoError(t, err)
	userSeed, err := user.Seed()
	require.NoError(t, err)
	userPub, err := user.PublicKey()
	require.NoError(t, err)
	account, err := nkeys.CreateAccount()
	require.NoError(t, err)
	accountSeed, err := account.Seed()
	require.NoError(t, err)
	addr := startAuthNATS(t, &natsserver.Options{Username: "sandbox", Password: "pa55"})
	garbage := writeFile(t, "garbage", []byte("not a key\n"))
	public := writeFile(t, "public.nk", []byte(userPub+"\n"))
	accountFile := writeFile(t, "account.nk", accountSeed)
	noSeed := " holds no user's NKey seed "
	for name, c := range map[string]struct {
		o    ConnOptions
		want string
	}{
		"garbage for --nats-nkey":     {ConnOptions{NKeySeedFile: garbage}, "--nats-nkey (SANDBOX_NATS_NKEY): " + garbage + noSeed + "(SU…, the first line of what nk -gen user -pubout prints)"},
		"the public key's line":       {ConnOptions{NKeySeedFile: public}, "--nats-nkey (SANDBOX_NATS_NKEY): " + public + noSeed},
		"an account's seed":           {ConnOptions{NKeySeedFile: accountFile}, "--nats-nkey (SANDBOX_NATS_NKEY): " + accountFile + " holds a key that is not a user's seed"},
		"garbage for --nats-creds":    {ConnOptions{CredsFile: garbage}, "--nats-creds (SANDBOX_NATS_CREDS): " + garbage + noSeed + "(the .creds file nsc makes for the replicas' user holds one)"},
		"a server without NKey users": {ConnOptions{NKeySeedFile: writeFile(t, "user.nk", userSeed)}, "nkeys not supported by the server: the server's configuration gives no user an NKey: give the credentials it names, or add the seed's public key to it"},
	} {
		t.Run(name, func(t *testing.T) {
			c.o.URL = "nats://" + addr
			_, err := Connect(context.Background(), c.o, slog.New(slog.DiscardHandler))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), string(userSeed))
			assert.NotContains(t, err.Error(), string(accountSeed))
		})
	}
}
