package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestHostWordsCrossTheAPI: the host API's hostWords carry Said's split to a client over the
// API; hostWords that are not the message's ends leave all of it the computer's.
func TestHostWordsCrossTheAPI(t *testing.T) {
	worded := (&Error{Code: CodeFSError, Message: "/../x: Invalid Path", ByComputer: true}).WithHostWords("", " (why)")
	wire, err := json.Marshal(worded.ToTheAPI())
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"fs_error","message":"/../x: Invalid Path (why)","hostWords":{"before":"","after":" (why)"}}`, string(wire))
	var read Error
	require.NoError(t, json.Unmarshal(wire, &read))
	before, computers, after := read.FromTheAPI().Said()
	assert.Equal(t, []string{"", "/../x: Invalid Path", " (why)"}, []string{before, computers, after})

	wire, err = json.Marshal((&Error{Code: CodeFSError, Message: "Invalid Path", ByComputer: true}).ToTheAPI())
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"fs_error","message":"Invalid Path"}`, string(wire), "nothing added: no hostWords")
	wire, err = json.Marshal(Errorf(CodeTimeout, "late").WithHostWords("", "; more").ToTheAPI())
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"timeout","message":"late; more"}`, string(wire), "the gateway's own error has none")

	for _, h := range []HostWords{{Before: "x", After: ""}, {Before: "", After: "Path!"}, {Before: "Invalid P", After: "Path"}} {
		before, computers, after = (&Error{Code: CodeFSError, Message: "Invalid Path", HostWords: &h}).FromTheAPI().Said()
		assert.Equal(t, []string{"", "Invalid Path", ""}, []string{before, computers, after}, "hostWords %+v", h)
	}
	before, computers, after = (&Error{Code: CodeFSError, Message: "Invalid Path", HostWords: &HostWords{Before: "Invalid", After: " Path"}}).FromTheAPI().Said()
	assert.Equal(t, []string{"Invalid", "", " Path"}, []string{before, computers, after}, "all the host's: the computer's words empty")
}

// TestWithHostWordsAroundKeepsPartOfTheComputers: the host's words around part of what the
// computer said are the host's; a part the computer did not say leaves all of it the computer's.
func TestWithHostWordsAroundKeepsPartOfTheComputers(t *testing.T) {
	answer := &Error{Code: CodeBadPayload, Message: `events[4]: unknown key name "x"`, ByComputer: true}
	placed := answer.WithHostWordsAround("events[9]", `: unknown key name "x"`, "")
	named := placed.WithHostWordsAround("keys[2]", `: unknown key name "x"`, "; did you mean")
	assert.Equal(t, `keys[2]: unknown key name "x"; did you mean`, named.Message)
	before, computers, after := named.Said()
	assert.Equal(t, []string{"keys[2]", `: unknown key name "x"`, "; did you mean"}, []string{before, computers, after})

	before, computers, after = answer.WithHostWordsAround("keys[2]", ": not said", "").Said()
	assert.Equal(t, []string{"", "keys[2]: not said", ""}, []string{before, computers, after})
}

// TestACodeIsAWord: the codes a host surface shows as the protocol's words (Code.IsWord).
func TestACodeIsAWord(t *testing.T) {
	for _, c := range []Code{CodeInternal, CodeFSError, CodeLinkInvalid, "door_stuck", "e2", Code("a" + strings.Repeat("b", MaxCodeBytes-1))} {
		assert.True(t, c.IsWord(), "%q", c)
	}
	for _, c := range []Code{"", "Internal", "_x", "2x", "fs error", "fs-error", "timeout: the gateway adds", "fs_error\n", "é", Code("a" + strings.Repeat("b", MaxCodeBytes))} {
		assert.False(t, c.IsWord(), "%q", c)
	}
}
