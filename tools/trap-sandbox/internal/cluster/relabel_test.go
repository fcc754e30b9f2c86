package cluster

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/cctext"
)

// lookAlike is a traposId with a no-break space, which a list shows as 7:kit\xa0chen: printed
// as it is, it reads as 7:kit chen.
const lookAlike = "7:kit\u00a0chen"

// A replica's own words about a computer held by another (here: its holder has stopped) name
// it as the lists show it, as a single gateway's do.
func TestAnotherReplicasComputerIsNamedAsTheListsShowIt(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	b.connect(t, lookAlike)
	a.waitComputers(t, lookAlike+"@b")
	b.stop()
	a.waitComputers(t)

	res := await(t, a.request(lookAlike, "fs.list", map[string]any{"path": "/"}, waitLimit))
	require.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Contains(t, res.body.Error.Message, "computer "+cctext.ShowTraposID(lookAlike)+" is not connected: replica b, which held its socket, has stopped")
	assert.NotContains(t, res.body.Error.Message, "\u00a0")
}
