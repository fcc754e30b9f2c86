package transfer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"
	"fakecraft/transfer"
)

// handleProbe waits for a file_transfer and reads the first file every way a binary read
// handle allows, as the event's documentation does.
const handleProbe = `
print("ready")
local _, files = os.pullEvent("file_transfer")
local list = files.getFiles()
print("files", #list, #list[1].getName(), list ~= files.getFiles(), list[1] == files.getFiles()[1])
local f = list[1]
print("size", f.seek("end"), f.seek("set", 0))
print("reads", f.read(), f.read(3), f.readLine(), f.readLine(true) == "line2\r\n", f.readAll())
print("end", f.read(1), f.read(0), f.readAll() == "", f.readLine())
print("seek", f.seek("cur", -100))
print("past", f.seek("set", 100), f.read(1), f.seek("cur"))
print("bad", pcall(f.read, -1))
f.close()
print("closed", pcall(f.read))
`

func TestHandles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := fakecrafttest.Start(t, machine.Options{
		Files:   map[string]string{"/probe.lua": handleProbe},
		Program: "/probe.lua",
	})
	c.WaitFor(ctx, "ready")
	transfer.Queue(c.Computer, []transfer.File{
		{Name: "küche.txt", Data: []byte("abcdef\nline2\r\nrest")},
		{Name: "other", Data: nil},
	})
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	assert.True(t, res.OK, c.Output())
	out := c.Output()
	for _, line := range []string{
		"files\t2\t9\ttrue\ttrue", // the name is CC's bytes: ü is one byte
		"size\t18\t0",
		"reads\t97\tbcd\tef\ttrue\trest",
		"end\tnil\tnil\ttrue\tnil",
		"seek\tnil\tPosition is negative",
		"past\t100\tnil\t100",
		// placed at the line calling pcall, as CC places a Java function's error; wrapped at
		// the screen's width
		"bad\tfalse\t/probe.lua:12: Cannot read a negative \nnumber of bytes",
		"closed\tfalse\t/probe.lua:14: attempt to use a closed \nfile",
	} {
		assert.Contains(t, out, line+"\n")
	}
}

// TestImport drops files on the import program: they land in the computer's directory,
// bytes unchanged, read in CC's 8 KiB chunks.
func TestImport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	big := []byte(strings.Repeat("\x00\xffdata", 4000))
	c := fakecrafttest.Start(t, machine.Options{Overlay: dir, Program: "import"})
	c.WaitFor(ctx, "Drop files to transfer them to this computer")
	transfer.Queue(c.Computer, []transfer.File{{Name: "big.bin", Data: big}, {Name: "note.txt", Data: []byte("hi")}})
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	assert.True(t, res.OK, c.Output())
	assert.Contains(t, c.Output(), "Transferring big.bin\nTransferring note.txt\n")
	got, err := os.ReadFile(filepath.Join(dir, "big.bin"))
	require.NoError(t, err)
	assert.Equal(t, big, got)
	got, err = os.ReadFile(filepath.Join(dir, "note.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi", string(got))
}
