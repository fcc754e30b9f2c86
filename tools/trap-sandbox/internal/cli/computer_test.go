package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/files"
)

func TestListingAlignsSizesRightAndNamesLeft(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeListing(&out, []files.Entry{
		{Name: "rom", IsDir: true},
		{Name: "startup.lua", Size: 1532},
		{Name: "a", Size: 7},
		{Name: "\u00ff.bin", Size: 0},
	}))
	assert.Equal(t, ""+
		"      rom/\n"+
		"1532  startup.lua\n"+
		"   7  a\n"+
		"   0  \xff.bin\n", out.String())
}
