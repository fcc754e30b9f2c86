package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
