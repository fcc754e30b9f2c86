package computer

import (
	"testing"
	"time"
)

func TestTooLongWithoutYieldingStopsAPattern(t *testing.T) {
	check(t, `
local str, pat = ("a"):rep(1e4), ".-.-.-.-b$"
for _, call in ipairs({
  function() return string.find(str, pat) end,
  function() return string.match(str, pat) end,
  function() return string.gsub(str, pat, "") end,
}) do
  local ok, err = pcall(call)
  assert(not ok and err == "Too long without yielding", tostring(err))
  sleep(0)
end
`, func(cfg *Config) { cfg.YieldTimeout = 100 * time.Millisecond })
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
