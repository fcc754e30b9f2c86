//go:build !linux

package gateway

import "net"

// sendBufferEmpty cannot ask the kernel here: every host request's frame goes through the
// send queue's writer goroutine.
func sendBufferEmpty(net.Conn) bool { return false }
