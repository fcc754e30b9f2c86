//go:build unix

package cli

import "syscall"

// openFilesLimit is the process's open-files limit (Go raises the soft limit to the hard one
// at start), or false when it cannot be read.
func openFilesLimit() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return l.Cur, true
}
