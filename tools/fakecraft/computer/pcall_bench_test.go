package computer

import (
	"context"
	"io"
	"strconv"
	"testing"
)

// BenchmarkPcall is the cost of one call of term.write from Lua code (with its loop's step),
// made directly and through pcall, which runs it in a coroutine of its own so that code
// under it may yield (cfuncs.lua); the boot of the computer is spread over b.N calls. The
// loop waits for an event every 10 000 calls, as a program must before CC's 7 s limit.
func BenchmarkPcall(b *testing.B) {
	for _, c := range []struct{ name, call string }{
		{"direct", `write("x")`},
		{"pcall", `pcall(write, "x")`},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := `local write = term.write
for i = 1, ` + strconv.Itoa(b.N) + ` do
  ` + c.call + `
  if i % 10000 == 0 then term.setCursorPos(1, 1) os.queueEvent("go") os.pullEvent("go") end
end`
			comp, err := New(Config{Stdout: io.Discard, APIs: []Installer{memFS{ShellPath: src}.install}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			res, err := comp.Run(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if res.Err != nil {
				b.Fatal(res.Err)
			}
		})
	}
}
