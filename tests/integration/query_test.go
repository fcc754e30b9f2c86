package integration

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/repo"
)

// documentedRoute finds a route docs/http-api.md names: `GET /trapos/computers`,
// `GET|PUT|DELETE /trapos/computers/{traposId}/files/{path...}`.
var documentedRoute = regexp.MustCompile("`((?:GET|POST|PUT|DELETE)(?:\\|(?:GET|POST|PUT|DELETE))*) (/[^` ?]+)")

// documentedRoutes are the routes docs/http-api.md names in its headings and in its tables'
// first cells (`| `GET /trapos/tokens?account=alice` |`), as [method(s), path] pairs; its
// prose names routes with methods they do not take, as examples of refusals.
func documentedRoutes(doc string) [][]string {
	var routes [][]string
	for line := range strings.Lines(doc) {
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "| "):
			line, _, _ = strings.Cut(line[2:], " |")
		default:
			continue
		}
		for _, m := range documentedRoute.FindAllStringSubmatch(line, -1) {
			routes = append(routes, m[1:])
		}
	}
	return routes
}

// notAPIRoutes are the routes docs/http-api.md names that are not the host API's: the
// computers' socket and the load balancers' health check, which take anything.
var notAPIRoutes = map[string]bool{"/trapos/ws": true, "/healthz": true}

// TestEveryAPIRouteRefusesAQueryItDoesNotTake: every route docs/http-api.md lists, and /mcp,
// asked with a query parameter it does not take, is answered 400 bad_payload naming what it
// takes (a file read with ?offset=5 was answered the whole file, without a word).
func TestEveryAPIRouteRefusesAQueryItDoesNotTake(t *testing.T) {
	ctx := testContext(t)
	root, err := repo.Root()
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "http-api.md"))
	require.NoError(t, err)
	const token = "query-test-token"
	g := startGateway(t, "--api-token", token)
	wildcards := strings.NewReplacer("{traposId}", "7:", "{path...}", "x", "{id}", "abc", "{name}", "bob")
	asked := map[string]bool{}
	routes := append(documentedRoutes(string(doc)), []string{"POST", "/mcp"})
	for _, m := range routes {
		if notAPIRoutes[m[1]] {
			continue
		}
		for method := range strings.SplitSeq(m[0], "|") {
			path := wildcards.Replace(m[1])
			if asked[method+" "+path] {
				continue
			}
			asked[method+" "+path] = true
			body := ""
			if method == http.MethodPost || method == http.MethodPut {
				body = "{}"
			}
			status, answer := apiCall(ctx, t, g, token, method, path+"?offset=5", body)
			var a struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.Unmarshal([]byte(answer), &a), "%s %s: %s", method, path, answer)
			assert.Equal(t, http.StatusBadRequest, status, "%s %s: %s", method, path, answer)
			assert.Equal(t, "bad_payload", a.Error.Code, "%s %s", method, path)
			assert.Regexp(t, `^`+regexp.QuoteMeta(method+" "+path)+` takes (no|one) query parameter.*, not "offset"`, a.Error.Message)
		}
	}
	assert.Len(t, asked, 24, "the routes found in docs/http-api.md: %v", asked)
}
