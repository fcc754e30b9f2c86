// Package protocol is the wire format shared by the gateway and a trapos computer: JSON
// frames with an explicit event, an opaque messageId echoed by the reply, and an error model of
// ok + error{code, message}. See docs/protocol.md for the contract in prose.
package protocol

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxFrameBytes is the largest frame either side may send. It is CC: Tweaked's default
// max_websocket_message (128 KiB): CC refuses to send bigger messages and closes the socket
// when it receives one, so the gateway holds itself to the same cap.
const MaxFrameBytes = 128 << 10

// MaxScreenSide is the most cells a computer's screen has across and down: CC: Tweaked's
// largest terminal (a computer's or a pocket computer's size is configured from 1 to 255; a
// monitor is no computer's screen). The one bound of every screen a computer reports: the
// frames it sends the web console (screen.update) and the size it asks the agent for (ai.ask).
const MaxScreenSide = 255

// MaxHostTypeBytes bounds the type of a host's request (the host surfaces refuse a longer one
// with bad_payload): every name of the vocabulary and of a program's types is short, and a
// type near a frame's size would leave the computer no room to answer it.
const MaxHostTypeBytes = 256

// FrameTooLargeMessage refuses a request whose payload would make a gateway_request frame
// above MaxFrameBytes: the caller's to fix (bad_payload), worded the same by the HTTP API and
// the in-process transport, so a client can tell it apart and name the way round it.
var FrameTooLargeMessage = fmt.Sprintf("the gateway_request frame would exceed %d bytes (128 KiB, CC: Tweaked's limit)%s", MaxFrameBytes, FrameTooLargeFix)

// FrameTooLargeFix ends FrameTooLargeMessage: a caller that knows a better way round (a run's
// code written to a file) puts that in its place.
const FrameTooLargeFix = "; send a smaller payload"

// Event names the kind of a frame and, with it, the direction it travels in.
type Event string

// The four events of the protocol. computer_* frames travel from a computer to the gateway
// and carry traposSenderId; gateway_* frames travel the other way and carry traposReceiverId.
const (
	EventComputerRequest  Event = "computer_request"
	EventComputerResponse Event = "computer_response"
	EventGatewayRequest   Event = "gateway_request"
	EventGatewayResponse  Event = "gateway_response"
)

// IsKnown reports whether e is one of the four protocol events.
func (e Event) IsKnown() bool {
	switch e {
	case EventComputerRequest, EventComputerResponse, EventGatewayRequest, EventGatewayResponse:
		return true
	}
	return false
}

// FromComputer reports whether e is an event a computer may send.
func (e Event) FromComputer() bool {
	return e == EventComputerRequest || e == EventComputerResponse
}

// IsResponse reports whether e is a reply event (it carries ok and maybe error).
func (e Event) IsResponse() bool {
	return e == EventComputerResponse || e == EventGatewayResponse
}

// Code is a stable, machine-readable error code carried in error.code.
type Code string

// MaxCodeBytes is the longest code that is a word (Code.IsWord).
const MaxCodeBytes = 64

// IsWord reports whether c is a word as the protocol's codes are: a lowercase ASCII letter,
// then such letters, digits and _, MaxCodeBytes at most. A computer's code that is not one
// reaches no host surface as a code (docs/protocol.md, "Error codes"): each shows the code
// as the protocol's word, ahead of a message it marks as the computer's.
func (c Code) IsWord() bool {
	if len(c) == 0 || len(c) > MaxCodeBytes || c[0] < 'a' || c[0] > 'z' {
		return false
	}
	for i := 1; i < len(c); i++ {
		if b := c[i]; (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '_' {
			return false
		}
	}
	return true
}

// The v1 error codes. They are part of the contract: add new ones, never rename.
const (
	// CodeUnauthorized: the hello secret is wrong. The gateway closes the socket (4001) after it.
	CodeUnauthorized Code = "unauthorized"
	// CodeNotAuthenticated: a request arrived before a successful hello, or the hello itself is
	// unusable (no traposId, or a different traposId on an already registered socket).
	CodeNotAuthenticated Code = "not_authenticated"
	// CodeUnknownType: the receiver has no handler for the request's type.
	CodeUnknownType Code = "unknown_type"
	// CodeNotConnected: the target computer has no socket, or lost it before answering.
	CodeNotConnected Code = "not_connected"
	// CodeInternal: the receiver failed for a reason of its own.
	CodeInternal Code = "internal"
	// CodeTimeout: no answer arrived in time.
	CodeTimeout Code = "timeout"
)

// Codes added after v1 by the request vocabulary (docs/capabilities.md).
const (
	// CodeForbidden: the computer's owner has not allowed this request; the message names the
	// setting to change (sandbox.allow_files, sandbox.allow_exec).
	CodeForbidden Code = "forbidden"
	// CodeFSError: a file-system request failed on the computer; the message is CC's own
	// (missing file, read-only /rom, out of space, a path escaping with "..").
	CodeFSError Code = "fs_error"
	// CodeBadPayload: the request's payload is unusable (a missing or wrongly typed field); the
	// message names the field.
	CodeBadPayload Code = "bad_payload"
)

// Codes lists every code: the v1 codes in the order the contract gives them, then the later ones.
var Codes = []Code{CodeUnauthorized, CodeNotAuthenticated, CodeUnknownType, CodeNotConnected, CodeInternal, CodeTimeout,
	CodeForbidden, CodeFSError, CodeBadPayload}

// CodeBusy (not in Codes, which lists the seed's vocabulary): on the host API the computer
// already has as many gateway requests in flight as the gateway allows, or its send queue is
// full (retry after the Retry-After header); on a socket, the agent module's ai.ask/ai.reset
// while a turn runs or past the computer's rate limit (docs/protocol.md).
const CodeBusy Code = "busy"

// CodeUnknownWatch answers a screen.update whose watch the gateway no longer keeps (its last
// viewer left, or it never asked): the computer stops that watch (docs/screen.md).
const CodeUnknownWatch Code = "unknown_watch"

// CodeNotFound (a host API code, never sent on a socket): the record a route names is not
// there, or the caller does not reach it (the account API), or no API route has that path.
const CodeNotFound Code = "not_found"

// Codes of the link module (docs/protocol.md, "Linking a computer"): CodeLinkInvalid refuses a
// link code or enrollment key that is unknown, expired, used, declined or revoked (the message
// says which); CodeLinkDisabled answers link.* on a gateway without an account store.
const (
	CodeLinkInvalid  Code = "link_invalid"
	CodeLinkDisabled Code = "link_disabled"
)

// Error is the error object of a response frame ({"code":..., "message":...}). It is also a Go
// error, the one error type of a request on the host side: gateway-side failures carry their
// code up to whoever maps codes to HTTP statuses, and a computer's ok:false is the same type
// with ByComputer set.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Proof, on the gateway's refusal of a prove for a revoked credential, is its proof of
	// that refusal (docs/protocol.md, "The gateway proves itself"): the one field of an error
	// besides code and message in a frame, written after them when set.
	Proof string `json:"proof,omitempty"`
	// ByComputer is set when the computer itself answered ok:false, so Message is the
	// computer's text, but for words the host added with WithHostWords (the host surfaces
	// mark the computer's, Said, as its data). Not on the wire.
	ByComputer bool `json:"-"`
	// Computer, on a ByComputer error of a call that reached two computers (MCP's copy_file:
	// a read on one, a write on another), is the traposId of the one that answered it, whose
	// words the host marks as its data; empty: the call's own computer. Not on the wire.
	Computer string `json:"-"`
	// computerWords, on an error to which the host added words of its own (WithHostWords),
	// are the words of Message that were there before it: on a ByComputer error, the
	// computer's (Said), at byte computerAt of Message. hostWorded says they are set (the
	// computer's words may be ""). Not on the wire.
	computerWords string
	computerAt    int
	hostWorded    bool
	// Attributed is set on a host-side client's own error about the gateway it called (one
	// that does not answer, cannot be reached, refused the call's token, or is not the API), or
	// about a computer's answer it relayed that the client cannot read:
	// Message already names that gateway (or computer) and says what happened, so a caller adds neither
	// "the gateway answered" nor a computer's fix (more time) of its own. Not on the wire.
	Attributed bool `json:"-"`
	// Accounts, on the host API's not_connected for a traposId that several accounts have
	// connected (an admin's, whose own account has none of them), are those accounts: the
	// traposId does not say which computer is meant, and asking again will not either. Never
	// in a frame (EncodeFrame writes the code and the message).
	Accounts []string `json:"accounts,omitempty"`
	// RelabelledTo, on a not_connected of a computer that was relabelled (its bye, see
	// docs/protocol.md), is its new traposId, so that a host view can follow it (the web
	// console's does). Never in a frame.
	RelabelledTo string `json:"relabelledTo,omitempty"`
	// Monitor, on the host API's error of a monitor's screen stream (its refusal, and its
	// end), is that monitor as the gateway asked the computer for it
	// (computer.MonitorNamedBack: a side in lower case, as CC reads a side), so that a viewer
	// that named it in another case (Left) names it as the computer does, which the words of
	// a refusal need not (a forbidden names no monitor). Never in a frame.
	Monitor string `json:"monitor,omitempty"`
	// Refused, on the host API's refusal of a screen stream, is set when the computer itself
	// refused the watch (its ok:false to screen.watch: ByComputer, which is not on the wire),
	// whatever its code: a refusal the computer gives again when asked again, where the
	// gateway's own answers (the computer away, the gateway stopping, busy) come right by
	// themselves. A viewer that asks again by itself tells them apart by it: the web console
	// backs off from a refusal (docs/screen.md). So is it on the stream's end when the
	// computer ended the watch itself (its screen.update's ended), which the web console backs
	// off from alike when it came before the stream's first frame. Between replicas, on the
	// answer to a watch relayed to the replica holding the computer (screen's startThrough),
	// it carries ByComputer across the bus. Never in a frame.
	Refused bool `json:"refused,omitempty"`
	// Absent, on the gateway's not_connected of a computer that no socket holds, on this
	// replica or any other (computer.NotConnected's), is set: the caller named a computer that
	// is not there, or one that is away (rebooting). Not on one that went away during the
	// request (Left), a relabel's, or a caller's that its token does not reach. Never in a frame.
	Absent bool `json:"absent,omitempty"`
	// Left, on the gateway's not_connected of a request whose computer went away, or was
	// replaced by a newer socket, while the request waited for its answer, is set: the request
	// may have run before it went (the gateway's Message ends with computer.MayHaveDoneIt; a
	// read's, worded by computer.ReadAgain, says it changed nothing). So is it on a screen
	// stream's end whose computer went away while the stream was open (screen.Disconnected),
	// which a client of the stream reads (the stdio MCP bridge's wait_for_screen), never its
	// words. Never in a frame.
	Left bool `json:"left,omitempty"`
	// Stopping, on the end of a screen stream that the gateway serving it ended because it is
	// shutting down (gateway.ErrShuttingDown, its sockets' cause), is set: the computer did
	// not leave, its socket went with the gateway, and its daemon connects again by itself (to
	// another replica behind the same address, or to this gateway once it is back). A viewer
	// reads it (the CLI's view looks for a gateway at its --url again), never the words.
	// Through another replica, the holder's stop is ReplicaGone instead: the gateway serving
	// the stream runs on. Never in a frame.
	Stopping bool `json:"stopping,omitempty"`
	// Meant, on a not_connected, are the connected computers the caller probably meant, as
	// the lists show them (computer.Hint asks "did you mean" them). Never in a frame.
	Meant []string `json:"meant,omitempty"`
	// Hint, on a not_connected, is what computer.Hint added to the end of Message: what the
	// caller can do (where the connected computers are listed, that none is, or Meant). Set,
	// it marks the error hinted, so that a client over another's answer (the CLI and the stdio
	// MCP bridge over the HTTP API) adds no second one. Never in a frame.
	Hint string `json:"hint,omitempty"`
	// WaitingMessage, on a not_connected whose Hint tells the caller to ask again later (the
	// gateway's first minute, its computers still reconnecting), or a read's whose computer
	// went away (computer.ReadAgain), is Message as a caller that asks again by itself and
	// says it waits words it (the web console's view): without the word to ask again. A
	// rewording (WithMessage) drops it: it is the old message's. Never in a frame.
	WaitingMessage string `json:"waitingMessage,omitempty"`
	// Unlinked, on a not_connected whose Hint says how to link a computer (the caller's token
	// reaches one account's computers, and that account holds no computer credential), is set:
	// no computer of the account can connect until one is linked, so a caller that waits has
	// nothing to wait for but that link (the web console's view says no "waiting for it to come
	// back" after it). Never in a frame.
	Unlinked bool `json:"unlinked,omitempty"`
	// ReplicaGone, on a not_connected of a computer whose socket another replica held, is
	// that replica's name when it stopped (said goodbye, or answered that it is shutting down)
	// or went silent past --nats-replica-ttl (package cluster's): the socket went with it, and
	// the computer's daemon connects again by itself within seconds, through the load balancer
	// to a replica still running (docs/scale-out.md), so a caller can wait for it as for a
	// reboot (MCP's tools say how: ping with wait). It is on the host API's JSON, so a client
	// over it (the stdio MCP bridge) reads it as the gateway does. Never in a frame.
	ReplicaGone string `json:"replicaGone,omitempty"`
	// Queued, on the host API's answer to an input (POST …/input) whose request after the
	// first failed, is the input's events the computer queued before it (computer.PartlyTyped):
	// those are typed, the rest not. Never in a frame.
	Queued int `json:"queued,omitempty"`
	// HostWords, on the host API's answer of a computer's ok:false (docs/http-api.md), are the
	// words the gateway added before and after the computer's in Message (Said): absent when it
	// added none. Only on that wire: ToTheAPI sets it, FromTheAPI reads it back into Said's
	// split. Never in a frame.
	HostWords *HostWords `json:"hostWords,omitempty"`
	// RetryAfter, on a busy answer a host-side client read from the host API, is the wait its
	// Retry-After header asks for before the next try (0: it named none in whole seconds).
	// Not on the wire: the host API says it in the header (docs/http-api.md).
	RetryAfter time.Duration `json:"-"`
}

// Error implements the error interface as "code: message".
func (e *Error) Error() string {
	return string(e.Code) + ": " + e.Message
}

// WithMessage is e with its message replaced (a caller rewording it): the same code, and the
// same marks of who answered (ByComputer, Attributed, Accounts, RelabelledTo) and of why a
// computer did not answer (Absent, Left, Stopping, ReplicaGone, Meant, Hint: a caller that reworded a hinted message
// no longer ends it with Hint), but no WaitingMessage, which was the old message's. A caller that adds words of the host's to a computer's message
// uses WithHostWords, so that the host's words are not marked as the computer's (Said).
func (e *Error) WithMessage(message string) *Error {
	c := *e
	c.Message, c.WaitingMessage = message, ""
	return &c
}

// WithComputerWordsReplaced is e with every old in the computer's words (Said) replaced by
// new, and in the host's words around them: a caller that names in the caller's terms what
// the message named in the computer's (a write's temporary file, as the file asked for). The
// host's words stay the host's, where a WithMessage of the whole marked them as the
// computer's too.
func (e *Error) WithComputerWordsReplaced(old, new string) *Error {
	if !e.ByComputer {
		return e.WithMessage(strings.ReplaceAll(e.Message, old, new))
	}
	before, said, after := e.Said()
	before, said, after = strings.ReplaceAll(before, old, new), strings.ReplaceAll(said, old, new), strings.ReplaceAll(after, old, new)
	c := e.WithMessage(before + said + after)
	if c.hostWorded {
		c.computerWords, c.computerAt = said, len(before)
	}
	return c
}

// WithHostWords is e (as WithMessage keeps it) with the host's words before and after its
// message: the one way the host adds its own words to a computer's message, so that Said
// tells them from the computer's, however many times words are added.
func (e *Error) WithHostWords(before, after string) *Error {
	c := *e
	if !c.hostWorded {
		c.computerWords, c.computerAt, c.hostWorded = e.Message, 0, true
	}
	c.computerAt += len(before)
	c.Message = before + e.Message + after
	return &c
}

// WithHostWordsAround is e with its message the host's words before and after part of the
// computer's (computers, some of what Said gives as the computer's): a caller that rewrites
// the computer's own words around that part in its terms (the place of an event the computer
// named, "events[3]", as the caller's "keys[1]"). When computers is not within the computer's
// words, all of the new message is marked the computer's (Said), marking too much rather
// than too little.
func (e *Error) WithHostWordsAround(before, computers, after string) *Error {
	c := *e
	c.Message = before + computers + after
	c.computerWords, c.computerAt, c.hostWorded = computers, len(before), true
	if _, said, _ := e.Said(); !strings.Contains(said, computers) {
		c.hostWorded = false
	}
	return &c
}

// Said splits Message into the host's words before the computer's, the computer's, and the
// host's after them (each as WithHostWords added them). All of a ByComputer message is the
// computer's unless the host added words to it, and so is all of one reworded (WithMessage)
// so that the computer's words are no longer where they were: a host surface that marks
// them as the computer's data marks too much rather than too little. An error not ByComputer
// is the host's alone: before is Message.
func (e *Error) Said() (before, computers, after string) {
	if !e.ByComputer {
		return e.Message, "", ""
	}
	end := e.computerAt + len(e.computerWords)
	if !e.hostWorded || end > len(e.Message) || e.Message[e.computerAt:end] != e.computerWords {
		return "", e.Message, ""
	}
	return e.Message[:e.computerAt], e.computerWords, e.Message[end:]
}

// HostWords are the host's words around a computer's in a message: Message is Before, the
// computer's words, then After.
type HostWords struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// ToTheAPI is e as the host API answers a computer's ok:false: with HostWords when the host
// added words to the computer's (Said), so that a client over the API (the CLI, the stdio
// MCP bridge) tells them apart as the gateway does.
func (e *Error) ToTheAPI() *Error {
	c := *e
	c.HostWords = nil
	if before, _, after := e.Said(); e.ByComputer && (before != "" || after != "") {
		c.HostWords = &HostWords{Before: before, After: after}
	}
	return &c
}

// FromTheAPI is e, the error of a computer's ok:false as the host API answered it, marked
// ByComputer, with the host's words its HostWords name kept apart from the computer's (Said).
// HostWords that are not the ends of Message are ignored: all of it is then the computer's
// (marking too much rather than too little).
func (e *Error) FromTheAPI() *Error {
	c := *e
	c.ByComputer, c.HostWords = true, nil
	c.computerWords, c.computerAt, c.hostWorded = "", 0, false
	if h := e.HostWords; h != nil && len(h.Before)+len(h.After) <= len(e.Message) &&
		strings.HasPrefix(e.Message, h.Before) && strings.HasSuffix(e.Message, h.After) {
		c.computerWords, c.computerAt, c.hostWorded = e.Message[len(h.Before):len(e.Message)-len(h.After)], len(h.Before), true
	}
	return &c
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of the first *Error in err's chain, CodeInternal for any other
// non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return CodeInternal
}
