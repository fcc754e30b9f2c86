package computer

import (
	"testing"
	"time"
)

func TestTooLongWithoutYieldingStopsAPattern(t *testing.T) {
	check(t, `
local str, pat = ("a"):rep(1e4), ".-.-.-.-b$"
sleep(0) -- the guard's clock starts with this resume, not with boot
local ok, err = pcall(string.find, str, pat)
assert(not ok and err == "Too long without yielding", tostring(err))
`, func(cfg *Config) { cfg.YieldTimeout = 2 * time.Second })
}

func TestPatternsKnowLua52Classes(t *testing.T) {
	check(t, `
assert(("a\tb c"):gsub("[^%g ]", "_") == "a_b c")
assert(("THE (quick) fox"):find("%f[%a]%a+", 5) == 6)
assert(select(2, ("hello world"):gsub("o", "0")) == 2)
assert(("x=1, y=2"):gsub("(%w+)=(%w+)", "%2=%1") == "1=x, 2=y")
local ok, err = pcall(string.find, "a", "[a")
assert(not ok and err:find("malformed pattern %(missing ']'%)"), err)
local words = {}
for w in ("one two  three"):gmatch("%a+") do words[#words + 1] = w end
assert(table.concat(words, ",") == "one,two,three")
assert(("abc"):gsub("", "-") == "-a-b-c-")
`)
}

func TestGsubKeepsTheWholeMatchWhenTheReplacementIsNilOrFalse(t *testing.T) {
	check(t, `
-- Lua keeps the match itself, not its first capture, when a table or function answers nil/false.
local s = ("hello world"):gsub("(o) ", {})
assert(s == "hello world", s)
s = ("key=v"):gsub("(%w+)=", function() return false end)
assert(s == "key=v", s)
`)
}
