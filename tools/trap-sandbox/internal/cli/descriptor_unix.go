//go:build unix

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// descriptorOf is the number of this process's open descriptor that a local name reaches
// through the system's descriptor links (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N), and whether it names one. Such a name is a file the caller's shell opened
// (get … /dev/stdout >> log): it is written through that descriptor, where the shell left it,
// and never replaced by a rename, which dropped what the shell had written to the file before
// and left what it wrote after going to a deleted file.
func descriptorOf(name string) (int, bool) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return 0, false
	}
	switch abs {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if rest, ok := strings.CutPrefix(abs, dir); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// takeDescriptor is a copy of the open descriptor fd, to write to (sharing its offset) and
// close: one the shell opens for writing, a file, a pipe, a device or a socket. Go's runtime
// holds descriptors of its own in every process from its start (an epoll, an eventfd, cgroup
// files read for GOMAXPROCS), none of them such a one, and they are refused with a number the
// shell left closed.
func takeDescriptor(fd int) (*os.File, error) {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil, err
	}
	if mode := flags & unix.O_ACCMODE; mode != unix.O_WRONLY && mode != unix.O_RDWR {
		return nil, errors.New("it is not open for writing")
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFIFO, unix.S_IFCHR, unix.S_IFSOCK:
	default: // an epoll or an eventfd has no type at all
		return nil, errors.New("it is neither a file, a pipe, a device nor a socket")
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(dup)
	return os.NewFile(uintptr(dup), ""), nil
}
