//go:build !linux

package console

import "errors"

// errUnsupported: raw mode is written for Linux's termios only.
var errUnsupported = errors.New("fakecraft shell needs Linux")

// MakeRaw is not supported on this system.
func MakeRaw(int) (func() error, error) { return nil, errUnsupported }

// IsTerminal is not known on this system: true, so MakeRaw says what is missing.
func IsTerminal(int) bool { return true }

// Size is not supported on this system.
func Size(int) (int, int, error) { return 0, 0, errUnsupported }

// NotifyResize does nothing on this system.
func NotifyResize(func()) (stop func()) { return func() {} }
