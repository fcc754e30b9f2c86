-- A stand-in for CC: Tweaked's mcfly, written for fakecraft's runner test: it speaks the
-- same cct_test protocol (start, then one cct_test_run event per test, submit, finish).
local root = ...;
local tests = {
  { name = "a\0passes", file = "a_spec.lua", run = function() return "pass"; end },
  { name = "a\0fails", file = "a_spec.lua", run = function() return "fail", "\"k\252che\" ~= 2"; end },
  -- Defined by a helper a_spec.lua called, as test_helpers.lua's golden cases are.
  { name = "a\0golden case", file = "test_helpers.lua", run = function() return "pass"; end },
  { name = "b\0hangs", file = "b_spec.lua", run = function() os.pullEvent("never"); end },
  { name = "b\0is pending", file = "b_spec.lua", run = function() return "pending"; end },
  { name = "b\0stops the computer", file = "b_spec.lua", run = function() os.shutdown(); coroutine.yield(); end },
  { name = "b\0passes after", file = "b_spec.lua", run = function() return "pass"; end },
};
local map = {};
for i, t in ipairs(tests) do
  map[t.name] = { idx = i, definition = "/" .. root .. "/" .. t.file .. ":" .. i };
end
cct_test.start(map);
while true do
  local _, name = os.pullEvent("cct_test_run");
  if not name then break; end
  local t = tests[map[name].idx];
  local status, message = t.run();
  cct_test.submit({ name = name, status = status, message = message });
end
cct_test.finish();
