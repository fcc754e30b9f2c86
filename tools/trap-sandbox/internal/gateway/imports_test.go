package gateway

import (
	"go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGatewayKnowsNoModule: modules register into the gateway (Handle) and call it (Request,
// through hostapi.Gateway);
// the gateway itself imports none of them, opencode included.
func TestGatewayKnowsNoModule(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	for _, imp := range pkg.Imports {
		for _, module := range []string{"/opencode", "/opencodehealth", "/mcp", "/hostapi", "/installer"} {
			require.False(t, strings.HasSuffix(imp, module), "the gateway imports %s", imp)
		}
	}
}
