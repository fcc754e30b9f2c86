-- cc.strings: text helpers (wrap, ensure_width, split), as CC: Tweaked's module. Written for
-- fakecraft from CC's documentation; it shares no code with CC's ROM.

-- dofile, not require: textutils (an API, with no require) loads this module too.
local expect = dofile("rom/modules/main/cc/expect.lua");
local expect_arg, range = expect.expect, expect.range;

--- Wraps text into lines of at most width characters (default: the terminal's width),
-- breaking at spaces where it can and keeping explicit newlines.
local function wrap(text, width)
  expect_arg(1, text, "string");
  expect_arg(2, width, "number", "nil");
  width = width or term.getSize();
  range(width, 1);
  local lines, line = {}, "";
  local function push()
    lines[#lines + 1] = line;
    line = "";
  end
  local pos = 1;
  while pos <= #text do
    local nl = text:match("^\n", pos);
    local spaces = text:match("^[ \t]+", pos);
    if nl then
      push();
      pos = pos + 1;
    elseif spaces then
      -- Spaces that do not fit at the end of a line are dropped.
      line = line .. spaces:sub(1, math.max(0, width - #line));
      pos = pos + #spaces;
    else
      local word = text:match("^[^ \t\n]+", pos);
      pos = pos + #word;
      if #line + #word > width and #line > 0 then
        push();
      end
      while #word > width do -- a word longer than a line is cut
        line = word:sub(1, width);
        push();
        word = word:sub(width + 1);
      end
      line = line .. word;
    end
  end
  if line ~= "" or #lines == 0 then push(); end
  return lines;
end

--- Pads text with spaces, or cuts it, to exactly width characters.
local function ensure_width(line, width)
  expect_arg(1, line, "string");
  expect_arg(2, width, "number", "nil");
  width = width or term.getSize();
  line = line:sub(1, width);
  if #line < width then line = line .. (" "):rep(width - #line); end
  return line;
end

--- Splits str at each match of separator (a pattern, or plain text when plain is true), into
-- at most limit parts.
local function split(str, separator, plain, limit)
  expect_arg(1, str, "string");
  expect_arg(2, separator, "string");
  expect_arg(3, plain, "boolean", "nil");
  expect_arg(4, limit, "number", "nil");
  if separator == "" then error("separator is empty", 2); end
  local parts, pos = {}, 1;
  while true do
    if limit and #parts == limit - 1 then break; end
    local s, e = str:find(separator, pos, plain);
    if not s then break; end
    parts[#parts + 1] = str:sub(pos, s - 1);
    pos = e + 1;
  end
  parts[#parts + 1] = str:sub(pos);
  return parts;
end

return { wrap = wrap, ensure_width = ensure_width, split = split };
