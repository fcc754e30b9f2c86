package cli

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTextFromOutsideEntersAsCCBytes: --label, --set and typed lines are UTF-8 text outside
// and one byte per character inside, as CC: Tweaked's Java side hands them over (a label
// typed "küche" is the five bytes a player's would be, and so reaches the gateway as
// "küche", not "kÃ¼che"). A typed character past U+00FF is CC's ?.
func TestTextFromOutsideEntersAsCCBytes(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"startup.lua": `local f = fs.open("/seen", "wb")
f.write(os.getComputerLabel() .. "|" .. settings.get("greeting") .. "|" .. read())
f.close()`,
	})
	code, _, errOut := bare(t, dir, "grüße €\n", "--label", "küche", "--set", "greeting=ü")
	assert.Equal(t, ExitOK, code, errOut)
	seen, err := os.ReadFile(filepath.Join(dir, "seen"))
	require.NoError(t, err)
	assert.Equal(t, "k\xfcche|\xfc|gr\xfc\xdfe ?", string(seen))

	// A byte that is not UTF-8 passes unchanged (kong's own string mapper made it U+FFFD,
	// which reached the computer as ?).
	code, _, errOut = bare(t, dir, "\xe9\n", "--label", "k\xe9che", "--set", "greeting=\xe9")
	assert.Equal(t, ExitOK, code, errOut)
	seen, err = os.ReadFile(filepath.Join(dir, "seen"))
	require.NoError(t, err)
	assert.Equal(t, "k\xe9che|\xe9|\xe9", string(seen))
}

// TestTextLeavesAsCCShowsIt: the transcript on stdout is UTF-8 text, each CC byte past ASCII
// as CC's font draws it (Latin-1 letters as themselves, 128-159 as block characters), so a
// label or a typed line written back reads as it was typed, never as invalid UTF-8.
func TestTextLeavesAsCCShowsIt(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"startup.lua": `print(os.getComputerLabel() .. " " .. read() .. " \129")`,
	})
	code, out, errOut := bare(t, dir, "grüße\n", "--label", "küche")
	assert.Equal(t, ExitOK, code, errOut)
	assert.True(t, utf8.ValidString(out), "%q", out)
	assert.Contains(t, out, "\ngrüße\nküche grüße \U0001FB00\n", "the echo of the typed line, then the print")
}

// TestProgramArgumentsEnterAsCCBytes: a TrapOS computer's program and its arguments are
// UTF-8 text too, converted as a bare computer's typed command is (`label set küche` sets
// the five bytes "k\xFCche", not the six of its UTF-8).
func TestProgramArgumentsEnterAsCCBytes(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/programs/seen.lua": `local f = fs.open("/seen", "wb") f.write(table.concat({...}, "|")) f.close()`,
	})
	dir := t.TempDir()
	code, _, errOut := run(t, "run", "--root", root, "--dir", dir, "seen", "küche", "€")
	assert.Equal(t, ExitOK, code, errOut)
	seen, err := os.ReadFile(filepath.Join(dir, "seen"))
	require.NoError(t, err)
	assert.Equal(t, "k\xfcche|?", string(seen))
}
