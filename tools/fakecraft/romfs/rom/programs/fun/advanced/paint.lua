-- paint <path>: draws images on an advanced computer, as CC: Tweaked's paint program, and
-- saves them as paintutils images (.nfp: a line a row, a blit digit a pixel, a space for a
-- transparent one). Written for fakecraft from CC's documentation and help text; it shares
-- no code with CC's ROM.
--
-- The palette is down the right edge: its 16 colours, then transparent (drawn as grey
-- dots), then the two colours in use. A left click (or drag) paints with the first, a right
-- click with the second; clicking the palette picks them. The arrow keys scroll the canvas.
-- Ctrl opens the menu on the bottom line (Save, Exit): Left/Right choose, Enter runs the
-- choice, Ctrl closes it.

local args = { ... };
if not term.isColour() then
  print("Requires an Advanced Computer");
  return;
end
if #args == 0 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <path>");
  return;
end

local path = shell.resolve(args[1]);
if fs.exists(path) and fs.isDir(path) then
  print("Cannot edit a directory.");
  return;
end
-- A new file without an extension gets the default one (setting paint.default_extension).
if not fs.exists(path) and not fs.getName(path):find("%.") then
  local extension = settings.get("paint.default_extension");
  if type(extension) == "string" and extension ~= "" then
    path = path .. "." .. extension;
  end
end

local HEX = "0123456789abcdef";
local TRANSPARENT = 0;
local STATUS_HINT = "Press Ctrl to access menu";
local DOTS = "\127"; -- how a transparent pixel shows

local width, height = term.getSize();
local canvas_width, canvas_height = width - 2, height - 1;

-- The image: pixels[y][x] is a colour, or nil for transparent.
local pixels = {};

local function colour_of(char)
  local digit = HEX:find(char, 1, true);
  return digit and 2 ^ (digit - 1) or nil;
end

local function digit_of(colour)
  local digit = math.floor(math.log(colour, 2) + 0.5);
  return HEX:sub(digit + 1, digit + 1);
end

local function load_image()
  local handle = fs.exists(path) and fs.open(path, "r");
  if not handle then return; end
  local y = 0;
  while true do
    local line = handle.readLine();
    if line == nil then break; end
    y = y + 1;
    pixels[y] = {};
    for x = 1, #line do
      pixels[y][x] = colour_of(line:sub(x, x));
    end
  end
  handle.close();
end

-- The image as text: trailing transparent pixels and rows are left out.
local function image_text()
  local rows, last = {}, 0;
  for y, row in pairs(pixels) do
    if y > last and next(row) then last = y; end
  end
  for y = 1, last do
    local row, line, stop = pixels[y] or {}, {}, 0;
    for x in pairs(row) do
      if x > stop then stop = x; end
    end
    for x = 1, stop do
      line[x] = row[x] and digit_of(row[x]) or " ";
    end
    rows[y] = table.concat(line);
  end
  return table.concat(rows, "\n");
end

local read_only = fs.isReadOnly(path);
local menu = {};
if not read_only then menu[#menu + 1] = "Save"; end
menu[#menu + 1] = "Exit";

local left_colour, right_colour = colours.white, colours.black;
local scroll_x, scroll_y = 0, 0;
local menu_open, menu_item = false, 1;
local status, status_ok = STATUS_HINT, true;
local running = true;

local function draw_pixel(screen_x, screen_y)
  local row = pixels[screen_y + scroll_y];
  local colour = row and row[screen_x + scroll_x];
  term.setCursorPos(screen_x, screen_y);
  if colour then
    term.setBackgroundColour(colour);
    term.write(" ");
  else
    term.setBackgroundColour(colours.black);
    term.setTextColour(colours.grey);
    term.write(DOTS);
  end
end

-- A palette cell: a colour, or transparent as dots.
local function draw_swatch(x, y, colour)
  term.setCursorPos(x, y);
  if colour == TRANSPARENT then
    term.setBackgroundColour(colours.black);
    term.setTextColour(colours.grey);
    term.write(DOTS);
  else
    term.setBackgroundColour(colour);
    term.write(" ");
  end
end

local function draw_palette()
  for i = 1, 16 do
    draw_swatch(width - 1, i, 2 ^ (i - 1));
    draw_swatch(width, i, 2 ^ (i - 1));
  end
  draw_swatch(width - 1, 17, TRANSPARENT);
  draw_swatch(width, 17, TRANSPARENT);
  for y = 18, canvas_height do
    draw_swatch(width - 1, y, left_colour);
    draw_swatch(width, y, right_colour);
  end
end

local function draw_status()
  term.setCursorPos(1, height);
  term.setBackgroundColour(colours.black);
  term.clearLine();
  if menu_open then
    for i, item in ipairs(menu) do
      term.setTextColour(i == menu_item and colours.yellow or colours.white);
      term.write(i == menu_item and "[" .. item .. "]" or " " .. item .. " ");
    end
  else
    term.setTextColour(status_ok and colours.yellow or colours.red);
    term.write(status);
  end
  term.setTextColour(colours.white);
end

local function draw()
  for y = 1, canvas_height do
    for x = 1, canvas_width do
      draw_pixel(x, y);
    end
  end
  draw_palette();
  draw_status();
end

local function set_status(text, ok)
  status, status_ok = text, ok ~= false;
end

local function save()
  if read_only then
    set_status("Access denied", false);
    return;
  end
  local handle, err = fs.open(path, "w");
  if not handle then
    set_status("Error saving to " .. path .. (err and (": " .. err) or ""), false);
    return;
  end
  handle.write(image_text());
  handle.close();
  set_status("Saved to " .. path);
end

local actions = {
  Save = save,
  Exit = function() running = false; end,
};

-- Paints the canvas cell at x, y (screen coordinates) with colour.
local function paint(x, y, colour)
  local image_x, image_y = x + scroll_x, y + scroll_y;
  if colour == TRANSPARENT then
    if pixels[image_y] then pixels[image_y][image_x] = nil; end
  else
    pixels[image_y] = pixels[image_y] or {};
    pixels[image_y][image_x] = colour;
  end
  draw_pixel(x, y);
end

-- The palette colour at screen row y (TRANSPARENT on its row), or nil.
local function palette_colour(y)
  if y >= 1 and y <= 16 then return 2 ^ (y - 1); end
  if y == 17 then return TRANSPARENT; end
  return nil;
end

local SCROLL = {
  [keys.left] = { -1, 0 }, [keys.right] = { 1, 0 }, [keys.up] = { 0, -1 }, [keys.down] = { 0, 1 },
};

local function on_key(key)
  if menu_open then
    if key == keys.left then
      menu_item = menu_item > 1 and menu_item - 1 or #menu;
    elseif key == keys.right then
      menu_item = menu_item < #menu and menu_item + 1 or 1;
    elseif key == keys.enter or key == keys.numPadEnter then
      menu_open = false;
      actions[menu[menu_item]]();
    elseif key == keys.leftCtrl or key == keys.rightCtrl then
      menu_open = false;
    end
    draw_status();
  elseif key == keys.leftCtrl or key == keys.rightCtrl then
    menu_open, menu_item = true, 1;
    draw_status();
  elseif SCROLL[key] then
    -- The canvas starts at the image's top left corner and goes no further up or left.
    scroll_x = math.max(0, scroll_x + SCROLL[key][1]);
    scroll_y = math.max(0, scroll_y + SCROLL[key][2]);
    draw();
  end
end

local function on_mouse(button, x, y)
  if x >= width - 1 then
    local colour = palette_colour(y);
    if colour and button == 1 then left_colour = colour; end
    if colour and button == 2 then right_colour = colour; end
    draw_palette();
  elseif y <= canvas_height then
    if button == 1 then paint(x, y, left_colour); end
    if button == 2 then paint(x, y, right_colour); end
  end
end

load_image();
term.setCursorBlink(false);
draw();
while running do
  local event, a, b, c = os.pullEvent();
  if event == "key" then
    on_key(a);
  elseif (event == "mouse_click" or event == "mouse_drag") and not menu_open then
    on_mouse(a, b, c);
  elseif event == "term_resize" then
    width, height = term.getSize();
    canvas_width, canvas_height = width - 2, height - 1;
    draw();
  end
end

term.setBackgroundColour(colours.black);
term.setTextColour(colours.white);
term.clear();
term.setCursorPos(1, 1);
