package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetLosesToTheComputersSettings: --set is a server's default setting, so the
// computer's own /.settings wins, and fakecraft says so on stderr (once, however often the
// computer reboots), naming the two ways to change it; the transcript on stdout stays the
// computer's. A file that agrees, or says nothing of the key, leaves nothing to say.
func TestSetLosesToTheComputersSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings string // the computer's /.settings ("": none)
		set      string
		typed    string
		want     string // on stdout
		note     string // on stderr, %s the computer's directory ("": nothing)
	}{
		{
			name:     "file has another value",
			settings: `{ [ "sandbox.allow_exec" ] = false, }`,
			set:      "sandbox.allow_exec=true",
			typed:    "set sandbox.allow_exec\n",
			want:     "sandbox.allow_exec is false\n",
			note:     "fakecraft: --set sandbox.allow_exec=true did not take: this computer's /.settings has false, which wins over --set as over a server's default settings; to change it, run `set sandbox.allow_exec true` on the computer or edit %s\n",
		},
		{
			name:     "once across reboots, text as typed",
			settings: `{ [ "greeting" ] = "hi\nthere", }`,
			set:      "greeting=grüße alle",
			typed:    "reboot\nset greeting\n",
			want:     "CraftOS 1.9\n> set greeting\ngreeting is \"hi\\\nthere\"\n",
			note:     "fakecraft: --set greeting=grüße alle did not take: this computer's /.settings has \"hi\\nthere\", which wins over --set as over a server's default settings; to change it, run `set greeting \"grüße alle\"` on the computer or edit %s\n",
		},
		{
			name:     "unset by --set, given by the file",
			settings: `{ [ "k" ] = 3, }`,
			set:      "k=nil",
			typed:    "set k\n",
			want:     "k is 3\n",
			note:     "fakecraft: --set k=nil did not take: this computer's /.settings has 3, which wins over --set as over a server's default settings; to change it, run `set k nil` on the computer or edit %s\n",
		},
		{
			name:     "file has the same value",
			settings: `{ [ "sandbox.allow_exec" ] = true, }`,
			set:      "sandbox.allow_exec=true",
			typed:    "set sandbox.allow_exec\n",
			want:     "sandbox.allow_exec is true\n",
		},
		{
			name:     "file has the same number",
			settings: `{ [ "n" ] = 2, }`,
			set:      "n=2.0",
			typed:    "set n\n",
			want:     "n is 2\n",
		},
		{
			name:     "file lacks the key",
			settings: `{ [ "other" ] = false, }`,
			set:      "sandbox.allow_exec=true",
			typed:    "set sandbox.allow_exec\n",
			want:     "sandbox.allow_exec is true\n",
		},
		{
			name:  "no file",
			set:   "sandbox.allow_exec=true",
			typed: "set sandbox.allow_exec\n",
			want:  "sandbox.allow_exec is true\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.settings != "" {
				writeDisk(t, dir, map[string]string{".settings": tc.settings})
			}
			code, out, errOut := bare(t, dir, tc.typed, "--set", tc.set)
			assert.Equal(t, ExitOK, code, errOut)
			assert.Contains(t, out, tc.want)
			assert.NotContains(t, out, "fakecraft:", "the note is not the computer's")
			want := ""
			if tc.note != "" {
				want = strings.ReplaceAll(tc.note, "%s", filepath.Join(dir, ".settings"))
			}
			assert.Equal(t, want, errOut)
		})
	}
}

// TestSetLosesToAWorldEntrysSettings: a computer whose directory is its world entry's dir
// (no --dir) is told to edit that directory's .settings too (the hint left it out).
func TestSetLosesToAWorldEntrysSettings(t *testing.T) {
	root := t.TempDir()
	pc := filepath.Join(root, "pc")
	writeDisk(t, pc, map[string]string{".settings": `{ [ "k" ] = 3, }`})
	file := filepath.Join(root, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"computers": [{"id": 4, "dir": "pc"}]}`), 0o644))
	var out, errOut bytes.Buffer
	code := MainWithInput([]string{"run", "--bare", "--id", "4", "--world", file, "--set", "k=1", "set", "k"},
		strings.NewReader(""), &out, &errOut)
	assert.Equal(t, ExitOK, code, errOut.String())
	assert.Contains(t, out.String(), "k is 3\n")
	assert.Equal(t, "fakecraft: --set k=1 did not take: this computer's /.settings has 3, which wins over --set as over a server's default settings; to change it, run `set k 1` on the computer or edit "+filepath.Join(pc, ".settings")+"\n", errOut.String())
}
