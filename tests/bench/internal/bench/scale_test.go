package bench

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddressesSpreadOver127Slash8 checks that every Minecraft server of a scale run (a
// thousand of them here) dials from a loopback address of its own.
func TestAddressesSpreadOver127Slash8(t *testing.T) {
	loopback := &net.IPNet{IP: net.IPv4(127, 0, 0, 0), Mask: net.CIDRMask(8, 32)}
	seen := map[string]int{}
	for k := range 1000 {
		ip := addressOf(k).IP
		require.True(t, loopback.Contains(ip), "%s", ip)
		require.False(t, ip.Equal(net.IPv4(127, 0, 0, 1)), "server %d shares 127.0.0.1 with the replicas' other clients", k)
		if prev, dup := seen[ip.String()]; dup {
			t.Fatalf("servers %d and %d share %s", prev, k, ip)
		}
		seen[ip.String()] = k
	}
}

// TestScaleRefusesAReplicaPastTheOpenFilesLimit: a replica that would hold more sockets than
// one process may open is refused before anything starts, naming the fix.
func TestScaleRefusesAReplicaPastTheOpenFilesLimit(t *testing.T) {
	limit, err := openFilesLimit()
	require.NoError(t, err)
	_, err = RunScale(context.Background(), ScaleConfig{Computers: limit, Replicas: 1, PerAddress: 1000,
		DialConcurrency: 1, WorkDir: t.TempDir()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use more -replicas")
}
