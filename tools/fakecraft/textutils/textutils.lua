-- The Lua half of textutils: the functions that draw on the terminal. Run once by
-- textutils.Install with the API table; they reach term, print and os.pullEvent at call time.

local api = ...;

local CONTINUE = "Press any key to continue";

-- cc.expect, loaded at the first check (the ROM is not mounted while the API is installed).
-- Each check calls it directly, so its messages name the API function and the caller's line
-- as CC's Lua-written textutils does.
local checks;
local function cc_expect()
  checks = checks or dofile("rom/modules/main/cc/expect.lua");
  return checks.expect;
end

-- Lines printed since the last pause of a paged output, and how many fit before one.
local paged_lines = 0;

local function pause_if_full()
  local _, height = term.getSize();
  if paged_lines >= height - 2 then
    local previous = term.getTextColour();
    if term.isColour() then term.setTextColour(colors.yellow); end
    write(CONTINUE);
    term.setTextColour(previous);
    -- A wait for "key" alone, as CC's: what else comes meanwhile is dropped as an unfiltered
    -- loop drops it, and fakecraft run types its next input line for a wait it sees is
    -- for a key (an unfiltered one it cannot tell from any other, so the pager waited out
    -- the time limit).
    os.pullEvent("key");
    local _, y = term.getCursorPos();
    term.clearLine();
    term.setCursorPos(1, y);
    paged_lines = 0;
  end
end

--- Writes text a character at a time, rate characters a second (default 20), wrapped to the
--- terminal's width first (with cc.strings.wrap) so that no word is split while it appears.
function api.slowWrite(text, rate)
  cc_expect()(2, rate, "number", "nil");
  rate = rate or 20;
  if rate < 0 then error("Rate must be positive", 2); end
  local delay = 1 / rate;
  local wrap = dofile("rom/modules/main/cc/strings.lua").wrap;
  local wrapped = table.concat(wrap(tostring(text), (term.getSize())), "\n");
  for n = 1, #wrapped do
    sleep(delay);
    write(wrapped:sub(n, n));
  end
end

--- slowWrite, then a new line.
function api.slowPrint(text, rate)
  api.slowWrite(text, rate);
  print();
end

--- Prints text like print, pausing for a key press whenever a screenful has gone by.
function api.pagedPrint(text, free_lines)
  cc_expect()(2, free_lines, "number", "nil");
  paged_lines = free_lines and (paged_lines - free_lines) or 0;
  local lines = 0;
  local all = tostring(text) .. "\n";
  for line in all:gmatch("([^\n]*)\n") do
    pause_if_full();
    lines = lines + print(line);
    paged_lines = paged_lines + 1;
  end
  return lines;
end

local function tabulate(paged, ...)
  local args = table.pack(...);
  local expect = cc_expect();
  for i = 1, args.n do
    -- tabulate and pagedTabulate tail-call this, so the check blames their caller.
    expect(i, args[i], "number", "table");
  end
  local width = term.getSize();
  local column = width / 8;
  for i = 1, args.n do
    if type(args[i]) == "table" then
      for n, entry in pairs(args[i]) do
        if type(entry) ~= "string" and type(entry) ~= "number" then
          error(("bad argument #%d.%s (string expected, got %s)"):format(i, tostring(n), type(entry)), 3);
        end
        column = math.max(column, #tostring(entry) + 1);
      end
    end
  end
  local columns = math.max(1, math.floor(width / column));
  paged_lines = 0;
  local function newline()
    print();
    paged_lines = paged_lines + 1;
    if paged then pause_if_full(); end
  end
  for i = 1, args.n do
    local arg = args[i];
    if type(arg) == "number" then
      term.setTextColour(arg);
    elseif #arg > 0 then
      local n = 1;
      for _, entry in ipairs(arg) do
        if n > columns then
          n = 1;
          newline();
        end
        local _, y = term.getCursorPos();
        term.setCursorPos(1 + math.floor((n - 1) * column), y);
        term.write(tostring(entry));
        n = n + 1;
      end
      newline();
    end
  end
end

--- Prints lists of strings in columns as wide as the longest entry; a number between
--- the lists sets the text colour.
function api.tabulate(...)
  return tabulate(false, ...);
end

--- tabulate, pausing for a key press whenever a screenful has gone by.
function api.pagedTabulate(...)
  return tabulate(true, ...);
end

-- Lua's reserved words: never completed, and text that is one completes to nothing.
local KEYWORDS = {};
for word in ("and break do else elseif end false for function if in local nil not or repeat return then true until while"):gmatch("%a+") do
  KEYWORDS[word] = true;
end

-- Whether value can be called: a function, or a table whose metatable has a __call.
local function callable(value)
  if type(value) == "function" then return true; end
  local mt = type(value) == "table" and getmetatable(value);
  return type(mt) == "table" and (type(mt.__call) == "function" or type(mt.__call) == "table");
end

--- The completions of a partial Lua expression ("tex", "textutils.ser", "h:rea") as read()
--- wants them: the rest of each matching name in env (default: textutils' own functions,
--- then the globals) and the tables its
--- __index chain leads to, sorted; a function gets "(", a table with entries ".", and after
--- a ":" only what can be called is offered.
function api.complete(search, env)
  local expect = cc_expect();
  expect(1, search, "string");
  expect(2, env, "table", "nil");
  if KEYWORDS[search] then return {}; end

  -- Without env, CC's looks in the API's own environment: textutils' functions, then the
  -- globals behind it.
  local scope = env;
  if not scope then
    scope = setmetatable({}, { __index = _G });
    for key, value in pairs(api) do scope[key] = value; end
  end
  -- Every "a." before the last part must name a table; so must "a:" before a method.
  local start, method = 1, false;
  while true do
    local sep = search:find("[.:]", start);
    if not sep then break; end
    local value = scope[search:sub(start, sep - 1)];
    if type(value) ~= "table" then return {}; end
    scope, start = value, sep + 1;
    if search:sub(sep, sep) == ":" then
      method = true;
      break;
    end
  end
  local prefix = search:sub(start);
  -- A second ":" or a "." after a method's ":" names nothing that can complete.
  if method and prefix:find("[.:]") then return {}; end

  local results, seen = {}, {};
  while type(scope) == "table" do
    for key, value in pairs(scope) do
      if not seen[key] and type(key) == "string" and key:sub(1, #prefix) == prefix
        and not KEYWORDS[key] and key:match("^[%a_][%w_]*$") then
        local rest = key:sub(#prefix + 1);
        if method then
          if callable(value) then results[#results + 1] = rest .. "("; end
        elseif type(value) == "function" then
          results[#results + 1] = rest .. "(";
        elseif type(value) == "table" and next(value) ~= nil then
          results[#results + 1] = rest .. ".";
        else
          results[#results + 1] = rest;
        end
      end
      seen[key] = true;
    end
    local mt = getmetatable(scope);
    scope = type(mt) == "table" and mt.__index or nil;
  end
  table.sort(results);
  return results;
end
