package machine

import (
	"context"
	"strings"
	"testing"
	"time"
)

// runProgram boots a machine whose disk holds one program and runs it to the end.
func runProgram(b *testing.B, src string) {
	b.Helper()
	m, err := New(Options{Files: map[string]string{"/p.lua": src}, Program: "/p.lua"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := m.Run(ctx)
	if err != nil || !res.OK {
		b.Fatalf("run: %v %+v", err, res)
	}
}

// BenchmarkBootSmallProgram is a whole boot (ROM APIs, settings, shell) and a program that
// prints a few lines: what every `fakecraft run` and Go test pays.
func BenchmarkBootSmallProgram(b *testing.B) {
	for b.Loop() {
		runProgram(b, `for i = 1, 5 do print("line " .. i) end`)
	}
}

// BenchmarkCPUBoundLua is Lua work with no yields: arithmetic, tables, string building and
// pattern matching, after one boot.
func BenchmarkCPUBoundLua(b *testing.B) {
	for b.Loop() {
		runProgram(b, `
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
assert(fib(24) == 46368)
local t = {}
for i = 1, 20000 do t[i] = ("item %d"):format(i) end
local n = 0
for _, s in ipairs(t) do if s:find("5$") then n = n + 1 end end
assert(n == 2000)
local parts = {}
for i = 1, 5000 do parts[#parts + 1] = tostring(i) .. "," end
assert(#table.concat(parts) > 0)
`)
	}
}

// BenchmarkStringBuilding is Lua that builds strings with `..` from strings and numbers
// (whole and not), the work `..`'s number formatting touches, after one boot.
func BenchmarkStringBuilding(b *testing.B) {
	for b.Loop() {
		runProgram(b, `
local lines = {}
for i = 1, 20000 do lines[#lines + 1] = "key" .. i .. " = " .. i / 4 .. ";" end
assert(lines[2] == "key2 = 0.5;")
local s = ""
for i = 1, 3000 do s = s .. "x" end
local row = ""
for i = 1, 3000 do row = row .. i .. "," end
assert(#s == 3000 and #row > 0)
`)
	}
}

// sortProgram sorts 10 000 pseudo-random numbers 5 times, with less as the comparator
// ("" for none).
func sortProgram(less string) string {
	call := "table.sort(t)"
	if less != "" {
		call = "table.sort(t, " + less + ")"
	}
	return `
for round = 1, 5 do
  local t, x = {}, round
  for i = 1, 10000 do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end
  ` + call + `
  for i = 2, #t do assert(t[i - 1] <= t[i]) end
end
`
}

// BenchmarkTableSort is table.sort over numbers with no comparator (gopher-lua's Go sort),
// after one boot.
func BenchmarkTableSort(b *testing.B) {
	for b.Loop() {
		runProgram(b, sortProgram(""))
	}
}

// BenchmarkTableSortComparator is table.sort with a Lua comparator (fakecraft's Lua
// heapsort, Cobalt's, so that the comparator may yield), after one boot.
func BenchmarkTableSortComparator(b *testing.B) {
	for b.Loop() {
		runProgram(b, sortProgram("function(a, b) return a < b end"))
	}
}

// BenchmarkPairsIpairs is generic fors over the standard iterators: a 100 000-element table
// summed with ipairs and with pairs, after one boot.
func BenchmarkPairsIpairs(b *testing.B) {
	for b.Loop() {
		runProgram(b, `
local t = {}
for i = 1, 100000 do t[i] = i end
local sum = 0
for _, v in ipairs(t) do sum = sum + v end
for _, v in pairs(t) do sum = sum + v end
for k in next, t do sum = sum + k end
assert(sum == 3 * 5000050000)
`)
	}
}

// BenchmarkGsub is string.gsub after one boot: many short calls with a string and a table
// replacement (the Go matcher, what every gsub pays), and long strings with a function
// replacement (the Lua loop that lets the function yield, computer/cfuncs.lua).
func BenchmarkGsub(b *testing.B) {
	b.Run("string and table", func(b *testing.B) {
		for b.Loop() {
			runProgram(b, `
local n = 0
for i = 1, 20000 do
  local s = ("key%d = value%d"):format(i, i)
  s = s:gsub("(%w+) = (%w+)", "%2=%1")
  n = n + #s:gsub("%d", { ["1"] = "one" })
end
assert(n > 0)
`)
		}
	})
	b.Run("function", func(b *testing.B) {
		for b.Loop() {
			runProgram(b, `
local long = ("hello world "):rep(2000)
for i = 1, 5 do
  local upper, count = long:gsub("%w+", string.upper)
  assert(count == 4000 and #upper == #long)
  local words = long:gsub("(%w)(%w*)", function(first, rest) return first:upper() .. rest end)
  assert(#words == #long)
end
`)
		}
	})
}

// BenchmarkPcall is pcall and xpcall after one boot: calls that return and calls that fail
// (each runs its function in a coroutine of its own, cfuncs.lua; a failing xpcall runs its
// handler over the frames of the error).
func BenchmarkPcall(b *testing.B) {
	for _, call := range []string{"pcall(f, i)", "xpcall(f, handler, i)"} {
		b.Run(call[:strings.IndexByte(call, '(')], func(b *testing.B) {
			for b.Loop() {
				runProgram(b, `
local function ok(x) return x + 1 end
local function fail(x) error("no " .. x) end
local function handler(m) return m end
local n = 0
for i = 1, 10000 do
  local f = ok
  local good, v = `+call+`
  f = fail
  local bad, e = `+call+`
  if good and not bad and e then n = n + v end
end
assert(n > 0)
`)
			}
		})
	}
}
