package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
	"fakecraft/peripheral"
	"fakecraft/peripheral/drive"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Fixtures of the capability tests: a booted computer the host works with through the real
// gateway binary's CLI and HTTP API.
const (
	capTraposID = "9:lab"
	// capSpaceLimit is the computer's drive (CC's computer_space_limit, raised from 1 MB as a
	// server owner would) so that a 1 MiB file fits.
	capSpaceLimit = 4 << 20
	// markerServing: the computer is connected and its program serves door.open.
	markerServing = "e2e: serving"
	// markerStopped: the program serving door.open has ended.
	markerStopped = "e2e: stopped serving"
	// capLimit bounds the capability test and its computer: the 1 MiB file takes a few seconds,
	// but gopher-lua under -race on a loaded machine is some 30 times slower.
	capLimit = 3 * time.Minute
	// capProgram connects, then serves door.open until an e2e_stop_serving event, and applies
	// e2e_set events as `set` would (the owner changing a setting at the keyboard).
	capProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
local libsandbox = require('/apis/libsandbox');
parallel.waitForAll(function()
  parallel.waitForAny(function()
    print("` + markerServing + `");
    libsandbox.serve({ ["door.open"] = function(payload) return { opened = payload.door }; end });
  end, function()
    os.pullEvent("e2e_stop_serving");
  end);
  print("` + markerStopped + `");
  while true do sleep(1) end
end, function()
  while true do
    local _, name, value = os.pullEvent("e2e_set");
    if value == "true" then value = true; elseif value == "false" then value = false; end
    settings.set(name, value);
    print("e2e: set " .. name);
  end
end);
`
)

// capComputer boots the computer and waits until it serves.
func capComputer(ctx context.Context, t *testing.T, g *harness.Gateway) *fakecrafttest.Computer {
	t.Helper()
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 9, "lab"
	opts.SpaceLimit = capSpaceLimit
	opts.Files = map[string]string{"/e2e.lua": capProgram}
	c := fakecrafttest.StartWithin(t, opts, capLimit)
	c.WaitFor(ctx, markerServing)
	return c
}

// set changes a setting on the computer as its owner would, and waits until it took effect.
func set(ctx context.Context, t *testing.T, c *fakecrafttest.Computer, name, value string) {
	t.Helper()
	c.QueueString("e2e_set", name, value)
	c.WaitFor(ctx, "e2e: set "+name)
}

// cli runs a client subcommand of the real binary against g.
func cli(ctx context.Context, t *testing.T, g *harness.Gateway, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, gatewayBin, append(args, "--url", "http://"+g.Addr)...)
	cmd.Env = append(harness.CleanEnv(), "GORACE=atexit_sleep_ms=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errOut, bytes.NewReader(stdin)
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	default:
		require.NoError(t, err)
	}
	return out.String(), errOut.String(), code
}

// floppyComputer is capTraposID on g with files write, serving, a floppy disk (125000 bytes)
// in the drive on its left, mounted at /disk.
func floppyComputer(ctx context.Context, t *testing.T, g *harness.Gateway) *fakecrafttest.Computer {
	t.Helper()
	sides := peripheral.NewBus(9)
	diskDrive := drive.New(nil)
	_, err := diskDrive.Insert(drive.NewFloppy(1, filepath.Join(t.TempDir(), "disk1")))
	require.NoError(t, err)
	require.NoError(t, sides.Attach("left", diskDrive))
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 9, "lab"
	opts.Peripherals = sides
	opts.Settings["sandbox.allow_files"] = "write"
	opts.Files = map[string]string{"/e2e.lua": capProgram}
	c := fakecrafttest.StartWithin(t, opts, capLimit)
	c.WaitFor(ctx, markerServing)
	return c
}

// TestAFullFloppyDiskNamesItsOwnFreeSpace: a host's write to the floppy disk in a computer's
// drive (/disk, 125000 bytes) that does not fit said the computer's drive had some 900000
// bytes free, the root drive's, where the file was never going: the computer now measures the
// free space on the drive of the path (fs.getFreeSpace(path)).
func TestAFullFloppyDiskNamesItsOwnFreeSpace(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), capLimit)
	defer cancel()
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	floppyComputer(ctx, t, g)

	local := filepath.Join(t.TempDir(), "big.txt")
	require.NoError(t, os.WriteFile(local, bytes.Repeat([]byte("x"), 200000), 0o600))
	_, errOut, code := cli(ctx, t, g, nil, "put", capTraposID, local, "/disk/big.txt")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "fs_error: /disk/big.txt: Out of space (the file is 200000 bytes; the drive it goes on has 125000 bytes free: ")
	// the root drive's room is its own
	_, errOut, code = cli(ctx, t, g, nil, "put", capTraposID, local, "/big.txt")
	require.Equal(t, 0, code, errOut)
}

// TestAMoveOfTheDiskSaysWhereItsCopyIs: CC moves across drives by copying, then deleting what
// it moved, and never deletes a drive's mount point: move_file of /disk to /backup answered
// "/disk: Access denied" with /backup a whole copy and the disk as it was, which an agent read
// as nothing moved (a permission to ask the player for). The refusal now says where the copy is.
func TestAMoveOfTheDiskSaysWhereItsCopyIs(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), capLimit)
	defer cancel()
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	c := floppyComputer(ctx, t, g)
	set(ctx, t, c, "sandbox.allow_exec", "true") // a disk's startup may be in what moves
	_, errOut, code := cli(ctx, t, g, []byte("saved"), "put", capTraposID, "-", "/disk/notes.txt")
	require.Equal(t, 0, code, errOut)

	s := harness.ConnectMCP(ctx, t, g, "")
	msg := harness.ToolError(t, harness.CallTool(ctx, t, s, "move_file", map[string]any{"traposId": capTraposID, "from": "/disk", "to": "/backup"}), "fs_error")
	assert.Equal(t, "fs_error: /disk: Access denied (CC moves to another drive by copying, then deleting what it moved, and /disk could not be deleted: "+
		"a drive's mount point, such as a disk's, never can be; the copy is at /backup, and /disk is as it was)", msg)
	for _, path := range []string{"/backup/notes.txt", "/disk/notes.txt"} {
		out, errOut, code := cli(ctx, t, g, nil, "cat", capTraposID, path)
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, "saved", out, path)
	}
}

func TestHostWorksWithABootedComputer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), capLimit)
	defer cancel()
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	c := capComputer(ctx, t, g)

	t.Run("info is always answered", func(t *testing.T) {
		out, errOut, code := cli(ctx, t, g, nil, "info", capTraposID)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "traposId:      "+capTraposID)
		assert.Regexp(t, `(?m)^label:\s+lab$`, out)
		assert.Regexp(t, `(?m)^host:\s+ComputerCraft 1\.113\.1 \(fakecraft\)$`, out)
		assert.Regexp(t, `(?m)^clientVersion:\s+\d+\.\d+\.\d+$`, out)
		assert.Regexp(t, `(?m)^peripherals:\s+0$`, out)
		// What the host plans by, from the computer itself: its kind and what its owner allows.
		assert.Regexp(t, `(?m)^kind:\s+a computer, its screen 51x19 characters$`, out)
		assert.Regexp(t, `(?m)^allows:\s+files: none \(reads need: set sandbox\.allow_files read; writes: set sandbox\.allow_files write\)$`, out)
		assert.Regexp(t, `(?m)^\s+exec: no \(running Lua or programs needs: set sandbox\.allow_exec true\)$`, out)
	})

	t.Run("files and exec are forbidden by default", func(t *testing.T) {
		_, errOut, code := cli(ctx, t, g, nil, "ls", capTraposID, "/")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "forbidden: fs.list needs sandbox.allow_files read")
		assert.Contains(t, errOut, "set sandbox.allow_files read")
		_, errOut, code = cli(ctx, t, g, nil, "exec", capTraposID, "1+1")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "forbidden")
		assert.Contains(t, errOut, "set sandbox.allow_exec true")
	})

	set(ctx, t, c, "sandbox.allow_files", "write")
	set(ctx, t, c, "sandbox.allow_exec", "true")

	t.Run("a 1 MiB file of every byte value goes there and back identical", func(t *testing.T) {
		data := make([]byte, 1<<20)
		for i := range data {
			data[i] = byte(i * 7 % 256) // every value, in no simple order
		}
		dir := t.TempDir()
		local, back := filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")
		require.NoError(t, os.WriteFile(local, data, 0o600))
		out, errOut, code := cli(ctx, t, g, nil, "put", "--binary", capTraposID, local, "/data/every byte.bin")
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "(1048576 bytes)")
		_, errOut, code = cli(ctx, t, g, nil, "get", "--binary", capTraposID, "/data/every byte.bin", back)
		require.Equal(t, 0, code, errOut)
		got, err := os.ReadFile(back)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, got), "the file came back changed (%d bytes)", len(got))

		out, errOut, code = cli(ctx, t, g, nil, "ls", capTraposID, "/data")
		require.Equal(t, 0, code, errOut)
		assert.Regexp(t, `1048576\s+every byte\.bin`, out)
		assert.NotContains(t, out, ".trap-sandbox-upload-", "the temporary upload is gone")
	})

	t.Run("a missing file is the computer's own fs_error", func(t *testing.T) {
		_, errOut, code := cli(ctx, t, g, nil, "cat", capTraposID, "/no/such.txt")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "fs_error: /no/such.txt: No such file")
		// fs.list raises: CC places its error at the client's own line (a pcall's caller),
		// and the host reads CC's message alone.
		_, errOut, code = cli(ctx, t, g, nil, "ls", capTraposID, "/no/such")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "fs_error: /no/such: No such file")
		assert.NotRegexp(t, `\.lua:\d+: `, errOut, "no client line reaches the host")
	})

	t.Run("a change of the ROM says why it is refused and what to do", func(t *testing.T) {
		// CC's fs says Access denied alone, which read as a permission the owner could give.
		src := filepath.Join(t.TempDir(), "door.lua")
		require.NoError(t, os.WriteFile(src, []byte("print('door')\n"), 0o600))
		_, errOut, code := cli(ctx, t, g, nil, "put", capTraposID, src, "/rom/door.lua")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "fs_error: /rom/door.lua: Access denied (/rom is the computer's read-only ROM, "+
			"which nothing on the computer can change: write the file outside /rom)")
		_, errOut, code = cli(ctx, t, g, nil, "rm", capTraposID, "/rom/startup.lua")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "fs_error: /rom/startup.lua: Access denied (/rom is the computer's read-only ROM, "+
			"which nothing on the computer can change)")
	})

	t.Run("a file in the way of a path is said to be a file", func(t *testing.T) {
		// CC names the directory it could not make, not the file: "/door.txt: File exists" for
		// a write of /door.txt/x.lua read as a file already at the path asked for, and
		// "/door.txt/a: Access denied" as a permission the owner withheld.
		src := filepath.Join(t.TempDir(), "door.txt")
		require.NoError(t, os.WriteFile(src, []byte("door\n"), 0o600))
		for _, remote := range []string{"/door.txt", "/Tür.txt"} {
			_, errOut, code := cli(ctx, t, g, nil, "put", capTraposID, src, remote)
			require.Equal(t, 0, code, errOut)
		}
		_, errOut, code := cli(ctx, t, g, nil, "put", capTraposID, src, "/door.txt/x.lua")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "fs_error: /door.txt: File exists (it is a file, not a directory, so /door.txt/x.lua cannot be made inside it)")
		_, errOut, code = cli(ctx, t, g, nil, "put", capTraposID, src, "/Tür.txt/x.lua")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "fs_error: /Tür.txt: File exists (it is a file, not a directory, so /Tür.txt/x.lua cannot be made inside it)")
		_, errOut, code = cli(ctx, t, g, nil, "put", capTraposID, src, "/door.txt/a/b.lua")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "fs_error: /door.txt/a: Access denied (outside /rom CC answers so when a name on the way to /door.txt/a/b.lua is a file, "+
			"not a directory, as nothing can be made inside a file, or when its drive is read-only)")

		s := harness.ConnectMCP(ctx, t, g, "")
		msg := harness.ToolError(t, harness.CallTool(ctx, t, s, "make_dir", map[string]any{"traposId": capTraposID, "path": "/door.txt/sub"}), "fs_error")
		assert.Equal(t, "fs_error: /door.txt/sub: Access denied (outside /rom CC answers so when a name on the way to /door.txt/sub is a file, "+
			"not a directory, as nothing can be made inside a file, or when its drive is read-only)", msg)
		msg = harness.ToolError(t, harness.CallTool(ctx, t, s, "move_file", map[string]any{"traposId": capTraposID, "from": "/Tür.txt", "to": "/door.txt/Tür.txt"}), "fs_error")
		assert.Equal(t, "fs_error: /door.txt: File exists (it is a file, not a directory, so /door.txt/Tür.txt cannot be made inside it)", msg)
		// The file there, or a directory that is there, is as CC says it.
		msg = harness.ToolError(t, harness.CallTool(ctx, t, s, "make_dir", map[string]any{"traposId": capTraposID, "path": "/door.txt"}), "fs_error")
		assert.Equal(t, "fs_error: /door.txt: File exists", msg)
	})

	t.Run("exec returns values and output", func(t *testing.T) {
		out, errOut, code := cli(ctx, t, g, nil, "exec", capTraposID, "print('hello'); return 1+1, 'two', nil")
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, "hello\n2\n\"two\"\nnull\n", out)
		out, errOut, code = cli(ctx, t, g, []byte("os.getComputerLabel()"), "exec", capTraposID, "-")
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, "\"lab\"\n", out)
		_, errOut, code = cli(ctx, t, g, nil, "exec", capTraposID, "error('boom')")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, "lua:1: boom")
	})

	t.Run("run captures a program's output", func(t *testing.T) {
		out, errOut, code := cli(ctx, t, g, nil, "run", capTraposID, "sandbox status")
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "connected: true")
		assert.Contains(t, out, "files: write")
		assert.Contains(t, out, "exec: true")
	})

	t.Run("a sleeping chunk does not stop pings", func(t *testing.T) {
		var wg sync.WaitGroup
		var slowOut, slowErr string
		var slowCode int
		wg.Go(func() {
			// The chunk says it waits (capProgram prints "e2e: set e2e.chunk"); its pullEvent
			// runs before that event is delivered, so once it is printed the chunk waits.
			slowOut, slowErr, slowCode = cli(ctx, t, g, nil, "exec", capTraposID, "--timeout", "20s",
				"os.queueEvent('e2e_set', 'e2e.chunk', 'waiting'); os.pullEvent('e2e_wake'); return 'woke'")
		})
		// Waking it before it waits would lose the event: the chunk would end at its timeout.
		c.WaitFor(ctx, "e2e: set e2e.chunk")
		// The chunk waits for an event only this test sends; meanwhile the computer answers.
		for range 3 {
			out, errOut, code := cli(ctx, t, g, nil, "ping", capTraposID)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "pong from "+capTraposID)
		}
		c.QueueString("e2e_wake")
		wg.Wait()
		require.Equal(t, 0, slowCode, slowErr)
		assert.Equal(t, "\"woke\"\n", slowOut)
	})

	t.Run("a program-served type is answered, then unknown_type once the program ends", func(t *testing.T) {
		out, errOut, code := cli(ctx, t, g, nil, "request", capTraposID, "door.open", `{"door":"north"}`)
		require.Equal(t, 0, code, errOut)
		assert.JSONEq(t, `{"opened":"north"}`, out)

		c.QueueString("e2e_stop_serving")
		c.WaitFor(ctx, markerStopped)
		deadline := time.Now().Add(10 * time.Second) // the lease is 2.5 s of computer time
		for {
			_, errOut, code = cli(ctx, t, g, nil, "request", capTraposID, "door.open", `{}`)
			if code != 0 {
				break
			}
			require.True(t, time.Now().Before(deadline), "door.open still answered after the program ended")
		}
		assert.Contains(t, errOut, "unknown_type")
		assert.True(t, strings.Contains(errOut, "no longer served") || strings.Contains(errOut, "does not handle"), errOut)
	})
}

// TestChunkThatNeverYieldsEndsAlone: CC throws "Too long without yielding" into a chunk that
// never yields (after CC's own 7 s: a shorter limit would also catch the boot of a loaded
// machine); the chunk ends with that error, served, and the daemon goes on answering.
func TestChunkThatNeverYieldsEndsAlone(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 9, "lab"
	opts.Settings["sandbox.allow_exec"] = "true"
	opts.Files = map[string]string{"/e2e.lua": idleProgram}
	opts.YieldTimeout = computer.DefaultYieldTimeout // CC's own limit, which the chunk must meet
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerIdle)

	_, errOut, code := cli(ctx, t, g, nil, "exec", capTraposID, "--timeout", "20s", "local n = 0; while true do n = n + 1 end")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "Too long without yielding")
	out, errOut, code := cli(ctx, t, g, nil, "exec", capTraposID, "'still here'")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "\"still here\"\n", out)
}
