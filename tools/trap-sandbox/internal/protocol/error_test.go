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

// TestSaidTellsTheHostsWordsFromTheComputers: words the host adds before and after a
// computer's message, once or several times, are the host's; the computer's are what it
// wrote, even when the host's words hold the same text. A message reworded so that the
// computer's words moved is all the computer's, as is one the host added nothing to; a
// gateway's own error is all the host's.
func TestSaidTellsTheHostsWordsFromTheComputers(t *testing.T) {
	answer := &Error{Code: CodeFSError, Message: "Access denied", ByComputer: true}
	worded := answer.WithHostWords("moving /rom/x to /Access denied: ", "").WithHostWords("", " (/rom is the ROM)")
	assert.Equal(t, "moving /rom/x to /Access denied: Access denied (/rom is the ROM)", worded.Message)
	before, computers, after := worded.Said()
	assert.Equal(t, []string{"moving /rom/x to /Access denied: ", "Access denied", " (/rom is the ROM)"}, []string{before, computers, after})
	assert.Equal(t, "Access denied", answer.Message, "the original is left as it was")
	assert.Equal(t, CodeFSError, worded.Code)
	assert.True(t, worded.ByComputer)

	before, computers, after = worded.WithMessage(worded.Message + "; and more").Said()
	assert.Equal(t, []string{"moving /rom/x to /Access denied: ", "Access denied", " (/rom is the ROM); and more"}, []string{before, computers, after},
		"words appended by rewording are the host's")

	before, computers, after = worded.WithMessage("denied").Said()
	assert.Equal(t, []string{"", "denied", ""}, []string{before, computers, after}, "reworded out of place: all of it is marked the computer's")

	before, computers, after = answer.Said()
	assert.Equal(t, []string{"", "Access denied", ""}, []string{before, computers, after})

	before, computers, after = (&Error{Code: CodeFSError, Message: "", ByComputer: true}).WithHostWords("/x: ", "").Said()
	assert.Equal(t, []string{"/x: ", "", ""}, []string{before, computers, after}, "a computer's empty message")

	before, computers, after = Errorf(CodeTimeout, "late").WithHostWords("", "; give it longer").Said()
	assert.Equal(t, []string{"late; give it longer", "", ""}, []string{before, computers, after})
}
