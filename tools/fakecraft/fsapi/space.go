package fsapi

import (
	"io/fs"
	"path/filepath"
)

// Space accounting, as CC: Tweaked does it: every writable mount has a capacity, and every
// file and directory on it costs its size but at least minimumFileSize. The union of
// mounts (fs.go) asks how much is free before it grows anything, and tells the accounting
// when a change it did not charge (a delete, a new file or directory) made it stale.

const (
	// RootCapacity is the size of a computer's own drive in bytes (CC's default
	// computer_space_limit).
	RootCapacity = 1_000_000
	// MountCapacity is the size of any other writable mount in bytes (CC's default
	// floppy_space_limit).
	MountCapacity = 125_000
	// minimumFileSize is what every file and directory costs at least, as in CC, so that
	// empty files cannot fill nothing forever.
	minimumFileSize = 500
)

// space is one mount's accounting: its capacity and the bytes in use, measured on demand
// (usedSpace) and kept up to date by writes (charge) until a change makes it stale
// (forget). The FS's mu guards it.
type space struct {
	capacity int64
	used     int64 // bytes in use by CC's accounting; -1 until measured
}

func newSpace(capacity int64) space { return space{capacity: capacity, used: -1} }

// forget drops the measured use after a change the accounting did not follow; the next
// question measures the mount again.
func (s *space) forget() { s.used = -1 }

// usedSpace measures a writable mount as CC does: every file and directory (the mount's
// own root included) costs at least minimumFileSize bytes.
func (m *mountPoint) usedSpace() int64 {
	if m.used >= 0 {
		return m.used
	}
	var walk func(local string) int64
	walk = func(local string) int64 {
		e := m.stat(local)
		if !e.dir {
			return max(e.size, minimumFileSize)
		}
		total := int64(minimumFileSize)
		names := map[string]bool{}
		m.list(local, names)
		for n := range names {
			total += walk(join(local, n))
		}
		return total
	}
	m.used = walk("")
	return m.used
}

// free is what is left of a writable mount. CC charges the mount's root directory too, but
// grants its minimumFileSize on top of the capacity, so an empty drive has all of its
// capacity free.
func (m *mountPoint) free() int64 {
	if m.upper == nil {
		return 0
	}
	return max(m.capacity+minimumFileSize-m.usedSpace(), 0)
}

// charge adds delta bytes, about to be written, to the mount's use.
func (m *mountPoint) charge(delta int64) { m.used = m.usedSpace() + delta }

// HostCost is what the host file or directory at path would cost a drive by CC's accounting
// (usedSpace's rule: every file and directory at least minimumFileSize).
func HostCost(path string) (int64, error) {
	var total int64
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		size := int64(0)
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			size = info.Size()
		}
		total += max(size, minimumFileSize)
		return nil
	})
	return total, err
}

// SetRootCapacity sets the size in bytes of the computer's own drive: CC's server config
// computer_space_limit, RootCapacity by default.
func (f *FS) SetRootCapacity(capacity int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.mounts {
		if m.at == "" {
			m.capacity = capacity
		}
	}
}
