-- The Lua half of textutils: the functions that draw on the terminal. Run once by
-- textutils.Install with the API table; they reach term, print and os.pullEvent at call time.

local api = ...;

local CONTINUE = "Press any key to continue";

local function expect_arg(index, value, ...)
  local t = type(value);
  for i = 1, select("#", ...) do
    if t == select(i, ...) then return value; end
  end
  -- As cc.expect, "nil" is left out of the expected types.
  local names = {};
  for i = 1, select("#", ...) do
    if select(i, ...) ~= "nil" then names[#names + 1] = select(i, ...); end
  end
  error(("bad argument #%d (%s expected, got %s)"):format(index, table.concat(names, " or "), t), 3);
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
    while true do
      local event = os.pullEvent();
      if event == "key" then break; end
    end
    local _, y = term.getCursorPos();
    term.clearLine();
    term.setCursorPos(1, y);
    paged_lines = 0;
  end
end

--- Writes text a character at a time, rate characters a second (default 20), wrapped to the
--- terminal's width first (with cc.strings.wrap) so that no word is split while it appears.
function api.slowWrite(text, rate)
  expect_arg(2, rate, "number", "nil");
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
  expect_arg(2, free_lines, "number", "nil");
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
  for i = 1, args.n do
    expect_arg(i, args[i], "number", "table");
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
