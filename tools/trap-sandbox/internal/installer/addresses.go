package installer

import (
	"log/slog"
	"net"
	"strconv"
)

// ComputerBases are the base URLs computers should use for a gateway listening on addr: the
// public URL when set; else addr's own IP, or for an unspecified IP (":4444") every
// non-loopback, non-link-local address of the machine (ifaceAddrs, from net.InterfaceAddrs).
// Loopback addresses are used only when nothing else is left (a gateway bound to 127.0.0.1).
func ComputerBases(addr net.Addr, public *Base, ifaceAddrs []net.Addr) []Base {
	if public != nil {
		return []Base{*public}
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return nil
	}
	port := strconv.Itoa(tcp.Port)
	var ips []net.IP
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		for _, a := range ifaceAddrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				// Computers on a ":4444" IPv4 socket reach it by IPv4; skip v6 when listening on 0.0.0.0.
				if tcp.IP != nil && tcp.IP.To4() != nil && n.IP.To4() == nil {
					continue
				}
				ips = append(ips, n.IP)
			}
		}
		if len(ips) == 0 {
			ips = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
	} else {
		ips = []net.IP{tcp.IP}
	}
	bases := make([]Base, 0, len(ips))
	for _, ip := range ips {
		b, err := BaseFromHost(net.JoinHostPort(ip.String(), port))
		if err == nil {
			bases = append(bases, b)
		}
	}
	return bases
}

// LogAddresses logs, once at start, what a player types: the ws URL and the install line for
// every base URL computers can reach the gateway at.
func LogAddresses(logger *slog.Logger, bases []Base) {
	for _, b := range bases {
		logger.Info("computers connect here", "url", b.WebSocket(), "install", b.InstallCommand())
	}
}
