-- paintutils: pixels, lines, boxes and images on the current terminal, as CC: Tweaked's
-- paintutils API. Written for fakecraft from CC's documentation and its test-rom specs; it
-- shares no code with CC's ROM.
--
-- A pixel is a space on the background colour. Pixels and lines keep the text colour as it
-- was; boxes are blitted, text colour and background both the box's colour. Each drawing
-- function leaves its colour as the terminal's background colour, as CC's does. An image (the
-- `paint` program's .nfp files) is a list of rows, each a list of colours, 0 for a
-- transparent pixel.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

local HEX_DIGITS = "0123456789abcdef";

local function pixel(x, y)
  term.setCursorPos(x, y);
  term.write(" ");
end

-- The colour a character of an image stands for: its blit digit, or 0 (nothing drawn).
local function colour_of(char)
  local digit = HEX_DIGITS:find(char, 1, true);
  if not digit then
    return 0;
  end
  return 2 ^ (digit - 1);
end

--- Parses an image from text, one row a line, one blit digit a pixel.
function parseImage(image)
  expect(1, image, "string");
  local rows = {};
  local start = 1;
  while true do
    local line_end = image:find("\n", start, true);
    local line = image:sub(start, (line_end or #image + 1) - 1);
    local row = {};
    for x = 1, #line do
      row[x] = colour_of(line:sub(x, x));
    end
    rows[#rows + 1] = row;
    if not line_end then
      return rows;
    end
    start = line_end + 1;
  end
end

--- Loads an image from a file, or nil when there is no such file.
function loadImage(path)
  expect(1, path, "string");
  if not fs.exists(path) then
    return nil;
  end
  local handle = io.open(path, "r");
  local contents = handle:read("*a");
  handle:close();
  return parseImage(contents);
end

--- Draws one pixel, in colour or the current background colour.
function drawPixel(x, y, colour)
  expect(1, x, "number");
  expect(2, y, "number");
  expect(3, colour, "number", "nil");
  if colour then
    term.setBackgroundColor(colour);
  end
  pixel(x, y);
end

--- Draws a straight line between two points (whole cells: the coordinates are floored).
function drawLine(x1, y1, x2, y2, colour)
  expect(1, x1, "number");
  expect(2, y1, "number");
  expect(3, x2, "number");
  expect(4, y2, "number");
  expect(5, colour, "number", "nil");
  x1, y1, x2, y2 = math.floor(x1), math.floor(y1), math.floor(x2), math.floor(y2);
  if colour then
    term.setBackgroundColor(colour);
  end
  if x1 == x2 and y1 == y2 then
    pixel(x1, y1);
    return;
  end
  -- Walk from the left end; the other coordinate moves by a fixed step per cell and is
  -- rounded, the step added up cell by cell (CC's rounding, so lines land on its cells).
  if x2 < x1 then
    x1, y1, x2, y2 = x2, y2, x1, y1;
  end
  local width, height = x2 - x1, y2 - y1;
  if width > math.abs(height) then
    local y, step = y1, height / width;
    for x = x1, x2 do
      pixel(x, math.floor(y + 0.5));
      y = y + step;
    end
    return;
  end
  local x, step = x1, width / height;
  local direction = height >= 0 and 1 or -1;
  for y = y1, y2, direction do
    pixel(math.floor(x + 0.5), y);
    x = x + step * direction;
  end
end

-- The box's corners sorted, its colour (the background's when not given, which it then
-- stays) as a blit digit, and whether it is one cell (drawn as a pixel). The caller has
-- checked the arguments, so that cc.expect names it.
local function box_of(x1, y1, x2, y2, colour)
  x1, y1, x2, y2 = math.floor(x1), math.floor(y1), math.floor(x2), math.floor(y2);
  if colour then
    term.setBackgroundColor(colour);
  else
    colour = term.getBackgroundColour();
  end
  local left, right = math.min(x1, x2), math.max(x1, x2);
  local top, bottom = math.min(y1, y2), math.max(y1, y2);
  return left, top, right, bottom, colours.toBlit(colour), x1 == x2 and y1 == y2;
end

local function blit_row(x, y, width, digit)
  term.setCursorPos(x, y);
  term.blit((" "):rep(width), digit:rep(width), digit:rep(width));
end

--- Draws the outline of a box between two corners; what is inside stays.
function drawBox(x1, y1, x2, y2, colour)
  expect(1, x1, "number");
  expect(2, y1, "number");
  expect(3, x2, "number");
  expect(4, y2, "number");
  expect(5, colour, "number", "nil");
  local left, top, right, bottom, digit, single = box_of(x1, y1, x2, y2, colour);
  if single then
    pixel(left, top);
    return;
  end
  local width = right - left + 1;
  blit_row(left, top, width, digit);
  for y = top + 1, bottom - 1 do
    blit_row(left, y, 1, digit);
    blit_row(right, y, 1, digit);
  end
  blit_row(left, bottom, width, digit);
end

--- Draws a box filled with its colour between two corners.
function drawFilledBox(x1, y1, x2, y2, colour)
  expect(1, x1, "number");
  expect(2, y1, "number");
  expect(3, x2, "number");
  expect(4, y2, "number");
  expect(5, colour, "number", "nil");
  local left, top, right, bottom, digit, single = box_of(x1, y1, x2, y2, colour);
  if single then
    pixel(left, top);
    return;
  end
  for y = top, bottom do
    blit_row(left, y, right - left + 1, digit);
  end
end

--- Draws an image from parseImage or loadImage with its top left corner at x, y; its
--- transparent pixels leave the screen as it is.
function drawImage(image, x, y)
  expect(1, image, "table");
  expect(2, x, "number");
  expect(3, y, "number");
  for row_index = 1, #image do
    local row = image[row_index];
    for column = 1, #row do
      local colour = row[column];
      if colour > 0 then
        term.setBackgroundColor(colour);
        pixel(x + column - 1, y + row_index - 1);
      end
    end
  end
end
