-- spec: a small Busted-style test runner for fakecraft, in the manner of
-- CC: Tweaked's own test framework.
--
--   /.fakecraft/spec.lua FILE...
--
-- Each file is loaded with describe/it/pending/expect/fail/stub/before_each/
-- after_each in its environment; then every case runs in its own coroutine that
-- passes events through, so a case may pull and queue events or use parallel.
-- Prints "ok|FAIL|pending <describe path> <name>" per case and a final
-- "N passed, N failed" line; the run fails (shell.run returns false) when any
-- case failed.

local make_package = dofile("rom/modules/main/cc/require.lua").make;

local paths = table.pack(...);

-- How far up the stack to look for the test code that made an expectation.
local MAX_STACK_SEARCH = 64;

local function source_of(info)
  local source = info.source or "";
  if source:sub(1, 1) == "@" or source:sub(1, 1) == "=" then
    source = source:sub(2);
  end
  return source;
end

local OWN_SOURCE = debug and debug.getinfo and source_of(debug.getinfo(1, "S")) or nil;

-- "file:line: " of the innermost frame outside this file (the spec line that
-- failed), or "" when the VM cannot tell.
local function location()
  if not OWN_SOURCE then
    return "";
  end
  for level = 2, MAX_STACK_SEARCH do
    -- Called directly: a coroutine-based pcall would hide the stack.
    local info = debug.getinfo(level, "Sl");
    if type(info) ~= "table" then
      break;
    end
    local source = source_of(info);
    if (info.what == "Lua" or info.what == "main" or info.what == "tail")
      and source ~= OWN_SOURCE and (info.currentline or 0) > 0 then
      return source .. ":" .. info.currentline .. ": ";
    end
  end
  return "";
end

-- Failures are plain strings, so tests can catch and inspect them like any error.
local function raise(message)
  error(location() .. message, 0);
end

-- A value as shown in failure messages.
local function format(value)
  local t = type(value);
  if t == "string" then
    return ("%q"):format(value);
  elseif t == "table" then
    local ok, text = pcall(textutils.serialize, value);
    if ok then
      return text;
    end
    return tostring(value);
  end
  return tostring(value);
end

-- Deep equality: tables are equal when they have the same keys with
-- deep-equal values. Metatables are ignored.
local function same(a, b, seen)
  if a == b then
    return true;
  end
  if type(a) ~= "table" or type(b) ~= "table" then
    return false;
  end
  seen = seen or {};
  if seen[a] == b then
    return true;
  end
  seen[a] = b;
  for k, v in pairs(a) do
    if not same(v, rawget(b, k), seen) then
      return false;
    end
  end
  for k in pairs(b) do
    if rawget(a, k) == nil then
      return false;
    end
  end
  return true;
end

-- Stubs: stubbed functions are real functions; their call records live here.
local stub_records = setmetatable({}, { __mode = "k" });
-- Undo actions for the stubs of the running case, run after it in reverse.
local restores = {};

-- stub(tbl, key[, value]) replaces tbl[key] until the case ends, as mcfly's stub does: with
-- a function (or none) by a recording function calling it, with any other value (nil
-- included, when given) by that value itself.
local function stub(tbl, key, ...)
  if type(tbl) ~= "table" then
    error(("bad argument #1 (table expected, got %s)"):format(type(tbl)), 2);
  end
  local replacement = ...;
  local original = rawget(tbl, key);
  if select("#", ...) > 0 and type(replacement) ~= "function" then
    rawset(tbl, key, replacement);
    restores[#restores + 1] = function()
      rawset(tbl, key, original);
    end
    return replacement;
  end
  local record = { calls = {} };
  local fn = function(...)
    record.calls[#record.calls + 1] = table.pack(...);
    if replacement then
      return replacement(...);
    end
  end
  stub_records[fn] = record;
  rawset(tbl, key, fn);
  restores[#restores + 1] = function()
    rawset(tbl, key, original);
  end
  return fn;
end

local function record_of(value)
  local record = stub_records[value];
  if not record then
    raise("Expected " .. format(value) .. " to be a stubbed function");
  end
  return record;
end

local function format_args(args)
  local parts = {};
  for i = 1, args.n do
    parts[i] = format(args[i]);
  end
  return "(" .. table.concat(parts, ", ") .. ")";
end

-- Expectations ------------------------------------------------------------

local Expectation = {};
Expectation.__index = Expectation;

local function expect(value)
  return setmetatable({ value = value }, Expectation);
end

--- Passes when the value is == to other.
function Expectation:eq(other)
  if self.value ~= other then
    raise("Expected " .. format(self.value) .. " to equal " .. format(other));
  end
  return self;
end

Expectation.equals = Expectation.eq;
Expectation.equal = Expectation.eq;

--- Passes when the value is not == to other.
function Expectation:ne(other)
  if self.value == other then
    raise("Expected " .. format(self.value) .. " to not equal " .. format(other));
  end
  return self;
end

--- Passes when the value is deeply equal to other.
function Expectation:same(other)
  if not same(self.value, other) then
    raise("Expected " .. format(self.value) .. " to be the same as " .. format(other));
  end
  return self;
end

--- Passes when type(value) is t.
function Expectation:type(t)
  if type(self.value) ~= t then
    raise("Expected " .. format(self.value) .. " to be of type " .. t .. ", but was " .. type(self.value));
  end
  return self;
end

--- Passes when the value is a string matching the Lua pattern.
function Expectation:str_match(pattern)
  if type(self.value) ~= "string" or not self.value:find(pattern) then
    raise("Expected " .. format(self.value) .. " to match pattern " .. format(pattern));
  end
  return self;
end

--- Passes when the value is truthy.
function Expectation:ok()
  if not self.value then
    raise("Expected " .. format(self.value) .. " to be truthy");
  end
  return self;
end

--- Passes when the value is a stub that was called (exactly `times` times if given).
function Expectation:called(times)
  local record = record_of(self.value);
  local count = #record.calls;
  if times == nil then
    if count == 0 then
      raise("Expected stub to be called, but it was not");
    end
  elseif count ~= times then
    raise(("Expected stub to be called %d time(s), but it was called %d time(s)"):format(times, count));
  end
  return self;
end

--- Passes when the value is a stub never called.
function Expectation:not_called()
  local record = record_of(self.value);
  if #record.calls > 0 then
    raise(("Expected stub not to be called, but it was called %d time(s), first with %s")
      :format(#record.calls, format_args(record.calls[1])));
  end
  return self;
end

--- Passes when some call of the stub had exactly these arguments (deep equality).
function Expectation:called_with(...)
  local record = record_of(self.value);
  local wanted = table.pack(...);
  for _, call in ipairs(record.calls) do
    if call.n == wanted.n then
      local all = true;
      for i = 1, wanted.n do
        if not same(call[i], wanted[i]) then
          all = false;
          break;
        end
      end
      if all then
        return self;
      end
    end
  end
  local seen = {};
  for i, call in ipairs(record.calls) do
    seen[i] = format_args(call);
  end
  local history = #seen > 0 and table.concat(seen, ", ") or "no calls";
  raise("Expected stub to be called with " .. format_args(wanted) .. ", but got " .. history);
end

--- Calls fn(...) and expects it to raise; returns an expectation on the error.
--- A position prefix pointing at this call is removed, as is "pcall: ".
local function expect_error(fn, ...)
  -- Both calls on one line: a prefix naming this line is the error's own position.
  local ok, err = pcall(fn, ...); local _, here = pcall(error, "", 2);
  if ok then
    raise("Expected function to error");
  end
  if type(err) == "string" then
    if type(here) == "string" and here ~= "" and err:sub(1, #here) == here then
      err = err:sub(#here + 1);
    elseif err:sub(1, 7) == "pcall: " then
      err = err:sub(8);
    end
  end
  return expect(err);
end

local expect_api = setmetatable({ error = expect_error }, {
  __call = function(_, value)
    return expect(value);
  end,
});

local function fail(message)
  raise(tostring(message));
end

-- Collection ---------------------------------------------------------------

-- A tree of describe blocks; each holds hooks and its cases/blocks in order.
local function new_block(name, parent)
  return { name = name, parent = parent, items = {}, before = {}, after = {} };
end

local cases = {};
local current_block;

local function block_path(block, name)
  local parts = {};
  while block and block.parent do
    table.insert(parts, 1, block.name);
    block = block.parent;
  end
  parts[#parts + 1] = name;
  return table.concat(parts, " ");
end

-- Raises "bad argument #n to 'fn_name' (kind expected, got ...)" at fn_name's caller unless
-- value is of type kind.
local function check_arg(n, fn_name, value, kind)
  if type(value) ~= kind then
    error(("bad argument #%d to '%s' (%s expected, got %s)"):format(n, fn_name, kind, type(value)), 3);
  end
end

local function describe(name, body)
  check_arg(1, "describe", name, "string");
  check_arg(2, "describe", body, "function");
  local block = new_block(name, current_block);
  local outer = current_block;
  current_block = block;
  local ok, err = pcall(body);
  current_block = outer;
  if not ok then
    cases[#cases + 1] = { block = block, name = "(describe)", load_error = err };
  end
end

local function it(name, body)
  check_arg(1, "it", name, "string");
  check_arg(2, "it", body, "function");
  cases[#cases + 1] = { block = current_block, name = name, body = body };
end

local function pending(name)
  check_arg(1, "pending", name, "string");
  cases[#cases + 1] = { block = current_block, name = name, pending = true };
end

local function before_each(fn)
  check_arg(1, "before_each", fn, "function");
  table.insert(current_block.before, fn);
end

local function after_each(fn)
  check_arg(1, "after_each", fn, "function");
  table.insert(current_block.after, fn);
end

-- Running ------------------------------------------------------------------

-- Runs fn in its own coroutine, passing events through like the shell does.
local function run_isolated(fn)
  local co = coroutine.create(fn);
  local result = table.pack(coroutine.resume(co));
  while coroutine.status(co) ~= "dead" do
    local event = table.pack(coroutine.yield(result[2]));
    result = table.pack(coroutine.resume(co, table.unpack(event, 1, event.n)));
  end
  return result[1], result[2];
end

local function error_text(err)
  if type(err) == "table" then
    return format(err);
  end
  return tostring(err);
end

-- How many of the API functions a case left changed its failure names.
local MAX_NAMED_CHANGES = 5;

-- The functions of CC's APIs as a case finds them: those of every table in _G (term,
-- peripheral, os, ..., _G's own globals) and of the native terminal, which windows and
-- redirects draw through at last. A case that wraps one and leaves the wrap there changes
-- every later case, and slows it: trapos's daemon specs once left 118 screen mirrors wrapped
-- in peripheral.call, and a monitor case later in the run took seconds in one resume.
local function api_functions()
  local kept = {};
  local function keep(path, tbl)
    local functions = {};
    for key, value in next, tbl do
      if type(value) == "function" then
        functions[key] = value;
      end
    end
    kept[#kept + 1] = { path = path, tbl = tbl, functions = functions };
  end
  for name, value in next, _G do
    if type(value) == "table" then
      keep(name == "_G" and "" or tostring(name) .. ".", value);
    end
  end
  if type(term) == "table" and type(term.native) == "function" then
    keep("term.native().", term.native());
  end
  return kept;
end

-- Puts back the API functions a case changed since api_functions() kept them, removing those
-- it added, and returns their names, sorted.
local function put_back(kept)
  local changed = {};
  for _, entry in ipairs(kept) do
    local tbl, functions = entry.tbl, entry.functions;
    for key, value in pairs(functions) do
      if rawget(tbl, key) ~= value then
        changed[#changed + 1] = entry.path .. tostring(key);
        rawset(tbl, key, value);
      end
    end
    local added = {};
    for key, value in next, tbl do
      if type(value) == "function" and functions[key] == nil then
        added[#added + 1] = key;
      end
    end
    for _, key in ipairs(added) do
      changed[#changed + 1] = entry.path .. tostring(key);
      rawset(tbl, key, nil);
    end
  end
  table.sort(changed);
  return changed;
end

-- The failure of a case that left the API functions changed (put back since).
local function changed_message(changed)
  local named = {};
  for i = 1, math.min(#changed, MAX_NAMED_CHANGES) do
    named[i] = changed[i];
  end
  local more = #changed - #named;
  return ("left %s%s changed (put back now): a case puts back what it wraps or replaces in "
    .. "CC's APIs, as stub does, else every later case runs through it"):format(
    table.concat(named, ", "), more > 0 and (" and %d more"):format(more) or "");
end

local function run_case(case)
  -- Hooks run outermost first for before_each, innermost first for after_each.
  local chain = {};
  local block = case.block;
  while block do
    table.insert(chain, 1, block);
    block = block.parent;
  end

  restores = {};
  local apis = api_functions();
  local ok, err = run_isolated(function()
    for _, b in ipairs(chain) do
      for _, hook in ipairs(b.before) do
        hook();
      end
    end
    case.body();
  end);

  local after_ok, after_err = run_isolated(function()
    for i = #chain, 1, -1 do
      for _, hook in ipairs(chain[i].after) do
        hook();
      end
    end
  end);

  for i = #restores, 1, -1 do
    restores[i]();
  end
  restores = {};
  local changed = put_back(apis);

  if not ok then
    return false, error_text(err);
  end
  if not after_ok then
    return false, error_text(after_err);
  end
  if #changed > 0 then
    return false, changed_message(changed);
  end
  return true;
end

local passed, failed, skipped = 0, 0, 0;

-- Each case starts in a resume of its own: CC's yield limit is wall time per resume, and
-- cases that never yield would otherwise add up to it on a slow machine.
local function yield_between_cases()
  os.queueEvent("fakecraft_spec_yield");
  os.pullEvent("fakecraft_spec_yield");
end

local function report_failure(label, message)
  failed = failed + 1;
  print("FAIL " .. label .. ": " .. message);
end

local function run_file(path)
  cases = {};
  current_block = new_block(path, nil);

  local env = {
    describe = describe,
    it = it,
    pending = pending,
    expect = expect_api,
    fail = fail,
    stub = stub,
    before_each = before_each,
    after_each = after_each,
    shell = shell,
  };
  local dir = fs.getDir(path);
  env.require, env.package = make_package(env, dir);
  setmetatable(env, { __index = _G });

  local fn, load_err = loadfile(path, nil, env);
  if not fn then
    report_failure(path, tostring(load_err));
    return;
  end
  local ok, err = pcall(fn);
  if not ok then
    report_failure(path, error_text(err));
    return;
  end

  for _, case in ipairs(cases) do
    local label = block_path(case.block, case.name);
    if case.load_error ~= nil then
      report_failure(label, error_text(case.load_error));
    elseif case.pending then
      skipped = skipped + 1;
      print("pending " .. label);
    else
      yield_between_cases();
      local case_ok, message = run_case(case);
      if case_ok then
        passed = passed + 1;
        print("ok " .. label);
      else
        report_failure(label, message);
      end
    end
  end
end

local function usage()
  print("Usage: spec.lua PATH...");
  print("Runs every *_spec.lua file given or found under a directory.");
end

if paths[1] == "--help" or paths[1] == "-h" then
  usage();
  return;
end
if paths.n == 0 then
  usage();
  error("", 0);
end

-- Spec files under a directory, recursively, in name order.
local SPEC_SUFFIX = "_spec.lua";

local function collect(dir, found)
  local names = fs.list(dir);
  table.sort(names);
  for _, name in ipairs(names) do
    local child = fs.combine(dir, name);
    if fs.isDir(child) then
      collect(child, found);
    elseif name:sub(-#SPEC_SUFFIX) == SPEC_SUFFIX then
      found[#found + 1] = child;
    end
  end
  return found;
end

for i = 1, paths.n do
  local path = tostring(paths[i]);
  if shell and shell.resolve then
    path = shell.resolve(path);
  end
  if not fs.exists(path) then
    report_failure(tostring(paths[i]), "no such file");
  elseif fs.isDir(path) then
    for _, file in ipairs(collect(path, {})) do
      run_file(file);
    end
  else
    run_file(path);
  end
end

local summary = ("%d passed, %d failed"):format(passed, failed);
if skipped > 0 then
  summary = summary .. (", %d skipped"):format(skipped);
end
print(summary);

-- An empty error makes shell.run return false without printing anything.
if failed > 0 then
  error("", 0);
end
