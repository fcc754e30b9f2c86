-- utf8: Lua 5.3's utf8 library, which CC's Cobalt has. Written for fakecraft from the Lua 5.3
-- manual. Strings are bytes; these functions read and write their UTF-8 encoding.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

charpattern = "[\0-\x7F\xC2-\xF4][\x80-\xBF]*";

local function encode(code)
  if code < 0x80 then return string.char(code); end
  if code < 0x800 then
    return string.char(0xC0 + math.floor(code / 0x40), 0x80 + code % 0x40);
  end
  if code < 0x10000 then
    return string.char(0xE0 + math.floor(code / 0x1000), 0x80 + math.floor(code / 0x40) % 0x40, 0x80 + code % 0x40);
  end
  return string.char(0xF0 + math.floor(code / 0x40000), 0x80 + math.floor(code / 0x1000) % 0x40,
    0x80 + math.floor(code / 0x40) % 0x40, 0x80 + code % 0x40);
end

function char(...)
  local out = {};
  for i = 1, select("#", ...) do
    local code = select(i, ...);
    expect(i, code, "number");
    if code < 0 or code > 0x10FFFF then error(("bad argument #%d (value out of range)"):format(i), 2); end
    out[i] = encode(math.floor(code));
  end
  return table.concat(out);
end

-- Decodes the sequence at byte i; returns the code point and the index after it, or nil.
local function decode(s, i)
  local c = s:byte(i);
  if not c then return nil; end
  if c < 0x80 then return c, i + 1; end
  local n, code;
  if c >= 0xF0 and c <= 0xF4 then n, code = 3, c - 0xF0;
  elseif c >= 0xE0 then n, code = 2, c - 0xE0;
  elseif c >= 0xC2 and c < 0xE0 then n, code = 1, c - 0xC0;
  else return nil; end
  for k = 1, n do
    local cc = s:byte(i + k);
    if not cc or cc < 0x80 or cc > 0xBF then return nil; end
    code = code * 0x40 + (cc - 0x80);
  end
  local min = ({ 0x80, 0x800, 0x10000 })[n];
  if code < min or code > 0x10FFFF or (code >= 0xD800 and code <= 0xDFFF) then return nil; end
  return code, i + n + 1;
end

local function position(pos, len)
  if pos >= 0 then return pos; end
  if -pos > len then return 0; end
  return len + pos + 1;
end

function codepoint(s, i, j)
  expect(1, s, "string");
  expect(2, i, "number", "nil");
  expect(3, j, "number", "nil");
  i = position(i or 1, #s);
  j = position(j or i, #s);
  if i < 1 then error("bad argument #2 (out of range)", 2); end
  if j > #s then error("bad argument #3 (out of range)", 2); end
  local out, n = {}, 0;
  local pos = i;
  while pos <= j do
    local code, next_pos = decode(s, pos);
    if not code then error("invalid UTF-8 code", 2); end
    n = n + 1;
    out[n] = code;
    pos = next_pos;
  end
  return table.unpack(out, 1, n);
end

function len(s, i, j)
  expect(1, s, "string");
  expect(2, i, "number", "nil");
  expect(3, j, "number", "nil");
  i = position(i or 1, #s);
  j = position(j or -1, #s);
  if i < 1 or i > #s + 1 then error("bad argument #2 (initial position out of string)", 2); end
  if j > #s then error("bad argument #3 (final position out of string)", 2); end
  local n, pos = 0, i;
  while pos <= j do
    local code, next_pos = decode(s, pos);
    if not code then return nil, pos; end
    n = n + 1;
    pos = next_pos;
  end
  return n;
end

local function is_continuation(s, i)
  local c = s:byte(i);
  return c ~= nil and c >= 0x80 and c <= 0xBF;
end

function offset(s, n, i)
  expect(1, s, "string");
  expect(2, n, "number");
  expect(3, i, "number", "nil");
  i = position(i or (n >= 0 and 1 or #s + 1), #s);
  if i < 1 or i > #s + 1 then error("bad argument #3 (position out of range)", 2); end
  if n == 0 then
    while i > 1 and is_continuation(s, i) do i = i - 1; end
    return i;
  end
  if is_continuation(s, i) then error("initial position is a continuation byte", 2); end
  if n < 0 then
    while n < 0 and i > 1 do
      repeat i = i - 1; until i <= 1 or not is_continuation(s, i);
      n = n + 1;
    end
  else
    n = n - 1;
    while n > 0 and i <= #s do
      repeat i = i + 1; until not is_continuation(s, i);
      n = n - 1;
    end
  end
  if n == 0 then return i; end
  return nil;
end

function codes(s)
  expect(1, s, "string");
  return function(str, i)
    i = i or 0;
    if i > 0 then
      local _, next_pos = decode(str, i);
      i = next_pos or i + 1;
    else
      i = 1;
    end
    if i > #str then return nil; end
    local code = decode(str, i);
    if not code then error("invalid UTF-8 code", 2); end
    return i, code;
  end, s, 0;
end
