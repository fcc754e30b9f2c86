package computer

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestManyResultsGrowTheStackOnce: string.byte and table.unpack of half a million values
// answer as Lua's do, and grow the stack once instead of copying it at every 1024 slots
// (which allocated gigabytes for CC's vm_spec). Measured in bytes allocated, not time.
func TestManyResultsGrowTheStackOnce(t *testing.T) {
	const program = `
local len = 2 ^ 19
local bytes = { (" "):rep(len):byte(1, -1) }
assert(#bytes == len and bytes[1] == 32 and bytes[len] == 32)
local again = { table.unpack(bytes) }
assert(#again == len)
assert(select("#", ("abc"):byte(-2, 10)) == 2 and select(2, ("abc"):byte(-2, 10)) == 99)
assert(select("#", ("abc"):byte(3, 1)) == 0 and ("abc"):byte() == 97)
assert(select("#", table.unpack({ 1, 2, 3 }, 2)) == 2 and select("#", table.unpack({}, 1, 3)) == 3)
assert(select("#", table.unpack({ 1, 2 }, 3, 1)) == 0)
print("ok")
`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Half a million values take a while under -race on a loaded machine: CC's 7 s of wall
	// time per resume would measure the machine, not the allocation.
	out, res, _ := runLua(t, program, func(cfg *Config) { cfg.YieldTimeout = testTimeout })
	runtime.ReadMemStats(&after)
	assert.Equal(t, "ok\n", out, res.Err)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MB", allocated>>20)
	// The values themselves and the computer take tens of megabytes; a stack copied at
	// every 1024 slots takes over 2 GB.
	assert.Less(t, allocated, uint64(400<<20))
}
