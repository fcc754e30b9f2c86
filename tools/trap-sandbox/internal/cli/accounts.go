package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/accountapi"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/cluster"
	"trap-sandbox/internal/table"
)

// DataDirFlags locate the gateway's data directory (the account store, accounts.db).
type DataDirFlags struct {
	DataDir string `name:"data-dir" env:"SANDBOX_DATA_DIR" help:"The gateway's data directory (accounts, tokens, computer credentials); default: the user's data directory, e.g. ~/.local/share/trap-sandbox."`
}

// check refuses a --data-dir that only a shell would have made a path (unexpanded).
func (f DataDirFlags) check() error {
	if f.DataDir == "" {
		return nil
	}
	return unexpanded("data-dir", f.DataDir)
}

// dir returns --data-dir, or the per-user default.
func (f DataDirFlags) dir() (string, error) {
	if f.DataDir != "" {
		if err := f.check(); err != nil {
			return "", err
		}
		return f.DataDir, nil
	}
	return DefaultDataDir()
}

// open opens the SQLite account store in the data directory, for the gateway or a command
// run on its host (SQLite lets it write beside a running gateway). It creates the store when
// it is missing only if create says so (the gateway, accounts add); else a missing store is
// the one line that says where it looked and what to do (account.OpenExistingSQLite says why).
// A store of an older schema is upgraded, which upgraded says on stderr.
func (f DataDirFlags) open(ctx context.Context, create bool) (*account.Accounts, *account.SQLite, error) {
	dir, err := f.dir()
	if err != nil {
		return nil, nil, err
	}
	open := account.OpenExistingSQLite
	if create {
		open = account.OpenSQLite
	}
	s, err := open(ctx, dir)
	if err != nil {
		return nil, nil, f.storeError(err, "run this as the gateway's user, or reach a running gateway with --url and --api-token")
	}
	return account.New(s, clock.Real{}), s, nil
}

// storeError words an error of opening (or copying) the store in the data directory: a
// missing store with where the gateway keeps it and what else to do (orElse: reach a running
// gateway, for the commands that can), any other with where the directory came from.
func (f DataDirFlags) storeError(err error, orElse string) error {
	if errors.Is(err, account.ErrNoStore) {
		return fmt.Errorf("%w: the gateway keeps it in its data directory; give the same --data-dir (SANDBOX_DATA_DIR) as the gateway, %s", err, orElse)
	}
	// Name where the directory came from: a store in the default place was never given.
	from := "--data-dir"
	if f.DataDir == "" {
		from = "the default data directory; --data-dir gives another"
	}
	return fmt.Errorf("the account store (%s): %w", from, err)
}

// upgraded says on stderr that opening the store upgraded it (an account command run with
// a newer trap-sandbox than the gateway's, on its host): the gateway's trap-sandbox no longer
// opens it.
func upgraded(stderr io.Writer, s *account.SQLite) {
	if from := s.UpgradedFrom(); from > 0 {
		fmt.Fprintf(stderr, "trap-sandbox: upgraded the account store %s from schema %d to %d: an older trap-sandbox no longer opens it (a gateway of one running on it goes on, but does not start on it again; docs/accounts.md, Upgrading trap-sandbox)\n",
			s.Path(), from, account.SchemaVersion())
	}
}

// storeLeftUnread is the data directory's account store, which a replica does not read (its
// accounts are in NATS), or "" when there is none (or no data directory to look in).
func (f DataDirFlags) storeLeftUnread() string {
	dir, err := f.dir()
	if err != nil {
		return ""
	}
	path := filepath.Join(dir, account.DBFile)
	if _, err := os.Lstat(path); err != nil && !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	return path
}

// defaultStoreExists says whether the default data directory holds an account store.
func defaultStoreExists() bool {
	dir, err := DefaultDataDir()
	if err != nil {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, account.DBFile))
	return err == nil || errors.Is(err, fs.ErrPermission) // not ours to read: there all the same
}

// StoreFlags locate the account store for the account commands: the data directory, or
// with --nats the key-value bucket the replicas share.
type StoreFlags struct {
	DataDirFlags
	NATSFlags
	// nc is the connection to the bucket under --nats (set by open), on which a revocation is
	// announced to the running replicas.
	nc *nats.Conn
	// upgradedFrom is the data directory's schema before open upgraded it (0: it did not).
	upgradedFrom int
}

// open opens the store and returns Accounts on it, where it is (for messages) and how to
// close it. Either store is created when missing only if create says so (accounts add: a
// store starts with its first account). After NATS lost its store, any other command would put
// an empty bucket in the lost one's place (account.OpenExistingKV); in the data directory, it
// would leave an empty store where the gateway's is not (another user's home, a forgotten
// --data-dir) and answer from it as if the gateway had no accounts. So a new data directory
// store is said on stderr with its path: one made in the wrong place is seen at once.
func (f *StoreFlags) open(ctx context.Context, stderr io.Writer, create bool) (*account.Accounts, string, func(), error) {
	if set := f.NATSFlags.setWithoutURL(); len(set) > 0 {
		// Meant for the replicas' bucket, the command would read or change the data
		// directory's store instead, which no replica reads.
		return nil, "", nil, fmt.Errorf("%s set without --nats (SANDBOX_NATS_URL): give --nats too to reach the replicas' accounts, or leave them out to use the data directory's store", strings.Join(set, ", "))
	}
	if !f.NATSFlags.enabled() {
		accounts, s, err := f.DataDirFlags.open(ctx, create)
		if err != nil {
			return nil, "", nil, err
		}
		if s.Created() {
			fmt.Fprintf(stderr, "trap-sandbox: created the account store %s (there was none): a gateway knows its accounts only if it runs on this data directory\n", s.Path())
		}
		upgraded(stderr, s)
		f.upgradedFrom = s.UpgradedFrom()
		return accounts, s.Path(), func() {
			if err := s.Close(); errors.Is(err, account.ErrWALKept) {
				fmt.Fprintf(stderr, "trap-sandbox: %v\n", err)
			}
		}, nil
	}
	logger := slog.New(slog.DiscardHandler)
	nc, err := f.NATSFlags.connect(ctx, "trap-sandbox accounts", false, logger)
	if err != nil {
		return nil, "", nil, err
	}
	kv, err := f.NATSFlags.accountStore(ctx, nc, create)
	if err != nil {
		nc.Close()
		return nil, "", nil, err
	}
	f.nc = nc
	return account.New(kv, clock.Real{}), "the NATS key-value bucket " + account.KVBucket, nc.Close, nil
}

// DefaultDataDir is where a gateway keeps its data when --data-dir is not given:
// $XDG_DATA_HOME/trap-sandbox or ~/.local/share/trap-sandbox on Unix, the user's config
// directory (Application Support, %AppData%) on macOS and Windows.
func DefaultDataDir() (string, error) {
	switch runtime.GOOS {
	case "darwin", "windows":
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("no per-user directory for the data (%w): give --data-dir", err)
		}
		return filepath.Join(dir, "trap-sandbox"), nil
	}
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "trap-sandbox"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the data (%w): give --data-dir", err)
	}
	return filepath.Join(home, ".local", "share", "trap-sandbox"), nil
}

// ManageFlags say where an account command works (docs/accounts.md, "Where the commands
// work"): on the store itself, as StoreFlags say (the data directory on the gateway's host,
// or the replicas' NATS bucket); or, when --url or --api-token is given, through a running
// gateway's account API, as the account of the token. Neither given: the store, as before
// the API could (the gateway's own SANDBOX_API_TOKEN in the environment does not switch).
type ManageFlags struct {
	viaAPI  bool // set by open: the command works through a gateway
	byToken bool // set by open: with a token (--api-token or SANDBOX_API_TOKEN)
	StoreFlags
	URL      string `name:"url" env:"SANDBOX_URL" group:"through a running gateway" help:"Work through the gateway at this base URL (e.g. http://127.0.0.1:4444) instead of on the store; the token is --api-token, else SANDBOX_API_TOKEN."`
	APIToken string `name:"api-token" group:"through a running gateway" help:"Work through the running gateway (--url, default http://127.0.0.1:4444) as this token's account: an admin's manages every account, a user's its own tokens and credentials."`
}

// defaultURL is the gateway --api-token alone reaches (as the API commands' --url default).
const defaultURL = "http://127.0.0.1:4444"

// open returns the Manager the flags choose, where it works (for messages) and how to close
// it; it creates no store (StoreFlags.open).
func (f *ManageFlags) open(ctx context.Context, stderr io.Writer) (account.Manager, string, func(), error) {
	return f.openFor(ctx, stderr, false)
}

// openToAdd is open for accounts add, the one command that may create the store (a NATS
// bucket or the data directory's accounts.db: StoreFlags.open).
func (f *ManageFlags) openToAdd(ctx context.Context, stderr io.Writer) (account.Manager, string, func(), error) {
	return f.openFor(ctx, stderr, true)
}

func (f *ManageFlags) openFor(ctx context.Context, stderr io.Writer, create bool) (account.Manager, string, func(), error) {
	if !f.throughGateway() {
		accounts, where, done, err := f.openStore(ctx, stderr, create)
		if err != nil {
			return nil, "", nil, err
		}
		return accounts.Manage(account.OperatorCaller), where, done, nil
	}
	url, token, err := f.gateway()
	if err != nil {
		return nil, "", nil, err
	}
	return accountapi.Client{URL: url, Token: token}, "the gateway at " + strings.TrimRight(url, "/"), func() {}, nil
}

// openStore opens the account store the flags name (StoreFlags.open), unless the command is
// plainly meant for a running gateway: SANDBOX_API_TOKEN holds an account's token (tsa_…),
// which only a gateway takes, no store flag is given, and no store is in the default place.
// That is a player given a token by the operator who forgot --url: on their machine the
// command would make a new, empty store and answer from it as if the account did not exist.
// On the gateway's host, where the store is, such a token (an admin's, as the docs advise to
// keep it) does not stop a command working on the store, as it always has.
func (f *ManageFlags) openStore(ctx context.Context, stderr io.Writer, create bool) (*account.Accounts, string, func(), error) {
	if kind, _, ok := account.Identify(os.Getenv("SANDBOX_API_TOKEN")); ok && kind == account.KindToken &&
		f.DataDir == "" && f.NATS == "" && !defaultStoreExists() {
		dir, err := f.dir() // the default place, as it would have been opened
		if err != nil {
			return nil, "", nil, err
		}
		return nil, "", nil, fmt.Errorf("SANDBOX_API_TOKEN holds an account's API token (tsa_...), which only a running gateway takes, and there is no account store in %s: add --url URL (or set SANDBOX_URL) to work through the gateway, or --data-dir DIR to work on its store", dir)
	}
	return f.StoreFlags.open(ctx, stderr, create)
}

// throughGateway says whether the flags choose a running gateway over the store.
func (f *ManageFlags) throughGateway() bool { return f.URL != "" || f.APIToken != "" }

// gateway is the running gateway the flags choose and the token to call it with (--api-token,
// else SANDBOX_API_TOKEN); an error when the store's flags are given too.
func (f *ManageFlags) gateway() (url, token string, err error) {
	if f.DataDir != "" || f.NATS != "" {
		return "", "", fmt.Errorf("give either --url/--api-token (through a running gateway) or --data-dir/--nats (on the store itself), not both: %s given", f.bothGiven())
	}
	url, token = f.URL, f.APIToken
	if url == "" {
		url = defaultURL
	}
	if token == "" {
		token = os.Getenv("SANDBOX_API_TOKEN")
	}
	f.viaAPI, f.byToken = true, token != ""
	return url, token, nil
}

// bothGiven names the flags of each way that are given, with the variable each is read from
// too: "--url (or SANDBOX_URL) and --data-dir (or SANDBOX_DATA_DIR) are". A SANDBOX_URL
// exported for the other commands, as the docs have it, met --data-dir with "not both" of
// flags the command line did not hold.
func (f *ManageFlags) bothGiven() string {
	var given []string
	for _, g := range []struct {
		set  bool
		name string
	}{
		{f.URL != "", "--url (or SANDBOX_URL)"},
		{f.APIToken != "", "--api-token"},
		{f.DataDir != "", "--data-dir (or SANDBOX_DATA_DIR)"},
		{f.NATS != "", "--nats (or SANDBOX_NATS_URL)"},
	} {
		if g.set {
			given = append(given, g.name)
		}
	}
	return strings.Join(given, " and ") + " are"
}

// manageError words a Manager's error (of mg, the command's) for the terminal, the same
// whichever way the command went: what was not found (or, through a gateway, is not the
// token's) with how to see what is, or the account likely meant (account.Meant, among those
// mg's caller sees), another account named with a user's token with the token that would do,
// a refusal with its fix (the message says which token would do).
func (f *ManageFlags) manageError(ctx context.Context, mg account.Manager, err error, what, id string) error {
	reach := f.reach()
	switch {
	case errors.Is(err, account.ErrForbidden):
		return errors.New(cctext.Show(strings.TrimPrefix(err.Error(), account.ErrForbidden.Error()+": "), false))
	case errors.Is(err, account.ErrNotReached):
		// A user's token, told the same for any account but its own, existing or not; its
		// own, when the name is near it, is the one named.
		if meant := account.Meant(ctx, mg, id); meant != "" {
			return fmt.Errorf("no account %s that this token reaches; did you mean %s?", account.ShowID(id), account.ShowID(meant))
		}
		return fmt.Errorf("no account %s that this token reaches: a user's token reaches its own account only (trap-sandbox accounts list shows it); another account's needs an admin's token", account.ShowID(id))
	case errors.Is(err, account.ErrNotFound) && what == "account":
		return noAccount(id, reach, account.Meant(ctx, mg, id), false)
	case errors.Is(err, account.ErrNotFound):
		return fmt.Errorf("no %s %s%s (trap-sandbox %ss list shows the ids)", what, account.ShowID(id), reach, what)
	}
	return errors.New(cctext.Show(err.Error(), false))
}

// reach is what a "no such …" adds through a gateway called with a token (tokenReach).
func (f *ManageFlags) reach() string { return tokenReach(f.viaAPI && f.byToken) }

// tokenReach is what a "no such …" adds through a gateway called with a token: a user's token is
// told of another account's records as of none (docs/http-api.md). A call without a token
// (a loopback caller of a gateway without SANDBOX_API_TOKEN, its admin), or on the store, is
// told of no token.
func tokenReach(throughGatewayByToken bool) string {
	if throughGatewayByToken {
		return " that this token reaches"
	}
	return ""
}

// noAccount is every account command's refusal of an account that is not there (with reach:
// not there for this token), on the store or through the gateway, whichever of its routes
// answered (the link routes' too: linkFailure), in one wording: the account meant when one
// is near the name (account.Meant), else where the accounts are listed and, unless the
// account was to be removed, what creates one.
func noAccount(id, reach, meant string, removing bool) error {
	if meant != "" {
		return fmt.Errorf("no account %s%s; did you mean %s?", account.ShowID(id), reach, account.ShowID(meant))
	}
	create := "; accounts add creates one"
	if removing {
		create = ""
	}
	return fmt.Errorf("no account %s%s (trap-sandbox accounts list shows them%s)", account.ShowID(id), reach, create)
}

// whereHelp is the account commands' rule of where they work, shown in each one's --help.
const whereHelp = "Works on the account store itself (the gateway's data directory, on its host; --data-dir, or --nats for replicas) unless --url or --api-token is given: then through that running gateway, as the token's account (SANDBOX_URL counts as --url; SANDBOX_API_TOKEN alone does not switch, and an account's token there with no flag and no store in the default place is refused: add --url)."

// Help is every account command's detailed help (kong.HelpProvider): where it works.
func (*ManageFlags) Help() string { return whereHelp }

// AccountsCmd manages accounts.
type AccountsCmd struct {
	Add    AccountsAddCmd    `cmd:"" help:"Create an account and print its first API token (alone, on the last line; shown once). Through the API: needs an admin token."`
	List   AccountsListCmd   `cmd:"" help:"List the accounts (a user's token: its own), who created them and their tokens' latest use."`
	Remove AccountsRemoveCmd `cmd:"" help:"Remove an account with its API tokens, computer credentials, enrollment keys and link codes; its connected computers are closed (4003 revoked). Through the API: needs an admin token, not the account's own."`
	Backup AccountsBackupCmd `cmd:"" help:"Copy the account store (accounts, API tokens, computer credentials, enrollment keys) to a new file, on the gateway's host, while the gateway runs: one consistent state, checked, the owner's alone (docs/accounts.md, Backing up the store)."`
	Copy   AccountsCopyCmd   `cmd:"" help:"Copy the data directory's account store (accounts, API tokens, computer credentials with their links, enrollment keys, revocations) into the replicas' NATS bucket, so the same tokens and linked computers work on the replicas; safe to run again (docs/scale-out.md, From one gateway to replicas)."`
}

// AccountsCopyCmd copies a single gateway's store (the data directory's accounts.db) into the
// replicas' bucket (account.CopyToKV has the rules).
type AccountsCopyCmd struct {
	DataDirFlags
	NATSFlags
	// URL and APIToken are read only to refuse: no gateway's API serves its store.
	URL      string `name:"url" hidden:""`
	APIToken string `name:"api-token" hidden:""`
}

// Help is accounts copy's detailed help: what it does when the bucket holds accounts already,
// and when it is cut off.
func (*AccountsCopyCmd) Help() string {
	return "Reads the data directory's store (--data-dir, as the gateway's), changing nothing in it (one of an older trap-sandbox is not upgraded: the way back to one gateway), " +
		"and writes it into the bucket " + account.KVBucket + " on --nats (created when missing), " +
		"with the replicas' NATS credentials. Secrets go over as stored (their SHA-256 hashes): nothing is made, nothing printed. A record the bucket holds " +
		"already as the same one is not written again, only brought forward (a revocation, an enrollment key's uses); one of the file's names held by " +
		"another account there (made again on NATS) stops the copy before it writes anything. Each account is written with its secrets first and itself " +
		"last, so a copy cut off (NATS gone) leaves no account half usable; run it again to finish. Link codes in progress are not copied."
}

// Run copies and says what went over, and what to do next.
func (c *AccountsCopyCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	if c.URL != "" || c.APIToken != "" {
		return errors.New("it works on the store file on the gateway's host and on NATS, not through a gateway's API: run it there, as the gateway's user, with its --data-dir and the replicas' --nats (docs/scale-out.md, From one gateway to replicas)")
	}
	if !c.enabled() {
		what := "--nats (SANDBOX_NATS_URL) is missing"
		if set := c.setWithoutURL(); len(set) > 0 {
			what = strings.Join(set, ", ") + " set without --nats (SANDBOX_NATS_URL)"
		}
		return fmt.Errorf("%s: it writes the data directory's store into the replicas' NATS bucket %s; give the replicas' --nats URL and NATS credentials (docs/scale-out.md, From one gateway to replicas)", what, account.KVBucket)
	}
	dir, err := c.dir()
	if err != nil {
		return err
	}
	inUse := account.InUse(dir)
	// Read without changing the file, not opened as a store: one of an older trap-sandbox
	// stays of its schema, the way back to one gateway (account.SnapshotSQLite).
	snap, store, err := account.SnapshotSQLite(ctx, dir)
	if err != nil {
		return c.storeError(err, "or run this as the gateway's user, on its host") // the copy cannot go through a gateway
	}
	nc, err := c.connect(ctx, "trap-sandbox accounts copy", false, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer nc.Close()
	kv, err := c.accountStore(ctx, nc, true)
	if err != nil {
		return err
	}
	r, err := account.CopyToKV(ctx, snap, kv)
	// The revocations it wrote are told even when the copy was cut off after them: the run
	// that finishes it finds them in the bucket already, and has none to tell.
	var told error
	for _, selector := range r.Revoked {
		if told = cluster.PublishRevocation(nc, selector); told != nil {
			told = fmt.Errorf("the running replicas were not told of %s revoked since the last copy (its socket closes at its next hello): %w",
				count(len(r.Revoked), "computer credential"), told)
			break
		}
	}
	if cut, ok := errors.AsType[*account.CopyCutError](err); ok {
		if told != nil {
			return fmt.Errorf("copy %s to NATS at %s: %w; run the same command again to finish (what is there already is checked, not written twice); and %w",
				store, cluster.RedactURL(c.NATS), cut, told)
		}
		return fmt.Errorf("copy %s to NATS at %s: %w; run the same command again to finish (what is there already is checked, not written twice)",
			store, cluster.RedactURL(c.NATS), cut)
	}
	if err != nil {
		return fmt.Errorf("copy %s to NATS at %s: %w", store, cluster.RedactURL(c.NATS), err)
	}
	if told != nil {
		return fmt.Errorf("copied, but %w", told)
	}
	fmt.Fprintf(out, "copied the account store %s into the NATS key-value bucket %s: %s\n", store, account.KVBucket, copied(r))
	if r.OnlyInBucket > 0 {
		fmt.Fprintf(out, "left as they were: %s of the bucket that the file does not hold\n", count(r.OnlyInBucket, "account"))
	}
	if len(r.RemovedInBucket) > 0 {
		fmt.Fprintf(out, "not copied again: %s, removed on the replicas since an earlier copy (accounts remove --nats); to bring one back, add it there anew\n",
			show(strings.Join(r.RemovedInBucket, ", ")))
	}
	fmt.Fprintf(out, "the replicas take these tokens and linked computers now; once no gateway runs on this data directory, move %s with its -wal and -shm out of it (docs/scale-out.md, From one gateway to replicas)\n", account.DBFile)
	if inUse {
		fmt.Fprintf(stderr, "trap-sandbox: a gateway has this store open: what it changes from now on is not in the copy; stop it, then run this again, which carries a new account, token or link and a revocation (an account removed there meanwhile stays in the bucket: remove it with --nats too)\n")
	}
	return nil
}

// copied says what a copy did, kind by kind: "2 accounts, 3 API tokens, …", each with what
// was there already and brought forward.
func copied(r account.CopyReport) string {
	kinds := []struct {
		n    account.CopyCount
		name string
	}{{r.Accounts, "account"}, {r.Tokens, "API token"}, {r.Credentials, "computer credential"}, {r.EnrollmentKeys, "enrollment key"}}
	var parts []string
	for _, k := range kinds {
		part := count(k.n.Copied, k.name) + " copied"
		if k.n.Present > 0 {
			part += fmt.Sprintf(", %d there already", k.n.Present)
			if k.n.Updated > 0 {
				part += fmt.Sprintf(" (%d brought up to date)", k.n.Updated)
			}
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// AccountsBackupCmd copies the data directory's store to a new file.
type AccountsBackupCmd struct {
	DataDirFlags
	// NATSFlags are read only to refuse: the replicas' accounts are in NATS, not in a file. All
	// of them, so that the NATS line of the other account commands (--nats URL --nats-user
	// sandbox) gets that answer, not "unknown flag"; its help lists none (hiddenNATSFlags).
	NATSFlags
	// URL and APIToken are read only to refuse: the HTTP API serves no copy of the store.
	URL      string `name:"url" hidden:""`
	APIToken string `name:"api-token" hidden:""`
	File     string `arg:"" type:"path" help:"The new file to write (an existing one is never replaced)."`
}

// restoreHow is how a backup goes back in place, said after each backup (docs/accounts.md).
const restoreHow = "to restore it, stop the gateway, move accounts.db and its -wal and -shm out of the data directory, and copy this file in as accounts.db (docs/accounts.md, Backing up the store)"

// Run writes the backup and says where, of which schema, and how to restore it. It changes
// nothing in the store: one of an older schema is copied as it is, not upgraded.
func (c *AccountsBackupCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	if set := c.setWithoutURL(); len(set) > 0 {
		return fmt.Errorf("%s set without --nats (SANDBOX_NATS_URL): the replicas' accounts are in NATS, which it does not copy (docs/accounts.md, Backing up the store); leave them out to back up the data directory's store", strings.Join(set, ", "))
	}
	if c.enabled() {
		return fmt.Errorf("the replicas keep their accounts in NATS (the JetStream key-value bucket %s, stream KV_%s), not in a file: back it up with NATS's own tools, e.g. nats stream backup KV_%s DIR (docs/accounts.md, Backing up the store)",
			account.KVBucket, account.KVBucket, account.KVBucket)
	}
	if c.URL != "" || c.APIToken != "" {
		return errors.New("it copies the store file on the gateway's host, not through a gateway's API (no route serves it): run it there, as the gateway's user, with its --data-dir (docs/accounts.md, Backing up the store)")
	}
	dir, err := c.dir()
	if err != nil {
		return err
	}
	// A backup of a store that no gateway has open was taken of a store no gateway uses, which
	// a crontab line without the gateway's SANDBOX_DATA_DIR makes of a default one, nightly.
	// Judged before the backup opens it, by SQLite's lock: an accounts.db-shm alone is also
	// what a killed gateway leaves.
	inUse := account.InUse(dir)
	schema, err := account.BackupSQLite(ctx, dir, c.File)
	switch {
	case errors.Is(err, account.ErrBackupExists):
		return err
	case errors.As(err, new(account.BackupFileError)):
		// The backup's own file: the store is not to blame, and its data directory not named.
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: make the directory first, e.g. mkdir -p -m 700 %s", err, filepath.Dir(c.File))
		}
		return err
	case err != nil:
		return c.storeError(err, "or run this as the gateway's user, on its host") // a backup cannot go through a gateway
	}
	fmt.Fprintf(out, "backed up the account store %s (schema %d) to %s; %s\n", filepath.Join(dir, account.DBFile), schema, c.File, restoreHow)
	if !inUse {
		fmt.Fprintf(stderr, "trap-sandbox: no gateway had this store open (a running one holds SQLite's lock on its %s-shm): if yours runs, its store is in another data directory, the one it logs at start (msg=accounts store=...); back that one up with --data-dir\n", account.DBFile)
	}
	return nil
}

// AccountsAddCmd creates an account.
type AccountsAddCmd struct {
	ManageFlags
	Name  string `arg:"" help:"The account's name (a-z, 0-9, '.', '_', '-'); it is the accountId of its computers."`
	Admin bool   `help:"Make it an admin: it reaches every account's computers."`
}

// Run creates the account and prints its first token alone on the last line.
func (c *AccountsAddCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, where, done, err := c.openToAdd(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	role := account.RoleUser
	if c.Admin {
		role = account.RoleAdmin
	}
	n, err := mg.AddAccount(ctx, c.Name, role)
	if errors.Is(err, account.ErrExists) {
		return fmt.Errorf("account %q exists already (trap-sandbox tokens add %s NAME gives it another token)", c.Name, c.Name)
	}
	if err != nil {
		return c.manageError(ctx, mg, err, "account", c.Name)
	}
	lifetime := ""
	if n.ExpiresWithCaller {
		lifetime = ", which " + expiry(n.Token.ExpiresAt, true)
	}
	fmt.Fprintf(out, "account %s (%s) created in %s; its API token%s (shown once; send it as Authorization: Bearer, or give it in SANDBOX_API_TOKEN):\n%s\n",
		n.Account.ID, n.Account.Role, where, lifetime, n.Secret)
	return nil
}

// AccountsListCmd lists the accounts.
type AccountsListCmd struct {
	ManageFlags
}

// Run prints one account a line.
func (c *AccountsListCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, _, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	all, err := mg.Accounts(ctx)
	if err != nil {
		return c.manageError(ctx, mg, err, "account", "")
	}
	if len(all) == 0 {
		return noneListed(stderr, "accounts", "")
	}
	tw := table.NewWriter(out, 2)
	fmt.Fprintln(tw, "ACCOUNT\tROLE\tCREATED\tCREATED BY\tTOKENS\tLAST USED\tADDRESS")
	for _, a := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", show(a.ID), show(string(a.Role)), stamp(a.Created), orDash(show(a.CreatedBy)), a.Tokens, stamp(a.LastUsed), orDash(show(a.RemoteAddr)))
	}
	return tw.Flush()
}

// AccountsRemoveCmd removes an account.
type AccountsRemoveCmd struct {
	ManageFlags
	Name string `arg:"" help:"The account to remove (trap-sandbox accounts list shows them)."`
}

// Run removes the account and prints what went with it and what happens to its computers,
// in two lines; it asks nothing (scripts run it).
func (c *AccountsRemoveCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, where, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	r, err := mg.RemoveAccount(ctx, c.Name)
	if errors.Is(err, account.ErrNotFound) {
		return noAccount(c.Name, c.reach(), account.Meant(ctx, mg, c.Name), true)
	}
	if err != nil {
		return c.manageError(ctx, mg, err, "account", c.Name)
	}
	fmt.Fprintf(out, "account %s (%s) removed from %s: %s, %s, %s, %s\n", show(r.Account.ID), show(string(r.Account.Role)), where,
		count(len(r.Tokens), "API token"), count(len(r.Credentials), "computer credential"), count(len(r.EnrollmentKeys), "enrollment key"),
		count(r.LinkCodes, "approved link code"))
	switch {
	case c.viaAPI && len(r.Closed) == 0 && len(r.NotClosed) == 0:
		fmt.Fprintf(out, "none of its computers was connected; its tokens are refused from the next request\n")
	case c.viaAPI:
		if len(r.Closed) > 0 {
			fmt.Fprintf(out, "closed its connected computers (4003 revoked, their daemons stop): %s; its tokens are refused from the next request\n", showIDs(r.Closed))
		}
		if len(r.NotClosed) > 0 {
			tokens := ""
			if len(r.Closed) == 0 {
				tokens = "; its tokens are refused from the next request"
			}
			fmt.Fprintf(out, "left connected by a replica of an older trap-sandbox, which does not close them: %s (refused when they reconnect; upgrade that replica, trap-sandbox computers shows which, to close them now)%s\n",
				showIDs(r.NotClosed), tokens)
		}
	case c.nc == nil && c.upgradedFrom > 0 && c.upgradedFrom < account.RemovalSchemaVersion:
		// This command upgraded the store: a gateway running on it is of a trap-sandbox from
		// before removal, which looks for revoked credentials only, not removed ones.
		fmt.Fprintf(out, "a gateway running on this data directory is of an older trap-sandbox (the store was at schema %d): it refuses its tokens and its computers' next hello, but does not close the connected ones; restart it with this trap-sandbox to close them\n",
			c.upgradedFrom)
	case c.nc == nil:
		// One node: the gateway running on this data directory looks for removed credentials
		// every account.RevocationPeriod (gateway.FollowRevocations).
		fmt.Fprintf(out, "a gateway running on this data directory closes its connected computers within %s (4003 revoked) and refuses its tokens from the next request\n",
			account.RevocationPeriod)
	default:
		for _, selector := range r.Credentials {
			if err := cluster.PublishRevocation(c.nc, selector); err != nil {
				return fmt.Errorf("account %s removed, but the running replicas were not told (its computers' sockets close at their next hello): %w", show(r.Account.ID), err)
			}
		}
		fmt.Fprintf(out, "the replicas that hold its computers close them now (4003 revoked) and refuse its tokens from the next request\n")
		older, err := cluster.OlderReplicas(ctx, c.nc)
		if err != nil {
			// The removal holds whatever this look finds (every replica refuses the account's
			// secrets): it only tells whether an older replica leaves computers connected, so
			// its failure is a warning, and the exit status the removal's, 0 (docs/accounts.md).
			fmt.Fprintf(stderr, "trap-sandbox: warning: account %s is removed, but this command could not look for replicas of an older trap-sandbox, which leave its connected computers connected until they reconnect (NATS bucket %s, the replicas' heartbeats, did not answer: %v); `trap-sandbox computers` through a replica shows any still connected\n",
				show(r.Account.ID), cluster.ReplicasBucket, err)
			return nil
		}
		switch len(older) {
		case 0:
		case 1:
			fmt.Fprintf(out, "but replica %s, of an older trap-sandbox, does not close those it holds (refused when they reconnect): upgrade it to close them now\n", show(older[0]))
		default:
			fmt.Fprintf(out, "but replicas %s, of an older trap-sandbox, do not close those they hold (refused when they reconnect): upgrade them to close them now\n", show(strings.Join(older, ", ")))
		}
	}
	return nil
}

// count is n things, "1 API token", "2 API tokens".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// TokensCmd manages accounts' API tokens.
type TokensCmd struct {
	List   TokensListCmd   `cmd:"" help:"List API tokens (never their secrets): who issued them, their latest use and its address."`
	Add    TokensAddCmd    `cmd:"" help:"Give an account a new API token and print it (alone, on the last line; shown once)."`
	Revoke TokensRevokeCmd `cmd:"" help:"Revoke an API token by its id (see tokens list); it stops working on the next request."`
}

// noneListed says on stderr that a listing has none of what it lists, as computers does ("no
// computers connected"), and prints no table: a header alone read as a table of nothing, and
// a script reading the rows gets none either way. what is what it lists ("tokens"), of the
// account it was asked for, or "".
func noneListed(stderr io.Writer, what, of string) error {
	line := "no " + what
	if of != "" {
		line += " in account " + show(of)
	}
	_, err := fmt.Fprintln(stderr, line)
	return err
}

// TokensListCmd lists tokens.
type TokensListCmd struct {
	ManageFlags
	Account string `arg:"" optional:"" help:"The account (default: every account the store or the token reaches)."`
}

// Run prints one token a line.
func (c *TokensListCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, _, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	toks, err := mg.Tokens(ctx, c.Account)
	if err != nil {
		return c.manageError(ctx, mg, err, "account", c.Account)
	}
	if len(toks) == 0 {
		return noneListed(stderr, "tokens", c.Account)
	}
	tw := table.NewWriter(out, 2)
	fmt.Fprintln(tw, "ID\tACCOUNT\tNAME\tCREATED\tCREATED BY\tEXPIRES\tREVOKED\tLAST USED\tADDRESS")
	names := tokenNames(toks)
	for i, t := range toks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", show(t.Selector), show(t.AccountID), names[i], stamp(t.Created), orDash(show(t.CreatedBy)),
			stamp(t.ExpiresAt), stamp(t.RevokedAt), stamp(t.LastUsed), orDash(show(t.RemoteAddr)))
	}
	return tw.Flush()
}

// tokenNames is each of toks' names as tokens list shows it (cctext.ShowName): spelled out,
// every character beyond ASCII as its escape, where two tokens of one account have names that
// differ but look alike (cctext.NameKey), which a store holds from before the rule refused the
// second (copy beside a Cyrillic сору, listed as \u0441\u043e\u0440\u0443): an operator
// revoking one by what the listing shows takes the other for it no more.
func tokenNames(toks []account.Token) []string {
	type key struct{ account, name string }
	first := map[key]string{}
	twins := map[key]bool{}
	for _, t := range toks {
		k := key{t.AccountID, cctext.NameKey(t.Name)}
		if name, ok := first[k]; !ok {
			first[k] = t.Name
		} else if name != t.Name {
			twins[k] = true
		}
	}
	names := make([]string, len(toks))
	for i, t := range toks {
		names[i] = cctext.ShowName(t.Name, twins[key{t.AccountID, cctext.NameKey(t.Name)}])
	}
	return names
}

// TokensAddCmd issues a token.
type TokensAddCmd struct {
	ManageFlags
	Account string   `arg:"" help:"The account (through the API, a user's token gives tokens to its own account only)."`
	Name    string   `arg:"" help:"What the token is for (laptop, ci, agent)."`
	Expires Lifetime `help:"Lifetime, at most ${maxTokenTTL}, e.g. 720h; 0, the default, never expires."`
}

// maxTokenTTL is account.MaxTokenTTL as --expires takes it, and in years.
func maxTokenTTL() string {
	return hours(account.MaxTokenTTL) + " (" + account.MaxTokenTTLText + ")"
}

// hours is d as a flag takes it, without the 0m0s of whole hours (876000h).
func hours(d time.Duration) string {
	if d != 0 && d%time.Hour == 0 {
		return strings.TrimSuffix(d.String(), "0m0s")
	}
	return d.String()
}

// Run prints the new token alone on the last line.
func (c *TokensAddCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, _, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	n, err := mg.AddToken(ctx, c.Account, c.Name, c.Expires.Duration())
	if err != nil {
		return c.manageError(ctx, mg, err, "account", c.Account)
	}
	fmt.Fprintf(out, "token %s (%s) of %s, %s; shown once:\n%s\n", show(n.Token.Selector), cctext.ShowName(n.Token.Name, false), show(n.Token.AccountID),
		expiry(n.Token.ExpiresAt, n.ExpiresWithCaller), n.Secret)
	return nil
}

// expiry says when a token or key the command made expires (at; zero: never), and that its
// lifetime was cut to the caller's token's (withCaller: a token that expires cannot make
// one that lasts longer). A listing's "-" does not read as prose.
func expiry(at time.Time, withCaller bool) string {
	switch {
	case at.IsZero():
		return "never expires"
	case withCaller:
		return "expires " + stamp(at) + ", with the token that made it (it can make none that lasts longer)"
	}
	return "expires " + stamp(at)
}

// TokensRevokeCmd revokes a token.
type TokensRevokeCmd struct {
	ManageFlags
	ID string `arg:"" name:"id" help:"The token's id (the ID column of tokens list; the part after tsa_ and before the next _)."`
}

// Run revokes the token.
func (c *TokensRevokeCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, _, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	id := c.ID
	if strings.HasPrefix(id, string(account.KindToken)+"_") { // the whole token given: its selector
		id, _, _ = strings.Cut(strings.TrimPrefix(id, string(account.KindToken)+"_"), "_")
	}
	t, err := mg.RevokeToken(ctx, id)
	if err != nil {
		return c.manageError(ctx, mg, err, "token", id)
	}
	fmt.Fprintf(out, "token %s (%s) of %s revoked at %s\n", show(t.Selector), cctext.ShowName(t.Name, false), show(t.AccountID), stamp(t.RevokedAt))
	return nil
}

// CredentialsCmd manages computers' own credentials.
type CredentialsCmd struct {
	Add    CredentialsAddCmd    `cmd:"" help:"Issue a computer credential for an account and print it (alone, on the last line; shown once): set it as the computer's sandbox.password."`
	List   CredentialsListCmd   `cmd:"" help:"List computer credentials (never their secrets): who issued them and what their last hello said."`
	Revoke CredentialsRevokeCmd `cmd:"" help:"Revoke a computer credential by its id: its computer's socket closes (4003 revoked) and its next hello is refused."`
}

// CredentialsAddCmd issues a computer credential.
type CredentialsAddCmd struct {
	ManageFlags
	Account string `arg:"" help:"The account the computer will belong to (through the API, a user's token: its own)."`
}

// Run prints the credential alone on the last line.
func (c *CredentialsAddCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, _, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	n, err := mg.AddCredential(ctx, c.Account)
	if err != nil {
		return c.manageError(ctx, mg, err, "account", c.Account)
	}
	fmt.Fprintf(out, "credential %s of %s; on the computer: set sandbox.password to it (shown once):\n%s\n", n.Credential.Selector, n.Credential.AccountID, n.Secret)
	return nil
}

// CredentialsListCmd lists credentials.
type CredentialsListCmd struct {
	ManageFlags
	Account string `arg:"" optional:"" help:"The account (default: every account the store or the token reaches)."`
}

// Run prints one credential a line.
func (c *CredentialsListCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, _, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	creds, err := mg.Credentials(ctx, c.Account)
	if err != nil {
		return c.manageError(ctx, mg, err, "account", c.Account)
	}
	if len(creds) == 0 {
		return noneListed(stderr, "computer credentials", c.Account)
	}
	tw := table.NewWriter(out, 2)
	fmt.Fprintln(tw, "ID\tACCOUNT\tAPPROVED BY\tCREATED\tLAST SEEN\tTRAPOSID\tADDRESS\tREVOKED")
	for _, cr := range creds {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", show(cr.Selector), show(cr.AccountID), orDash(show(cr.ApprovedBy)), stamp(cr.Created), stamp(cr.LastSeen),
			orDash(cctext.ShowTraposID(cr.LastTraposID)), orDash(show(cr.RemoteAddr)), stamp(cr.RevokedAt))
	}
	return tw.Flush()
}

// CredentialsRevokeCmd revokes a credential.
type CredentialsRevokeCmd struct {
	ManageFlags
	ID string `arg:"" name:"id" help:"The credential's id (the ID column of credentials list)."`
}

// Run revokes the credential.
func (c *CredentialsRevokeCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	mg, _, done, err := c.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer done()
	cr, err := mg.RevokeCredential(ctx, c.ID)
	if err != nil {
		return c.manageError(ctx, mg, err, "credential", c.ID)
	}
	switch {
	case c.viaAPI:
		fmt.Fprintf(out, "credential %s of %s revoked at %s; the gateway closed its computer's socket (on whichever replica holds it) and refuses its next hello\n",
			cr.Selector, cr.AccountID, stamp(cr.RevokedAt))
	case c.nc == nil:
		// One node: the gateway running on this data directory looks for revocations every
		// account.RevocationPeriod (gateway.FollowRevocations).
		fmt.Fprintf(out, "credential %s of %s revoked at %s; a gateway running on this data directory closes its computer's socket within %s and refuses its next hello\n",
			cr.Selector, cr.AccountID, stamp(cr.RevokedAt), account.RevocationPeriod)
	default:
		if err := cluster.PublishRevocation(c.nc, cr.Selector); err != nil {
			return fmt.Errorf("credential %s of %s revoked, but the running replicas were not told (its socket closes at its next hello): %w", cr.Selector, cr.AccountID, err)
		}
		fmt.Fprintf(out, "credential %s of %s revoked at %s; the replica that holds its computer closes its socket now\n", cr.Selector, cr.AccountID, stamp(cr.RevokedAt))
	}
	return nil
}

// stamp is a time for a listing: RFC 3339 in UTC, "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// show is a listing's text from the store or a gateway (a token's name, an account's, an
// address) by the one rule of host-side names (cctext.ShowDistinct): whatever a record holds,
// it cannot break its row or forge another, and no character that prints as a space or as
// none makes two names that differ look alike (a no-break space as \xa0, a zero-width space
// as \u200b), nor does a backslash read as such an escape (\x5c). A token's name goes by cctext.ShowName (tokenNames), which spells out one
// that looks like another by its letters too; an account's name is of ASCII.
func show(s string) string { return cctext.ShowDistinct(s, false) }

// showIDs is traposIds as every list shows them (cctext.ShowTraposID), comma-separated.
func showIDs(ids []string) string {
	shown := make([]string, len(ids))
	for i, id := range ids {
		shown[i] = cctext.ShowTraposID(id)
	}
	return strings.Join(shown, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var _ io.Writer = Stdout{}

// ComputersGroupCmd is `computers` (the list, as before) and `computers revoke`.
type ComputersGroupCmd struct {
	List   ComputersCmd       `cmd:"" default:"withargs" help:"List the computers connected to a running gateway (the default)."`
	Revoke ComputersRevokeCmd `cmd:"" help:"Revoke a connected computer's own credential: its socket closes at once (4003 revoked) and its daemon stops (by the computer's account, or an admin)."`
}

// ComputersRevokeCmd revokes a connected computer's credential through the API.
type ComputersRevokeCmd struct {
	APIFlags
	TraposID string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
}

// Run revokes and prints what was revoked.
func (c *ComputersRevokeCmd) Run(ctx context.Context, out Stdout) error {
	payload, err := c.transport().RevokeComputer(ctx, c.TraposID)
	if err != nil {
		return failure(c.TraposID, "revoke", err)
	}
	var rev struct {
		AccountID  string `json:"accountId"`
		Credential string `json:"credential"`
		Replica    string `json:"replica"`
	}
	_ = json.Unmarshal(payload, &rev)
	if rev.Replica != "" {
		// Another replica holds the socket: it closes it as the revocation reaches it, which
		// the gateway asked does not see (played: one cut off from NATS closed it 3 s later,
		// once back, where this line said it was closed).
		fmt.Fprintf(out, "computer %s of %s: credential %s revoked; replica %s, which holds its socket, closes it (at once, or once it is back on NATS)\n",
			typedID(c.TraposID), show(rev.AccountID), show(rev.Credential), show(rev.Replica))
		return nil
	}
	fmt.Fprintf(out, "computer %s of %s: credential %s revoked, its socket closed\n", typedID(c.TraposID), show(rev.AccountID), show(rev.Credential))
	return nil
}
