-- cc.image.nft: nft ("Nitrogen Fingers Text") images, text with a colour per character, as
-- CC: Tweaked's module. Written for fakecraft from CC's documentation and its test-rom specs;
-- it shares no code with CC's ROM.
--
-- In an nft file, byte 30 followed by a blit digit sets the background colour of the text
-- after it, byte 31 followed by a digit its text colour; each line starts white on black.
-- An image is a list of lines, each { text = ..., foreground = ..., background = ... } as
-- term.blit takes them.

local expect = require("cc.expect").expect;

local SET_BACKGROUND, SET_FOREGROUND = "\30", "\31";
local DEFAULT_FOREGROUND, DEFAULT_BACKGROUND = "0", "f";

--- Parses an nft image from its text.
local function parse(image)
  expect(1, image, "string");
  local lines = {};
  local line_no = 1;
  local foreground, background = DEFAULT_FOREGROUND, DEFAULT_BACKGROUND;

  -- The line being built, made on its first character (or its newline).
  local function current()
    local line = lines[line_no];
    if not line then
      line = { text = "", foreground = "", background = "" };
      lines[line_no] = line;
    end
    return line;
  end

  local i, n = 1, #image;
  while i <= n do
    local c = image:sub(i, i);
    -- A colour code takes the next byte; one at the very end is plain text (CC's own
    -- reader loops forever there).
    if c == SET_BACKGROUND and i < n then
      background = image:sub(i + 1, i + 1);
      i = i + 2;
    elseif c == SET_FOREGROUND and i < n then
      foreground = image:sub(i + 1, i + 1);
      i = i + 2;
    elseif c == "\n" then
      current();
      line_no = line_no + 1;
      foreground, background = DEFAULT_FOREGROUND, DEFAULT_BACKGROUND;
      i = i + 1;
    else
      -- A run of text up to the next code or newline (at least this character).
      local stop = image:find("[\n\30\31]", i + 1) or n + 1;
      local count = stop - i;
      local line = current();
      line.text = line.text .. image:sub(i, stop - 1);
      line.foreground = line.foreground .. foreground:rep(count);
      line.background = line.background .. background:rep(count);
      i = stop;
    end
  end
  return lines;
end

--- Loads an nft image from a file: the image, or nil and the reason it could not be read.
local function load(path)
  expect(1, path, "string");
  local handle, err = io.open(path, "r");
  if not handle then
    return nil, err;
  end
  local contents = handle:read("*a");
  handle:close();
  return parse(contents);
end

--- Draws an image with its top left corner at x, y on target (default: the terminal).
local function draw(image, x, y, target)
  expect(1, image, "table");
  expect(2, x, "number");
  expect(3, y, "number");
  expect(4, target, "table", "nil");
  target = target or term;
  for row, line in ipairs(image) do
    target.setCursorPos(x, y + row - 1);
    target.blit(line.text, line.foreground, line.background);
  end
end

return {
  parse = parse,
  load = load,
  draw = draw,
};
