package gateway

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// sendBufferEmpty reports whether the kernel holds none of c's outgoing bytes: everything
// written so far was acknowledged by the peer (SIOCOUTQ is 0), so the socket's send buffer
// is empty and a small write completes without waiting. A computer that stopped reading
// leaves its bytes unacknowledged once its receive window is full. False when it cannot
// tell (not a TCP socket, the ioctl failed).
func sendBufferEmpty(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	queued := -1
	if raw.Control(func(fd uintptr) {
		if n, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ); err == nil {
			queued = n
		}
	}) != nil {
		return false
	}
	return queued == 0
}
