//go:build unix

package opencodefake

import (
	"net"
	"strconv"
	"syscall"
)

// reservePort binds a TCP socket to a free loopback port without listening on it. A
// connection there is refused (no listener), and as the socket is bound without SO_REUSEADDR
// the kernel lets no other socket bind the port, nor picks it as a connection's local port,
// until it is closed. (A listener bound and closed again frees the port at once: another
// process's listener could take it, and the "down" opencode would answer.)
func reservePort() (string, func(), error) {
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return "", nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return "", nil, err
	}
	port := sa.(*syscall.SockaddrInet4).Port
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), func() { _ = syscall.Close(fd) }, nil
}
