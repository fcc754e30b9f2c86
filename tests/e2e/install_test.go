package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"
	"fakecraft/fsapi"
	"fakecraft/httpapi"
	"fakecraft/peripheral"
	"fakecraft/peripheral/drive"
	"fakecraft/pocket"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
	"tests/internal/repo"
)

// installPassword is SANDBOX_PASSWORD of the gateway the one-line install reaches.
const installPassword = "pw"

// playerSession boots the bare computer whose disk is dir (as --bare --dir does), types the
// lines at its prompts, and returns the transcript once the input has run out and the computer
// shut down. Reboots typed in between restart it on the same disk.
func playerSession(ctx context.Context, t *testing.T, dir string, basic bool, typed ...string) string {
	t.Helper()
	return playerSessionHTTP(ctx, t, dir, basic, httpapi.Options{AllowPrivate: true}, typed...)
}

// playerSessionHTTP is playerSession on a server whose CC: Tweaked http config is h.
func playerSessionHTTP(ctx context.Context, t *testing.T, dir string, basic bool, h httpapi.Options, typed ...string) string {
	t.Helper()
	return playerSessionOn(ctx, t, machine.Options{Overlay: dir, Basic: basic, HTTP: h}, typed...)
}

// playerSessionOn is playerSession on the computer opts describes (its disk, http config,
// drive size), bare.
func playerSessionOn(ctx context.Context, t *testing.T, opts machine.Options, typed ...string) string {
	t.Helper()
	opts.Bare, opts.TimeScale, opts.Input = true, timeScale, computer.LinesOf(typed...)
	res, out := fakecrafttest.Run(ctx, t, opts)
	require.NoError(t, res.Err, "bios failure; transcript:\n%s", out)
	require.True(t, res.InputEnded, "the computer stopped before reading every line; transcript:\n%s", out)
	return out
}

// installerFiles is diskFiles without the daemon's record of the gateways that proved
// themselves (gatewayProofsFile): a daemon that connects in a session (booted by the hook)
// writes it, whatever the session typed, so it is none of the installer's doing.
func installerFiles(t *testing.T, dir string) []string {
	t.Helper()
	return slices.DeleteFunc(diskFiles(t, dir), func(f string) bool { return f == gatewayProofsFile })
}

// diskFiles lists every file and directory under dir, slash-separated, sorted.
func diskFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, filepath.ToSlash(rel))
		return nil
	}))
	sort.Strings(out)
	return out
}

// unwrapped is the transcript out on one line, its words single-spaced: what the screen says
// however its rows broke it.
func unwrapped(out string) string { return strings.Join(strings.Fields(out), " ") }

// notWholeAdvice is what the client's programs say after naming a file of the client that is
// missing, on a computer whose sandbox.url names no gateway (a friend's, or without
// libsandboxsettings to read it).
const notWholeAdvice = "the trapos-sandbox client is not whole on this computer. Install it with the gateway's install line " +
	"(wget run .../trapos/install, as its operator gives it out)."

// notWholeAdviceOf is notWholeAdvice on a computer whose sandbox.url is g's: its install line.
func notWholeAdviceOf(g *harness.Gateway) string {
	return "the trapos-sandbox client is not whole on this computer. Install it with the gateway's install line " +
		"(wget run " + g.URL("/trapos/install") + ")."
}

// afterLast is the transcript after the last line containing marker.
func afterLast(out, marker string) string {
	i := strings.LastIndex(out, marker)
	if i < 0 {
		return ""
	}
	return out[i+len(marker):]
}

// assertHealthy: the last `sandbox health` typed printed both lines.
func assertHealthy(t *testing.T, out string) {
	t.Helper()
	health := lines(afterLast(out, "> sandbox health"))
	require.GreaterOrEqual(t, len(health), 2, out)
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true"}, health[:2], out)
}

func readSettings(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".settings"))
	require.NoError(t, err)
	return string(b)
}

// TestTheLineRunAgainSaysRebootOnlyWhenTheDaemonNeedsIt: the install line run again with
// nothing changed said "Run: reboot" though the daemon that runs already ran those very files.
// It says so only when a file changed or the daemon that runs is not this version's (none
// before the first reboot), and otherwise that no reboot is needed.
func TestTheLineRunAgainSaysRebootOnlyWhenTheDaemonNeedsIt(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	dir := t.TempDir()
	const noReboot = "The daemon runs these files: no reboot needed."

	// Not rebooted yet: no daemon runs.
	out := playerSession(ctx, t, dir, true, install, install)
	again := afterLast(out, "Reinstalled trapos-sandbox ")
	assert.Contains(t, again, "Run: reboot\n", out)
	assert.NotContains(t, again, noReboot, out)

	// Booted: the daemon runs the files installed, and the line changes none.
	out = playerSession(ctx, t, dir, true, install, "sandbox status")
	again = afterLast(out, "Reinstalled trapos-sandbox ")
	// The check is the step itself, not a "Then" after a step that was never given.
	assert.Contains(t, again, noReboot+"\nRun: sandbox health\n", out)
	assert.NotContains(t, again, "Then: sandbox health", out)
	assert.NotContains(t, again, "reboot\n", out)

	// A file of the daemon's not as served: the line puts it back, and the daemon that runs
	// is not what a reboot starts.
	daemon := filepath.Join(dir, "servers", "sandbox.lua")
	body, err := os.ReadFile(daemon)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(daemon, append(body, "\n"...), 0o644))
	out = playerSession(ctx, t, dir, true, install)
	again = afterLast(out, "Reinstalled trapos-sandbox ")
	assert.Contains(t, again, "Run: reboot\n", out)
	assert.NotContains(t, again, noReboot, out)
}

// TestOneLineInstall is the player's whole path on a fresh basic computer (no multishell):
// the one-line install with the password (and the default no to the host's access), a reboot,
// `sandbox health`; then the same line again upgrades and keeps the settings; then
// `uninstall` leaves nothing of the package.
func TestOneLineInstall(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, true, install+" "+installPassword, "", "reboot", "sandbox health")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.Contains(t, out, "Run: reboot")
	assertHealthy(t, out)
	assertOneHeader(t, afterLast(out, "Goodbye"))
	settings := readSettings(t, dir)
	assert.Contains(t, settings, `[ "sandbox.password" ] = "`+installPassword+`"`, "the password is saved as a string")
	assert.Contains(t, settings, `[ "sandbox.url" ] = "`+g.WebSocketURL()+`"`)
	installed := diskFiles(t, dir)
	assert.Contains(t, installed, "startup/00-sandbox.lua")
	assert.Contains(t, installed, "servers/sandbox.lua")

	// Again, without the password: an upgrade in place that asks nothing and keeps both settings.
	out = playerSession(ctx, t, dir, true, install, "reboot", "sandbox health")
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.NotContains(t, out, "password (")
	assertHealthy(t, out)
	assert.Equal(t, settings, readSettings(t, dir), "the upgrade kept the settings")
	assert.Equal(t, installed, diskFiles(t, dir))

	// Over an older version: the installer names both.
	manifest := filepath.Join(dir, ".trapos-sandbox")
	recorded, err := os.ReadFile(manifest)
	require.NoError(t, err)
	older := regexp.MustCompile(`version = "[^"]*"`).ReplaceAll(recorded, []byte(`version = "0.0.1"`))
	require.NotEqual(t, recorded, older, "the manifest records the version")
	require.NoError(t, os.WriteFile(manifest, older, 0o644))
	out = playerSession(ctx, t, dir, true, install)
	assert.Regexp(t, `Upgraded trapos-sandbox 0\.0\.1 to \d+\.\d+\.\d+\.`, out)
	assert.Equal(t, settings, readSettings(t, dir), "the upgrade kept the settings")

	// Over a newer version (a gateway older than the computer's client): not an upgrade.
	recorded, err = os.ReadFile(manifest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(manifest, regexp.MustCompile(`version = "[^"]*"`).ReplaceAll(recorded, []byte(`version = "10.0.0"`)), 0o644))
	out = playerSession(ctx, t, dir, true, install)
	assert.Regexp(t, `Downgraded trapos-sandbox 10\.0\.0 to \d+\.\d+\.\d+\.\n\(the gateway serves an older client\)\n`, out)
	assert.NotContains(t, out, "Upgraded")
	assert.Equal(t, settings, readSettings(t, dir), "the downgrade kept the settings")

	// sandbox setup's sandbox.ai_confirm, which the installer never sets, goes too.
	out = playerSession(ctx, t, dir, true, "set sandbox.ai_confirm false", install+" uninstall")
	assert.Contains(t, out, "Removed trapos-sandbox ")
	assert.Equal(t, []string{".settings"}, diskFiles(t, dir), "uninstall leaves no file of the package and no hook")
	assert.NotContains(t, readSettings(t, dir), "sandbox.")

	out = playerSession(ctx, t, dir, true, "sandbox health")
	assert.Contains(t, afterLast(out, "> sandbox health"), "No such program")
}

// TestTheInstallLineWithASlashInstalls: the install line copied with a slash after its URL
// (http://host:4444/trapos/install/) got a 404, which CC's wget shows as "Failed." alone. The
// gateway serves the installer there too, on --listen's port and on the computers' port, whose
// allow-list takes it; the installer names its URLs from the gateway, not the path asked, so
// the slash is not in sandbox.url, and the computer connects after the reboot.
func TestTheInstallLineWithASlashInstalls(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword,
		"--opencode-url", opencodefake.ClosedPortURL(t), "--computers-listen", "127.0.0.1:0"}})
	computers := g.ComputersAddr()
	require.NotEmpty(t, computers, g.Log())

	dir := t.TempDir()
	out := playerSession(ctx, t, dir, true, "wget run http://"+computers+"/trapos/install/ "+installPassword+" --no-questions", "reboot", "sandbox health")
	assert.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.url" ] = "ws://`+computers+`/trapos/ws"`)
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)

	dir = t.TempDir()
	out = playerSession(ctx, t, dir, true, "wget run "+g.URL("/trapos/install/")+" "+installPassword+" --no-questions")
	assert.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.url" ] = "`+g.WebSocketURL()+`"`)
}

// TestTheCommandsWorkBeforeTheReboot: right after the one-line install, `sandbox` typed in the
// same shell runs (it was CraftOS's "No such program" until the reboot, though the installer
// had just printed its name): `sandbox --version` names the version installed, and `sandbox
// status` says the daemon is not running yet and that a reboot starts it. The path is the
// running shell's only: after the reboot the hook's shell has the commands once, as before.
func TestTheCommandsWorkBeforeTheReboot(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, true, install+" "+installPassword, "", "sandbox --version", "sandbox status")
	require.Contains(t, out, "Run: reboot", out)
	assert.NotContains(t, out, "No such program", out)
	version := regexp.MustCompile(`Installed trapos-sandbox (\S+)\.`).FindStringSubmatch(out)
	require.NotNil(t, version, out)
	assert.Equal(t, []string{"sandbox " + version[1]}, lines(afterLast(out, "> sandbox --version"))[:1], out)
	status := strings.Join(lines(afterLast(out, "> sandbox status")), " ")
	assert.Contains(t, status, "The sandbox daemon is not running", out)
	assert.Contains(t, status, "reboot the computer", out)

	// After the reboot, the shell's path names the commands once.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "paths.lua"),
		[]byte(`print("on the path: " .. select(2, (":" .. shell.path() .. ":"):gsub(":/programs:", "")))`), 0o644))
	out = playerSession(ctx, t, dir, true, "paths", "reboot", "paths")
	assert.Equal(t, []string{"on the path: 1"}, lines(afterLast(out, "> paths"))[:1], out)
}

// assertOneHeader checks that a boot's transcript shows CC's header once: the hook's shell is a
// second one, whose own header would repeat the first shell's.
func assertOneHeader(t *testing.T, boot string) {
	t.Helper()
	assert.Equal(t, 1, strings.Count(boot, "CraftOS 1.9"), "the boot shows CC's header once:\n%s", boot)
}

// TestInstallKeepsThePlayersStartup: an advanced computer with its own /startup.lua and a
// later /startup/ file. Both keep running at boot with the daemon beside them, and the
// player's /startup.lua is byte-identical after install, upgrade and uninstall.
func TestInstallKeepsThePlayersStartup(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()
	const playerStartup = "-- my door\r\nprint(\"door ready\")\n"
	const playerLater = "print(\"lamps on\")\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup.lua"), []byte(playerStartup), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "startup"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", "lamps.lua"), []byte(playerLater), 0o644))

	// No to the host's access and to the move of /startup.lua (TestInstallAsksToMoveAStartupLua).
	out := playerSession(ctx, t, dir, false, install+" "+installPassword, "", "", "reboot", "sandbox health")
	boots := strings.Split(out, "Goodbye")
	require.Len(t, boots, 2, out)
	for i, boot := range boots {
		assert.Equal(t, 1, strings.Count(boot, "door ready"), "boot %d runs /startup.lua once:\n%s", i+1, boot)
		assert.Equal(t, 1, strings.Count(boot, "lamps on"), "boot %d runs /startup/lamps.lua once:\n%s", i+1, boot)
		assertOneHeader(t, boot)
	}
	assertHealthy(t, out)

	out = playerSession(ctx, t, dir, false, install, "", install+" uninstall", "reboot", "echo")
	assert.Contains(t, out, "Removed trapos-sandbox ")
	assert.Equal(t, 1, strings.Count(afterLast(out, "Goodbye"), "lamps on"), out)
	got, err := os.ReadFile(filepath.Join(dir, "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, playerStartup, string(got), "the player's /startup.lua is byte-identical")
	assert.Equal(t, []string{".settings", "startup", "startup.lua", "startup/lamps.lua"}, diskFiles(t, dir))
}

// TestInstallBesideAStartupFile: a /startup file leaves no room for /startup/; the installer
// writes the hook beside it and names the line to add, touching nothing of the player's.
func TestInstallBesideAStartupFile(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--opencode-url", opencodefake.ClosedPortURL(t)}})
	dir := t.TempDir()
	const playerStartup = "print(\"mine\")\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(playerStartup), 0o644))

	// An empty password, then the default (no) to the host's permissions and to moving /startup.
	out := playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install"), "", "", "")
	assert.Contains(t, out, "Gateway password (empty if it has none):")
	assert.Contains(t, out, "Allow it? [y/N]")
	assert.Contains(t, out, "Not allowed. Change it with:\nset sandbox.allow_files write\nset sandbox.allow_exec true\nset sandbox.allow_screen control\n",
		"each command on a line of its own, never broken between set and its setting")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.allow_files" ] = "none"`, "asked once, answered no")
	assert.Contains(t, out, "To start the daemon at boot, add this line\nat the end of /startup:\n")
	// the reboot after the line: rebooted before, the computer knows no sandbox command
	assert.Contains(t, out, "Move it there? [y/N] \n", out)
	assert.Contains(t, strings.Join(strings.Fields(out), " "), "If your /startup never ends, a line at its end never runs: "+
		"run the install line again and let it move /startup. To start the daemon at boot", out)
	assert.Contains(t, out, "  shell.run(\"/sandbox-startup.lua\")\nAdd it, then run: reboot\n", out)
	got, err := os.ReadFile(filepath.Join(dir, "startup"))
	require.NoError(t, err)
	assert.Equal(t, playerStartup, string(got))
	assert.NotContains(t, readSettings(t, dir), "sandbox.password", "an empty answer sets no password")

	out = playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install"), "")
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.NotContains(t, out, "Gateway password", "an upgrade asks nothing but the move")
	assert.Contains(t, out, "add this line\nat the end of /startup:\n", "the line is not there yet")

	// Once the player added the line, an upgrade does not ask for it again (it still offers
	// the move, answered no here: TestInstallMovesAStartupThatRunsTheHook).
	withHook := playerStartup + "shell.run(\"/sandbox-startup.lua\")\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(withHook), 0o644))
	out = playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install"), "")
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.NotContains(t, out, "add this line", out)
	// the line ran the daemon at this boot, and the files are the same
	assert.Contains(t, out, "The daemon runs these files: no reboot needed.\n", out)

	// A pocket computer's 26 columns broke the line to add mid-name ("/sandbox-star" /
	// "tup.lua"): it is two rows there, each Lua as it stands.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(playerStartup), 0o644))
	rows := pocketSession(ctx, t, dir, "wget run "+g.URL("/trapos/install"), "", "", "")
	at := slices.Index(rows, "  shell.run(")
	require.GreaterOrEqual(t, at, 0, strings.Join(rows, "\n"))
	assert.Equal(t, []string{"  shell.run(", `  "/sandbox-startup.lua")`, "Add it, then run: reboot"}, rows[at:at+3])

	// The uninstall names the line to take out again, so too: in its sentence it broke
	// mid-call there ("shell" / ".run(\"/sandbox-startup.lua" / "\") from ...").
	rows = pocketSession(ctx, t, dir, "wget run "+g.URL("/trapos/install")+" uninstall")
	at = slices.Index(rows, "  shell.run(")
	require.GreaterOrEqual(t, at, 2, strings.Join(rows, "\n"))
	assert.Equal(t, []string{"Also remove this line from", "your startup file:", "  shell.run(", `  "/sandbox-startup.lua")`,
		"Reboot to stop the daemon."}, rows[at-2:at+3])
}

// TestInstallWarnsOfADiskStartup: a floppy with a startup file of its own in a drive runs at
// boot instead of the computer's startup files (CC's shell.allow_disk_startup, on by default),
// so the hook never runs: after the installer's "Run: reboot" the daemon did not start and
// `sandbox` was "No such program", and nothing had said why. The installer says it before the
// reboot, naming the drive; with shell.allow_disk_startup off, or a disk without a startup
// file, it says nothing.
func TestInstallWarnsOfADiskStartup(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	const warning = "The disk in the left drive has a startup file: CC runs it at boot instead of this computer's, " +
		"so the daemon would not start. Take the disk out before you reboot."
	withFloppy := func(startup bool, settings map[string]string) machine.Options {
		floppy := t.TempDir()
		if startup {
			require.NoError(t, os.WriteFile(filepath.Join(floppy, "startup.lua"), []byte("print(\"floppy\")\n"), 0o644))
		} else {
			require.NoError(t, os.WriteFile(filepath.Join(floppy, "notes.txt"), []byte("notes\n"), 0o644))
		}
		return onAComputerWithTheFloppy(t, floppy, settings)
	}

	out := playerSessionOn(ctx, t, withFloppy(true, nil), install, "reboot", "sandbox status", "/programs/sandbox status")
	before, after, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, unwrapped(before), warning+" Run: reboot", out)
	assert.Contains(t, after, "floppy", "the disk's startup ran at the reboot, as the warning said")
	// The command, by its path, says why and what to do first: a reboot alone runs the disk again.
	assert.Contains(t, unwrapped(afterLast(after, "> /programs/sandbox status")), "The sandbox daemon is not running: "+
		"the disk in the left drive has a startup file, which CC runs at boot instead of this computer's. Take the disk "+
		"out, then reboot", out)

	out = playerSessionOn(ctx, t, withFloppy(false, nil), install)
	require.Contains(t, out, "Run: reboot", out)
	assert.NotContains(t, unwrapped(out), "startup file", "a disk without a startup file of its own runs nothing at boot")

	out = playerSessionOn(ctx, t, withFloppy(true, map[string]string{"shell.allow_disk_startup": "false"}), install, "reboot", "sandbox health")
	require.Contains(t, out, "Run: reboot", out)
	assert.NotContains(t, unwrapped(out), "startup file", "with shell.allow_disk_startup off the computer's own startup runs")
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true", out)
}

// TestTheInstallerFitsAFloppyForAFriend: a player saves the installer on a floppy disk
// (`wget URL disk/install`, no `run`) and a friend runs it from there on their own computer.
// The installer was 126 698 bytes, a floppy holds 125 000, and wget stopped with its "Out of
// space" error, leaving an empty disk/install behind.
func TestTheInstallerFitsAFloppyForAFriend(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	floppy := t.TempDir()
	withTheFloppy := func() machine.Options { return onAComputerWithTheFloppy(t, floppy, nil) }

	out := playerSessionOn(ctx, t, withTheFloppy(), "wget "+g.URL("/trapos/install")+" disk/install")
	require.Contains(t, out, "Downloaded as disk/install", out)

	out = playerSessionOn(ctx, t, withTheFloppy(), "disk/install "+installPassword+" --no-questions", "reboot", "sandbox health")
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true", out)
}

// TestAFailedSaveOnTheFloppyIsRedoneAsTheGuideSays: a wget of the installer to a floppy with
// too little room (other files on it) fails "Out of space" and leaves an empty disk/install,
// and CC's wget, run again, says "File already exists" and writes nothing. The guide's floppy
// paragraph gave no way out; it says to rm disk/install first, which this plays.
func TestAFailedSaveOnTheFloppyIsRedoneAsTheGuideSays(t *testing.T) {
	ctx := testContext(t)
	root, err := repo.Root()
	require.NoError(t, err)
	guide, err := os.ReadFile(filepath.Join(root, "docs/user-guide.md"))
	require.NoError(t, err)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	floppy := t.TempDir()
	// What the floppy held before: with it, the installer no longer fits its 125 KB.
	resp, err := http.Get(g.URL("/trapos/install"))
	require.NoError(t, err)
	installer, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	notes := fsapi.MountCapacity - len(installer) + 1_000
	require.NoError(t, os.WriteFile(filepath.Join(floppy, "notes"), bytes.Repeat([]byte("x"), notes), 0o644))
	withTheFloppy := func() machine.Options { return onAComputerWithTheFloppy(t, floppy, nil) }
	save := "wget " + g.URL("/trapos/install") + " disk/install"

	out := playerSessionOn(ctx, t, withTheFloppy(), save, save)
	unwrapped := strings.Join(strings.Fields(out), " ")
	require.Contains(t, unwrapped, "Out of space", out)
	assert.Contains(t, afterLast(out, "Out of space"), "File already exists", out)
	left, err := os.ReadFile(filepath.Join(floppy, "install"))
	require.NoError(t, err)
	require.Empty(t, left, "the failed wget left an empty disk/install")

	flat := strings.Join(strings.Fields(string(guide)), " ")
	const redo = "running it again says `File already exists`: free some room, then `rm disk/install` before the `wget`"
	require.True(t, strings.Contains(flat, redo), "the guide's floppy paragraph says how to redo a failed save: %q", redo)
	out = playerSessionOn(ctx, t, withTheFloppy(), "rm disk/notes", "rm disk/install", save)
	require.Contains(t, out, "Downloaded as disk/install", out)
}

// TestASavedInstallerOfAnOlderVersionInstallsNothing: an installer saved as a program (on a
// floppy for a friend) and run once the gateway serves a newer client listed the old files and
// recorded the old version, but downloaded the gateway's new files: a client of neither
// version, a file the new one added missing. The password check's answer names the version
// served (servedClient), and the installer stops there, naming the line that installs it.
func TestASavedInstallerOfAnOlderVersionInstallsNothing(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	dir := t.TempDir()
	out := playerSession(ctx, t, dir, true, "wget "+g.URL("/trapos/install")+" install")
	require.Contains(t, out, "Downloaded as install", out)
	saved, err := os.ReadFile(filepath.Join(dir, "install"))
	require.NoError(t, err)
	version := regexp.MustCompile(`(?m)^  version = "[^"]*";$`)
	served := strings.Trim(strings.TrimPrefix(version.FindString(string(saved)), "  version = "), `";`)
	require.NotEmpty(t, served, "the installer names its version")
	// As saved while the gateway served 0.0.1.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "install"), version.ReplaceAll(saved, []byte(`  version = "0.0.1";`)), 0o644))

	out = playerSession(ctx, t, dir, true, "install "+installPassword+" --no-questions")
	unwrapped := strings.Join(strings.Fields(afterLast(out, "> install ")), " ")
	assert.Contains(t, unwrapped, "This installer is trapos-sandbox 0.0.1's, saved before the gateway moved on to "+served+
		". Run the gateway's install line: wget run "+g.URL("/trapos/install")+" Nothing was installed.", out)
	assert.Equal(t, []string{"install"}, diskFiles(t, dir), "nothing was written")
}

// TestTheCommandWithoutItsLibrariesSaysSo: the sandbox program copied alone to another
// computer (on a floppy, for a friend), or run on one where a file of the client was deleted
// (to free space), stopped in require with CC's traceback, "module '/apis/libsandbox' not
// found" and the seven places it looked. It says which file is missing and that the install
// line puts the client back.
func TestTheCommandWithoutItsLibrariesSaysSo(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	dir := t.TempDir()
	out := playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install")+" "+installPassword+" --no-questions")
	require.Contains(t, out, "Installed trapos-sandbox ", out)

	friend := t.TempDir()
	program, err := os.ReadFile(filepath.Join(dir, "programs", "sandbox.lua"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(friend, "sandbox.lua"), program, 0o644))
	out = afterLast(playerSession(ctx, t, friend, false, "sandbox status"), "> sandbox status")
	assert.Contains(t, unwrapped(out), "sandbox: /apis/libsandbox.lua is missing: "+notWholeAdvice, out)
	assert.NotContains(t, out, "not found", "no require traceback")

	require.NoError(t, os.Remove(filepath.Join(dir, "apis", "libsandboxlink.lua")))
	// (The daemon, which the hook starts at boot, says it too: TestTheBootAndAiWithoutALibrarySaySo.)
	out = afterLast(playerSession(ctx, t, dir, false, "sandbox status"), "> sandbox status")
	assert.Contains(t, unwrapped(out), "sandbox: /apis/libsandboxlink.lua is missing: "+notWholeAdviceOf(g), out)
	assert.NotContains(t, out, "not found", "no require traceback")
	// Without the library that reads sandbox.url, the line where to get it.
	settingsLib, err := os.ReadFile(filepath.Join(dir, "apis", "libsandboxsettings.lua"))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, "apis", "libsandboxsettings.lua")))
	out = afterLast(playerSession(ctx, t, dir, false, "sandbox status"), "> sandbox status")
	assert.Contains(t, unwrapped(out), "sandbox: /apis/libsandboxsettings.lua is missing: "+notWholeAdvice, out)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apis", "libsandboxsettings.lua"), settingsLib, 0o644))
	// The fix it names: the install line puts the file back.
	out = playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install"), "sandbox --version")
	assert.Contains(t, afterLast(out, "> sandbox --version"), "sandbox 0.", out)
	assert.FileExists(t, filepath.Join(dir, "apis", "libsandboxlink.lua"))
}

// TestTheBootAndAiWithoutALibrarySaySo: with a file of the client deleted (to free space), the
// daemon the hook starts at boot stopped with CC's traceback, "module '/apis/libsandboxlink'
// not found" and the places require looked, and so did ai copied alone to a friend's computer.
// Both say the sandbox command's one line: the missing file and the install line.
func TestTheBootAndAiWithoutALibrarySaySo(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	dir := t.TempDir()
	out := playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install")+" "+installPassword+" --no-questions")
	require.Contains(t, out, "Installed trapos-sandbox ", out)

	link, err := os.ReadFile(filepath.Join(dir, "apis", "libsandboxlink.lua"))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, "apis", "libsandboxlink.lua")))
	out = playerSession(ctx, t, dir, false, "id")
	boot, _, found := strings.Cut(out, "> id")
	require.True(t, found, out)
	assert.Equal(t, "sandbox: /apis/libsandboxlink.lua is missing: "+notWholeAdviceOf(g), unwrapped(strings.TrimPrefix(boot, "CraftOS 1.9\n")), out)
	assert.NotContains(t, out, "not found", "no require traceback")
	assert.Contains(t, afterLast(out, "> id"), "This is computer #0", "the boot goes on to the shell")

	// The daemon's own library, which the sandbox command does not load.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apis", "libsandboxlink.lua"), link, 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "apis", "libsandboxlog.lua")))
	out = playerSession(ctx, t, dir, false, "id")
	assert.Contains(t, unwrapped(out), "sandbox: /apis/libsandboxlog.lua is missing: "+notWholeAdviceOf(g), out)
	assert.NotContains(t, out, "not found", "no require traceback")

	friend := t.TempDir()
	program, err := os.ReadFile(filepath.Join(dir, "programs", "ai.lua"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(friend, "ai.lua"), program, 0o644))
	out = afterLast(playerSession(ctx, t, friend, false, "ai hello"), "> ai hello")
	assert.Equal(t, "ai: /apis/libsandbox.lua is missing: "+notWholeAdvice, unwrapped(strings.TrimSuffix(strings.TrimSpace(out), ">")), out)
	assert.NotContains(t, out, "not found", "no require traceback")
}

// TestHelpSandboxFindsTheClientsPage: `help sandbox`, a CC player's first habit, printed CC's
// "No help available". The client's page is found by CC's help program at once after the
// install, after a reboot, and on a pocket computer without its scrolling viewer (the page
// fits 26x20); the uninstall takes it away and leaves the player's own help topic as it was.
func TestHelpSandboxFindsTheClientsPage(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	const page = "sandbox connects this computer to a trap-sandbox gateway."
	const aiPage = "ai asks the gateway's AI agent."
	dir := t.TempDir()
	const own = "My own notes on this base.\n"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "help"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "help", "base.txt"), []byte(own), 0o644))

	out := playerSession(ctx, t, dir, false, install, "help sandbox", "reboot", "help sandbox", "help ai", "help base")
	now, afterReboot, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, unwrapped(afterLast(now, "> help sandbox")), page, "before the reboot: "+out)
	assert.Contains(t, unwrapped(afterLast(afterReboot, "> help sandbox")), page, out)
	assert.Contains(t, unwrapped(afterReboot), "ai ", "the page says what ai does: "+out)
	assert.Contains(t, unwrapped(afterReboot), "docs/user-guide.md", "the page says where the guide is: "+out)
	// `help ai`, the other command's page, printed "No help available".
	aiShown, _, _ := strings.Cut(afterLast(afterReboot, "> help ai"), "> help base")
	assert.Contains(t, unwrapped(aiShown), aiPage, out)
	assert.Contains(t, afterLast(out, "> help base"), "My own notes", "the player's topic in /help/ is found too")

	// A pocket computer's 26x20 shows the whole page at once: no viewer waiting for Q.
	for _, topic := range []struct{ name, page string }{{"sandbox", page}, {"ai", aiPage}} {
		rows := pocketSession(ctx, t, dir, "help "+topic.name, "sandbox --version")
		shown := strings.Join(rows, "\n")
		assert.Contains(t, unwrapped(afterLast(shown, "> help "+topic.name)), topic.page, shown)
		assert.NotContains(t, shown, "Help: "+topic.name, "the page fits the screen: "+shown)
		assert.Regexp(t, `> sandbox --version\nsandbox 0\.`, shown, "the next line reached the shell")
		for _, row := range printedRows(rows) {
			assert.LessOrEqual(t, len([]rune(row)), 26, row)
		}
	}

	out = playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install")+" uninstall", "reboot", "help sandbox", "help ai")
	sandboxShown, _, _ := strings.Cut(afterLast(out, "> help sandbox"), "> help ai")
	assert.Contains(t, sandboxShown, "No help available", out)
	assert.Contains(t, afterLast(out, "> help ai"), "No help available", out)
	assert.NoFileExists(t, filepath.Join(dir, "help", "sandbox.txt"))
	assert.NoFileExists(t, filepath.Join(dir, "help", "ai.txt"))
	b, err := os.ReadFile(filepath.Join(dir, "help", "base.txt"))
	require.NoError(t, err)
	assert.Equal(t, own, string(b), "the player's own help topic is untouched")
	assert.NotContains(t, readSettings(t, dir), "help", "no setting of the player's is touched or added")
}

// TestInstallWarnsWhenStartupFilesAreOff: with CC's shell.allow_startup false the boot runs no
// startup file, the hook among them: after the installer's "Run: reboot" the daemon did not
// start, `sandbox` was "No such program", and /programs/sandbox status said to reboot, which
// was what had just failed. The installer says it before the reboot, with the fix, and the
// command (by its path, the only way the shell finds it then) says why the daemon is not
// running; turned on, the reboot starts it.
func TestInstallWarnsWhenStartupFilesAreOff(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	dir := t.TempDir()
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}

	out := playerSessionOn(ctx, t, opts, "set shell.allow_startup false", install, "reboot", "sandbox status", "/programs/sandbox status")
	before, after, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, unwrapped(before), "shell.allow_startup is false: CC runs no startup file at boot, so the daemon would "+
		"not start. Run: set shell.allow_startup true Run: reboot", out)
	assert.Contains(t, unwrapped(afterLast(after, "> /programs/sandbox status")), "The sandbox daemon is not running: "+
		"shell.allow_startup is false, so the computer runs no startup file at boot. Run: set shell.allow_startup true, "+
		"then reboot", out)

	out = playerSessionOn(ctx, t, opts, "set shell.allow_startup true", "reboot", "sandbox health")
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true", out)

	out = playerSessionOn(ctx, t, machine.Options{Overlay: t.TempDir(), HTTP: httpapi.Options{AllowPrivate: true}}, install)
	require.Contains(t, out, "Run: reboot", out)
	assert.NotContains(t, out, "allow_startup", "startup files on, as by default: nothing to say")
}

// serverStartup is a player's server program, as a startup file: it waits (a few seconds, not
// for ever as a real one would) for a sandbox daemon to answer beside it, and says whether one
// did (before the client is installed, nothing).
const serverStartup = `local found, lib = pcall(require, "/apis/libsandbox")
if not found then
  return -- the client is not installed yet
end
for _ = 1, 5 do
  local status = lib.requestStatus()
  if status ~= nil and status.connected then
    print("server: the daemon runs beside me")
    return
  end
  sleep(0.5)
end
print("server: no daemon while I run")
`

// TestInstallNotesAStartupThatRunsBeforeTheDaemon: CC runs /startup.lua before the files in
// /startup/, the hook among them, each to completion, so a server in /startup.lua (the usual
// place for one, in a world of several computers) kept the daemon from ever starting: the
// computer never connected, and nothing had said why. The installer says so, with the fix
// (the program in /startup/, which the hook runs beside the daemon); followed, the daemon
// runs beside the server. Beside a /startup/startup.lua of the player's, where `mv startup.lua
// startup` answered "Destination exists", the command names a free name there. Without a
// /startup.lua there is nothing to say.
func TestInstallNotesAStartupThatRunsBeforeTheDaemon(t *testing.T) {
	// It waits for its sessions' computers (a server that waits for a daemon beside it), and
	// shares nothing (its own gateway and disks): it runs beside the package's other tests that
	// mostly wait.
	t.Parallel()
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup.lua"), []byte(serverStartup), 0o644))
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}

	out := playerSessionOn(ctx, t, opts, install, "reboot")
	before, after, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, unwrapped(before), "Your /startup.lua runs before the daemon at boot: a program in it that never "+
		"ends (a server's loop) keeps the daemon from starting. Move such a program into /startup/, whose files run "+
		"beside the daemon: mv startup.lua startup (or run the install line again with --move-startup) Run: reboot", out)
	assert.Contains(t, lines(before), "mv startup.lua startup", "the command on a row of its own")
	assert.Contains(t, after, "server: no daemon while I run", out)

	out = playerSessionOn(ctx, t, opts, "mv startup.lua startup", "reboot")
	_, after, found = strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, after, "server: the daemon runs beside me", out)

	// /startup/startup.lua is a program of the player's, and startup2.lua too: the command
	// names the next free name, which sorts after the hook, and works as typed.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup.lua"), []byte(serverStartup), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "startup"), 0o755))
	for _, name := range []string{"startup.lua", "startup2.lua"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", name), []byte("print(\"lamps on\")\n"), 0o644))
	}
	opts = machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}
	out = playerSessionOn(ctx, t, opts, install)
	assert.Contains(t, unwrapped(out), "Move such a program into /startup/, whose files run beside the daemon: "+
		"mv startup.lua startup/startup3.lua Run: reboot", out)
	assert.Contains(t, lines(out), "mv startup.lua startup/startup3.lua", "the command on a row of its own")
	out = playerSessionOn(ctx, t, opts, "mv startup.lua startup/startup3.lua", "reboot")
	assert.NotContains(t, out, "Destination exists", out)
	_, after, found = strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, after, "server: the daemon runs beside me", out)
	got, err := os.ReadFile(filepath.Join(dir, "startup", "startup3.lua"))
	require.NoError(t, err, "%v", diskFiles(t, dir))
	assert.Equal(t, serverStartup, string(got))

	out = playerSessionOn(ctx, t, machine.Options{Overlay: t.TempDir(), HTTP: httpapi.Options{AllowPrivate: true}}, install)
	require.Contains(t, out, "Run: reboot", out)
	assert.NotContains(t, out, "runs before the daemon", "no startup file of the player's: nothing to say")
}

// TestInstallAsksToMoveAStartupLua: a /startup.lua runs before the daemon as a /startup file
// does, but where a /startup file was offered the move with a question, a /startup.lua was
// only advised (mv startup.lua startup), a command the player had to type. It is asked the same
// question; with a yes it moves into /startup/ and runs beside the daemon, answered no it stays
// and the advice is as before.
func TestInstallAsksToMoveAStartupLua(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	withStartupLua := func() (string, machine.Options) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "startup.lua"), []byte(serverStartup), 0o644))
		return dir, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}
	}

	dir, opts := withStartupLua()
	out := playerSessionOn(ctx, t, opts, install, "", "y", "reboot")
	before, after, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, unwrapped(before), "Your /startup.lua runs before the daemon at boot: a program in it that never ends "+
		"(a loop) keeps the daemon from starting. In /startup/startup.lua it would run beside the daemon. Move it there? [y/N] y", out)
	assert.Contains(t, unwrapped(before), "Moved /startup.lua to /startup/startup.lua: it runs beside the daemon. To undo: "+
		"mv startup/startup.lua / Run: reboot", out)
	assert.NotContains(t, before, "mv startup.lua startup", out)
	got, err := os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, serverStartup, string(got), "the player's program, byte for byte")
	assert.NotContains(t, diskFiles(t, dir), "startup.lua", out)
	assert.Contains(t, after, "server: the daemon runs beside me", out)

	// Answered no, it stays, and the advice names the command.
	dir, opts = withStartupLua()
	out = playerSessionOn(ctx, t, opts, install, "", "")
	assert.Contains(t, out, "Move it there? [y/N] \n", out)
	assert.Contains(t, unwrapped(out), "Move such a program into /startup/, whose files run beside the daemon: "+
		"mv startup.lua startup Run: reboot", out)
	got, err = os.ReadFile(filepath.Join(dir, "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, serverStartup, string(got))

	// On a pocket computer every row of the question fits its 26 columns.
	dir, _ = withStartupLua()
	rows := pocketSession(ctx, t, dir, install, "", "y")
	require.Contains(t, rows, "mv startup/startup.lua /", strings.Join(rows, "\n"))
	for _, row := range printedRows(rows) {
		assert.LessOrEqual(t, len(row), 26, "row %q", row)
	}
}

// TestInstallNotesAStartupFileBeforeTheHook: CC runs the files in /startup/ in name order,
// each to completion, and a player's whose name sorts before the hook's (00-sandbox.lua:
// 0-server.lua, 00-alarm.lua, a name beginning with a dash) runs before it, so a server there
// kept the daemon from ever starting, as one in /startup.lua did, and nothing said why. The
// installer names it, with a rename that sorts after the hook; followed, the daemon runs
// beside the server. A file that sorts after the hook is not named.
func TestInstallNotesAStartupFileBeforeTheHook(t *testing.T) {
	// It waits for its sessions' computers (a server that waits for a daemon beside it), and
	// shares nothing (its own gateway and disks): it runs beside the package's other tests that
	// mostly wait.
	t.Parallel()
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "startup"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", "0-server.lua"), []byte(serverStartup), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", "lamps.lua"), []byte("print(\"lamps on\")\n"), 0o644))
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}

	out := playerSessionOn(ctx, t, opts, install, "reboot")
	before, after, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, unwrapped(before), "Your /startup/0-server.lua runs before the daemon at boot (CC runs the files "+
		"in /startup/ in name order, the daemon's is 00-sandbox.lua): a program in it that never ends keeps the "+
		"daemon from starting. Rename such a program to sort after it: mv startup/0-server.lua startup/server.lua Run: reboot", out)
	assert.Contains(t, lines(before), "mv startup/0-server.lua startup/server.lua", "the command on a row of its own")
	assert.NotContains(t, before, "lamps.lua", out)
	assert.Contains(t, after, "server: no daemon while I run", out)

	out = playerSessionOn(ctx, t, opts, "mv startup/0-server.lua startup/server.lua", "reboot")
	_, after, found = strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, after, "server: the daemon runs beside me", out)
	assert.Contains(t, after, "lamps on", out)

	// Renamed, the upgrade has nothing to say.
	out = playerSessionOn(ctx, t, opts, install)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ", out)
	assert.NotContains(t, out, "runs before the daemon", out)
}

// TestInstallNamesTwoStartupFilesBeforeTheHookApart: two files of the player's that sort
// before the hook and read alike past their leading marks (-server.lua, 0-server.lua) were each
// given the rename startup/server.lua, the free name when the installer looked: the second mv,
// typed as printed, failed on the first one's file, and its program still ran before the
// daemon. Each is named with a rename of its own; typed as printed, both run after the hook.
func TestInstallNamesTwoStartupFilesBeforeTheHookApart(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "startup"), 0o755))
	programs := map[string]string{"-server.lua": "print(\"one\")\n", "0-server.lua": "print(\"two\")\n"}
	for name, body := range programs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", name), []byte(body), 0o644))
	}
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}

	out := lines(playerSessionOn(ctx, t, opts, install))
	renames := []string{"mv startup/-server.lua startup/server.lua", "mv startup/0-server.lua startup/zserver.lua"}
	for _, mv := range renames {
		assert.Contains(t, out, mv, out)
	}
	playerSessionOn(ctx, t, opts, renames...)
	for name, renamed := range map[string]string{"-server.lua": "server.lua", "0-server.lua": "zserver.lua"} {
		got, err := os.ReadFile(filepath.Join(dir, "startup", renamed))
		require.NoError(t, err, "%s renamed as printed: %v", name, diskFiles(t, dir))
		assert.Equal(t, programs[name], string(got), name)
	}
}

// TestInstallMovesAStartupThatNeverEnds: a /startup file leaves no room for /startup/, and the
// installer's only advice was a line to add at its end, which the usual startup program (a
// door's or a server's loop) never reaches: the daemon never started and nothing said why. The
// installer asks to move the program into /startup/, after the hook, which runs it beside the
// daemon; with the player's yes the computer connects at the reboot while the program runs on,
// and the installer says how to undo it, a command on a row of its own that fits a pocket
// computer's 26 columns.
func TestInstallMovesAStartupThatNeverEnds(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	const door = "print(\"door: locked by \" .. shell.getRunningProgram())\nwhile true do sleep(1) end\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(door), 0o644))

	// No to the host's access, yes to the move.
	c := fakecrafttest.StartWithin(t, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true,
		TimeScale: timeScale, Input: computer.LinesOf(install, "", "y", "reboot")}, testTimeout)
	c.WaitFor(ctx, "door: locked by startup\n")
	c.QueueString("terminate") // the player's Ctrl-T: the loop never ends, and the prompt comes after it
	require.NoError(t, g.WaitLog(ctx, `msg="computer connected"`), "the daemon starts at the reboot beside the loop")
	c.WaitFor(ctx, "door: locked by startup/startup.lua\n")
	before, _, found := strings.Cut(c.Output(), "Goodbye")
	require.True(t, found, c.Output())
	assert.Contains(t, unwrapped(before), "Your /startup runs before the daemon at boot: a program in it that never ends "+
		"(a loop) keeps the daemon from starting. In /startup/startup.lua it would run beside the daemon. Move it there? [y/N] y", c.Output())
	assert.Contains(t, unwrapped(before), "Moved /startup to /startup/startup.lua: it runs beside the daemon. To undo: "+
		"mv startup/startup.lua / Run: reboot", c.Output())
	assert.Contains(t, lines(before), "mv startup/startup.lua /", "the command on a row of its own")
	assert.NotContains(t, before, "add this line", c.Output())
	got, err := os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got), "the player's program, byte for byte")
	assert.Contains(t, diskFiles(t, dir), "startup/00-sandbox.lua")
	c.Stop()

	// An upgrade finds the hook in /startup/ and asks nothing; the program still runs beside the daemon.
	const doorThatEnds = "print(\"door: locked by \" .. shell.getRunningProgram())\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", "startup.lua"), []byte(doorThatEnds), 0o644))
	out := playerSessionOn(ctx, t, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}, install, "reboot", "sandbox health")
	assert.Contains(t, out, "Reinstalled trapos-sandbox ", out)
	assert.NotContains(t, out, "Move it there?", out)
	assert.Contains(t, afterLast(out, "Goodbye"), "door: locked by startup/startup.lua\n", out)
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)

	// The undo, as the installer printed it, puts the program back at the root; the uninstall
	// then leaves the player's files as they were, /startup/ aside.
	out = playerSessionOn(ctx, t, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}},
		"mv startup/startup.lua /", "wget run "+g.URL("/trapos/install")+" uninstall")
	assert.Contains(t, out, "Removed trapos-sandbox ", out)
	got, err = os.ReadFile(filepath.Join(dir, "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, doorThatEnds, string(got))

	// On a pocket computer every row fits its 26 columns, the undo on one of its own.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(doorThatEnds), 0o644))
	rows := pocketSession(ctx, t, dir, install, "", "y")
	at := slices.Index(rows, "mv startup/startup.lua /")
	require.Positive(t, at, strings.Join(rows, "\n"))
	assert.Equal(t, "Run: reboot", rows[at+1], strings.Join(rows, "\n"))
	for _, row := range printedRows(rows) {
		assert.LessOrEqual(t, len(row), 26, "row %q", row)
	}

	// A computer installed the old way, the hook beside a /startup that never named it, is
	// asked again on an upgrade; with a yes the hook moves into /startup/ and the old one goes.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(doorThatEnds), 0o644))
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}
	playerSessionOn(ctx, t, opts, install, "", "")
	require.Contains(t, diskFiles(t, dir), "sandbox-startup.lua")
	out = playerSessionOn(ctx, t, opts, install, "y")
	assert.Contains(t, out, "Reinstalled trapos-sandbox ", out)
	files := diskFiles(t, dir)
	assert.NotContains(t, files, "sandbox-startup.lua", out)
	assert.Subset(t, files, []string{"startup/00-sandbox.lua", "startup/startup.lua"}, out)
}

// TestInstallMovesAStartupThatRunsTheHook: a computer installed the old way, its /startup
// ending with the line the installer advised (shell.run("/sandbox-startup.lua")) after a loop
// that never ends, was not asked about the move and was told only "Run: reboot": the daemon
// never started and nothing said why. It is asked as any /startup file is; with a yes the
// hook moves into /startup/, the one beside goes (so the line never runs a second daemon),
// and the installer says the line is not needed any more.
func TestInstallMovesAStartupThatRunsTheHook(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	const hookLine = "shell.run(\"/sandbox-startup.lua\")\n"
	const door = "print(\"door: locked by \" .. shell.getRunningProgram())\nwhile true do sleep(1) end\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte("print(\"first\")\n"), 0o644))
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}
	out := playerSessionOn(ctx, t, opts, install, "", "") // no to the host's access, no to the move
	require.Contains(t, diskFiles(t, dir), "sandbox-startup.lua", out)

	// The player added the line. Without the question's yes the file stays, and the advice
	// says why the daemon may not start.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte("print(\"first\")\n"+hookLine), 0o644))
	out = playerSessionOn(ctx, t, opts, install, "")
	assert.Contains(t, out, "Move it there? [y/N] \n", out)
	assert.Contains(t, unwrapped(out), "If your /startup never ends, a line at its end never runs: "+
		"run the install line again and let it move /startup. The daemon runs these files: no reboot needed.", out)
	require.Contains(t, diskFiles(t, dir), "sandbox-startup.lua", out)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(door+hookLine), 0o644))

	c := fakecrafttest.StartWithin(t, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true,
		TimeScale: timeScale, Input: computer.LinesOf(install, "y", "reboot")}, testTimeout)
	c.WaitFor(ctx, "door: locked by startup\n")
	c.QueueString("terminate") // the player's Ctrl-T: the loop never ends, and the prompt comes after it
	require.NoError(t, g.WaitLog(ctx, `msg="computer connected"`), "the daemon starts at the reboot beside the loop")
	c.WaitFor(ctx, "door: locked by startup/startup.lua\n")
	before, _, found := strings.Cut(c.Output(), "Goodbye")
	require.True(t, found, c.Output())
	assert.Contains(t, unwrapped(before), "Move it there? [y/N] y", c.Output())
	assert.Contains(t, unwrapped(before), "Moved /startup to /startup/startup.lua: it runs beside the daemon. To undo: "+
		"mv startup/startup.lua / Its line that ran the daemon is not needed now, delete it from /startup/startup.lua: "+
		"shell.run(\"/sandbox-startup.lua\") Run: reboot", c.Output())
	c.Stop()
	files := diskFiles(t, dir)
	assert.NotContains(t, files, "sandbox-startup.lua", "the hook beside would run a second daemon at the line")
	assert.Subset(t, files, []string{"startup/00-sandbox.lua", "startup/startup.lua"})
	got, err := os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, door+hookLine, string(got), "the player's program, byte for byte")
}

// cutAt is a program for the player's disk: `cut makeDir` or `cut move` makes the next
// fs.makeDir("/startup"), or the next fs.move into /startup/, stop the computer there, as a
// chunk unloading or the server stopping would between two steps of the installer; `cut open`
// the first fs.open of /programs/sandbox.lua.new, while the installer writes the package
// beside its place. (CC's os.shutdown never returns: its bios yields for ever after it, as
// here.)
const cutAt = `local step = ...
local function cut() os.shutdown() while true do coroutine.yield() end end
if step == "open" then
  local open = fs.open
  fs.open = function(path, mode)
    if fs.combine(path, "") == "programs/sandbox.lua.new" then cut() end
    return open(path, mode)
  end
elseif step == "makeDir" then
  local makeDir = fs.makeDir
  fs.makeDir = function(path)
    if path == "/startup" or path == "startup" then cut() end
    return makeDir(path)
  end
else
  local move = fs.move
  fs.move = function(from, to)
    if fs.getDir(to) == "startup" then cut() end
    return move(from, to)
  end
end
`

// TestUninstallAfterAStoppedInstall: a first install stopped while it wrote the package beside
// its place left those files (<file>.new, the hook's) and no record of them, and the uninstall
// answered "not installed by this installer: nothing to remove", leaving them on the drive
// for good. It removes them, names how many, and leaves the player's files as they were.
func TestUninstallAfterAStoppedInstall(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.lua"), []byte(cutAt), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "apis"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apis", "mine.lua"), []byte("return 1\n"), 0o644))
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true, TimeScale: timeScale,
		Input: computer.LinesOf("cut open", "wget run "+g.URL("/trapos/install")+" "+installPassword+" --no-questions", "echo never typed")}
	res, out := fakecrafttest.Run(ctx, t, opts)
	require.NoError(t, res.Err, out)
	require.False(t, res.InputEnded, "the install was cut before its end:\n%s", out)
	require.Contains(t, diskFiles(t, dir), "apis/libsandbox.lua.new", "the cut left the package half-written:\n%s", out)

	out = playerSessionOn(ctx, t, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}},
		"wget run "+g.URL("/trapos/install")+" uninstall")
	assert.Regexp(t, `Removed \d+ files that a stopped install had left\.`, strings.Join(lines(out), " "), out)
	assert.Equal(t, []string{"apis", "apis/mine.lua", "cut.lua"}, diskFiles(t, dir), out)
}

// TestInstallAfterAStoppedInstallCountsItsFiles: the files a stopped install left beside their
// places are written over by the next run, so the room they hold is the install's own. The
// count took them for the player's: on a drive that the package fits once they are
// overwritten, it asked the player to free their size in files of their own.
func TestInstallAfterAStoppedInstallCountsItsFiles(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"

	reference := t.TempDir()
	out := playerSessionOn(ctx, t, machine.Options{Overlay: reference, HTTP: httpapi.Options{AllowPrivate: true}}, install)
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	installed := ccDiskCost(t, reference)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.lua"), []byte(cutAt), 0o644))
	res, out := fakecrafttest.Run(ctx, t, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true,
		TimeScale: timeScale, Input: computer.LinesOf("cut open", install, "echo never typed")})
	require.NoError(t, res.Err, out)
	require.False(t, res.InputEnded, "the install was cut before its end:\n%s", out)
	var left int64
	for _, name := range diskFiles(t, dir) {
		if strings.HasSuffix(name, ".new") {
			info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
			require.NoError(t, err)
			left += max(info.Size(), 500) // CC's accounting, as ccDiskCost's
		}
	}
	require.Greater(t, left, int64(100_000), "the cut left much of the package: %v", diskFiles(t, dir))

	// Room for the package once what the cut left is written over, and 5 KB (the records'
	// estimate); not for the package beside it.
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true},
		SpaceLimit: 500 + ccDiskCost(t, dir) - left + installed + 5_000}
	out = playerSessionOn(ctx, t, opts, install)
	assert.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.NotContains(t, out, "too little room", out)
}

// TestAStoppedMoveLeavesTheProgramWhereCCRunsIt: the move of a /startup file into /startup/
// cannot be one rename (a directory cannot take the name of the file it replaces). It went
// through /.trapos-sandbox-startup.moving, so a computer stopped between its steps (its chunk
// unloaded, the server stopped) booted without the player's program, under a hidden name CC
// never runs, until the install line ran again. It goes through /startup.lua, which CC runs at
// boot in /startup's place: stopped at each step, the next boot runs the program, and the
// install line run again offers the move of that /startup.lua (--move-startup makes it).
func TestAStoppedMoveLeavesTheProgramWhereCCRunsIt(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	const door = "print(\"door: locked by \" .. shell.getRunningProgram())\n"
	for _, step := range []string{"makeDir", "move"} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(door), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.lua"), []byte(cutAt), 0o644))
		opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true, TimeScale: timeScale}
		cutOpts := opts
		cutOpts.Input = computer.LinesOf("cut "+step, install, "", "y", "echo never typed")
		res, out := fakecrafttest.Run(ctx, t, cutOpts)
		require.NoError(t, res.Err, out)
		require.False(t, res.InputEnded, "the install was cut before its end:\n%s", out)
		cutDisk := diskFiles(t, dir)

		// The next boot, before anything is typed, runs the player's program.
		out = playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup", "reboot", "sandbox health")
		boot, _, found := strings.Cut(out, "> ") // what ran before the first prompt
		require.True(t, found, out)
		assert.Contains(t, boot, "door: locked by startup.lua\n", "%s: the boot after the cut runs the program: %v\n%s", step, cutDisk, out)
		assert.NotContains(t, cutDisk, ".trapos-sandbox-startup.moving", step)

		// The line run again, as a script would, makes the move the player agreed to.
		before, after, found := strings.Cut(out, "Goodbye")
		require.True(t, found, out)
		assert.Contains(t, unwrapped(before), "Moved /startup.lua to /startup/startup.lua: it runs beside the daemon. To undo: "+
			"mv startup/startup.lua / Run: reboot", "%s\n%s", step, out)
		got, err := os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
		require.NoError(t, err, step)
		assert.Equal(t, door, string(got), "the player's program, byte for byte")
		assert.Contains(t, after, "door: locked by startup/startup.lua\n", out)
		assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)
	}

	// An upgrade of a computer whose /startup ends with the line an earlier install advised:
	// stopped mid-move, the next boot runs the program and its line the old daemon.
	withLine := door + "shell.run(\"/sandbox-startup.lua\")\n"
	cutUpgrade := func() (string, machine.Options) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(withLine), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.lua"), []byte(cutAt), 0o644))
		opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true, TimeScale: timeScale}
		out := playerSessionOn(ctx, t, opts, install, "", "") // no to the host's access, no to the move
		require.Contains(t, diskFiles(t, dir), "sandbox-startup.lua", out)
		cutOpts := opts
		cutOpts.Input = computer.LinesOf("cut makeDir", install, "y", "echo never typed")
		res, out := fakecrafttest.Run(ctx, t, cutOpts)
		require.NoError(t, res.Err, out)
		require.False(t, res.InputEnded, "the install was cut before its end:\n%s", out)
		return dir, opts
	}
	// The move made by the line run again says, as an unstopped one does, that the line is
	// not needed.
	dir, opts := cutUpgrade()
	out := playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup")
	boot, _, _ := strings.Cut(out, "> ")
	assert.Contains(t, boot, "door: locked by startup.lua\n", out)
	assert.Contains(t, unwrapped(out), "Moved /startup.lua to /startup/startup.lua: it runs beside the daemon. To undo: "+
		"mv startup/startup.lua / Its line that ran the daemon is not needed now, delete it from /startup/startup.lua: "+
		"shell.run(\"/sandbox-startup.lua\") Run: reboot", out)
	assert.NotContains(t, diskFiles(t, dir), "sandbox-startup.lua", out)

	// Answered no, the hook goes into /startup/ all the same and the one beside is removed:
	// the line, which CC then answers "No such program" at every boot, is named to delete,
	// and deleted as told, the boot runs the program and the daemon without an error.
	dir, opts = cutUpgrade()
	out = playerSessionOn(ctx, t, opts, install, "n")
	assert.Contains(t, unwrapped(out), "The startup hook /sandbox-startup.lua is removed, the daemon starts from /startup/ now: "+
		"delete its line from /startup.lua: shell.run(\"/sandbox-startup.lua\") Your /startup.lua runs before the daemon", out)
	assert.NotContains(t, diskFiles(t, dir), "sandbox-startup.lua", out)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup.lua"), []byte(door), 0o644)) // the line deleted
	out = playerSessionOn(ctx, t, opts, "sandbox health")
	assert.Contains(t, out, "door: locked by startup.lua\n", out)
	assert.NotContains(t, out, "No such program", out)
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)
}

// TestNoQuestionsAloneLeavesAStoppedMovesProgramWhereItRuns: a computer stopped in the middle
// of moving /startup into /startup/ (the player's yes given) has the program at /startup.lua,
// which CC runs at boot as it ran /startup. --no-questions alone answers the move no, as it does
// on any computer: the installer cannot tell that /startup.lua from one the player keeps there,
// and moves no program without a yes. So the program stays, byte for byte, where it runs; the
// advice names the mv and, for the script that ran the line, the option that is the yes.
func TestNoQuestionsAloneLeavesAStoppedMovesProgramWhereItRuns(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	const door = "print(\"door: locked by \" .. shell.getRunningProgram())\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(door), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cut.lua"), []byte(cutAt), 0o644))
	opts := machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true, TimeScale: timeScale}
	cutOpts := opts
	cutOpts.Input = computer.LinesOf("cut move", install, "", "y", "echo never typed")
	res, out := fakecrafttest.Run(ctx, t, cutOpts)
	require.NoError(t, res.Err, out)
	require.False(t, res.InputEnded, "the install was cut before its end:\n%s", out)

	out = playerSessionOn(ctx, t, opts, install+" --no-questions", "reboot")
	assert.Contains(t, unwrapped(out), "Move such a program into /startup/, whose files run beside the daemon: "+
		"mv startup.lua startup (or run the install line again with --move-startup) Run: reboot", out)
	assert.NotContains(t, out, "Moved /startup.lua", out)
	got, err := os.ReadFile(filepath.Join(dir, "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got), "the player's program, byte for byte, where CC runs it")
	assert.NoFileExists(t, filepath.Join(dir, "startup", "startup.lua"))
	_, afterReboot, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, afterReboot, "door: locked by startup.lua\n", out)

	// Answered at the question, the option is not named: the player just said no. (The daemon
	// runs since that reboot, and nothing changed: no reboot is asked for.)
	out = playerSessionOn(ctx, t, opts, install, "n")
	assert.Contains(t, unwrapped(out), "mv startup.lua startup The daemon runs these files: no reboot needed.", out)
	assert.NotContains(t, out, "--move-startup", out)
}

// TestInstallFinishesAStoppedMove: earlier installers moved a /startup file into /startup/
// through /.trapos-sandbox-startup.moving, so a computer stopped between those steps has the
// player's program there, under a hidden name that CC never runs at boot. The next run of the
// install line (a script's, asking nothing) finishes the move and says so in one line; when
// /startup or /startup/startup.lua is another program by then, the old one goes to a name of
// its own and neither is overwritten.
func TestInstallFinishesAStoppedMove(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	const door = "print(\"door: locked by \" .. shell.getRunningProgram())\n"
	const moving = ".trapos-sandbox-startup.moving"
	// The disk as such an installer left it, stopped before fs.makeDir("/startup") (step
	// makeDir) or before the move into the directory it made (step move). (This one goes by
	// /startup.lua: TestAStoppedMoveLeavesTheProgramWhereCCRunsIt.)
	stoppedMove := func(step string) (string, machine.Options) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, moving), []byte(door), 0o644))
		if step == "move" {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "startup"), 0o755))
		}
		return dir, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Bare: true, TimeScale: timeScale}
	}

	for _, step := range []string{"makeDir", "move"} {
		dir, opts := stoppedMove(step)
		out := playerSessionOn(ctx, t, opts, install+" --no-questions", "reboot", "sandbox health")
		before, after, found := strings.Cut(out, "Goodbye")
		require.True(t, found, out)
		assert.Contains(t, unwrapped(before), "An install stopped while it moved /startup: finished moving it to /startup/startup.lua.", step, out)
		assert.Contains(t, unwrapped(before), "To undo: mv startup/startup.lua / Run: reboot", out)
		got, err := os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
		require.NoError(t, err, step)
		assert.Equal(t, door, string(got), "the player's program, byte for byte")
		assert.NotContains(t, diskFiles(t, dir), moving, step)
		assert.Contains(t, after, "door: locked by startup/startup.lua\n", out)
		assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)
	}

	// /startup is a program again (the player wrote another when the door stayed open): it
	// stays, and the old one goes where the player sees it, not hidden.
	dir, opts := stoppedMove("makeDir")
	const newDoor = "print(\"new door\")\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(newDoor), 0o644))
	out := playerSessionOn(ctx, t, opts, install+" --no-questions")
	assert.Contains(t, unwrapped(out), "An install stopped while it moved /startup, which is another program now: "+
		"the one it moved is at /startup.old.", out)
	got, err := os.ReadFile(filepath.Join(dir, "startup"))
	require.NoError(t, err)
	assert.Equal(t, newDoor, string(got))
	got, err = os.ReadFile(filepath.Join(dir, "startup.old"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got))
	assert.NotContains(t, diskFiles(t, dir), moving)

	// /startup/startup.lua is another program, and /startup.old taken too: the next free name.
	dir, opts = stoppedMove("move")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", "startup.lua"), []byte(newDoor), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup.old"), []byte("notes\n"), 0o644))
	out = playerSessionOn(ctx, t, opts, "wget run "+g.URL("/trapos/install")+" uninstall")
	assert.Contains(t, unwrapped(out), "An install stopped while it moved /startup, and /startup/startup.lua is another program now: "+
		"the one it moved is at /startup.old.2.", out)
	for path, want := range map[string]string{"startup/startup.lua": newDoor, "startup.old": "notes\n", "startup.old.2": door} {
		got, err := os.ReadFile(filepath.Join(dir, path))
		require.NoError(t, err)
		assert.Equal(t, want, string(got), path)
	}

	// A drive too full for /startup/: the program goes back to /startup, where CC runs it.
	dir, opts = stoppedMove("makeDir")
	opts.SpaceLimit = ccDiskCost(t, dir) + 250
	out = playerSessionOn(ctx, t, opts, "wget run "+g.URL("/trapos/install")+" uninstall")
	assert.Contains(t, unwrapped(out), "An install stopped while it moved /startup: it is back, the drive has no room for /startup/.", out)
	got, err = os.ReadFile(filepath.Join(dir, "startup"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got))
	assert.NotContains(t, diskFiles(t, dir), moving)
}

// TestInstallMovesAStartupFromAScript: a server operator installing on many computers by a
// script could only say no to the move of a /startup file (--no-questions), so every door
// and server among them kept the daemon from starting. --move-startup says yes without the
// question, with --no-questions too, and moves a /startup.lua the same way (the installer only
// advises that move, asking nothing); where the move cannot be made (a /startup.lua would run
// in its place, a /startup/startup.lua is there) the line says why, and where there is nothing
// to move it changes nothing.
func TestInstallMovesAStartupFromAScript(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	const door = "print(\"door: locked by \" .. shell.getRunningProgram())\n"
	withStartup := func(files map[string]string) (string, machine.Options) {
		dir := t.TempDir()
		for name, body := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
		}
		return dir, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}}
	}

	dir, opts := withStartup(map[string]string{"startup": door})
	out := playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup", "reboot", "sandbox health")
	before, after, found := strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.NotContains(t, before, "Move it there?", out)
	assert.Contains(t, unwrapped(before), "Moved /startup to /startup/startup.lua: it runs beside the daemon. To undo: "+
		"mv startup/startup.lua / Run: reboot", out)
	got, err := os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got), "the player's program, byte for byte")
	assert.Contains(t, after, "door: locked by startup/startup.lua\n", out)
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)

	// Without --no-questions it still asks about the host's access, and not about the move.
	dir, opts = withStartup(map[string]string{"startup": door})
	out = playerSessionOn(ctx, t, opts, install+" --move-startup", "")
	assert.Contains(t, out, "Allow it? [y/N]", out)
	assert.NotContains(t, out, "Move it there?", out)
	assert.Contains(t, diskFiles(t, dir), "startup/startup.lua", out)

	// Beside a /startup.lua, which CC would run in its place, it is not moved, and the line says why.
	dir, opts = withStartup(map[string]string{"startup": door, "startup.lua": "print(\"other\")\n"})
	out = playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup")
	assert.Contains(t, unwrapped(out), "/startup was not moved: CC would run your /startup.lua in its place.", out)
	got, err = os.ReadFile(filepath.Join(dir, "startup"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got))

	// One that runs the hook itself (the line an earlier install advised) moves too, and the
	// line says that its line is not needed now.
	withLine := door + "shell.run(\"/sandbox-startup.lua\")\n"
	dir, opts = withStartup(map[string]string{"startup": withLine})
	out = playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup")
	assert.Contains(t, unwrapped(out), "Moved /startup to /startup/startup.lua", out)
	assert.Contains(t, unwrapped(out), "Its line that ran the daemon is not needed now", out)
	got, err = os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, withLine, string(got))

	// A /startup.lua, which CC also runs before the daemon, moves the same way; where
	// /startup/startup.lua is another program it stays, and the line says why.
	dir, opts = withStartup(map[string]string{"startup.lua": door})
	out = playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup", "reboot", "sandbox health")
	before, after, found = strings.Cut(out, "Goodbye")
	require.True(t, found, out)
	assert.Contains(t, unwrapped(before), "Moved /startup.lua to /startup/startup.lua: it runs beside the daemon. To undo: "+
		"mv startup/startup.lua / Run: reboot", out)
	assert.NotContains(t, before, "runs before the daemon", out)
	got, err = os.ReadFile(filepath.Join(dir, "startup", "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got))
	assert.NotContains(t, diskFiles(t, dir), "startup.lua", out)
	assert.Contains(t, after, "door: locked by startup/startup.lua\n", out)
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)

	dir, opts = withStartup(map[string]string{"startup.lua": door})
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "startup"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup", "startup.lua"), []byte("print(\"other\")\n"), 0o644))
	out = playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup")
	assert.Contains(t, unwrapped(out), "/startup.lua was not moved: /startup/startup.lua is another program.", out)
	got, err = os.ReadFile(filepath.Join(dir, "startup.lua"))
	require.NoError(t, err)
	assert.Equal(t, door, string(got))

	// --no-questions alone keeps the /startup file where it is; the advice names the option
	// that moves it, since the same line run again would not ask.
	_, opts = withStartup(map[string]string{"startup": door})
	out = playerSessionOn(ctx, t, opts, install+" --no-questions")
	assert.Contains(t, unwrapped(out), "If your /startup never ends, a line at its end never runs: "+
		"run the install line again with --move-startup.", out)

	// Nothing to move: the same line installs as without it, and says nothing of a move.
	_, opts = withStartup(nil)
	out = playerSessionOn(ctx, t, opts, install+" --no-questions --move-startup")
	assert.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.NotContains(t, out, "moved", out)
	assert.NotContains(t, out, "Moved", out)

	// --help names it.
	out = playerSession(ctx, t, t.TempDir(), true, "wget run "+g.URL("/trapos/install")+" --help")
	assert.Contains(t, lines(out), "  --move-startup", out)
}

// TestUninstallAfterAPassword: the install line brought back with the Up key and the word
// uninstall added after its password answered "Nothing done: 'uninstall' is a second
// password." and pointed at --help, as if the word were a password. It says that uninstall
// takes no password and gives the line to run, on a row of its own; nothing is removed.
func TestUninstallAfterAPassword(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword+" --no-questions")
	installed := installerFiles(t, dir)

	for _, words := range []string{installPassword + " uninstall", "uninstall " + installPassword} {
		out := playerSession(ctx, t, dir, true, install+" "+words)
		assert.Contains(t, strings.Join(lines(out), " "), "Nothing done: uninstall takes no password. To uninstall, run: "+install+" uninstall", out)
		assert.Contains(t, lines(out), install, "the line begins a row of its own (the word wraps after it):\n%s", out)
		assert.NotContains(t, out, "second password", out)
		assert.NotContains(t, out, "--help", out)
		assert.Equal(t, installed, installerFiles(t, dir), words)
	}
	out := playerSession(ctx, t, dir, true, install+" uninstall")
	assert.Contains(t, out, "Removed trapos-sandbox ", out)
}

// TestMistypedUninstallAfterAPassword: the word uninstall added after the password with a
// capital or a letter off (Uninstall, unistall) read as a password with a space: "'Uninstall'
// is a second password" and the line with "choose-a-long-secret Uninstall" in quotes, which
// would have installed rather than uninstalled. It says that uninstall takes no password and
// gives the word and its line; nothing is removed.
func TestMistypedUninstallAfterAPassword(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword+" --no-questions")
	installed := installerFiles(t, dir)

	for words, word := range map[string]string{
		installPassword + " Uninstall": "the word is uninstall, in lower case:",
		installPassword + " unistall":  "the word is uninstall:",
		"UNINSTALL " + installPassword: "the word is uninstall, in lower case:",
	} {
		out := playerSession(ctx, t, dir, true, install+" "+words)
		joined := strings.Join(lines(out), " ")
		assert.Contains(t, joined, "Nothing done: uninstall takes no password. To uninstall, "+word+" "+install+" uninstall", out)
		assert.Contains(t, lines(out), install, "the line begins a row of its own (the word wraps after it):\n%s", out)
		assert.NotContains(t, out, "second password", out)
		assert.NotContains(t, out, "quotes", out)
		assert.Equal(t, installed, installerFiles(t, dir), words)
	}

	// A second word far from uninstall is still a password with a space.
	out := playerSession(ctx, t, dir, true, install+" "+installPassword+" upgrade")
	assert.Contains(t, out, "'upgrade' is a second password", out)
}

// TestAPasswordWithASpaceGoesInQuotes: a password with a space typed on the line as it is
// (CC's shell splits it into two words) read "'pass' is a second password" with no hint that
// quotes keep it one word. The refusal gives the line with the words quoted, on a row of its
// own; that line, typed, installs (CC's shell groups "double quotes").
func TestAPasswordWithASpaceGoesInQuotes(t *testing.T) {
	ctx := testContext(t)
	const password = "my pass"
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", password, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, true, install+" my pass --no-questions")
	joined := strings.Join(lines(out), " ")
	quoted := install + ` "my pass" --no-questions`
	assert.Contains(t, joined, "Nothing done: 'pass' is a second password.", out)
	assert.Contains(t, joined, "A password with a space goes in quotes: "+quoted, out)
	assert.True(t, slices.ContainsFunc(lines(out), func(row string) bool { return strings.HasPrefix(row, install) }),
		"the line begins a row of its own:\n%s", out)
	assert.False(t, slices.ContainsFunc(lines(out), func(row string) bool { return strings.HasSuffix(row, `"my`) }),
		"the quoted password is not broken at its space:\n%s", out)
	assert.Empty(t, diskFiles(t, dir), out)
	// The fix follows the problem: the options' --help stood between them, though the
	// options were right (the user guide says none).
	assert.NotContains(t, out, "--help", out)

	// On a pocket computer's 26 columns the line broke inside its quotes ("my / pass"), which
	// read as two words again: the quoted password starts a row of its own.
	rows := pocketSession(ctx, t, dir, install+" my pass --no-questions")
	assert.Contains(t, rows, `"my pass" --no-questions`, strings.Join(rows, "\n"))
	assert.NotContains(t, strings.Join(rows, "\n"), "--help")
	assert.Empty(t, diskFiles(t, dir), out)

	out = playerSession(ctx, t, dir, true, quoted, "reboot", "sandbox health")
	assert.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)

	// In single quotes, as a Unix shell takes it: CC's shell keeps them as part of the words,
	// and the line offered was "'my pass'", a password with the quotes in it, which the
	// gateway refuses. The line offered leaves them out, and says why.
	out = playerSession(ctx, t, t.TempDir(), true, install+" 'my pass' --no-questions")
	joined = strings.Join(lines(out), " ")
	assert.Contains(t, joined, "A password with a space goes in double quotes (CC's shell keeps a ' as part of the password): "+quoted, out)
	assert.NotContains(t, out, `"'my`, out)
	assert.Contains(t, joined, `Nothing done: "pass'" is a second password.`, out) // not 'pass''
	// One word in single quotes is a password with the quotes in it: refused, it says so.
	out = playerSession(ctx, t, t.TempDir(), true, install+" 'secret' --no-questions")
	assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused it.", out)
	assert.Contains(t, strings.Join(lines(out), " "), "The password is in single quotes, which CC's shell keeps as part of it: if they are not, type it without.", out)

	// Two options in a row is not a password with a space: no quotes offered.
	out = playerSession(ctx, t, t.TempDir(), true, install+" --allow-files=read allow-exec=no")
	assert.NotContains(t, out, "quotes", out)
}

// TestTwoPasswordsAreNotJoined: a password and a second one in quotes (pw "my pass") was
// offered the line with "pw my pass", the two joined into a third, as if CC's shell had split
// one password at its space; quotes make a word with a space, so these were two passwords,
// which the refusal says. So is an empty one in quotes (pw ""), offered "pw " before.
func TestTwoPasswordsAreNotJoined(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", "my pass", "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()
	for _, words := range []struct{ typed, named string }{
		{`pw "my pass"`, `'pw' and 'my pass'`},
		{`"my pass" pw --no-questions`, `'my pass' and 'pw'`},
		{`"my pass" "it's"`, `'my pass' and "it's"`},
		{`pw ""`, `'pw' and ''`}, // offered "pw ", a password with a space at its end
		{`"" pw`, `'' and 'pw'`},
	} {
		out := playerSession(ctx, t, dir, true, install+" "+words.typed)
		joined := strings.Join(lines(out), " ")
		assert.Contains(t, joined, "Nothing done: two passwords given, "+words.named+".", out)
		assert.Contains(t, joined, "The line takes one: the gateway's, in quotes if it has a space.", out)
		assert.NotContains(t, out, "goes in quotes", out)
		assert.NotContains(t, out, "--help", out)
		assert.Empty(t, diskFiles(t, dir), out)
	}
}

// TestMistypedUninstallThatInstalls: a gateway without a password takes the word uninstall
// mistyped as a password, so the line installs; it names the word all the same (the player
// meant to remove the client and was told nothing).
func TestMistypedUninstallThatInstalls(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--opencode-url", opencodefake.ClosedPortURL(t)}})
	out := playerSession(ctx, t, t.TempDir(), true, "wget run "+g.URL("/trapos/install")+" Uninstall", "")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	hint := lines(out)[slices.Index(lines(out), "To uninstall, the word is uninstall, in lower case:")+1:]
	assert.Equal(t, "wget run "+g.URL("/trapos/install")+" uninstall", strings.Join(hint[:2], " "), "the line to run on rows of its own:\n%s", out)

	out = playerSession(ctx, t, t.TempDir(), true, "wget run "+g.URL("/trapos/install")+" install", "")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.NotContains(t, out, "To uninstall", "a password that is no mistyped uninstall gets no hint")
}

// TestNumericPasswordThroughSetup: a password of digits. `set` refuses it once the daemon has
// defined sandbox.password as text (CC's set turns digits into a number), and `sandbox setup`
// keeps it: Enter keeps the URL, the password (shown masked) and the host's access, which it
// says changes nothing, and the health result follows.
func TestNumericPasswordThroughSetup(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", "1234", "--opencode-url", oc.URL}})
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, true,
		"wget run "+g.URL("/trapos/install"), "1234", "y", "reboot",
		"set sandbox.password 1234",
		"sandbox setup", "", "", "", "", "", "")
	assert.Contains(t, out, `"1234" is not a valid string.`)
	setup := afterLast(out, "> sandbox setup")
	assert.Contains(t, setup, "Gateway password (Enter keeps it) [********]: \n", out)
	assert.Contains(t, setup, "Files: none, read or write [write]: \n", out)
	assert.Contains(t, setup, "Run Lua and programs? yes or no [yes]: \n", out)
	assert.Contains(t, setup, "Screen: none, view or control [control]: \n", out, "the installer's yes included the screen")
	assert.Contains(t, setup, "Nothing changed.\nAccess: files write, exec true, screen control.\nai confirm: true\nsandboxOk: true\nopencodeOk: true\n", out)
	settings := readSettings(t, dir)
	assert.Contains(t, settings, `[ "sandbox.password" ] = "1234"`)
	assert.Contains(t, settings, `[ "sandbox.allow_files" ] = "write"`)
	assert.Contains(t, settings, `[ "sandbox.allow_exec" ] = true`)
}

// TestFailedUpgradeLeavesTheOldInstall: an upgrade whose last download fails swaps nothing in:
// no file changes, no .new file stays behind, and the old install still answers. The installer
// is the real one, fetched from the gateway; only its file URL is pointed through a proxy that
// fails one file.
func TestFailedUpgradeLeavesTheOldInstall(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL}})
	dir := t.TempDir()
	playerSession(ctx, t, dir, true, "wget run "+g.URL("/trapos/install")+" "+installPassword, "")
	before := diskSnapshot(t, dir)

	const failing = "programs/sandbox.lua"
	proxy := gatewayProxy(t, g, func(path string) bool { return path == "/trapos/files/"+failing },
		func(path, body, proxyURL string) string {
			if path != "/trapos/install" {
				return body
			}
			return strings.Replace(body, g.URL("/trapos/files/"), proxyURL+"/trapos/files/", 1)
		})

	out := playerSession(ctx, t, dir, true, "wget run "+proxy.URL+"/trapos/install", "reboot", "sandbox health")
	assert.Contains(t, out, "Could not get /"+failing+":")
	// the line to run on a row of its own: mid-sentence, the screen broke it ("again: wget" / "run http://…")
	assert.Contains(t, strings.Join(lines(out), " "), "Check that the gateway runs, then run the install line again:")
	assert.Contains(t, lines(out), "wget run "+g.URL("/trapos/install"), out)
	// one row of the 51 columns
	assert.Regexp(t, `(?m)^Nothing changed: trapos-sandbox \d+\.\d+\.\d+ still works\.$`, out)
	assert.NotContains(t, out, "Upgraded")
	assertHealthy(t, out)
	assert.Equal(t, before, diskSnapshot(t, dir), "the failed upgrade changed the disk")
}

// TestInstallOnTrapOSAddsNoHook: a computer where the shell finds ccpm is TrapOS, whose
// launcher starts the package's autostart daemon itself: the installer writes no hook.
func TestInstallOnTrapOSAddsNoHook(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--opencode-url", opencodefake.ClosedPortURL(t)}})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ccpm.lua"), []byte("print(\"ccpm\")\n"), 0o644))

	out := playerSession(ctx, t, dir, false, "wget run "+g.URL("/trapos/install")+" pw", "")
	// No daemon runs yet: TrapOS starts it at the next boot, the step the "Then" comes after.
	assert.Contains(t, out, "TrapOS starts the daemon at boot (autostart).\nRun: reboot\nThen: sandbox health\n", out)
	files := diskFiles(t, dir)
	assert.NotContains(t, files, "startup")
	assert.NotContains(t, files, "sandbox-startup.lua")
	assert.Contains(t, files, "servers/sandbox.lua")

	// And on a pocket computer's 26 columns.
	pocketDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(pocketDir, "ccpm.lua"), []byte("print(\"ccpm\")\n"), 0o644))
	rows := pocketSession(ctx, t, pocketDir, "wget run "+g.URL("/trapos/install")+" pw --no-questions")
	assert.Contains(t, strings.Join(rows, "\n"), "(autostart).\nRun: reboot\nThen: sandbox health\n", strings.Join(rows, "\n"))
}

// TestAnInstallThatTakesAComputerForTrapOSSaysWhichFileDecidedIt: a program named ccpm is all
// that tells TrapOS apart, and a host with sandbox.allow_files write (or the player) can put
// one in /. The next install line, an upgrade included, then takes a plain CC computer for
// TrapOS and removes the startup hook its last install put there: the daemon starts at no
// boot. The install line said only "TrapOS starts the daemon at boot (autostart)."; it names
// the hook it removed and the file that decided it, and the way back.
func TestAnInstallThatTakesAComputerForTrapOSSaysWhichFileDecidedIt(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " pw"
	dir := t.TempDir()
	playerSession(ctx, t, dir, false, install, "")
	require.Contains(t, diskFiles(t, dir), "startup/00-sandbox.lua")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "ccpm.lua"), []byte("print(\"not ccpm\")\n"), 0o644))
	out := strings.Join(lines(playerSession(ctx, t, dir, false, install)), " ")
	assert.NotContains(t, diskFiles(t, dir), "startup/00-sandbox.lua", "TrapOS's autostart, not the hook, starts the daemon there")
	assert.Contains(t, out, "TrapOS starts the daemon at boot (autostart). Removed the startup hook /startup/00-sandbox.lua "+
		"of the last install: /ccpm.lua is TrapOS's ccpm. If this computer is not TrapOS, delete /ccpm.lua and run the "+
		"install line again, or the daemon starts at no boot. The daemon runs these files: no reboot needed. Run: sandbox health")
	// The hook started the daemon at this boot: the check is the step, not a "Then" after none.
	assert.NotContains(t, out, "Then: sandbox health", out)

	// The way back it names: the file deleted, the install line puts the hook back.
	require.NoError(t, os.Remove(filepath.Join(dir, "ccpm.lua")))
	out = playerSession(ctx, t, dir, false, install)
	assert.Contains(t, diskFiles(t, dir), "startup/00-sandbox.lua", out)
}

// diskSnapshot maps every file under dir to its content.
func diskSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	for _, f := range installerFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err == nil {
			snap[f] = string(b)
		}
	}
	return snap
}

// TestInteractiveInstallAsksAboutTheHost: a first install typed without arguments asks once
// whether the host may work with the computer; "y" allows files and exec, and an upgrade
// asks nothing and keeps the answer.
func TestInteractiveInstallAsksAboutTheHost(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, false, install, "", "y")
	assert.Contains(t, out, "Allow it? [y/N]")
	assert.NotRegexp(t, `(?m)^write$`, out, "the question wraps at the screen's width, not a word left alone on a line")
	assert.Contains(t, out, "Allowed. Undo with:\nset sandbox.allow_files none\nset sandbox.allow_exec false\nset sandbox.allow_screen none\n")
	settings := readSettings(t, dir)
	assert.Contains(t, settings, `[ "sandbox.allow_files" ] = "write"`)
	assert.Contains(t, settings, `[ "sandbox.allow_exec" ] = true`)

	out = playerSession(ctx, t, dir, false, install)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.NotContains(t, out, "Allow it?")
	// The same settings, maybe in another order: settings.save writes them in the order
	// pairs walks the settings table, which CC's Lua (and fakecraft's) lays out by the
	// table's history, here the file loaded and each value set again.
	assert.ElementsMatch(t, strings.Split(settings, "\n"), strings.Split(readSettings(t, dir), "\n"))
}

// TestInstallChecksThePassword: the installer asks the gateway before it writes anything. A
// wrong password (here against a password with a non-ASCII letter, typed as CC stores it) is
// named with its fix and installs nothing; the right one installs and the daemon gets in
// with it; a wrong one on an upgrade changes nothing, and one set on the computer is named as
// that; a script without one is told it needs one.
func TestInstallChecksThePassword(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	const password = "pässwort"
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", password, "--opencode-url", oc.URL}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, true, install+" passwort")
	assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused it. Run again with the gateway's password (its SANDBOX_PASSWORD): wget run "+g.URL("/trapos/install")+" <password> Nothing was installed.", out)
	assert.NotContains(t, out, "Installed")
	assert.NotContains(t, out, "Allow it?", "nothing is asked after a wrong password")
	assert.Empty(t, diskFiles(t, dir), "a refused install writes nothing")

	out = playerSession(ctx, t, dir, true, install+" --no-questions")
	assert.Contains(t, strings.Join(lines(out), " "), "The gateway needs a password. Run again with the gateway's password")
	assert.Empty(t, diskFiles(t, dir))

	out = playerSession(ctx, t, dir, true, install+" "+password, "", "reboot", "sandbox health")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assertHealthy(t, out)
	before := diskSnapshot(t, dir)

	out = playerSession(ctx, t, dir, true, install+" wrong")
	assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused it.")
	// one row of the 51 columns ("is as it was" broke from 0.5.10 on)
	assert.Regexp(t, `(?m)^Nothing changed: trapos-sandbox \d+\.\d+\.\d+ is kept\.$`, out)
	assert.NotContains(t, out, "Reinstalled")
	assert.Equal(t, before, diskSnapshot(t, dir), "a refused upgrade changes nothing")
	assert.NotContains(t, out, "To uninstall", "a wrong password that is not a mistyped uninstall gets no hint")

	// The word uninstall mistyped (another case, a letter off) is a wrong password that names the word.
	// "In lower case" only where the case is what differs: unistall was typed in lower case.
	for typo, hint := range map[string]string{
		"Uninstall": "To uninstall, the word is uninstall, in lower case:",
		"unistall":  "To uninstall, the word is uninstall:",
	} {
		out = playerSession(ctx, t, dir, true, install+" "+typo)
		rows := lines(out)
		at := slices.Index(rows, hint)
		require.GreaterOrEqual(t, at, 0, out)
		assert.Equal(t, "wget run "+g.URL("/trapos/install")+" uninstall", strings.Join(rows[at+1:at+3], " "), "the line to run on rows of its own:\n%s", out)
		assert.Equal(t, before, diskSnapshot(t, dir), "a mistyped uninstall changes nothing")
	}

	// The line without a password checks the one set: the refusal names it, where "the
	// gateway refused it" read as a password the player had not typed.
	playerSession(ctx, t, dir, true, "sandbox setup", "", "wrong-set-password", "", "", "", "")
	before = diskSnapshot(t, dir)
	out = playerSession(ctx, t, dir, true, install)
	assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused this computer's sandbox.password. "+
		"Run again with the gateway's password (its SANDBOX_PASSWORD): wget run "+g.URL("/trapos/install")+" <password>", out)
	assert.Equal(t, before, diskSnapshot(t, dir), "a refused upgrade changes nothing")
	out = playerSession(ctx, t, dir, true, install+" "+password)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ", out)

	// sandbox.url in its bare form names the same gateway: the password is still checked.
	playerSession(ctx, t, dir, true, "set sandbox.url ws://"+g.Addr)
	before = diskSnapshot(t, dir)
	out = playerSession(ctx, t, dir, true, install+" wrong")
	// one row of the 51 columns ("is as it was" broke from 0.5.10 on)
	assert.Regexp(t, `(?m)^Nothing changed: trapos-sandbox \d+\.\d+\.\d+ is kept\.$`, out)
	assert.Equal(t, before, diskSnapshot(t, dir))
}

// TestInstallNamesASpaceAroundARefusedPassword: a password typed at the prompt with a space at
// an end (pasted along with it), which the prompt's stars hide, is refused with a line that
// names the space; the same password without it installs.
func TestInstallNamesASpaceAroundARefusedPassword(t *testing.T) {
	ctx := testContext(t)
	const password = "choose-a-long-secret"
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", password, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, true, install, password+" ")
	assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused it.", out)
	assert.Contains(t, strings.Join(lines(out), " "), "The password begins or ends with a space: if that is not part of it, type it without.", out)
	assert.Empty(t, diskFiles(t, dir), "a refused install writes nothing")

	out = playerSession(ctx, t, dir, true, install, "wrong")
	assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused it.", out)
	assert.NotContains(t, out, "space", "a password without a space at an end gets no hint")

	out = playerSession(ctx, t, dir, true, install, password, "")
	assert.Contains(t, out, "Installed trapos-sandbox ")
}

// TestUpgradeChecksThePasswordOfASlashShortURL: sandbox.url typed a slash or its colon short
// (ws:/host:port, ws//host:port, which the daemon reads as ws://host:port) names this gateway
// on an upgrade too: the installer's own copy of the rule knew only the bare form, said
// "sandbox.url names another gateway" and saved the line's wrong password unchecked.
func TestUpgradeChecksThePasswordOfASlashShortURL(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()
	out := playerSession(ctx, t, dir, true, install+" "+installPassword, "")
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	for _, url := range []string{"ws:/" + g.Addr, "ws//" + g.Addr} {
		playerSession(ctx, t, dir, true, "set sandbox.url "+url)
		settings := readSettings(t, dir)
		out = playerSession(ctx, t, dir, true, install+" wrong-password-here")
		assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused it.", "%s: %s", url, out)
		assert.NotContains(t, out, "another gateway", url)
		assert.Equal(t, settings, readSettings(t, dir), "%s: a refused upgrade keeps the settings", url)
	}
}

// TestInstallSaysSandboxURLAsTheDaemonReadsIt: sandbox.url set without its scheme (set
// sandbox.url host:port) was printed raw after an upgrade, "sandbox.url is 127.0.0.1:4444",
// and the player could not tell whether it would do. The daemon reads it as
// ws://host:port/trapos/ws (libsandboxsettings.normaliseUrl): the installer says that URL,
// and what was set beside it.
func TestInstallSaysSandboxURLAsTheDaemonReadsIt(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	dir := t.TempDir()
	out := playerSession(ctx, t, dir, true, install, "")
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.Contains(t, strings.Join(lines(out), " "), "sandbox.url is ws://"+g.Addr+"/trapos/ws ", out)
	assert.NotContains(t, out, "(set as", "a URL set in full is said once")

	out = playerSession(ctx, t, dir, true, "set sandbox.url "+g.Addr, install, "reboot", "sandbox health")
	joined := strings.Join(lines(out), " ")
	assert.Contains(t, joined, "sandbox.url is ws://"+g.Addr+"/trapos/ws (set as "+g.Addr+")", out)
	assert.NotContains(t, joined, "sandbox.url is "+g.Addr, out)
	assert.NotContains(t, out, "this gateway is", "the daemon reads it as this gateway's URL")
	assert.Contains(t, afterLast(out, "> sandbox health"), "sandboxOk: true\n", out)
}

// TestInstallNamesACharacterCCCannotHoldInARefusedPassword: a gateway password with
// characters past U+00FF (the gateway warns its operator at start) is typed on the computer
// as CC holds it, each such character a ?: the refusal says what a ? in the password means.
func TestInstallNamesACharacterCCCannotHoldInARefusedPassword(t *testing.T) {
	ctx := testContext(t)
	const password = "日本-install-secret-1234"
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", password, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	out := playerSession(ctx, t, dir, true, install+" "+password)
	joined := strings.Join(lines(out), " ")
	assert.Contains(t, joined, "Wrong password: the gateway refused it.", out)
	// In the words of sandbox health and status (libsandboxadvice, the installer's SOURCE.advice).
	assert.Contains(t, joined, "The password holds a ?, which CC types for a character it cannot hold (an emoji, a CJK one): "+
		"if the gateway's password has one, ask its operator for another.", out)
	assert.Empty(t, diskFiles(t, dir), "a refused install writes nothing")

	out = playerSession(ctx, t, dir, true, install+" wrong")
	assert.Contains(t, strings.Join(lines(out), " "), "Wrong password: the gateway refused it.", out)
	assert.NotContains(t, out, "holds a ?", "a password without a ? gets no hint")
}

// gatewayWithAlicesCredential is a gateway on a data directory with account alice and a
// computer credential issued to her by hand (credentials add), and admin, which runs the
// gateway's CLI on that directory and returns its last line (where the CLI prints a secret).
func gatewayWithAlicesCredential(ctx context.Context, t *testing.T) (g *harness.Gateway, credential string, admin func(args ...string) string) {
	t.Helper()
	dataDir := t.TempDir()
	admin = func(args ...string) string {
		return lastLineOf(gatewayCLI(ctx, t, append(args, "--data-dir", dataDir)...))
	}
	admin("accounts", "add", "alice")
	credential = admin("credentials", "add", "alice")
	g = harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--data-dir", dataDir,
		"--opencode-url", opencodefake.ClosedPortURL(t)}})
	return g, credential, admin
}

// TestInstallKeepsALinkedCredential: the install line run again with the shared password on
// a computer linked to an account keeps the computer's own credential (it was replaced, and
// the computer silently left the account); a credential the gateway refuses (revoked, or not
// its own) is replaced by the line's password, as before, and the player is told.
func TestInstallKeepsALinkedCredential(t *testing.T) {
	ctx := testContext(t)
	g, credential, admin := gatewayWithAlicesCredential(ctx, t)
	require.True(t, strings.HasPrefix(credential, "tsc_"), credential)
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword
	dir := t.TempDir()
	playerSession(ctx, t, dir, true, install, "", "set sandbox.password "+credential)

	out := playerSession(ctx, t, dir, true, install, "reboot", "sandbox health", "sandbox status")
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	// A credential issued by hand (credentials add) is not called a link (hello's credentialKind).
	assert.Contains(t, strings.Join(lines(out), " "), "Kept this computer's own credential (set by hand): the password on the line was not needed.")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.password" ] = "`+credential+`"`)
	assert.Contains(t, strings.Join(lines(afterLast(out, "> sandbox status")), " "), "account: alice (credential set by hand)", out)

	// The line without a password (the upgrade a player runs) names no password on it.
	out = playerSession(ctx, t, dir, true, "wget run "+g.URL("/trapos/install"))
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.NotContains(t, out, "Kept this computer's own credential", "no password was on the line")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.password" ] = "`+credential+`"`)

	// Revoked: the line's password replaces it, and the player is told the computer left the
	// account; the revoked credential on the line is named as such.
	selector := strings.Split(credential, "_")[1]
	admin("credentials", "revoke", selector)
	out = playerSession(ctx, t, dir, true, install)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.Contains(t, strings.Join(lines(out), " "),
		"This computer's own credential was refused (revoked): it now uses the password on the line. To link it to your account again: sandbox link")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.password" ] = "`+installPassword+`"`)
	out = playerSession(ctx, t, dir, true, "wget run "+g.URL("/trapos/install")+" "+credential)
	assert.Contains(t, strings.Join(lines(out), " "), "That credential was revoked on the gateway. Run again with the gateway's password")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.password" ] = "`+installPassword+`"`, "a refused line changes nothing")

	playerSession(ctx, t, dir, true, "set sandbox.password tsc_unknown")
	out = playerSession(ctx, t, dir, true, install)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.NotContains(t, out, "Kept this computer's own credential")
	assert.Contains(t, strings.Join(lines(out), " "), "This computer's own credential was refused (not this gateway's): it now uses the password on the line.")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.password" ] = "`+installPassword+`"`)
}

// TestInstallAsksAboutTheHostWhateverTheArguments: the password on the line does not skip the
// question on a first install; --allow-files/--allow-exec/--allow-screen answer it for a script, and
// --no-questions asks nothing and allows nothing.
func TestInstallAsksAboutTheHostWhateverTheArguments(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")

	asked := t.TempDir()
	out := playerSession(ctx, t, asked, true, install+" "+installPassword, "y")
	assert.Contains(t, out, "Allow it? [y/N]")
	settings := readSettings(t, asked)
	assert.Contains(t, settings, `[ "sandbox.allow_files" ] = "write"`)
	assert.Contains(t, settings, `[ "sandbox.allow_exec" ] = true`)

	scripted := t.TempDir()
	out = playerSession(ctx, t, scripted, true, install+" "+installPassword+" --allow-files=read --allow-exec=yes")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.NotContains(t, out, "Allow it?")
	settings = readSettings(t, scripted)
	assert.Contains(t, settings, `[ "sandbox.allow_files" ] = "read"`)
	assert.Contains(t, settings, `[ "sandbox.allow_exec" ] = true`)
	// What the options leave the host to do, in the answers' words, as the question's answer says it.
	assert.Contains(t, lines(out), "Allowed: read files, run Lua and programs.", out)
	assert.Contains(t, unwrapped(out), "Allowed: read files, run Lua and programs. Not allowed: write files, see or type on the screen.", out)
	// On an upgrade, the option given with the settings it keeps; on a pocket computer's 26 columns.
	out = strings.Join(pocketSession(ctx, t, scripted, install+" --allow-screen=view"), "\n")
	assert.Contains(t, unwrapped(out), "Allowed: read files, run Lua and programs, see the screen. "+
		"Not allowed: write files, type on the screen.", out)

	quiet := t.TempDir()
	out = playerSession(ctx, t, quiet, true, install+" --no-questions "+installPassword)
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.NotContains(t, out, "Allow it?")
	settings = readSettings(t, quiet)
	assert.Contains(t, settings, `[ "sandbox.allow_files" ] = "none"`)
	assert.Contains(t, settings, `[ "sandbox.allow_exec" ] = false`)

	out = playerSession(ctx, t, quiet, true, install+" --allow-files=maybe")
	assert.Contains(t, strings.Join(lines(out), " "), "Nothing done: --allow-files takes none, read or write.")
	// the fix whole, on a line of its own (the install line, longer than the screen, broke in it)
	assert.Contains(t, lines(out), "For the options, run the line again with --help.")
	assert.Equal(t, settings, readSettings(t, quiet))
	out = playerSession(ctx, t, quiet, true, install+" --allow-screen=all")
	assert.Contains(t, strings.Join(lines(out), " "), "Nothing done: --allow-screen takes none, view or control.")
	// the fix whole, on a line of its own (the install line, longer than the screen, broke in it)
	assert.Contains(t, lines(out), "For the options, run the line again with --help.")
	assert.Equal(t, settings, readSettings(t, quiet))
	// a bad value of an option the installer knows is no password
	assert.NotContains(t, out, "begins with --")
	// An unknown option may be a password that begins with --, which the line cannot take: the
	// refusal says where it goes.
	out = playerSession(ctx, t, quiet, true, install+" --secret")
	assert.Contains(t, strings.Join(lines(out), " "), "Nothing done: unknown option --secret.")
	assert.Contains(t, lines(out), "For the options, run the line again with --help.")
	assert.Contains(t, strings.Join(lines(out), " "), "For the options, run the line again with --help. "+
		"A password that begins with -- goes in at the prompt: run the line without it.")
	assert.Equal(t, settings, readSettings(t, quiet))
	// An option a letter off, or cut short, is named as meant, as sandbox names a command; the
	// option meant is no password. On a pocket computer's 26 columns too.
	out = playerSession(ctx, t, quiet, true, install+" --allow-file=write")
	assert.Contains(t, strings.Join(lines(out), " "), "Nothing done: unknown option --allow-file=write. "+
		"Did you mean --allow-files=write? For the options, run the line again with --help.", out)
	assert.NotContains(t, out, "begins with --")
	assert.Equal(t, settings, readSettings(t, quiet))
	out = strings.Join(pocketSession(ctx, t, quiet, install+" --no-question"), "\n")
	assert.Contains(t, unwrapped(out), "Nothing done: unknown option --no-question. Did you mean --no-questions?", out)
	assert.Contains(t, out, "\nDid you mean\n--no-questions?\n", out)
	assert.Equal(t, settings, readSettings(t, quiet))

	// The screen, for a script too: alone it answers the question (files and exec: no access),
	// and on an upgrade it changes the screen alone.
	screen := t.TempDir()
	out = playerSession(ctx, t, screen, true, install+" "+installPassword+" --allow-screen=view")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.NotContains(t, out, "Allow it?")
	settings = readSettings(t, screen)
	assert.Contains(t, settings, `[ "sandbox.allow_screen" ] = "view"`)
	assert.Contains(t, settings, `[ "sandbox.allow_files" ] = "none"`)
	assert.Contains(t, settings, `[ "sandbox.allow_exec" ] = false`)
	playerSession(ctx, t, screen, true, install+" --allow-screen=control")
	assert.Equal(t, strings.Replace(settings, `"view"`, `"control"`, 1), readSettings(t, screen))
}

// TestInstallCheckKeepsTheDaemonConnected: upgrading a computer whose daemon is connected
// checks the password without replacing the daemon's socket (newest wins would close it with
// 4009, and the daemon does not come back from that).
func TestInstallCheckKeepsTheDaemonConnected(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword, "")

	out := playerSession(ctx, t, dir, true, "sandbox health", install, "sandbox status")
	assertHealthy(t, out)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	status := afterLast(out, "> sandbox status")
	assert.Contains(t, status, "connected: true\nstate: connected\n", out)
	assert.NotContains(t, g.Log(), "replaced")
}

// TestInstallCannotCheckThePassword: when the gateway's WebSocket cannot be reached (here:
// websockets disabled in the server's config, then a gateway address the installer names but
// nothing answers at), the install goes on and says plainly that the password is unchecked
// and why.
func TestInstallCannotCheckThePassword(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword

	out := playerSessionHTTP(ctx, t, t.TempDir(), true, httpapi.Options{AllowPrivate: true, WebsocketsDisabled: true}, install, "")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.Contains(t, strings.Join(lines(out), " "), "Could not check the password: websockets are disabled on this Minecraft server; the daemon needs them (websocket_enabled = true under [http] in computercraft-server.toml).")

	// The installer as served, but naming a WebSocket address where nothing listens.
	closed := strings.TrimPrefix(opencodefake.ClosedPortURL(t), "http://")
	const failing = "programs/sandbox.lua"
	var failFile atomic.Bool
	proxy := gatewayProxy(t, g, func(path string) bool { return failFile.Load() && path == "/trapos/files/"+failing },
		func(_, body, proxyURL string) string {
			body = strings.Replace(body, g.WebSocketURL(), "ws://"+closed+"/trapos/ws", 1)
			return strings.Replace(body, g.URL("/trapos/files/"), proxyURL+"/trapos/files/", 1)
		})
	out = playerSession(ctx, t, t.TempDir(), true, "wget run "+proxy.URL+"/trapos/install "+installPassword, "")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.Contains(t, strings.Join(lines(out), " "), "Could not check the password: Could not connect (ws://"+closed+"/trapos/ws). After the reboot, sandbox status says whether the daemon got through.")

	// A download that then fails says so, and still says the password went unchecked (that
	// line was lost): no reboot advice, since nothing was installed.
	failFile.Store(true)
	out = playerSession(ctx, t, t.TempDir(), true, "wget run "+proxy.URL+"/trapos/install "+installPassword, "")
	said := strings.Join(lines(out), " ")
	assert.Contains(t, said, "Could not get /"+failing+": ")
	assert.Contains(t, said, "Could not check the password: Could not connect (ws://"+closed+"/trapos/ws). Check that the gateway runs")
	assert.Contains(t, said, "Nothing was installed.")
	// Every file is fetched before any question: the player answered whether the host may use
	// the computer, then read that nothing was installed.
	assert.NotContains(t, out, "Allow it?", out)

	// An upgrade from this gateway while sandbox.url names another: that one's password is not
	// this gateway's to judge.
	out = playerSession(ctx, t, t.TempDir(), true, install, "", "set sandbox.url ws://"+closed, "wget run "+g.URL("/trapos/install"))
	assert.Contains(t, out, "Reinstalled trapos-sandbox ")
	assert.Contains(t, strings.Join(lines(out), " "), "(this gateway is "+g.WebSocketURL()+"; change it with: sandbox setup) The password was not checked: sandbox.url names another gateway.")
}

// TestInstallSaysItChecksThePasswordWhileAFrozenGatewayWaits: a gateway that takes the
// connection and never answers (stopped with SIGSTOP, overloaded) held the password check for
// CC's 30 s connect timeout, then the first download for its own, with nothing on the screen
// after wget's "Success." for a minute: a player took the installer for hung. It says what it
// waits for before the check, and is on the screen while the check waits.
func TestInstallSaysItChecksThePasswordWhileAFrozenGatewayWaits(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	// The gateway's WebSocket as a frozen process's: the kernel takes the connection, and no
	// answer ever comes.
	frozen, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = frozen.Close() })
	held := make(chan net.Conn, 1)
	go func() {
		if conn, err := frozen.Accept(); err == nil {
			held <- conn
		}
	}()
	// The installer as served, naming the frozen WebSocket.
	proxy := gatewayProxy(t, g, nil, func(_, body, _ string) string {
		return strings.Replace(body, g.WebSocketURL(), "ws://"+frozen.Addr().String()+"/trapos/ws", 1)
	})

	c := fakecrafttest.StartWithin(t, machine.Options{Overlay: t.TempDir(), Basic: true, Bare: true, TimeScale: timeScale,
		HTTP:  httpapi.Options{AllowPrivate: true},
		Input: computer.LinesOf("wget run " + proxy.URL + "/trapos/install " + installPassword + " --no-questions")}, testTimeout)
	var conn net.Conn
	select {
	case conn = <-held:
	case <-ctx.Done():
		t.Fatalf("the check never connected; transcript:\n%s", c.Output())
	}
	// The check waits on the frozen gateway now; its line was written before it asked.
	assert.Contains(t, c.Output(), "Success.\nChecking the password with the gateway...\n", "said while the check waits")
	require.NoError(t, conn.Close()) // the check fails at once, as at its timeout
	c.WaitFor(ctx, "Run: reboot")
	c.Stop()
	assert.Contains(t, c.Output(), "Installed trapos-sandbox ", c.Output())
	assert.Contains(t, strings.Join(lines(c.Output()), " "), "Could not check the password: ", c.Output())
}

// ccDiskCost is what the files and directories under dir cost on a CC drive: each its size
// but at least 500 bytes (CC's accounting, which fakecraft keeps), leaving out the names in
// skip.
func ccDiskCost(t *testing.T, dir string, skip ...string) int64 {
	t.Helper()
	var total int64
	for _, name := range diskFiles(t, dir) {
		if slices.Contains(skip, name) {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		require.NoError(t, err)
		size := int64(500)
		if !info.IsDir() {
			size = max(info.Size(), 500)
		}
		total += size
	}
	return total
}

// TestInstallOnAFullDrive: the install line on a drive with no room. With room for the
// package but not for its records (the manifest, .settings), the player's own .settings is
// kept byte for byte (CC's settings.save empties the file, then fails writing it: every
// setting was lost; since the installer counts the room first, it writes nothing then) and the
// player is told how much to free and to run the line again, which then finishes. With no room
// for the package, nothing is left behind and the message says the drive is too full, not
// that the gateway is down.
func TestInstallOnAFullDrive(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL}})
	install := "wget run " + g.URL("/trapos/install")
	const capacity = 1_000_000 // CC's default computer_space_limit
	const own = "{\n  [ \"motd.enable\" ] = false,\n}"
	seed := func(filler int64) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".settings"), []byte(own), 0o644))
		if filler > 0 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "filler.bin"), make([]byte, filler), 0o644))
		}
		return dir
	}
	on := func(dir string) machine.Options {
		return machine.Options{Overlay: dir, Basic: true, SpaceLimit: capacity, HTTP: httpapi.Options{AllowPrivate: true}}
	}

	// What the package and its manifest cost, from an install on an empty drive.
	reference := seed(0)
	out := playerSessionOn(ctx, t, on(reference), install+" "+installPassword, "")
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.Regexp(t, `(?s)Installed trapos-sandbox .*Not allowed\. Change it with:`, out, "the access advice once installed")
	installed := ccDiskCost(t, reference, ".settings")

	// Room for all of that and 250 bytes: less than any new file costs.
	dir := seed(capacity - 250 - installed - 500)
	out = playerSessionOn(ctx, t, on(dir), install+" "+installPassword, "")
	joined := strings.Join(lines(out), " ")
	assert.Contains(t, joined, "The computer's drive has too little room: trapos-sandbox needs", out)
	assert.NotContains(t, out, "Out of space", "no Lua error reaches the player")
	assert.Equal(t, own, readSettings(t, dir), "the player's own settings are kept byte for byte")
	assert.NotContains(t, diskFiles(t, dir), ".settings.saving")
	assert.NotContains(t, out, "Not allowed", "no advice on changing a setting that was not saved")

	// Space freed, the same line finishes the install and keeps the player's own setting.
	require.NoError(t, os.Remove(filepath.Join(dir, "filler.bin")))
	out = playerSessionOn(ctx, t, on(dir), install+" "+installPassword, "")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.url" ] = "`+g.WebSocketURL()+`"`)
	assert.Contains(t, readSettings(t, dir), `[ "motd.enable" ] = false`)

	// No room for the package: 10 KB, room for its first directory and file
	// (apis/libsandbox.lua) but not the next, less than a directory. The installer counts the
	// room before it writes: nothing of it is left, and the player reads why.
	first, err := os.Stat(filepath.Join(reference, "apis", "libsandbox.lua"))
	require.NoError(t, err)
	for _, free := range []int64{10_000, 500 + max(first.Size(), 500) + 300, 300} {
		dir = seed(capacity - free - 500)
		out = playerSessionOn(ctx, t, on(dir), install+" "+installPassword, "")
		joined = strings.Join(lines(out), " ")
		assert.Contains(t, joined, "The computer's drive has too little room: trapos-sandbox needs", out)
		assert.Contains(t, lines(out), install, "the line to run again on a row of its own")
		assert.Contains(t, out, "Nothing was installed.")
		assert.NotContains(t, out, "Allow it?", "the room is counted before any question")
		assert.NotContains(t, out, "Not allowed", "no advice on changing a setting that was never made")
		assert.NotContains(t, joined, "Check that the gateway runs", out)
		// CC places the failing write's error at the installer's line that called pcall:
		// that position is no business of the player's.
		assert.NotRegexp(t, `:\d+: `, joined, "no installer line reaches the player")
		assert.Equal(t, []string{".settings", "filler.bin"}, diskFiles(t, dir), "nothing of the package is left")
		assert.Equal(t, own, readSettings(t, dir))
	}
}

// TestUpgradeOnAFullDrive: an upgrade wrote every file of the package beside the old one
// before swapping them in, so it needed room for the package twice: on CC's 1 MB drive, a
// player with 300 KB of files of their own could not even reinstall the same version, and read
// only that the drive was full, not how much to free. An upgrade
// writes only the files that changed, and when the room is short the installer says how much
// it needs and how much is free, before it writes anything.
func TestUpgradeOnAFullDrive(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	const capacity = 1_000_000 // CC's default computer_space_limit
	on := func(dir string) machine.Options {
		return machine.Options{Overlay: dir, SpaceLimit: capacity, HTTP: httpapi.Options{AllowPrivate: true}}
	}
	// The drive's root costs CC's minimum too.
	free := func(dir string) int64 { return capacity - 500 - ccDiskCost(t, dir) }

	dir := t.TempDir()
	out := playerSessionOn(ctx, t, on(dir), install)
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	installed := ccDiskCost(t, dir)
	const older = "apis/libsandboxlog.lua"
	served, err := os.ReadFile(filepath.Join(dir, older))
	require.NoError(t, err)

	// 150 KB free: less than the package, more than a changed file.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "filler.bin"), make([]byte, free(dir)-150_000), 0o644))
	out = playerSessionOn(ctx, t, on(dir), install)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ", out)

	// An older client: one file differs, and the manifest names an older version.
	require.NoError(t, os.WriteFile(filepath.Join(dir, older), []byte("-- the older version\n"+string(served)), 0o644))
	manifest, err := os.ReadFile(filepath.Join(dir, ".trapos-sandbox"))
	require.NoError(t, err)
	version := regexp.MustCompile(`version = "([^"]+)"`).FindSubmatch(manifest)
	require.NotNil(t, version, string(manifest))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".trapos-sandbox"),
		[]byte(strings.Replace(string(manifest), string(version[0]), `version = "0.0.1"`, 1)), 0o644))
	out = playerSessionOn(ctx, t, on(dir), install)
	assert.Contains(t, out, "Upgraded trapos-sandbox 0.0.1 to "+string(version[1])+".", out)
	got, err := os.ReadFile(filepath.Join(dir, older))
	require.NoError(t, err)
	assert.Equal(t, string(served), string(got))

	// A fresh install with 200 KB free: how much it needs, how much is free, how much to free;
	// nothing is written.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "filler.bin"), make([]byte, capacity-500-200_000), 0o644))
	out = playerSessionOn(ctx, t, on(dir), install)
	joined := strings.Join(lines(out), " ")
	m := regexp.MustCompile(`The computer's drive has too little room: trapos-sandbox needs (\d+)KB, (\d+)KB are free\. ` +
		`Free at least (\d+)KB \(delete files you do not need\), then run the install line again: ` +
		regexp.QuoteMeta("wget run "+g.URL("/trapos/install"))).FindStringSubmatch(joined)
	require.NotNil(t, m, out)
	need, _ := strconv.Atoi(m[1])
	have, _ := strconv.Atoi(m[2])
	short, _ := strconv.Atoi(m[3])
	assert.Equal(t, 200, have)
	assert.InDelta(t, installed/1000, need, 10, "about what the package took on a drive")
	assert.InDelta(t, need-have, short, 1)
	assert.Contains(t, out, "Nothing was installed.", out)
	assert.Equal(t, []string{"filler.bin"}, diskFiles(t, dir), "nothing written")
	// On a pocket computer's 26 columns a number and its unit stay on one row ("needs 433" /
	// "KB, 40 KB are free" with a space between them).
	rows := pocketSession(ctx, t, dir, install)
	assert.Contains(t, strings.Join(rows, " "), "needs "+m[1]+"KB,", strings.Join(rows, "\n"))
	assert.NotRegexp(t, `(?m)^KB`, strings.Join(rows, "\n"))

	// With that much freed, the same line installs.
	require.NoError(t, os.Truncate(filepath.Join(dir, "filler.bin"), int64(capacity-500-200_000-short*1000)))
	out = playerSessionOn(ctx, t, on(dir), install)
	assert.Contains(t, out, "Installed trapos-sandbox ", out)
}

// pocketSession is playerSession on a pocket computer (26x20, fakecraft's --pocket): the rows
// of its transcript, every row written (those that scrolled off too), the last 20 the screen
// as it was left; trailing blanks trimmed.
func pocketSession(ctx context.Context, t *testing.T, dir string, typed ...string) []string {
	t.Helper()
	out := playerSessionOn(ctx, t, machine.Options{Overlay: dir, HTTP: httpapi.Options{AllowPrivate: true}, Pocket: pocket.New(nil)}, typed...)
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, row := range rows {
		rows[i] = strings.TrimRight(row, " ")
	}
	return rows
}

// printedRows are the rows of a transcript but the shell's prompts: the line the player typed
// after "> " is in fakecraft's transcript whole, however long, where the screen showed only
// its tail as read() scrolled it; the rows a program printed are as the screen showed them.
func printedRows(rows []string) []string {
	return slices.DeleteFunc(slices.Clone(rows), func(row string) bool { return strings.HasPrefix(row, "> ") })
}

// narrowScreen is a program for the player's disk: `narrow W H PROGRAM ARGS...` runs the
// program on a W x H window (a turtle's 39x13, which fakecraft does not emulate) and writes to /narrow-W.txt every row that scrolls off the top, the screen at each
// "Press any key" (answered at once with x, its char queued behind it as CC queues a printable
// key's, after a line "pause"), the screen at the end, and a line "left char C" for each char
// the program left queued (the shell's prompt would have read it).
const narrowScreen = `
local args = { ... };
local w, h = tonumber(args[1]), tonumber(args[2]);
local win = window.create(term.current(), 1, 1, w, h, true);
local rows = {};
local function grab(n)
  for y = 1, n do rows[#rows + 1] = (win.getLine(y):gsub(" +$", "")); end
end
local screen = {};
for k, v in pairs(win) do screen[k] = v; end
screen.scroll = function(n) grab(math.min(n, h)); win.scroll(n); end
win.clear();
local pull = os.pullEvent;
os.pullEvent = function(filter)
  if filter == "key" then
    rows[#rows + 1] = "pause";
    grab(h);
    rows[#rows + 1] = "end of pause";
    os.queueEvent("char", "x");
    return "key", keys.x;
  end
  return pull(filter);
end
term.redirect(screen);
shell.run(table.unpack(args, 3));
os.pullEvent = pull;
term.redirect(term.native());
grab(h);
os.queueEvent("narrow_done");
while true do
  local event, c = os.pullEvent();
  if event == "narrow_done" then break; end
  if event == "char" then rows[#rows + 1] = "left char " .. c; end
end
local f = fs.open("/narrow-" .. w .. ".txt", "w");
f.write(table.concat(rows, "\n"));
f.close();
`

// narrowDisk is a computer's disk holding narrowScreen as /narrow.lua, and screen(w), the rows
// that narrow.lua recorded of its last run on a screen w columns wide.
func narrowDisk(t *testing.T) (dir string, screen func(w int) []string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "narrow.lua"), []byte(narrowScreen), 0o644))
	return dir, func(w int) []string {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("narrow-%d.txt", w)))
		require.NoError(t, err)
		return strings.Split(string(b), "\n")
	}
}

// TestNoQuestionsAloneSaysTheHostMayDoNothingYet: a first install with --no-questions and no
// --allow- option takes the question's default, no, and said nothing of it: its player never
// learnt that the host may do nothing yet, nor how to change that. It says so in the words of
// the question's no, on a computer and on a pocket computer; an upgrade, which changes no
// access, says nothing of it.
func TestNoQuestionsAloneSaysTheHostMayDoNothingYet(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions"
	const advice = "Not allowed. Change it with:\nset sandbox.allow_files write\nset sandbox.allow_exec true\nset sandbox.allow_screen control\n"

	dir := t.TempDir()
	out := playerSession(ctx, t, dir, false, install)
	assert.NotContains(t, out, "Allow it?", "nothing asked")
	assert.Regexp(t, `(?s)Installed trapos-sandbox .*`+regexp.QuoteMeta(advice), out)
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.allow_files" ] = "none"`, out)

	out = playerSession(ctx, t, dir, false, install)
	assert.Contains(t, out, "Reinstalled trapos-sandbox ", out)
	assert.NotContains(t, out, "Not allowed", "an upgrade keeps the owner's answers and says nothing of them")

	rows := pocketSession(ctx, t, t.TempDir(), install)
	at := slices.Index(rows, "Not allowed. To change it,")
	require.GreaterOrEqual(t, at, 0, strings.Join(rows, "\n"))
	assert.Equal(t, []string{"Not allowed. To change it,", "run: sandbox setup"}, rows[at:at+2])
}

// TestInstallerLinesFitAPocketComputer: on a pocket computer's 26 columns the installer's
// "Change it with: set sandbox.allow_files write …" broke each command, its value alone on
// the next line, and a refused password's "… (its SANDBOX_PASSWORD): wget run …" began the
// line to run mid-sentence: there the access line names sandbox setup, and the line to run
// starts a line of its own.
func TestInstallerLinesFitAPocketComputer(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()

	rows := pocketSession(ctx, t, dir, install+" wrong-"+installPassword)
	// (how the URL after it breaks: TestURLsBreakReadablyOnAPocketComputer)
	at := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "wget run ") })
	require.GreaterOrEqual(t, at, 0, "the line to run starts a row of its own:\n%s", strings.Join(rows, "\n"))
	assert.True(t, strings.HasSuffix(rows[at-1], "SANDBOX_PASSWORD):"), "the sentence ends before it: %q", rows[at-1])

	rows = pocketSession(ctx, t, dir, install+" "+installPassword, "")
	// sandbox setup works before the reboot (the installer puts it on the shell's path): the
	// advice said to wait for the reboot.
	at = slices.Index(rows, "Not allowed. To change it,")
	require.GreaterOrEqual(t, at, 0, strings.Join(rows, "\n"))
	assert.Equal(t, []string{"Not allowed. To change it,", "run: sandbox setup"}, rows[at:at+2])
	for _, row := range rows {
		assert.NotEqual(t, "write", row, "a set command broken before its value")
	}

	// The password typed at the prompt shows whole, as stars on a row of their own (after the
	// question, 12 columns were left of 26, and the first stars scrolled out of sight).
	const typed = "sixteen-chars-pw"
	rows = pocketSession(ctx, t, t.TempDir(), install, typed, "")
	assert.Contains(t, rows, strings.Repeat("*", len(typed)), strings.Join(rows, "\n"))
}

// TestCouldNotWriteBreaksAtAPathsSlashesOnAPocketComputer: a file the installer cannot write
// (here its place beside the file is a directory of the player's) is named in a line that a
// pocket computer's 26 columns broke mid-name ("Could not write /apis/libs" / "andboxsettings
// .lua: /apis/"). Each path breaks before a "/", as a URL does, the file is named once, and
// nothing is installed.
func TestCouldNotWriteBreaksAtAPathsSlashesOnAPocketComputer(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "apis", "libsandboxsettings.lua.new"), 0o755))
	rows := pocketSession(ctx, t, dir, "wget run "+g.URL("/trapos/install")+" "+installPassword+" --no-questions")
	at := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "Could not write") })
	require.GreaterOrEqual(t, at, 0, strings.Join(rows, "\n"))
	require.Greater(t, len(rows), at+4, strings.Join(rows, "\n"))
	// The file is named once (CC's reason named the .new beside it in full again, two more
	// rows): its real name, and where it is written first, which is what is in the way here.
	assert.Equal(t, []string{"Could not write /apis", "/libsandboxsettings.lua", "(written first as .new):",
		"Cannot write to directory", "Fix that, then run the"}, rows[at:at+5], strings.Join(rows, "\n"))
	assert.Contains(t, rows, "Nothing was installed.", strings.Join(rows, "\n"))
	assert.Equal(t, []string{"apis", "apis/libsandboxsettings.lua.new"}, diskFiles(t, dir))
}

// urlOnRows is url as rows shows it last: the part on each row, from the last row where it
// begins (nil when no row holds its beginning). (Above the installer's lines, CC's wget shows
// the install URL as CC breaks it: "Connecting to http://127.0" / ".0.1:…".)
func urlOnRows(rows []string, url string) []string {
	start := url[:strings.Index(url, "://")+3]
	for i := len(rows) - 1; i >= 0; i-- {
		row := rows[i]
		at := strings.Index(row, start)
		if at < 0 {
			continue
		}
		parts := []string{row[at:]}
		for left := strings.TrimPrefix(url, parts[0]); left != url && left != "" && i+len(parts) < len(rows); {
			next := rows[i+len(parts)]
			next = next[:min(len(next), len(left))]
			parts = append(parts, next)
			left = strings.TrimPrefix(left, next)
		}
		return parts
	}
	return nil
}

// TestURLsBreakReadablyOnAPocketComputer: a URL longer than a pocket computer's 26 columns
// (the install line's, the WebSocket's) broke wherever the row ended, mid-number
// ("wget run http://127.0.0.1:" / "44803/trapos/install"): the installer and the sandbox
// command break it before a separator, the scheme and host whole, each row after the first
// beginning with the separator, so the rows run together are the URL.
func TestURLsBreakReadablyOnAPocketComputer(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL}})
	installURL, wsURL := g.URL("/trapos/install"), g.WebSocketURL()
	require.Greater(t, len(wsURL), 26, "the test needs URLs longer than a pocket computer's row")
	install := "wget run " + installURL
	dir := t.TempDir()
	readable := func(what string, rows []string, url string) {
		t.Helper()
		parts := urlOnRows(rows, url)
		require.NotEmpty(t, parts, "%s: no row begins %s:\n%s", what, url, strings.Join(rows, "\n"))
		assert.Equal(t, url, strings.Join(parts, ""), "%s: the rows run together are the URL:\n%s", what, strings.Join(rows, "\n"))
		assert.Greater(t, len(parts), 1, what)
		for _, part := range parts[1:] {
			assert.Contains(t, "/:?#&=.", part[:1], "%s: a row of the URL begins mid-word: %q", what, part)
		}
	}

	rows := pocketSession(ctx, t, dir, install+" wrong-"+installPassword)
	readable("a refused password's line to run", rows, installURL)
	at := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "wget run ") })
	require.GreaterOrEqual(t, at, 0, strings.Join(rows, "\n"))
	assert.Equal(t, []string{"wget run http://127.0.0.1", strings.TrimPrefix(installURL, "http://127.0.0.1"), "<password>"}, rows[at:at+3])

	rows = pocketSession(ctx, t, dir, install+" "+installPassword, "")
	readable("the installer's sandbox.url", rows, wsURL)
	assert.Contains(t, rows, "sandbox.url is", "the URL, not fitting beside it, starts a row of its own")

	rows = pocketSession(ctx, t, dir, "reboot", "sandbox status")
	rows = rows[slices.Index(rows, "> sandbox status"):]
	// the status goes on at a line's next row indented, one column on a pocket computer
	assert.Contains(t, rows, " /trapos/ws", strings.Join(rows, "\n"))
	for i := range rows {
		rows[i] = strings.TrimPrefix(rows[i], " ")
	}
	readable("sandbox status", rows, wsURL)
	assert.Equal(t, "url: "+strings.TrimSuffix(wsURL, "/trapos/ws"), rows[slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "url:") })], strings.Join(rows, "\n"))
}

// TestInstallerHelpFitsSmallScreens: `--help` on a pocket computer (26x20) is laid out for
// its columns and fits under the wget line, and on a turtle (39x13) it waits for a key once
// a screenful is shown, so no line of it scrolls away unread. Laid out for 51 columns it
// wrapped into 31 rows there, cutting --allow-files=none|read|write mid-word.
func TestInstallerHelpFitsSmallScreens(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir, screen := narrowDisk(t)

	pocket := pocketSession(ctx, t, t.TempDir(), install+" --help")
	require.GreaterOrEqual(t, len(pocket), 20)
	last := pocket[len(pocket)-20:] // the screen as the help left it, the next prompt last
	assert.NotContains(t, pocket, "Press any key to continue", "a pocket computer's 20 rows hold the help")
	require.Contains(t, last, "Installs trapos-sandbox.", "the help's first line scrolled away:\n%s", strings.Join(pocket, "\n"))
	help := last[slices.Index(last, "Installs trapos-sandbox."):]
	for len(help) > 0 && help[len(help)-1] == ">" {
		help = help[:len(help)-1] // the row of the next prompt
	}
	for _, row := range help {
		assert.LessOrEqual(t, len(row), 25, "a row of the full width: a line wrapped: %q", row)
	}
	assert.Contains(t, help, " --allow-files=X")
	assert.Contains(t, help, "   X: none, read or write")
	assert.Contains(t, help, " --move-startup")
	assert.Equal(t, "install asks.", help[len(help)-1])

	playerSession(ctx, t, dir, false, "narrow 39 13 "+install+" --help")
	turtle := screen(39)
	at := slices.Index(turtle, "pause")
	require.GreaterOrEqual(t, at, 0, "no pause on a turtle's 13 rows:\n%s", strings.Join(turtle, "\n"))
	paused := turtle[at+1 : at+14]
	assert.Equal(t, "Installs trapos-sandbox.", paused[0], "the help's top scrolled away before the pause:\n%s", strings.Join(paused, "\n"))
	assert.Equal(t, "Press any key to continue", paused[12])
	assert.Equal(t, "install asks.", turtle[len(turtle)-2], strings.Join(turtle, "\n"))
	assert.NotContains(t, turtle, "left char x", "the key that turned the page stood typed at the shell's prompt")

	// On 51 columns it names the screen too, as the question it stands for does.
	out := playerSession(ctx, t, t.TempDir(), true, install+" --help")
	assert.Contains(t, lines(out), "may use this computer's files, programs and screen.", out)
}

// TestCtrlTAtAnInstallPromptSaysNothingWasInstalled: the player's Ctrl-T at any of the
// installer's questions (the password, the host's access, the move of /startup) comes before
// anything is written; CC's own "Terminated" alone left them unsure what state the computer
// was in. The line says it, read whole on a pocket computer's 26 columns too; an upgrade
// stopped at a question keeps the version it had.
func TestCtrlTAtAnInstallPromptSaysNothingWasInstalled(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	// stopAt types the lines, waits for the row of the prompt's question (a transcript row
	// is written when it ends), presses Ctrl-T, waits for the row that ends the installer's
	// line (its last word, ending), and returns the rows after the prompt's marker: nothing
	// yields between the question and its read(), which takes the Ctrl-T. The input stays
	// open: the shell's next prompt waits on until the computer stops.
	stopAt := func(t *testing.T, opts machine.Options, question, marker, ending string, typed ...string) []string {
		t.Helper()
		in := make(chan string, len(typed))
		for _, line := range typed {
			in <- line
		}
		opts.Bare, opts.TimeScale, opts.Input = true, timeScale, in
		opts.HTTP = httpapi.Options{AllowPrivate: true}
		c := fakecrafttest.StartWithin(t, opts, testTimeout)
		c.WaitFor(ctx, question)
		c.QueueString("terminate")
		// The line's last row, not its first: a pocket computer's 26 columns wrap it, and
		// the computer stopped after its first row read "Terminated: nothing" / "changed,
		// trapos-sandbox" without its version (a CI run).
		c.WaitFor(ctx, ending)
		c.Stop()
		// Without the shell's next prompt, which the stop may come before or after.
		return slices.DeleteFunc(lines(afterLast(c.Output(), marker)), func(row string) bool { return row == ">" })
	}

	for _, tc := range []struct {
		name, question, marker string
		typed                  []string
		startup                string
	}{
		{name: "password", question: "Gateway password", marker: "has none): ", typed: []string{install}},
		{name: "access", question: "The gateway's host", marker: "[y/N] ", typed: []string{install + " " + installPassword}},
		{name: "startup", question: "Your /startup runs before", marker: "[y/N] ", typed: []string{install + " " + installPassword + " --allow-files=none"}, startup: "print('door')\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, pocketComputer := range []bool{false, true} {
				dir := t.TempDir()
				if tc.startup != "" {
					require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(tc.startup), 0o644))
				}
				before := diskSnapshot(t, dir)
				opts := machine.Options{Overlay: dir}
				if pocketComputer {
					opts.Pocket = pocket.New(nil)
				}
				rows := stopAt(t, opts, tc.question, tc.marker, "installed.", tc.typed...)
				require.NotEmpty(t, rows)
				assert.Equal(t, "Terminated: nothing was installed.", strings.Join(rows, " "), "pocket %v: %q", pocketComputer, rows)
				assert.Equal(t, before, diskSnapshot(t, dir), "pocket %v: nothing written", pocketComputer)
			}
		})
	}

	// An upgrade asks only whether the player's /startup, beside which the last install put the
	// hook, may move; stopped there, it keeps the version it had.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte("print('door')\n"), 0o644))
	out := playerSession(ctx, t, dir, true, install+" "+installPassword+" --no-questions")
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	before := diskSnapshot(t, dir)
	rows := stopAt(t, machine.Options{Overlay: dir, Pocket: pocket.New(nil)}, "Your /startup runs before", "[y/N] ", "kept.", install)
	require.NotEmpty(t, rows)
	assert.Regexp(t, `^Terminated: nothing changed, trapos-sandbox \d+\.\d+\.\d+ is kept\.$`, strings.Join(rows, " "), "%q", rows)
	assert.Equal(t, before, diskSnapshot(t, dir), "nothing written")
}

// TestUninstallNamesTheCredentialToRevoke: the uninstall of a computer with a credential of its
// own said nothing of it, and the credential stayed valid in the account: after a reinstall,
// sandbox link waited while link approve was refused (the account holds a credential for the
// computer id already). It names the host's command that revokes it, on rows of their own on a
// computer and on a pocket computer; that command, run, revokes it. A credential revoked
// already is not named.
func TestUninstallNamesTheCredentialToRevoke(t *testing.T) {
	ctx := testContext(t)
	g, credential, admin := gatewayWithAlicesCredential(ctx, t)
	selector := strings.Split(credential, "_")[1]
	install := "wget run " + g.URL("/trapos/install")
	const said = "This computer's credential stays valid in its account: to link the computer again, first revoke it on the host:"

	dir := t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword, "", "set sandbox.password "+credential)
	out := playerSession(ctx, t, dir, true, install+" uninstall")
	rows := lines(out)
	at := slices.Index(rows, "  trap-sandbox credentials revoke "+selector)
	require.Positive(t, at, "the command on a row of its own:\n%s", out)
	assert.Contains(t, strings.Join(rows[:at], " "), said, out)
	assert.NotContains(t, out, credential, "the credential's secret is not shown")

	dir = t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword, "", "set sandbox.password "+credential)
	rows = pocketSession(ctx, t, dir, install+" uninstall")
	at = slices.Index(rows, "  trap-sandbox \\")
	require.Positive(t, at, "the command broken as a shell line goes on:\n%s", strings.Join(rows, "\n"))
	require.Greater(t, len(rows), at+2, strings.Join(rows, "\n"))
	assert.Equal(t, []string{"    credentials revoke \\", "    " + selector}, rows[at+1:at+3], strings.Join(rows, "\n"))
	for _, row := range printedRows(rows) {
		assert.LessOrEqual(t, len(row), 26, row)
	}

	// A computer on the shared password has no credential to name.
	dir = t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword, "")
	out = playerSession(ctx, t, dir, true, install+" uninstall")
	assert.Contains(t, out, "Removed trapos-sandbox ", out)
	assert.NotContains(t, out, "credentials revoke", out)

	admin("credentials", "revoke", selector) // the line as printed works

	// Revoked already (sandbox status says so), the credential is in no account: the uninstall
	// said it stayed valid there and gave the revoke to run all the same.
	dir = t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword, "", "set sandbox.password "+credential)
	out = playerSession(ctx, t, dir, true, "sandbox status", install+" uninstall")
	require.Contains(t, strings.Join(strings.Fields(out), " "), "credential was revoked", out)
	assert.Contains(t, out, "Removed trapos-sandbox ", out)
	assert.NotContains(t, out, "stays valid", out)
	assert.NotContains(t, out, "credentials revoke", out)
}

// TestMovingStartupOnANearlyFullDrive: the player's /startup file, moved into a new /startup/
// (--move-startup), costs a directory the room check did not count. On a drive a little short
// of what the install takes, the installer wrote every file, moved the player's program, then
// could not save .settings ("Installed trapos-sandbox ..., but .settings could not be saved":
// a daemon that does not know the gateway). Counted, the install is refused before anything is
// written, the player's /startup left as it was; or, where the room is there, it finishes.
func TestMovingStartupOnANearlyFullDrive(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions --move-startup"
	const capacity = 1_000_000 // CC's default computer_space_limit
	const door = "print(\"door: locked\")\n"
	on := func(dir string) machine.Options {
		return machine.Options{Overlay: dir, SpaceLimit: capacity, HTTP: httpapi.Options{AllowPrivate: true}}
	}
	seed := func(filler int64) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(door), 0o644))
		if filler > 0 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "filler.bin"), make([]byte, filler), 0o644))
		}
		return dir
	}

	// What the install with the move takes, from one on a drive with room.
	reference := seed(0)
	out := playerSessionOn(ctx, t, on(reference), install)
	require.Contains(t, out, "Installed trapos-sandbox ", out)
	require.Contains(t, diskFiles(t, reference), "startup/startup.lua", out)
	takes := ccDiskCost(t, reference) - ccDiskCost(t, seed(0))

	// Free space short of that by less than a file or directory costs (CC's 500 bytes; the
	// count may or may not find the room for those), then by more, which is refused.
	for _, short := range []int64{1, 300, 700, 1000} {
		dir := seed(capacity - 500 - ccDiskCost(t, seed(0)) - (takes - short))
		out = playerSessionOn(ctx, t, on(dir), install)
		assert.NotContains(t, out, "could not be saved", "short %d: %s", short, out)
		if short < 1000 && strings.Contains(out, "Installed trapos-sandbox ") {
			assert.Contains(t, diskFiles(t, dir), "startup/startup.lua", "short %d: %s", short, out)
			assert.Contains(t, readSettings(t, dir), `[ "sandbox.url" ] = "`+g.WebSocketURL()+`"`, "short %d", short)
			continue
		}
		joined := strings.Join(lines(out), " ")
		assert.Contains(t, joined, "The computer's drive has too little room: trapos-sandbox needs", "short %d: %s", short, out)
		assert.Contains(t, out, "Nothing was installed.", "short %d: %s", short, out)
		assert.Equal(t, []string{"filler.bin", "startup"}, diskFiles(t, dir), "short %d: nothing written, nothing moved", short)
		got, err := os.ReadFile(filepath.Join(dir, "startup"))
		require.NoError(t, err)
		assert.Equal(t, door, string(got), "short %d", short)
	}
}

// fullAtMakeDir is a program for the player's disk: `fullAtMakeDir` makes the drive full for
// the moment of the next fs.makeDir("/startup") (another program's file takes every byte left,
// CC's getFreeSpace and the root's own 500 bytes, and is deleted once CC has answered), so CC's
// own "Out of space" reaches the installer there, as from CC's fs.makeDir itself.
const fullAtMakeDir = `local makeDir = fs.makeDir
fs.makeDir = function(path)
  if path ~= "/startup" and path ~= "startup" then return makeDir(path) end
  local h = fs.open("/other.bin", "wb")
  h.write(string.rep("x", fs.getFreeSpace("/") + 500))
  h.close()
  local ok, err = pcall(makeDir, path)
  fs.delete("/other.bin")
  if not ok then error((tostring(err):gsub("^[^:]*:%d+: ", "")), 2) end
end
`

// TestStartupThatCannotMoveStaysWithTheHookBeside: the player's /startup file agreed to move
// into /startup/ when that directory cannot be made (the drive full at that moment, another
// program writing): the file goes back to /startup as it was, the hook goes beside it
// (/sandbox-startup.lua), the manifest records it there, and the player is told why, once
// ("Could not move /startup: Out of space", not CC's "/startup: " again), and the line to add.
func TestStartupThatCannotMoveStaysWithTheHookBeside(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install") + " " + installPassword + " --no-questions --move-startup"
	const door = "print(\"door: locked\")\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "startup"), []byte(door), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fullAtMakeDir.lua"), []byte(fullAtMakeDir), 0o644))
	out := playerSessionOn(ctx, t, machine.Options{Overlay: dir, SpaceLimit: 1_000_000, HTTP: httpapi.Options{AllowPrivate: true}}, "fullAtMakeDir", install)
	joined := strings.Join(lines(out), " ")
	assert.Contains(t, lines(out), "Could not move /startup: Out of space", out)
	assert.Contains(t, out, "Installed trapos-sandbox ", out)
	assert.Contains(t, joined, "To start the daemon at boot, add this line at the end of /startup:", out)
	assert.Contains(t, lines(out), `  shell.run("/sandbox-startup.lua")`, out)
	assert.NotContains(t, out, "Moved /startup", out)
	got, err := os.ReadFile(filepath.Join(dir, "startup"))
	require.NoError(t, err, "the player's /startup is back in its place")
	assert.Equal(t, door, string(got))
	files := diskFiles(t, dir)
	assert.Contains(t, files, "sandbox-startup.lua")
	for _, name := range []string{"startup.lua", "startup/startup.lua", ".trapos-sandbox-hook.new", "other.bin"} {
		assert.NotContains(t, files, name)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, ".trapos-sandbox"))
	require.NoError(t, err)
	assert.Contains(t, string(manifest), `hook = "/sandbox-startup.lua"`)
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.url" ] = "`+g.WebSocketURL()+`"`)
}

// TestUninstallWithoutTheGateway: the uninstall was only the install line with the word
// uninstall, which downloads the installer from the gateway: with that gateway gone (the
// server moved, its operator stopped it) CC's wget said only "Failed." and nothing on the
// computer could remove the client. `sandbox uninstall` does it without the gateway, on both
// screens, from the client's own files: the drive holds the package, the hook, the record and
// .settings, and no copy of the installer (80 KB of a 1 MB drive, which the installer kept for
// this before).
func TestUninstallWithoutTheGateway(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	basicDir, pocketDir := t.TempDir(), t.TempDir()
	playerSession(ctx, t, basicDir, true, install+" "+installPassword+" --no-questions")
	pocketAs := func(typed ...string) []string {
		t.Helper()
		out := playerSessionOn(ctx, t, machine.Options{Overlay: pocketDir, ID: 6, Label: "größe straße",
			HTTP: httpapi.Options{AllowPrivate: true}, Pocket: pocket.New(nil)}, typed...)
		return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	pocketAs(install + " " + installPassword + " --no-questions")
	require.Contains(t, diskFiles(t, basicDir), ".trapos-sandbox")

	// Every file on the drive is the package's, the hook, the record or .settings.
	want := append([]string{".settings", ".trapos-sandbox", "startup/00-sandbox.lua"}, sandboxPackageFiles(t)...)
	for _, dir := range []string{basicDir, pocketDir} {
		var files []string
		for _, f := range diskFiles(t, dir) {
			if info, err := os.Stat(filepath.Join(dir, f)); err == nil && !info.IsDir() {
				files = append(files, f)
			}
		}
		assert.ElementsMatch(t, want, files, "no file but the package's, the hook, the record and .settings")
	}
	require.NoError(t, g.Stop())
	// The count it says is every file removed, but the hook and the record, which it names or
	// keeps to itself.
	removed := regexp.MustCompile(`Removed trapos-sandbox \S+: (\d+) files, the startup hook /startup/00-sandbox\.lua and the sandbox settings\. Reboot to stop the daemon\.`)
	installed := strconv.Itoa(len(want) - 3)

	// After a reboot (the hook puts /programs on the path) the line fails, and the command
	// removes the client, itself among it, also when the client is not whole: libsandbox.lua,
	// which the command's other subcommands load first, is gone (an install stopped before it
	// was swapped in, a player who freed space).
	require.NoError(t, os.Remove(filepath.Join(basicDir, "apis", "libsandbox.lua")))
	// It asks first: Enter (no) removes nothing, y removes it.
	out := playerSession(ctx, t, basicDir, true, "reboot", install+" uninstall", "sandbox status", "sandbox uninstall", "", "sandbox uninstall", "y")
	require.Contains(t, out, "Failed.", out)
	assert.Regexp(t, `Remove trapos-sandbox \S+ and its settings from this computer\? \[y/N\]\s+Nothing removed\.`, unwrapped(out))
	require.Contains(t, unwrapped(out), "sandbox: /apis/libsandbox.lua is missing", out)
	said := removed.FindStringSubmatch(unwrapped(afterLast(out, "> sandbox uninstall")))
	require.NotNil(t, said, out)
	assert.Equal(t, strconv.Itoa(len(want)-4), said[1], "every file but the one gone: "+out)
	assert.Equal(t, []string{".settings"}, diskFiles(t, basicDir), out)

	rows := pocketAs("reboot", "sandbox uninstall", "y")
	shown := strings.Join(rows, "\n")
	said = removed.FindStringSubmatch(unwrapped(afterLast(shown, "> sandbox uninstall")))
	require.NotNil(t, said, shown)
	assert.Equal(t, installed, said[1], shown)
	for _, row := range rows {
		assert.LessOrEqual(t, len([]rune(row)), 26, row)
	}
	assert.Equal(t, []string{".settings"}, diskFiles(t, pocketDir), shown)
}

// sandboxPackageFiles is the trapos-sandbox package's files (install paths), as its descriptor
// lists them.
func sandboxPackageFiles(t *testing.T) []string {
	t.Helper()
	root, err := repo.Root()
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "packages", "trapos-sandbox", "ccpm.json"))
	require.NoError(t, err)
	var descriptor struct {
		Files []string `json:"files"`
	}
	require.NoError(t, json.Unmarshal(b, &descriptor))
	require.NotEmpty(t, descriptor.Files)
	return descriptor.Files
}

// TestAnUpgradeRemovesTheOldInstallerCopy: installers of 0.5.29 and 0.5.30 kept a copy of
// themselves, /programs/sandbox-install.lua (80 KB), for an uninstall without the gateway,
// which sandbox uninstall is now. The install line run on such a computer removes the copy and
// says which command replaces it; the record no longer names it, and sandbox uninstall then
// removes everything without the gateway. An upgrade that leaves the copy of a computer that
// never had one alone says nothing of it.
func TestAnUpgradeRemovesTheOldInstallerCopy(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", opencodefake.ClosedPortURL(t)}})
	install := "wget run " + g.URL("/trapos/install")
	dir := t.TempDir()
	playerSession(ctx, t, dir, true, install+" "+installPassword+" --no-questions")

	// The computer as such an installer left it: the copy (an installer as the gateway serves
	// it), recorded in the manifest.
	resp, err := http.Get(g.URL("/trapos/install"))
	require.NoError(t, err)
	copied, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	copyPath := filepath.Join(dir, "programs", "sandbox-install.lua")
	require.NoError(t, os.WriteFile(copyPath, copied, 0o644))
	manifestPath := filepath.Join(dir, ".trapos-sandbox")
	manifest, err := os.ReadFile(manifestPath)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(manifest, []byte("{\n")), string(manifest))
	legacy := append([]byte("{\n  installer = \"/programs/sandbox-install.lua\",\n"), manifest[2:]...)
	require.NoError(t, os.WriteFile(manifestPath, legacy, 0o644))

	out := playerSession(ctx, t, dir, true, install)
	assert.Contains(t, unwrapped(out), "Removed the installer's copy /programs/sandbox-install.lua. To uninstall, also without the gateway, run: sandbox uninstall", out)
	assert.NoFileExists(t, copyPath)
	manifest, err = os.ReadFile(manifestPath)
	require.NoError(t, err)
	assert.NotContains(t, string(manifest), "installer", "the record no longer names the copy")

	out = playerSession(ctx, t, dir, true, install)
	assert.NotContains(t, out, "installer's copy", "no copy, nothing said: "+out)

	require.NoError(t, g.Stop())
	out = playerSession(ctx, t, dir, true, "sandbox uninstall", "y")
	assert.Contains(t, unwrapped(out), "Removed trapos-sandbox ", out)
	assert.Equal(t, []string{".settings"}, diskFiles(t, dir), out)
}

// onAComputerWithTheFloppy is a computer (a drive of its own, private addresses allowed, with
// settings) whose left disk drive holds a floppy kept in the host directory floppy.
func onAComputerWithTheFloppy(t *testing.T, floppy string, settings map[string]string) machine.Options {
	t.Helper()
	sides := peripheral.NewBus(0)
	diskDrive := drive.New(nil)
	_, err := diskDrive.Insert(drive.NewFloppy(1, floppy))
	require.NoError(t, err)
	require.NoError(t, sides.Attach("left", diskDrive))
	return machine.Options{Overlay: t.TempDir(), HTTP: httpapi.Options{AllowPrivate: true}, Peripherals: sides, Settings: settings}
}

// gatewayProxy serves gateway g's routes through a server of the test's own: a path fail
// (when not nil) says so of is answered 500 "disk on fire" instead, and every body g answered
// is passed to rewrite with the proxy's own URL, which returns what the proxy sends (the
// installer naming another WebSocket, or fetching its files through the proxy).
func gatewayProxy(t *testing.T, g *harness.Gateway, fail func(path string) bool, rewrite func(path, body, proxyURL string) string) *httptest.Server {
	t.Helper()
	var proxy *httptest.Server
	proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail != nil && fail(r.URL.Path) {
			http.Error(w, "disk on fire", http.StatusInternalServerError)
			return
		}
		resp, err := http.Get(g.URL(r.URL.Path))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		w.WriteHeader(resp.StatusCode)
		_, _ = io.WriteString(w, rewrite(r.URL.Path, string(body), proxy.URL))
	}))
	t.Cleanup(proxy.Close)
	return proxy
}
