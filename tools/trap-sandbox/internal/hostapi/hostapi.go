// Package hostapi is the host's HTTP API to the computers (docs/http-api.md), a sandbox module
// beside the gateway: the computer list, one request of any type, and a computer's files. Its
// routes are thin layers over a computer.Client (the vocabulary's calls, chunking, timeouts
// and the text rule are there); this package adds one error writer (server.WriteAnswer) and
// one code → HTTP status table, so every route answers each code the same way (busy: 429 with
// Retry-After).
//
// The package also holds both ends of that API as computer.Transports: Gateway, the gateway
// in-process (what the routes, /mcp and the modules use), and HTTP, the API's client (what the
// CLI and the stdio MCP bridge use).
package hostapi

import (
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// ModuleName is the module's name.
const ModuleName = "trapos-host-api"

// Routes of the host API (docs/http-api.md); {traposId} is path-escaped.
const (
	// ComputersPath lists the connected computers.
	ComputersPath = "/trapos/computers"
	// PartialListHeader, on a GET ComputersPath answer, says why the list leaves computers
	// out (a replica cut off from NATS lists only the computers it holds); absent when the
	// list is whole.
	PartialListHeader = "X-Trapos-Partial-List"
	// RequestsPattern sends one gateway_request to a computer.
	RequestsPattern = "/trapos/computers/{traposId}/requests"
	// InputPattern types a whole input on a computer's screen, in as many screen.input
	// requests as it takes, under the computer's input turn (computer.Client.TypeInput).
	InputPattern = "/trapos/computers/{traposId}/input"
	// FilesPattern is a computer's files; {path...} is the path on the computer without its
	// leading slash, percent-decoded, then read by the path rule (cctext.PathToCC).
	FilesPattern = "/trapos/computers/{traposId}/files/{path...}"
	// filesRootPattern is the computer's root directory without the trailing slash, which the
	// mux would otherwise answer with a redirect (an HTML body) instead of the API's answer.
	filesRootPattern = "/trapos/computers/{traposId}/files"
)

// Limits of the routes.
const (
	// MaxUploadBytes bounds a PUT body and a GET's file: far above a computer's default 1 MB
	// drive, so the computer's own "Out of space" is what a real upload meets.
	MaxUploadBytes = 16 << 20
	// maxRequestBodyBytes bounds a /requests body: a frame may not exceed
	// protocol.MaxFrameBytes, so anything much bigger is refused without reading it all.
	maxRequestBodyBytes = 2 * protocol.MaxFrameBytes
	// maxInputBodyBytes bounds an …/input body: computer.MaxTypedEvents events of some 30
	// bytes each (a key press's {"type":"key","name":"leftBracket"}), with room to spare.
	maxInputBodyBytes = 2 << 20
)

// Module serves the host API on a computer.Client. It implements server.Module.
type Module struct {
	client *computer.Client
	order  inputOrder // the named inputs of …/input, for those typed after them
}

// New returns the module working on the computers through c.
func New(c *computer.Client) *Module { return &Module{client: c} }

// Name implements server.Module.
func (m *Module) Name() string { return ModuleName }

// Mount registers the routes behind the server's API auth.
func (m *Module) Mount(routes *server.Routes) {
	routes.HandleAPIFunc("GET "+ComputersPath, m.serveComputers)
	routes.HandleAPIFunc("POST "+RequestsPattern, m.serveRequest)
	routes.HandleAPIFunc("POST "+InputPattern, m.serveInput)
	routes.HandleAPIFunc("GET "+FilesPattern, m.serveGet)
	routes.HandleAPIFunc("PUT "+FilesPattern, m.servePut)
	routes.HandleAPIFunc("DELETE "+FilesPattern, m.serveDelete)
	routes.HandleAPIFunc("GET "+filesRootPattern, m.serveGet)
	routes.HandleAPIFunc("PUT "+filesRootPattern, m.servePut)
	routes.HandleAPIFunc("DELETE "+filesRootPattern, m.serveDelete)
}
