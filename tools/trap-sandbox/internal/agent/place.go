package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"trap-sandbox/internal/account"
)

// A computer's place at opencode: a directory of its own under the agent's directory, whose
// opencode.json connects opencode to the gateway's /mcp with the computer's own pass
// (account.Passes). opencode scopes an instance, its MCP connection and its sessions by
// directory, so every tool call of this computer's conversations reaches the gateway as this
// computer's account, limited to this computer, whatever traposId the call names: a
// computer of another account with the same traposId, or another computer of the same
// account, is out of its reach at the gateway itself.

// computersDir holds the computers' directories, one per account and computer.
const computersDir = "computers"

// place is one computer's directory and the opencode client that names it.
type place struct {
	dir  string
	oc   *client
	pass string
	// lastUsed and users (the requests using it now) are guarded by Module.mu (idle.go).
	lastUsed time.Time
	users    int
	// prompted is the opencode run (stream.opencodeRun) in which this computer's instance last
	// took a prompt: in another run its first prompt waits while opencode loads the instance
	// (8 to 17 s in opencode 1.18.33), and the player is told so (KindStarting).
	prompted atomic.Uint64
}

// ComputerDir is the directory of the computer traposID of accountID under the agent's
// directory root: root/computers/ACCOUNT/TRAPOSID, each escaped (pathName).
func ComputerDir(root, accountID, traposID string) string {
	return filepath.Join(root, computersDir, pathName(accountID), pathName(traposID))
}

// pathName is s as one path element on any system: a-z, 0-9 and '-' stay, every other byte is
// _xx in lower-case hex ("7:Kitchen" is "7_3a_4bitchen"), so no name is "." or "..", holds a
// separator, differs only in case (macOS, Windows), or holds a '%': opencode 1.18.33 decodes
// its ?directory= once more than the query needs, so "7%3Adesk" would be read as "7:desk".
// A name that comes out longer than a file system takes (maxPathName) is cut, and ends in
// "_h" and the SHA-256 of s: a traposId may have 256 bytes, a label of 43 accented letters
// escapes to more than 255, and its computer could never ask. Two different names never meet:
// an escape's '_' is followed by two hex digits, never by 'h'.
func pathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	name := b.String()
	if len(name) <= maxPathName {
		return name // as before: a directory made by an earlier gateway keeps its name
	}
	sum := sha256.Sum256([]byte(s))
	suffix := "_h" + hex.EncodeToString(sum[:])
	keep := maxPathName - len(suffix)
	if i := strings.LastIndexByte(name[:keep], '_'); i > keep-3 {
		keep = i // not inside an escape, so the suffix's '_' starts an escape's place
	}
	return name[:keep] + suffix
}

// maxPathName is the most bytes a name may have on the file systems the agent's directory
// lives on (NAME_MAX: ext4, XFS, btrfs, APFS).
const maxPathName = 255

// placeOf returns the computer's place, preparing it on the computer's first question since
// the gateway started: its account's directory is claimed for the account (claimAccount), its
// directory's opencode.json is written again (the model, the MCP URL and the rules of this
// start) with the pass it already holds, or a new one, and the pass is granted. Keeping the
// pass across restarts matters: an opencode instance keeps the configuration it read when it
// started, so a running instance still gets in after the gateway restarts.
func (m *Module) placeOf(ctx context.Context, k callerKey) (*place, error) {
	m.janitorOnce.Do(func() {
		// Started by the first computer's question: a gateway no computer asks runs none.
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.janitor(m.ctx)
		}()
	})
	m.placeMu.Lock()
	if p := m.places[k]; p != nil && k.created == 0 {
		m.enterLocked(p)
		m.placeMu.Unlock()
		m.touchDir(p.dir)
		return p, nil
	}
	mu := m.accountMu[k.account]
	if mu == nil {
		mu = &sync.Mutex{}
		m.accountMu[k.account] = mu
	}
	m.placeMu.Unlock()
	// One account's preparation at a time (it may wait on opencode), others' meanwhile.
	mu.Lock()
	defer mu.Unlock()
	// Checked at every question, a cached place's too: another replica on the same ai dir may
	// have claimed the directory for an account made since (one read of a small file).
	if err := m.claimAccount(ctx, k); err != nil {
		return nil, err
	}
	m.placeMu.Lock()
	p := m.places[k]
	if p != nil {
		m.enterLocked(p)
	}
	m.placeMu.Unlock()
	if p != nil {
		m.touchDir(p.dir)
		return p, nil
	}
	// Its state was released a moment ago: the new instance must not meet the old one's dispose.
	if err := m.waitReleased(ctx, k); err != nil {
		return nil, err
	}
	dir := ComputerDir(m.cfg.Dir, k.account, k.traposID)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		// A new computer's directory: room for it among its account's (dirs.go).
		if err := m.makeDirRoom(ctx, k); err != nil {
			return nil, err
		}
	}
	// Room for one more computer, before anything is written for it.
	m.placeMu.Lock()
	err := m.makeRoomLocked()
	m.placeMu.Unlock()
	if err != nil {
		return nil, err
	}
	pass := readPass(dir)
	if pass == "" {
		pass = account.NewPass()
	}
	if err := WriteSessionDir(dir, m.cfg.Model, m.cfg.MCPURL, pass, m.rules); err != nil {
		return nil, err
	}
	m.touchDir(dir)
	p = &place{dir: dir, oc: m.oc.in(dir), pass: pass}
	m.placeMu.Lock()
	defer m.placeMu.Unlock()
	m.passes.Grant(pass, account.Caller{Account: k.account, Only: k.traposID})
	m.places[k] = p
	m.metrics.computers(len(m.places))
	m.enterLocked(p)
	return p, nil
}

// AccountFile is the file in an account's directory (computers/ACCOUNT/) that names the
// account its computers' directories are of: its creation stamp (RFC 3339) on the first line,
// then those of the removed accounts of that name it was of before, the latest first (at most
// maxRemovedStamps). No computer's directory can have its name: pathName escapes '.'.
const AccountFile = ".account"

// maxRemovedStamps bounds the removed accounts' stamps AccountFile keeps.
const maxRemovedStamps = 64

// errRemovedAccount is a question of a computer of a removed account whose name a newer
// account has claimed since (AccountFile lists its stamp among the removed ones): a computer
// whose socket outlived the removal (a replica cut off from NATS has not heard of it).
var errRemovedAccount = errors.New("the computer's account was removed, and its name claimed by a newer account")

// opencodeError is an opencode failure while claiming an account's directory: the ask
// answers it as any other opencode failure.
type opencodeError struct{ err error }

func (e *opencodeError) Error() string { return e.err.Error() }
func (e *opencodeError) Unwrap() error { return e.err }

// claimAccount makes the account's directory the account k's (an account with a creation
// stamp; the shared password has none, and its directory is everyone's on it, as before).
// AccountFile names whose it is. Missing (a directory of a trap-sandbox before stamps, or a
// new one): it is taken as the account's, conversations and all, so an upgrade loses nothing.
// The account's: nothing to do. Another account's (one removed, whose name was given to a new
// account): every conversation in its computers' directories is deleted on opencode, and only
// then the file names the new account; a failure leaves it naming the old one, so the next
// question tries again (after a gateway restart too) and never continues the old
// conversations. A removed account's (its stamp listed after the first line): refused with
// errRemovedAccount, so that a computer of the removed account never continues the new one's
// conversations (they share titles) nor deletes them by claiming the name back; stamps are
// only ever compared for equality, never ordered (they come from different clocks). The
// computers' passes stay: a pass opens only its computer of this account name, and opencode's
// running instance for the directory keeps the one it read (a new one would lock the new
// account's tools out until opencode restarts); the pass is the host's, never a player's.
func (m *Module) claimAccount(ctx context.Context, k callerKey) error {
	if k.created == 0 {
		return nil
	}
	dir := filepath.Join(m.cfg.Dir, computersDir, pathName(k.account))
	stamp := time.Unix(0, k.created).UTC()
	current, removed, err := readAccountFile(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeAccountFile(dir, stamp, nil)
	case err != nil:
		return err
	case current.Equal(stamp):
		return nil
	case slices.ContainsFunc(removed, stamp.Equal):
		return errRemovedAccount
	}
	// Another account's (or a file that is not one: not trusted either).
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list the agent's %s: %w", dir, err)
	}
	forgotten := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n, err := m.forgetConversations(ctx, m.oc.in(filepath.Join(dir, e.Name())))
		if err != nil {
			return &opencodeError{err}
		}
		forgotten += n
	}
	// The removed account's places and sessions, if this gateway still holds them, are no one's.
	m.placeMu.Lock()
	for key := range m.places {
		if key.account == k.account && key.created != k.created {
			delete(m.places, key)
		}
	}
	m.metrics.computers(len(m.places))
	m.placeMu.Unlock()
	m.mu.Lock()
	for key, s := range m.sessions {
		if key.account == k.account && key.created != k.created && s.busy == nil {
			delete(m.sessions, key)
		}
	}
	m.mu.Unlock()
	if !current.IsZero() {
		removed = append([]time.Time{current}, removed...)
	}
	if err := writeAccountFile(dir, stamp, removed[:min(len(removed), maxRemovedStamps)]); err != nil {
		return err
	}
	m.log.Info("agent: an account of a removed account's name asked: the removed account's conversations were deleted on opencode",
		"account", k.account, "conversations", forgotten)
	return nil
}

// forgetConversations deletes every conversation in oc's directory on opencode and returns
// how many there were. The list may be cut (a limit of opencode's), so it is read again
// until it is empty.
func (m *Module) forgetConversations(ctx context.Context, oc *client) (int, error) {
	deleted := map[string]bool{}
	for {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		list, err := oc.listSessions(cctx)
		if err != nil {
			cancel()
			return 0, err
		}
		fresh := 0
		for _, s := range list {
			if deleted[s.ID] {
				continue
			}
			var ae *apiError
			if err := oc.deleteSession(cctx, s.ID); err != nil && !(errors.As(err, &ae) && ae.status == http.StatusNotFound) {
				cancel()
				return 0, err
			}
			deleted[s.ID] = true
			fresh++
		}
		cancel()
		if fresh == 0 {
			if len(list) > 0 {
				return 0, fmt.Errorf("opencode still lists %d deleted conversations in %s", len(list), oc.dir)
			}
			return len(deleted), nil
		}
	}
}

// readAccountFile reads the account directory dir's AccountFile: the stamp of the account it
// is of (zero when the first line is no stamp: not trusted) and those of the removed accounts
// it was of (lines that are no stamp are skipped). A missing file is fs.ErrNotExist.
func readAccountFile(dir string) (current time.Time, removed []time.Time, err error) {
	data, err := os.ReadFile(filepath.Join(dir, AccountFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return time.Time{}, nil, err
		}
		return time.Time{}, nil, fmt.Errorf("read the agent's %s: %w", AccountFile, err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(line))
		switch {
		case i == 0:
			current = t // zero when it is no stamp
		case err == nil:
			removed = append(removed, t)
		}
	}
	return current, removed, nil
}

// writeAccountFile names the account of the account's directory dir (created if missing),
// and the removed accounts it was of: atomically, so a reader never sees half a stamp.
func writeAccountFile(dir string, stamp time.Time, removed []time.Time) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the agent's directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, AccountFile+"-*")
	if err != nil {
		return fmt.Errorf("write the agent's %s: %w", AccountFile, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	var b strings.Builder
	for _, t := range append([]time.Time{stamp}, removed...) {
		b.WriteString(t.UTC().Format(time.RFC3339Nano) + "\n")
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("write the agent's %s: %w", AccountFile, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the agent's %s: %w", AccountFile, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, AccountFile)); err != nil {
		return fmt.Errorf("write the agent's %s: %w", AccountFile, err)
	}
	return nil
}

// readPass returns the pass the directory's opencode.json carries, or "" when there is none
// that has a pass's shape (no file yet, or one written by something else).
func readPass(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return ""
	}
	var cfg struct {
		MCP map[string]struct {
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return ""
	}
	pass, _ := strings.CutPrefix(cfg.MCP[MCPName].Headers["Authorization"], "Bearer ")
	if !account.IsPass(pass) {
		return ""
	}
	return pass
}
