package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// checkListen refuses a value of the listen flag named flag ("listen", "computers-listen")
// that is no host:port before anything starts: a bare port (4444) or a URL (http://…:4444),
// which Go's listener refused as "missing port in address" or "too many colons in address".
func checkListen(flag, addr string) error {
	if err := untrimmed(flag, addr); err != nil {
		return err
	}
	port := examplePort(flag)
	if strings.Contains(addr, "://") {
		return fmt.Errorf("%s %q: want host:port, not a URL (:%s listens on every interface, 127.0.0.1:%s on this host only)", flagAndEnv(flag), addr, port, port)
	}
	_, addrPort, err := net.SplitHostPort(addr)
	if err != nil {
		if _, err := strconv.Atoi(addr); err == nil {
			return fmt.Errorf("%s %q: want host:port: :%s listens on every interface, 127.0.0.1:%s on this host only", flagAndEnv(flag), addr, addr, addr)
		}
		return fmt.Errorf("%s %q: want host:port (:%s listens on every interface, 127.0.0.1:%s on this host only)", flagAndEnv(flag), addr, port, port)
	}
	// The listener would say only "address 99999: invalid port" or "lookup tcp/abc: unknown
	// port"; an empty port is Go's free one, as 0.
	if _, err := net.LookupPort("tcp", addrPort); addrPort != "" && err != nil {
		return fmt.Errorf("%s %q: the port must be a number from 0 to 65535 (:%s listens on every interface, 127.0.0.1:%s on this host only)", flagAndEnv(flag), addr, port, port)
	}
	return nil
}

// examplePort is the port the messages about a listen flag give as an example: the docs'
// (docs/user-guide.md).
func examplePort(flag string) string {
	if flag == "computers-listen" {
		return "4445"
	}
	return "4444"
}

// checkComputersListen refuses a --computers-listen that would take --listen's own port: the
// second bind would fail as if another program held it, and one port cannot be both the
// API's and a computers-only one. A host name is compared by the address a listener on it
// takes (localhost:4444 is 127.0.0.1:4444).
func checkComputersListen(listen, computers string) error {
	lHost, lPort, _ := net.SplitHostPort(listen)
	cHost, cPort, _ := net.SplitHostPort(computers)
	if lPort != cPort || lPort == "0" || !sameListenHost(lHost, cHost) {
		return nil
	}
	return fmt.Errorf("%s %q takes the port of --listen %q: the computers-only port must be another one, e.g. 127.0.0.1:%s (CC's http rules then allow it, not --listen's)",
		flagAndEnv("computers-listen"), computers, listen, examplePort("computers-listen"))
}

// sameListenHost says whether listeners on hosts a and b (of the same port) would take the
// same address: the same host, one of them every interface, or two names of one address. A
// name that does not resolve is left to the listener to refuse.
func sameListenHost(a, b string) bool {
	if a == b || everyInterface(a) || everyInterface(b) {
		return true
	}
	// The address a listener on a name takes: the first of its addresses, IPv4 first, as
	// net.Listen picks it.
	aAddr, aErr := net.ResolveTCPAddr("tcp", net.JoinHostPort(a, "0"))
	bAddr, bErr := net.ResolveTCPAddr("tcp", net.JoinHostPort(b, "0"))
	return aErr == nil && bErr == nil && aAddr.IP.Equal(bAddr.IP)
}

// everyInterface says whether a listen address's host stands for every interface (":4444",
// "0.0.0.0:4444", "[::]:4444").
func everyInterface(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// somethingListens says whether a connection to port on host (this host's loopback for an
// address of every interface) is accepted: a port in use by a listener, not by the local end
// of a connection, which the system refuses to bind the same way.
func somethingListens(host, port string) bool {
	if everyInterface(host) {
		host = "127.0.0.1"
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// outgoingPorts is the range of ports the system gives outgoing connections (Linux's
// ip_local_port_range) and the ports it keeps out of it (ip_local_reserved_ports: a comma list
// of ports and low-high ranges). A listener's port in the range, not reserved, may be the
// local end of an outgoing connection when the gateway starts, and bind then fails.
type outgoingPorts struct {
	low, high int
	reserved  string
}

// systemOutgoingPorts reads this host's outgoing ports; ok is false where there is no such
// file (not Linux).
func systemOutgoingPorts() (outgoing outgoingPorts, ok bool) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return outgoingPorts{}, false
	}
	lowHigh := strings.Fields(string(data))
	if len(lowHigh) != 2 {
		return outgoingPorts{}, false
	}
	low, errLow := strconv.Atoi(lowHigh[0])
	high, errHigh := strconv.Atoi(lowHigh[1])
	if errLow != nil || errHigh != nil {
		return outgoingPorts{}, false
	}
	reserved, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_reserved_ports")
	return outgoingPorts{low: low, high: high, reserved: strings.TrimSpace(string(reserved))}, true
}

// holds says whether an outgoing connection may take port.
func (o outgoingPorts) holds(port int) bool {
	if port < o.low || port > o.high {
		return false
	}
	for part := range strings.SplitSeq(o.reserved, ",") {
		from, to, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			to = from
		}
		low, errLow := strconv.Atoi(from)
		high, errHigh := strconv.Atoi(to)
		if errLow == nil && errHigh == nil && low <= port && port <= high {
			return false
		}
	}
	return true
}

// outgoingPortsHint names the range of ports the system gives outgoing connections, where a
// listener's port may be taken by one (nothing where the system does not say).
func outgoingPortsHint() string {
	outgoing, ok := systemOutgoingPorts()
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (this host gives ports %d to %d to outgoing connections: choose one outside them)", outgoing.low, outgoing.high)
}

// warnIfPortIsOutgoing warns at start when the port of addr, the listen flag named flag, is
// one outgoing's connections may take: it listens now, but a restart fails (listenError)
// whenever an outgoing connection holds it, at random on a busy host.
func warnIfPortIsOutgoing(logger *slog.Logger, flag, addr string, outgoing outgoingPorts) {
	_, p, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil || port == 0 || !outgoing.holds(port) {
		return
	}
	reserve := p // added to the ports reserved already, which the sysctl replaces
	if outgoing.reserved != "" {
		reserve = outgoing.reserved + "," + p
	}
	logger.Warn(fmt.Sprintf("%s port %d is among the ports this host gives outgoing connections (%d to %d): a restart fails whenever one of them holds it as its own end; "+
		"give a port below %d, or reserve this one (sysctl -w net.ipv4.ip_local_reserved_ports=%s, and in /etc/sysctl.d to keep it)",
		flagAndEnv(flag), port, outgoing.low, outgoing.high, outgoing.low, reserve))
}

// listenError says what to do about a listener of the flag named flag that could not be opened on addr, for the
// reasons an operator meets: Go's own words repeat the address and name the system call
// ("listen tcp 127.0.0.1:4444: bind: address already in use").
func listenError(flag, addr string, err error) error {
	host, port, _ := net.SplitHostPort(addr)
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok {
		// Go's words name the resolver's address and not the flag ("listen tcp: lookup
		// nosuchhost on 10.0.0.53:53: no such host").
		why := "this host's resolver knows no host " + host
		if !dnsErr.IsNotFound {
			why = "this host's resolver could not look up " + host + " (" + dnsErr.Err + ")"
		}
		return fmt.Errorf("%s %q: %s: give one of this host's addresses (ip addr lists them), :%s for every interface, or 127.0.0.1:%s for this host only",
			flagAndEnv(flag), addr, why, port, port)
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		if !somethingListens(host, port) {
			return fmt.Errorf("listen on %s: no program listens there, but a connection of this host holds the port as its own end%s: give another port with %s",
				addr, outgoingPortsHint(), flagAndEnv(flag))
		}
		return fmt.Errorf("listen on %s: another program already listens there (another trap-sandbox?): stop it, or give another port with %s", addr, flagAndEnv(flag))
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("listen on %s: %s is not an address of this host: give %s one of its own (ip addr lists them), or :%s for every interface", addr, host, flagAndEnv(flag), port)
	case errors.Is(err, syscall.EACCES):
		if n, perr := strconv.Atoi(port); perr == nil && n > 0 && n < 1024 {
			return fmt.Errorf("listen on %s: a port below 1024 needs root (or CAP_NET_BIND_SERVICE): give a higher one with %s, e.g. :%s", addr, flagAndEnv(flag), examplePort(flag))
		}
	}
	return fmt.Errorf("listen on %s: %w", addr, err)
}
