-- io: Lua's io library over the fs API, as CC: Tweaked provides it. Written for fakecraft
-- from the Lua manual and CC's documentation; it shares no code with CC's ROM.
--
-- A handle is a table with the handle metatable; `_fs` is the fs handle under it (nil for
-- the standard streams, which read and write the terminal).

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

local type_of = type;

local handle_mt;

local function is_handle(v)
  return type_of(v) == "table" and getmetatable(v) == handle_mt;
end

local function check_handle(self)
  if not is_handle(self) then
    error("bad argument #1 (FILE expected, got " .. type_of(self) .. ")", 3);
  end
  if self._closed then error("attempt to use a closed file", 3); end
end

-- Reads one numeral the way Lua's io does: optional blanks, then the longest prefix that
-- fits a numeral's shape (sign, 0x, digits, point, exponent); nil when it is no number.
local function read_number(h)
  local c = h.read(1);
  while c and c:find("^%s$") do c = h.read(1); end
  local text = "";
  local function accept(class)
    if c and c:find(class) then
      text = text .. c;
      c = h.read(1);
      return true;
    end
    return false;
  end
  accept("^[%+%-]$");
  local digit, exponent = "^%d$", "^[eE]$";
  if accept("^0$") and accept("^[xX]$") then digit, exponent = "^%x$", "^[pP]$"; end
  while accept(digit) do end
  if accept("^%.$") then
    while accept(digit) do end
  end
  if accept(exponent) then
    accept("^[%+%-]$");
    while accept("^%d$") do end
  end
  if c then h.seek("cur", -1); end
  return tonumber(text);
end

-- One read format ("l", "L", "a", "n" or a count) from an fs handle.
local function read_one(h, format)
  if type_of(format) == "number" then
    local n = math.floor(format);
    if n == 0 then return h.read(0); end
    return h.read(n);
  end
  if format == "l" then return h.readLine(false); end
  if format == "L" then return h.readLine(true); end
  if format == "a" then return h.readAll() or ""; end
  if format == "n" then return read_number(h); end
  return nil;
end

-- Checks and normalises read formats: strings lose their "*" and must be l, L, a or n.
local function formats(...)
  local n = select("#", ...);
  local out = { n = n };
  for i = 1, n do
    local f = select(i, ...);
    if type_of(f) == "string" then
      f = f:gsub("^%*", ""):sub(1, 1);
      if f ~= "l" and f ~= "L" and f ~= "a" and f ~= "n" then
        error("bad argument #" .. i .. " (invalid format)", 3);
      end
    elseif type_of(f) ~= "number" then
      error("bad argument #" .. i .. " (string expected, got " .. type_of(f) .. ")", 3);
    end
    out[i] = f;
  end
  if n == 0 then out[1], out.n = "l", 1; end
  return out;
end

-- Reads formats from handle self, stopping at the first that finds nothing.
local function read_formats(self, fmts)
  local results = { n = 0 };
  for i = 1, fmts.n do
    local value = self:_read(fmts[i]);
    results[i], results.n = value, i;
    if value == nil then break; end
  end
  return table.unpack(results, 1, results.n);
end

local methods = {};

function methods:close()
  check_handle(self);
  if self._std then return nil, "attempt to close standard stream"; end
  self._fs.close();
  self._closed = true;
  return true;
end

function methods:flush()
  check_handle(self);
  if self._fs and self._fs.flush then self._fs.flush(); end
  return self;
end

function methods:lines(...)
  check_handle(self);
  local fmts = formats(...);
  return function()
    if self._closed then error("file is already closed", 2); end
    local result = table.pack(read_formats(self, fmts));
    if result[1] == nil and self._autoclose then self:close(); end
    return table.unpack(result, 1, result.n);
  end;
end

function methods:read(...)
  check_handle(self);
  if not self._readable then return nil, "file is not readable"; end
  return read_formats(self, formats(...));
end

function methods:seek(whence, offset)
  check_handle(self);
  expect(1, whence, "string", "nil");
  expect(2, offset, "number", "nil");
  if not self._fs or not self._fs.seek then return nil, "file is not seekable"; end
  return self._fs.seek(whence, offset);
end

function methods:setvbuf(mode)
  check_handle(self);
  expect(1, mode, "string");
  return true;
end

function methods:write(...)
  check_handle(self);
  if not self._writable then return nil, "file is not writable"; end
  for i = 1, select("#", ...) do
    local v = select(i, ...);
    expect(i, v, "string", "number");
    self:_write(tostring(v));
  end
  return self;
end

-- How the kinds of handle read and write.
function methods:_read(format)
  return read_one(self._fs, format);
end

function methods:_write(text)
  self._fs.write(text);
end

handle_mt = {
  __name = "FILE*",
  __index = methods,
  __tostring = function(self)
    if self._closed then return "file (closed)"; end
    return "file (" .. self._id .. ")";
  end,
};

local next_id = 0;
local function make_handle(fields)
  next_id = next_id + 1;
  fields._id = ("0x%08x"):format(next_id);
  return setmetatable(fields, handle_mt);
end

-- The standard streams read and write the terminal.
local function std_read(_, format)
  if format == "l" then return _G.read(); end
  if format == "L" then
    local line = _G.read();
    return line and line .. "\n";
  end
  if format == "n" then return tonumber(_G.read()); end
  if format == "a" then
    local lines = {};
    local line = _G.read();
    while line do
      lines[#lines + 1] = line;
      line = _G.read();
    end
    return table.concat(lines, "\n");
  end
  error("bad argument #1 (invalid format)", 3);
end

stdin = make_handle({ _std = true, _readable = true, _read = std_read });
stdout = make_handle({ _std = true, _writable = true, _write = function(_, text) _G.write(text); end });
stderr = make_handle({
  _std = true, _writable = true,
  _write = function(_, text)
    local colour = term.isColour() and term.getTextColour();
    if colour then term.setTextColour(colours and colours.red or 0x4000); end
    _G.write(text);
    if colour then term.setTextColour(colour); end
  end,
});

local current_input, current_output = stdin, stdout;

-- Mode strings Lua's io.open accepts: r, w or a, then + and b in either order... CC takes
-- them in Lua 5.1's order.
local function parse_mode(mode)
  local base, plus, binary = mode:match("^([rwa])(%+?)(b?)$");
  if not base then return nil; end
  return base, plus == "+", binary == "b";
end

function open(path, mode)
  expect(1, path, "string");
  expect(2, mode, "string", "nil");
  mode = mode or "r";
  local base, plus = parse_mode(mode);
  if not base then error("Unsupported mode", 2); end
  local fs_mode = base .. (plus and "+" or "") .. "b";
  if fs_mode == "a+b" then fs_mode = "ab"; end
  local h, err = fs.open(path, fs_mode);
  if not h then return nil, err; end
  return make_handle({
    _fs = h,
    _readable = base == "r" or plus,
    _writable = base ~= "r" or plus,
  });
end

local function select_handle(current, file, mode)
  if file == nil then return current; end
  if type_of(file) == "string" then
    local h, err = open(file, mode);
    if not h then error(err, 3); end
    return h;
  end
  if is_handle(file) then return file; end
  error("bad argument #1 (FILE expected, got " .. type_of(file) .. ")", 3);
end

function input(file)
  current_input = select_handle(current_input, file, "r");
  return current_input;
end

function output(file)
  current_output = select_handle(current_output, file, "w");
  return current_output;
end

function close(file)
  return (file or current_output):close();
end

function flush()
  return current_output:flush();
end

function lines(path, ...)
  expect(1, path, "string", "nil");
  if path == nil then return current_input:lines(...); end
  local h, err = open(path, "r");
  if not h then error(err, 2); end
  h._autoclose = true;
  return h:lines(...);
end

function read(...)
  return current_input:read(...);
end

function write(...)
  return current_output:write(...);
end

function type(obj)
  if not is_handle(obj) then return nil; end
  if obj._closed then return "closed file"; end
  return "file";
end
