//go:build unix

package account

import (
	"errors"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// fileOwner names path's owner (its uid when the name is unknown), or "" when it cannot be
// read.
func fileOwner(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return userName(strconv.FormatUint(uint64(st.Uid), 10))
}

// currentUser names the user this process runs as.
func currentUser() string { return userName(strconv.Itoa(os.Getuid())) }

func userName(uid string) string {
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "uid " + uid
}

// readOnlyFS reports whether err is the file system being mounted read-only (EROFS).
func readOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

// noSpace reports whether err is the file system out of room (ENOSPC).
func noSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }
