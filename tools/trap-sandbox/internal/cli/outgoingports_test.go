package cli

import (
	"bytes"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAListenPortAmongTheOutgoingOnesIsWarnedAbout: a --listen port in the range the host gives
// outgoing connections (Linux's 32768 to 60999) started today and failed at a restart, "no
// program listens there, but a connection of this host holds the port as its own end" (played
// three times in one morning on a busy host, ports 48800, 48808 and 48890), with nothing at the
// first start to say that it would. The start says so, naming the range and both fixes; a
// port outside it, one reserved (ip_local_reserved_ports), or port 0 is not warned about.
func TestAListenPortAmongTheOutgoingOnesIsWarnedAbout(t *testing.T) {
	outgoing := outgoingPorts{low: 32768, high: 60999, reserved: "8080,48890-48899"}
	for addr, warned := range map[string]bool{
		"127.0.0.1:48801": true,
		":32768":          true,
		"[::1]:60999":     true,
		":4444":           false,
		":32767":          false,
		":61000":          false,
		":48890":          false, // reserved
		":48899":          false,
		"127.0.0.1:0":     false,
	} {
		var logs bytes.Buffer
		warnIfPortIsOutgoing(slog.New(slog.NewTextHandler(&logs, nil)), "listen", addr, outgoing)
		if !warned {
			assert.Empty(t, logs.String(), addr)
			continue
		}
		_, port, _ := net.SplitHostPort(addr)
		assert.Contains(t, logs.String(), `level=WARN msg="--listen (SANDBOX_LISTEN) port `+port+` is among the ports this host gives outgoing connections (32768 to 60999): `+
			`a restart fails whenever one of them holds it as its own end; give a port below 32768, or reserve this one (sysctl -w net.ipv4.ip_local_reserved_ports=8080,48890-48899,`+port+`, and in /etc/sysctl.d to keep it)"`, addr)
	}

	var logs bytes.Buffer
	warnIfPortIsOutgoing(slog.New(slog.NewTextHandler(&logs, nil)), "computers-listen", "127.0.0.1:48801", outgoingPorts{low: 32768, high: 60999})
	assert.Contains(t, logs.String(), `msg="--computers-listen (SANDBOX_COMPUTERS_LISTEN) port 48801 is among`)
	assert.Contains(t, logs.String(), `(sysctl -w net.ipv4.ip_local_reserved_ports=48801, and`, "with none reserved, the port alone")
}

// TestTheOutgoingPortRangeIsReadFromTheSystem: on Linux the range and the reserved ports are
// the kernel's; elsewhere there is none, and nothing is warned about.
func TestTheOutgoingPortRangeIsReadFromTheSystem(t *testing.T) {
	outgoing, ok := systemOutgoingPorts()
	if !ok {
		t.Skip("no ip_local_port_range on this system")
	}
	assert.Positive(t, outgoing.low)
	assert.GreaterOrEqual(t, outgoing.high, outgoing.low)
}
