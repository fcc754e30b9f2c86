package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTextFromOutsideEntersAsCCBytes: --label, --set and typed lines are UTF-8 text outside
// and one byte per character inside, as CC: Tweaked's Java side hands them over (a label
// typed "küche" is the five bytes a player's would be, and so reaches the gateway as
// "küche", not "kÃ¼che").
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
}
