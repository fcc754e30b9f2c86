//go:build !unix

package opencodefake

import "net"

// reservePort, where a bound socket that does not listen is not at hand: a port bound and
// released, which another listener may take before the test dials it.
func reservePort() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", nil, err
	}
	return addr, func() {}, nil
}
