-- colors: the sixteen terminal colours as bit flags, and helpers for bundled
-- cable masks and RGB values. Loaded with os.loadAPI as `colors`.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

white = 0x1;
orange = 0x2;
magenta = 0x4;
lightBlue = 0x8;
yellow = 0x10;
lime = 0x20;
pink = 0x40;
gray = 0x80;
lightGray = 0x100;
cyan = 0x200;
purple = 0x400;
blue = 0x800;
brown = 0x1000;
green = 0x2000;
red = 0x4000;
black = 0x8000;

local BLIT_DIGITS = "0123456789abcdef";
local BYTE = 0x100;

-- Truncates toward zero and keeps the low 8 bits, as a 32-bit AND with 0xFF would.
local function low_byte(n)
  if n >= 0 then
    n = math.floor(n);
  else
    n = math.ceil(n);
  end
  return n % BYTE;
end

--- Returns the union of the given colour sets.
function combine(...)
  local result = 0;
  for i = 1, select("#", ...) do
    local c = select(i, ...);
    expect(i, c, "number");
    result = bit32.bor(result, c);
  end
  return result;
end

--- Removes the given colours from a colour set.
function subtract(colors, ...)
  expect(1, colors, "number");
  local result = colors;
  for i = 1, select("#", ...) do
    local c = select(i, ...);
    expect(i + 1, c, "number");
    result = bit32.band(result, bit32.bnot(c));
  end
  return result;
end

--- Whether every colour of `color` is in the set `colors`.
function test(colors, color)
  expect(1, colors, "number");
  expect(2, color, "number");
  return bit32.band(colors, color) == color;
end

--- Packs red, green and blue channels in [0, 1] into one 0xRRGGBB number.
function packRGB(r, g, b)
  expect(1, r, "number");
  expect(2, g, "number");
  expect(3, b, "number");
  return low_byte(r * 255) * 0x10000 + low_byte(g * 255) * 0x100 + low_byte(b * 255);
end

--- Splits a 0xRRGGBB number into red, green and blue channels in [0, 1].
function unpackRGB(rgb)
  expect(1, rgb, "number");
  local r = low_byte(rgb / 0x10000);
  local g = low_byte(rgb / 0x100);
  local b = low_byte(rgb);
  return r / 255, g / 255, b / 255;
end

--- Deprecated: packRGB with three arguments, unpackRGB with one.
function rgb8(r, g, b)
  if g == nil and b == nil then
    return unpackRGB(r);
  end
  return packRGB(r, g, b);
end

--- The blit character (0-9, a-f) of a single colour.
function toBlit(color)
  expect(1, color, "number");
  if not (color >= 1 and color < 0x10000) then error("Colour out of range", 2); end
  -- The highest set bit decides, like floor(log2(color)).
  local index = 0;
  local value = color;
  while value >= 2 do
    value = value / 2;
    index = index + 1;
  end
  return BLIT_DIGITS:sub(index + 1, index + 1);
end

--- The colour of a blit character, or nil if it is not one.
function fromBlit(hex)
  expect(1, hex, "string");
  if #hex ~= 1 then
    return nil;
  end
  local value = tonumber(hex, 16);
  if not value then
    return nil;
  end
  return 2 ^ value;
end
