-- window: terminal objects that draw into a region of a parent terminal, as CC: Tweaked's
-- window API. Written for fakecraft from CC's documentation; it shares no code with CC's ROM.
--
-- A window keeps every cell of its buffer as three strings per row (text, text colours,
-- background colours, the last two in blit's hex digits), so it can redraw itself anywhere.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

local HEX = "0123456789abcdef";

local function colour_char(colour)
  return HEX:sub(colour, colour);
end

-- A colour flag: the highest flag of a combination counts, as CC's parseColour does.
local function parse_colour(colour)
  if colour <= 0 or colour >= 0x10000 or colour ~= colour then
    error("Colour out of range", 3);
  end
  return math.floor(math.log(colour) / math.log(2) + 1e-9) + 1;
end

function create(parent, x, y, width, height, visible)
  expect(1, parent, "table");
  expect(2, x, "number");
  expect(3, y, "number");
  expect(4, width, "number");
  expect(5, height, "number");
  expect(6, visible, "boolean", "nil");
  if parent == term then
    error("term is not a recommended window parent, try term.current() instead", 2);
  end
  if visible == nil then visible = true; end

  local cursor_x, cursor_y, blink = 1, 1, false;
  local fg, bg = 1, 16; -- indices into HEX: white on black
  local text_rows, fg_rows, bg_rows = {}, {}, {};
  local palette = {};
  for i = 0, 15 do
    palette[i + 1] = { parent.getPaletteColour(2 ^ i) };
  end

  local function blank_row(char)
    return (" "):rep(width), (char or colour_char(fg)):rep(width), colour_char(bg):rep(width);
  end

  local function reset_rows(from)
    for row = from, height do
      text_rows[row], fg_rows[row], bg_rows[row] = blank_row();
    end
  end
  reset_rows(1);

  local function draw_row(row)
    parent.setCursorPos(x, y + row - 1);
    parent.blit(text_rows[row], fg_rows[row], bg_rows[row]);
  end

  local win = {};

  local function restore_cursor()
    parent.setCursorBlink(blink);
    parent.setTextColour(2 ^ (fg - 1));
    parent.setCursorPos(x + cursor_x - 1, y + cursor_y - 1);
  end

  local function redraw()
    if not visible then return; end
    for row = 1, height do draw_row(row); end
    restore_cursor();
  end

  -- Puts text and its colour strings at the cursor, clipped to the window.
  local function put(text, fgs, bgs)
    local n = #text;
    local row = cursor_y;
    if row >= 1 and row <= height and cursor_x <= width and cursor_x + n - 1 >= 1 then
      local first = math.max(1, 2 - cursor_x);
      local last = math.min(n, width - cursor_x + 1);
      local col = cursor_x + first - 1;
      local function splice(line, part)
        return line:sub(1, col - 1) .. part:sub(first, last) .. line:sub(col + last - first + 1);
      end
      text_rows[row] = splice(text_rows[row], text);
      fg_rows[row] = splice(fg_rows[row], fgs);
      bg_rows[row] = splice(bg_rows[row], bgs);
      cursor_x = cursor_x + n;
      if visible then
        draw_row(row);
        restore_cursor();
      end
      return;
    end
    cursor_x = cursor_x + n;
  end

  function win.write(text)
    text = tostring(text);
    put(text, colour_char(fg):rep(#text), colour_char(bg):rep(#text));
  end

  function win.blit(text, text_colours, background_colours)
    expect(1, text, "string");
    expect(2, text_colours, "string");
    expect(3, background_colours, "string");
    if #text ~= #text_colours or #text ~= #background_colours then
      error("Arguments must be the same length", 2);
    end
    put(text, text_colours:lower(), background_colours:lower());
  end

  function win.clear()
    reset_rows(1);
    redraw();
  end

  function win.clearLine()
    if cursor_y >= 1 and cursor_y <= height then
      text_rows[cursor_y], fg_rows[cursor_y], bg_rows[cursor_y] = blank_row();
      if visible then
        draw_row(cursor_y);
        restore_cursor();
      end
    end
  end

  function win.getCursorPos()
    return cursor_x, cursor_y;
  end

  function win.setCursorPos(new_x, new_y)
    expect(1, new_x, "number");
    expect(2, new_y, "number");
    cursor_x, cursor_y = math.floor(new_x), math.floor(new_y);
    if visible then restore_cursor(); end
  end

  function win.setCursorBlink(b)
    expect(1, b, "boolean");
    blink = b;
    if visible then restore_cursor(); end
  end

  function win.getCursorBlink()
    return blink;
  end

  function win.isColour()
    return parent.isColour();
  end
  win.isColor = win.isColour;

  function win.getSize()
    return width, height;
  end

  function win.scroll(n)
    expect(1, n, "number");
    if n == 0 then return; end
    local text, fgs, bgs = {}, {}, {};
    for row = 1, height do
      local from = row + n;
      if from >= 1 and from <= height then
        text[row], fgs[row], bgs[row] = text_rows[from], fg_rows[from], bg_rows[from];
      else
        text[row], fgs[row], bgs[row] = blank_row();
      end
    end
    text_rows, fg_rows, bg_rows = text, fgs, bgs;
    redraw();
  end

  function win.setTextColour(colour)
    fg = parse_colour(expect(1, colour, "number"));
    if visible then restore_cursor(); end
  end
  win.setTextColor = win.setTextColour;

  function win.getTextColour()
    return 2 ^ (fg - 1);
  end
  win.getTextColor = win.getTextColour;

  function win.setBackgroundColour(colour)
    bg = parse_colour(expect(1, colour, "number"));
  end
  win.setBackgroundColor = win.setBackgroundColour;

  function win.getBackgroundColour()
    return 2 ^ (bg - 1);
  end
  win.getBackgroundColor = win.getBackgroundColour;

  function win.setPaletteColour(colour, r, g, b)
    local index = parse_colour(expect(1, colour, "number"));
    local entry;
    if type(r) == "number" and g == nil and b == nil then
      entry = { colours.unpackRGB(r) };
    else
      expect(2, r, "number");
      expect(3, g, "number");
      expect(4, b, "number");
      entry = { r, g, b };
    end
    palette[index] = entry;
    if visible then parent.setPaletteColour(colour, table.unpack(entry)); end
  end
  win.setPaletteColor = win.setPaletteColour;

  function win.getPaletteColour(colour)
    local entry = palette[parse_colour(expect(1, colour, "number"))];
    return entry[1], entry[2], entry[3];
  end
  win.getPaletteColor = win.getPaletteColour;

  function win.getLine(row)
    expect(1, row, "number");
    if row < 1 or row > height then error("Line is out of range.", 2); end
    return text_rows[row], fg_rows[row], bg_rows[row];
  end

  function win.setVisible(v)
    expect(1, v, "boolean");
    if visible ~= v then
      visible = v;
      redraw();
    end
  end

  function win.isVisible()
    return visible;
  end

  function win.redraw()
    redraw();
  end

  function win.restoreCursor()
    if visible then restore_cursor(); end
  end

  function win.getPosition()
    return x, y;
  end

  function win.reposition(new_x, new_y, new_width, new_height, new_parent)
    expect(1, new_x, "number");
    expect(2, new_y, "number");
    if new_width ~= nil or new_height ~= nil then
      expect(3, new_width, "number");
      expect(4, new_height, "number");
    end
    expect(5, new_parent, "table", "nil");
    x, y = math.floor(new_x), math.floor(new_y);
    if new_parent then parent = new_parent; end
    if new_width then
      new_width, new_height = math.floor(new_width), math.floor(new_height);
      for row = 1, new_height do
        local t, f, b = text_rows[row], fg_rows[row], bg_rows[row];
        if t == nil then
          width = new_width;
          t, f, b = blank_row();
        elseif new_width > #t then
          local pad = new_width - #t;
          t, f, b = t .. (" "):rep(pad), f .. colour_char(fg):rep(pad), b .. colour_char(bg):rep(pad);
        else
          t, f, b = t:sub(1, new_width), f:sub(1, new_width), b:sub(1, new_width);
        end
        text_rows[row], fg_rows[row], bg_rows[row] = t, f, b;
      end
      for row = new_height + 1, height do
        text_rows[row], fg_rows[row], bg_rows[row] = nil, nil, nil;
      end
      width, height = new_width, new_height;
    end
    redraw();
  end

  if visible then redraw(); end
  return win;
end
