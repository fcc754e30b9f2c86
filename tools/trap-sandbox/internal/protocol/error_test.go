package protocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWithMessageKeepsWhoAnswered: an error reworded by a caller stays the same code with the
// same marks of who answered, and the original is left as it was.
func TestWithMessageKeepsWhoAnswered(t *testing.T) {
	orig := &Error{Code: CodeTimeout, Message: "late", ByComputer: true, Attributed: true, Accounts: []string{"alice", "bob"}}
	got := orig.WithMessage("late; and more")
	assert.Equal(t, &Error{Code: CodeTimeout, Message: "late; and more", ByComputer: true, Attributed: true, Accounts: []string{"alice", "bob"}}, got)
	assert.Equal(t, "late", orig.Message)
}
