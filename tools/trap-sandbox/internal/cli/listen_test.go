package cli

import (
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/installer"
	"trap-sandbox/internal/server"
)

// TestAListenerThatCannotOpenSaysWhatToDo: a port in use, an address of another host, a bare
// port, a URL and a port out of range were Go's words ("listen tcp 127.0.0.1:4444: bind:
// address already in use", "missing port in address", "too many colons in address", "address
// 99999: invalid port"), which say neither the flag nor the fix.
func TestAListenerThatCannotOpenSaysWhatToDo(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()

	for _, tc := range []struct{ listen, want string }{
		{taken.Addr().String(), "listen on " + taken.Addr().String() + ": another program already listens there (another trap-sandbox?): stop it, or give another port with --listen (SANDBOX_LISTEN)"},
		{"203.0.113.7:0", "listen on 203.0.113.7:0: 203.0.113.7 is not an address of this host: give --listen (SANDBOX_LISTEN) one of its own (ip addr lists them), or :0 for every interface"},
		{"4444", `--listen (SANDBOX_LISTEN) "4444": want host:port: :4444 listens on every interface, 127.0.0.1:4444 on this host only`},
		{"http://127.0.0.1:4444", `--listen (SANDBOX_LISTEN) "http://127.0.0.1:4444": want host:port, not a URL (:4444 listens on every interface, 127.0.0.1:4444 on this host only)`},
		{"localhost", `--listen (SANDBOX_LISTEN) "localhost": want host:port (:4444 listens on every interface, 127.0.0.1:4444 on this host only)`},
		{"127.0.0.1:99999", `--listen (SANDBOX_LISTEN) "127.0.0.1:99999": the port must be a number from 0 to 65535 (:4444 listens on every interface, 127.0.0.1:4444 on this host only)`},
		{"127.0.0.1:-1", `--listen (SANDBOX_LISTEN) "127.0.0.1:-1": the port must be a number from 0 to 65535 (:4444 listens on every interface, 127.0.0.1:4444 on this host only)`},
		{":abc", `--listen (SANDBOX_LISTEN) ":abc": the port must be a number from 0 to 65535 (:4444 listens on every interface, 127.0.0.1:4444 on this host only)`},
		// a CRLF environment file's carriage return, where the port was said to be no number
		{"127.0.0.1:4444\r", `--listen (SANDBOX_LISTEN) "127.0.0.1:4444\r" has a space, tab or line break at its start or end (an environment file with CRLF line ends?): give "127.0.0.1:4444"`},
	} {
		clearEnv(t)
		root, _ := parse(t, "--listen", tc.listen)
		assert.EqualError(t, root.Serve.Run(t.Context(), io.Discard), tc.want, tc.listen)
	}
	assert.EqualError(t, checkListen("computers-listen", "127.0.0.1:65536"),
		`--computers-listen (SANDBOX_COMPUTERS_LISTEN) "127.0.0.1:65536": the port must be a number from 0 to 65535 (:4445 listens on every interface, 127.0.0.1:4445 on this host only)`)
	assert.NoError(t, checkListen("listen", "127.0.0.1:"), "an empty port is a free one, as Go takes it")
}

// TestAListenHostThatDoesNotResolveNamesTheFlag: a host name the resolver does not know was
// Go's words alone ("listen on nosuchhost:4444: listen tcp: lookup nosuchhost on
// 10.0.0.53:53: no such host"), which name neither the flag nor what to give instead.
func TestAListenHostThatDoesNotResolveNamesTheFlag(t *testing.T) {
	// A real lookup (.invalid is never a name, RFC 6761): whatever the resolver answers,
	// no such host or a failure to ask, the line starts with the flag and ends with the fix.
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--computers-listen", "nosuchhost.invalid:0")
	err := root.Serve.Run(t.Context(), io.Discard)
	require.Error(t, err)
	assert.Regexp(t, `^--computers-listen \(SANDBOX_COMPUTERS_LISTEN\) "nosuchhost\.invalid:0": this host's resolver (knows no host nosuchhost\.invalid|could not look up nosuchhost\.invalid \(.+\)): `+
		`give one of this host's addresses \(ip addr lists them\), :0 for every interface, or 127\.0\.0\.1:0 for this host only$`, err.Error())

	notFound := &net.OpError{Op: "listen", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nosuchhost", Server: "10.0.0.53:53", IsNotFound: true}}
	assert.EqualError(t, listenError("listen", "nosuchhost:4444", notFound),
		`--listen (SANDBOX_LISTEN) "nosuchhost:4444": this host's resolver knows no host nosuchhost: give one of this host's addresses (ip addr lists them), :4444 for every interface, or 127.0.0.1:4444 for this host only`)
	unasked := &net.OpError{Op: "listen", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: "gateway.lan", Server: "10.0.0.53:53", IsTemporary: true}}
	assert.EqualError(t, listenError("listen", "gateway.lan:4444", unasked),
		`--listen (SANDBOX_LISTEN) "gateway.lan:4444": this host's resolver could not look up gateway.lan (server misbehaving): give one of this host's addresses (ip addr lists them), :4444 for every interface, or 127.0.0.1:4444 for this host only`)
}

// TestAPortHeldByAConnectionIsNotCalledListenedOn: the local end of a connection holds its
// port as a listener does (the system refuses the bind the same way), and a port of the range
// outgoing connections draw from may be one: "another program already listens there" sent
// the operator looking for a program that did not exist.
func TestAPortHeldByAConnectionIsNotCalledListenedOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	out, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer out.Close()
	in, err := ln.Accept()
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, ln.Close())

	held := out.LocalAddr().String()
	clearEnv(t)
	root, _ := parse(t, "--listen", held)
	err = root.Serve.Run(t.Context(), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "listen on "+held+": no program listens there, but a connection of this host holds the port as its own end")
	assert.Contains(t, err.Error(), "give another port with --listen (SANDBOX_LISTEN)")
	if _, statErr := os.Stat("/proc/sys/net/ipv4/ip_local_port_range"); statErr == nil {
		assert.Regexp(t, `\(this host gives ports [0-9]+ to [0-9]+ to outgoing connections: choose one outside them\)`, err.Error())
	}
}

// TestALowPortRefusedNamesTheFix: a port below 1024 without the right to bind it (a test run
// as root could bind it, so the system's refusal is made here).
func TestALowPortRefusedNamesTheFix(t *testing.T) {
	denied := &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError("bind", syscall.EACCES)}
	assert.EqualError(t, listenError("listen", "127.0.0.1:80", denied),
		"listen on 127.0.0.1:80: a port below 1024 needs root (or CAP_NET_BIND_SERVICE): give a higher one with --listen (SANDBOX_LISTEN), e.g. :4444")
	assert.EqualError(t, listenError("listen", "127.0.0.1:8080", denied), "listen on 127.0.0.1:8080: listen tcp: bind: permission denied")
}

// TestComputersListenMustNotTakeListensPort: one port cannot be both the API's and the
// computers-only one, whatever name the host goes by; port 0 picks a free one each time, and
// another host's address or port is another listener.
func TestComputersListenMustNotTakeListensPort(t *testing.T) {
	for _, tc := range []struct {
		listen, computers string
		refused           bool
	}{
		{":4444", ":4444", true},
		{":4444", "127.0.0.1:4444", true},
		{"127.0.0.1:4444", "[::]:4444", true},
		{"127.0.0.1:4444", "127.0.0.1:4444", true},
		{"localhost:4444", "127.0.0.1:4444", true},
		{"127.0.0.1:4444", "[::ffff:127.0.0.1]:4444", true},
		{"localhost:4444", "[::1]:4444", false},
		{"127.0.0.1:4444", "127.0.0.1:4445", false},
		{"192.0.2.1:4444", "127.0.0.1:4444", false},
		{"127.0.0.1:0", "127.0.0.1:0", false},
	} {
		err := checkComputersListen(tc.listen, tc.computers)
		if !tc.refused {
			assert.NoError(t, err, "%s %s", tc.listen, tc.computers)
			continue
		}
		assert.EqualError(t, err, `--computers-listen (SANDBOX_COMPUTERS_LISTEN) "`+tc.computers+`" takes the port of --listen "`+tc.listen+
			`": the computers-only port must be another one, e.g. 127.0.0.1:4445 (CC's http rules then allow it, not --listen's)`)
	}
}

// TestComputerPathsAreTheComputersRoutes: the computers-only port's allow-list
// (server.ComputerPaths, which the docs give a reverse proxy too) is the gateway's and the
// installer's own routes and /healthz (and the install line with a slash after it), so that
// renaming one cannot leave computers refused on that port.
func TestComputerPathsAreTheComputersRoutes(t *testing.T) {
	assert.ElementsMatch(t, []string{gateway.WebSocketPath, installer.InstallPath, installer.FilesPath, server.HealthzPath}, server.ComputerPaths)
	assert.Equal(t, []string{installer.InstallPath + "/"}, server.ComputerPathsWithSlash)
	assert.ElementsMatch(t, []string{installer.InstallPath, installer.InstallPath + "/", gateway.WebSocketPath}, server.ComputerPathsRedirected)
}
