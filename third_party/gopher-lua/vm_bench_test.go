package lua

import (
	"context"
	"testing"
)

// BenchmarkInstructions runs a loop of the instructions the fork touched (table reads and
// writes, arithmetic, comparisons, calls, concatenation) without metamethods, alone and under a
// context as fakecraft runs every coroutine: the cost of the hook check and of the split lookups when
// no metamethod and no hook is involved.
func BenchmarkInstructions(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchmarkInstructions(b, false) })
	b.Run("context", func(b *testing.B) { benchmarkInstructions(b, true) })
}

func benchmarkInstructions(b *testing.B, withContext bool) {
	L := NewState()
	defer L.Close()
	if withContext {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		L.SetContext(ctx)
	}
	if err := L.DoString(`
	function work()
		local t, s = { x = 1, [1] = 2 }, 0
		local function f(a) return a + 1 end
		for i = 1, 20000 do
			t.x = t.x + i
			t[1] = t[1] * 2 % 7
			if t.x > s and i ~= 3 then s = s + f(i) end
			local str = "a" .. "b"
		end
		return s
	end`); err != nil {
		b.Fatal(err)
	}
	work := L.GetGlobal("work")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := L.CallByParam(P{Fn: work, NRet: 1, Protect: true}); err != nil {
			b.Fatal(err)
		}
		L.Pop(1)
	}
}
