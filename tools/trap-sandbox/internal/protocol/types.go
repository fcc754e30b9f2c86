package protocol

import "slices"

// Request types of the protocol. Computer→gateway types are answered by the gateway's
// handler table (TypeHello by the gateway itself, others by the modules that register them);
// gateway→computer types are answered by the computer's daemon. The computer-side names are
// reserved: a TrapOS program cannot serve them (docs/capabilities.md).
const (
	// TypeHello authenticates and registers a socket: payload {traposId, secret, clientVersion?,
	// check?}; with check it only answers whether the secret is right (docs/protocol.md).
	TypeHello = "hello"
	// TypeBye: {reason, traposId?} → {}, then the gateway closes the socket with 1000 and the
	// reason ("relabelled", else "bye"): a computer's word that it is leaving, sent before CC's
	// close(), which sends no close frame (docs/protocol.md).
	TypeBye = "bye"
	// TypeProve: {nonce, credential?} → {proof}, before hello: the gateway proves it knows the
	// computer's secret without the computer sending it (docs/protocol.md, "The gateway
	// proves itself"). Once per socket.
	TypeProve = "prove"
	// TypeProbeGateway asks the gateway for its health and opencode's (the opencodehealth module).
	TypeProbeGateway = "probe_gateway"
	// TypeLinkBegin, TypeLinkPoll and TypeLinkAccept link a computer to an account (the link
	// module; docs/protocol.md, "Linking a computer"). They alone are answered on a link
	// session (a hello with link:true).
	TypeLinkBegin  = "link.begin"
	TypeLinkPoll   = "link.poll"
	TypeLinkAccept = "link.accept"

	// TypePing: {} → {traposId}. Always answered.
	TypePing = "ping"
	// TypeComputerInfo: {path?} → the computer's identity and state (freeSpace on the drive
	// of path, when given: client 0.5.23). Always answered.
	TypeComputerInfo = "computer.info"
	// TypeFSList: {path} → {entries: [{name, isDir, size}]}. Needs sandbox.allow_files read.
	TypeFSList = "fs.list"
	// TypeFSRead: {path, offset?, length?, stamp?} → {data, size, eof, stamp?}. Needs read.
	TypeFSRead = "fs.read"
	// TypeFSWrite: {path, data, append?} → {size}. Needs write.
	TypeFSWrite = "fs.write"
	// TypeFSDelete: {path} → {}. Needs write.
	TypeFSDelete = "fs.delete"
	// TypeFSMove: {from, to, overwrite?} → {}; overwrite replaces a file at to in one step. Needs write.
	TypeFSMove = "fs.move"
	// TypeFSMakeDir: {path} → {}. Needs write.
	TypeFSMakeDir = "fs.makeDir"
	// TypeLuaExec: {code, timeoutMs?} → {returns, output, error?, powerOff?}. Needs sandbox.allow_exec.
	TypeLuaExec = "lua.exec"
	// TypeShellRun: {command} → {success, output, powerOff?}. Needs sandbox.allow_exec.
	TypeShellRun = "shell.run"

	// TypeScreenRead: {} → the computer's screen {width, height, colour, cursor, fg, bg, rows,
	// palette}. Needs sandbox.allow_screen view or control (docs/screen.md).
	TypeScreenRead = "screen.read"
	// TypeScreenInput: {events} → {queued}. Needs sandbox.allow_screen control.
	TypeScreenInput = "screen.input"
	// TypeScreenWatch: {} → {watchId}; the computer then sends screen.update. Needs view.
	TypeScreenWatch = "screen.watch"
	// TypeScreenUnwatch: {watchId} → {}.
	TypeScreenUnwatch = "screen.unwatch"
	// TypeScreenUpdate (computer → gateway): a watch's frame, answered by the screen module:
	// {} or unknown_watch, which stops the watch.
	TypeScreenUpdate = "screen.update"
)

// ComputerTypes are the request types every computer's daemon answers itself, in the order
// docs/capabilities.md lists them.
var ComputerTypes = []string{TypePing, TypeComputerInfo, TypeFSList, TypeFSRead, TypeFSWrite,
	TypeFSDelete, TypeFSMove, TypeFSMakeDir, TypeLuaExec, TypeShellRun,
	TypeScreenRead, TypeScreenInput, TypeScreenWatch, TypeScreenUnwatch}

// ReservedType reports whether typ is one of the protocol's own, which no program on a computer
// may serve (libsandboxcodec's RESERVED_TYPES): ComputerTypes, and hello, prove, bye,
// probe_gateway and screen.update, which a computer sends.
func ReservedType(typ string) bool {
	return typ == TypeHello || typ == TypeProve || typ == TypeBye || typ == TypeProbeGateway || typ == TypeScreenUpdate || slices.Contains(ComputerTypes, typ)
}
