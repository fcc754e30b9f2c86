package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// A computer's directory (ComputerDir) outlives its state in the gateway (idle.go): when the
// computer asks again, its conversations go on from there. With the shared password a player
// can say hello under ever new traposIds, each asking once, so an account keeps at most
// Config.MaxDirs computers' directories: a new computer's directory past it takes the place of
// the account's least recently used one, whose conversations are deleted on opencode first
// and whose pass goes with it (the computer gets a new one, and a new conversation, if it
// asks again). Only a directory of a computer this gateway holds no state for, last used
// Config.TurnDeadline + Config.IdleAfter ago or more, is taken: its last turn has ended and
// its state gone on every gateway sharing the agent's directory. With none such, the new
// computer's question is busy. A computer's last use is its
// directory's modification time, set to the gateway's clock at each question (touchDir).

// DefaultMaxDirs is the most computers' directories an account keeps (--ai-max-dirs): five
// times DefaultMaxComputers, each a file under 1 KB and its conversations in opencode's
// storage.
const DefaultMaxDirs = 5 * DefaultMaxComputers

// errTooManyDirs is a new computer's question while its account has Config.MaxDirs
// directories, each used too recently to go.
var errTooManyDirs = errors.New("the account has as many computers' directories as --ai-max-dirs, each used too recently to go")

// dirRoomError is an opencode failure while deleting the conversations of the directory a new
// computer's was to replace: the question answers it as any other opencode failure.
type dirRoomError struct{ err error }

func (e *dirRoomError) Error() string { return e.err.Error() }
func (e *dirRoomError) Unwrap() error { return e.err }

// touchDir marks the computer's directory used now (the Module's clock): the least recently
// used directory is the one makeDirRoom removes. The directory's own time, not its
// opencode.json's: opencode reads that file, and it stays as the gateway wrote it.
func (m *Module) touchDir(dir string) {
	now := m.cfg.Clock.Now()
	_ = os.Chtimes(dir, now, now) // a directory not touched looks older than it is
}

// lastUsed is when the computer of directory dir last asked (touchDir).
func lastUsed(dir string) (time.Time, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return time.Time{}, err
	}
	return info.ModTime(), nil
}

// makeDirRoom makes room for the directory of computer k, about to be made, among its
// account's: with Config.MaxDirs there, the least recently used one that may go (see above)
// is removed, its conversations deleted on opencode first, and the removal logged. A surplus
// (a bound lowered since) is not cut: each new directory takes one's place. Called with k's
// account mutex held, so no other directory of the account is made meanwhile.
func (m *Module) makeDirRoom(ctx context.Context, k callerKey) error {
	accountDir := filepath.Join(m.cfg.Dir, computersDir, pathName(k.account))
	entries, err := os.ReadDir(accountDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list the agent's %s: %w", accountDir, err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(accountDir, e.Name()))
		}
	}
	if len(dirs) < m.cfg.MaxDirs {
		return nil
	}
	held := map[string]bool{}
	m.placeMu.Lock()
	for key, pl := range m.places {
		held[pl.dir] = true
		held[ComputerDir(m.cfg.Dir, key.account, key.traposID)] = true
	}
	for key := range m.releasing {
		held[ComputerDir(m.cfg.Dir, key.account, key.traposID)] = true
	}
	m.placeMu.Unlock()
	// The last turn ended, and the state went, on every gateway sharing the directory.
	before := m.cfg.Clock.Now().Add(-m.cfg.TurnDeadline - m.cfg.IdleAfter)
	var oldest string
	var oldestUsed time.Time
	for _, dir := range dirs {
		used, err := lastUsed(dir)
		if err != nil || held[dir] || used.After(before) {
			continue
		}
		if oldest == "" || used.Before(oldestUsed) {
			oldest, oldestUsed = dir, used
		}
	}
	if oldest == "" {
		return errTooManyDirs
	}
	n, err := m.forgetConversations(ctx, m.oc.in(oldest))
	if err != nil {
		return &dirRoomError{err}
	}
	if err := os.RemoveAll(oldest); err != nil {
		return fmt.Errorf("remove the agent's %s: %w", oldest, err)
	}
	m.log.Info("agent: the least recently used computer's directory was removed, with its conversations, to make room for a new computer's (--ai-max-dirs)",
		"account", k.account, "directory", filepath.Base(oldest), "lastUsed", oldestUsed.UTC().Format(time.RFC3339),
		"conversations", n, "maxDirs", m.cfg.MaxDirs)
	return nil
}
