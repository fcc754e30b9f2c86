package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"trap-sandbox/internal/protocol"
)

// QueryParam is a query parameter an API route takes (HandleAPI): every other parameter, and
// this one given twice, is refused before the route runs. Most routes take none.
type QueryParam struct {
	Name    string // monitor
	Example string // its value in the refusal's example: top (?monitor=top)
	Is      string // what it names: "a monitor attached to the computer"
	Without string // what the route does without it: "the stream is the computer's own screen"
}

// maxParamShown is the longest parameter name a refusal echoes: a query may hold 600 KB.
const maxParamShown = 64

// refuseQuery answers 400 bad_payload, and reports true, when req's query is not one the route
// of pattern takes (params): a parameter it does not take, one given twice, or a query that
// cannot be read. Each was ignored before, and the caller was answered as if it had not asked
// (a file read whole for ?offset=5, a computer's own screen streamed for ?montior=top).
func refuseQuery(w http.ResponseWriter, req *http.Request, params []QueryParam) bool {
	if req.URL.RawQuery == "" {
		return false
	}
	route := clipHeader(req.Method) + " " + clipHeader(req.URL.Path)
	query, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		// url.Query() drops what it cannot read, a parameter the caller meant among it.
		WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload,
			fmt.Sprintf("the query of %s cannot be read (%s): write it as name=value pairs joined by &, escaped as a URL's", route, clipHeader(err.Error())))
		return true
	}
	for name, values := range query {
		i := queryParamIndex(params, name)
		if i < 0 {
			WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, route+notTaken(params, name))
			return true
		}
		if len(values) > 1 {
			p := params[i]
			WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload,
				fmt.Sprintf("the query names %s %d times: %s takes it once (?%s=%s)", p.Name, len(values), route, p.Name, p.Example))
			return true
		}
	}
	return false
}

func queryParamIndex(params []QueryParam, name string) int {
	for i, p := range params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// notTaken ends the refusal of a parameter named name that a route taking params does not take.
func notTaken(params []QueryParam, name string) string {
	given := strconv.Quote(name) // a control or bidi character as an escape, shown as text
	if len(name) > maxParamShown {
		given = fmt.Sprintf("one of %d bytes", len(name))
	}
	switch len(params) {
	case 0:
		return fmt.Sprintf(" takes no query parameter, not %s (docs/http-api.md)", given)
	case 1:
		p := params[0]
		return fmt.Sprintf(" takes one query parameter, %s (%s: ?%s=%s), not %s: without it %s", p.Name, p.Is, p.Name, p.Example, given, p.Without)
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return fmt.Sprintf(" takes the query parameters %s, not %s (docs/http-api.md)", strings.Join(names, ", "), given)
}

// AccountParam is the query parameter of the account routes' listings (tokens, credentials,
// enrollment keys): the one account to list.
var AccountParam = QueryParam{Name: "account", Example: "alice", Is: "the one account to list",
	Without: "the listing holds every account the token reaches (a user's token: its own)"}
