// Package webconsole is the gateway's web console at /console/: a page listing the computers
// and showing one computer's screen live (the CC palette, its text as text), with keyboard
// input, paste and a terminate button. The page itself loads without auth; everything it
// shows comes from the host API (GET /trapos/computers, the screen module's stream, POST
// …/input with screen.input's events, which the gateway types whole), with the API token the person gives when the gateway has
// one. The assets are embedded: no build step, nothing fetched at run time. See
// docs/screen.md.
package webconsole

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/server"
)

// Path is where the console is served.
const Path = "/console/"

//go:embed assets
var assets embed.FS

// Module serves the console. It implements server.Module.
type Module struct{}

// New returns the module.
func New() *Module { return &Module{} }

// Name implements server.Module.
func (*Module) Name() string { return "web-console" }

// Mount implements server.Module: the page and its assets, without the API's auth (they hold
// no data; the page asks for the token the API needs).
func (*Module) Mount(routes *server.Routes) {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	files := http.StripPrefix(Path, http.FileServerFS(sub))
	routes.Handle("GET "+Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assetHeaders(w)
		files.ServeHTTP(w, r)
	}))
	inputs := inputsScript()
	routes.Handle("GET "+Path+InputsScript, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		assetHeaders(w)
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write(inputs)
	}))
	routes.Handle("GET /console", http.RedirectHandler(Path, http.StatusMovedPermanently))
}

// assetHeaders are the headers of every file of the console. Cross-Origin-Opener-Policy
// same-origin cuts the console's window off from another site's page that opened it: that
// page's handle reads closed, so it cannot turn the operator's console to another computer
// (a fragment it sets, #/computer/ID, which the console follows) while the operator types;
// frame-ancestors 'none' keeps such a page from framing it. Browsers honour the first on
// https and on localhost or 127.0.0.1 (docs/screen.md).
func assetHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
}

// InputsScript is the script, beside the page, that gives console.js the client version from
// which each screen.input event type is taken (computer.InputTypesSince, as the gateway's own
// refusals and trap-sandbox screen read it): the console had a copy of the versions.
const InputsScript = "inputs.js"

// inputsScript is InputsScript's text: inputTypesSince, a type's name to its first client.
func inputsScript() []byte {
	since, err := json.Marshal(computer.InputTypesSince)
	if err != nil {
		panic(err) // a map of strings
	}
	return append(append([]byte("// The first client that takes each screen.input type added since the first list (the gateway's computer.InputTypesSince).\nconst inputTypesSince = "), since...), ";\n"...)
}
