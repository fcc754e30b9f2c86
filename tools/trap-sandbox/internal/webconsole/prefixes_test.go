package webconsole

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
)

// TestTheTokenFormKnowsTheSecretsPrefixes: the page tells a person who typed a computer's
// credential or an enrollment key at the token form what it is by its prefix (tokenRefusal in
// console.js), which cannot import the account store's; a prefix changed there without the
// page would have the form call such a secret unknown.
func TestTheTokenFormKnowsTheSecretsPrefixes(t *testing.T) {
	js, err := assets.ReadFile("assets/console.js")
	require.NoError(t, err)
	for _, kind := range []account.Kind{account.KindCredential, account.KindEnrollment} {
		assert.Contains(t, string(js), `sent.startsWith("`+string(kind)+`_")`, "tokenRefusal recognises %s_", kind)
	}
}
