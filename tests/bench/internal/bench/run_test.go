package bench

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheServersTakeTurnsGoingFirst: the server that goes first in a round runs right after the
// other's heavier phase, which cost the baseline 2 % against itself; each goes first in every
// other round, so an even number of rounds gives each place to each server equally often.
func TestTheServersTakeTurnsGoingFirst(t *testing.T) {
	first := map[int]int{}
	for round := range 6 {
		order := roundOrder(round)
		assert.ElementsMatch(t, []int{0, 1}, order[:], "round %d runs both servers once", round)
		first[order[0]]++
	}
	assert.Equal(t, map[int]int{0: 3, 1: 3}, first)
	assert.Equal(t, [2]int{0, 1}, roundOrder(0), "the gateway goes first in the first round")
}

// TestTheBaselineRunsFromItsOwnCopy: run from the bench's own executable, the baseline shared
// its code pages with the load clients, which the gateway, a binary of its own, cannot.
func TestTheBaselineRunsFromItsOwnCopy(t *testing.T) {
	dir := t.TempDir()
	bin, err := baselineBinary(dir, "baseline")
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	copied, err := os.Stat(bin)
	require.NoError(t, err)
	original, err := os.Stat(self)
	require.NoError(t, err)
	assert.False(t, os.SameFile(copied, original), "the baseline runs from the bench's own file")
	assert.NotZero(t, copied.Mode()&0o100, "the copy is not executable")
	want, err := os.ReadFile(self)
	require.NoError(t, err)
	got, err := os.ReadFile(bin)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "the copy differs from the bench binary")
}
