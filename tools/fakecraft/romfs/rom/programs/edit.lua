-- edit <path>: a full-screen text editor. Arrow keys, Home/End and Page Up/Down move;
-- typing inserts, Backspace/Delete erase, Enter splits the line (keeping its indent),
-- Tab indents. Ctrl opens the menu at the bottom (Save, Exit): Left/Right choose, Enter
-- runs the choice, Ctrl closes it. Lua is coloured: keywords yellow, strings red,
-- comments green.

local args = { ... };
if #args == 0 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <path>");
  return;
end

local path = shell.resolve(args[1]);
if fs.exists(path) and fs.isDir(path) then
  print("Cannot edit a directory.");
  return;
end

local TAB = "    ";
local STATUS_HINT = "Press Ctrl to access menu";
-- The hint where it would run into the line number ("Ln 1") at the row's end: on a screen
-- narrower than the hint and five columns (a pocket computer's 26), as CC's edit shortens it.
local SHORT_STATUS_HINT = "Press Ctrl for menu";

local colour = term.isColour();
local TEXT = colours.white;
local BACKGROUND = colours.black;
local HIGHLIGHT = colour and colours.yellow or colours.white;
local KEYWORD = colour and colours.yellow or colours.white;
local COMMENT = colour and colours.green or colours.white;
local STRING = colour and colours.red or colours.white;

local KEYWORDS = {};
for word in ("and break do else elseif end false for function goto if in local nil not or repeat return then true until while"):gmatch("%a+") do
  KEYWORDS[word] = true;
end

local read_only = fs.isReadOnly(path);
local lines = {};
local function load_file()
  local file = fs.exists(path) and fs.open(path, "r");
  if file then
    while true do
      local line = file.readLine();
      if line == nil then break; end
      lines[#lines + 1] = line;
    end
    file.close();
  end
  if #lines == 0 then lines[1] = ""; end
end
load_file();

local width, height = term.getSize();
local x, y = 1, 1                 -- cursor in the text (1-based; x may be #line + 1)
local scroll_x, scroll_y = 0, 0;
local menu_open, menu_item = false, 1;
local menu = {};
if not read_only then menu[#menu + 1] = "Save"; end
menu[#menu + 1] = "Exit";
local status, status_ok = STATUS_HINT, true;
if #STATUS_HINT > width - 5 then
  status = SHORT_STATUS_HINT;
end
local running = true;

-- Writes a line's text at the cursor with Lua syntax colours.
local function write_highlighted(text)
  local pos = 1;
  while pos <= #text do
    local piece, fg;
    local rest = text:sub(pos);
    if rest:match("^%-%-") then
      piece, fg = rest, COMMENT;
    elseif rest:match("^[\"']") then
      local quote = rest:sub(1, 1);
      local close = 2;
      while close <= #rest do
        local c = rest:sub(close, close);
        if c == "\\" then
          close = close + 2;
        elseif c == quote then
          break;
        else
          close = close + 1;
        end
      end
      piece, fg = rest:sub(1, close), STRING;
    elseif rest:match("^[%a_]") then
      piece = rest:match("^[%w_]+");
      fg = KEYWORDS[piece] and KEYWORD or TEXT;
    else
      piece, fg = rest:match("^[^%w_\"'%-]+") or rest:sub(1, 1), TEXT;
    end
    term.setTextColour(fg);
    term.write(piece);
    pos = pos + #piece;
  end
end

local function draw_line(screen_y)
  local n = screen_y + scroll_y;
  term.setCursorPos(1 - scroll_x, screen_y);
  term.setBackgroundColour(BACKGROUND);
  term.clearLine();
  if lines[n] then write_highlighted(lines[n]); end
end

local function draw_status()
  term.setCursorPos(1, height);
  term.setBackgroundColour(BACKGROUND);
  term.clearLine();
  if menu_open then
    for i, item in ipairs(menu) do
      if i == menu_item then
        term.setTextColour(HIGHLIGHT);
        term.write("[");
        term.setTextColour(TEXT);
        term.write(item);
        term.setTextColour(HIGHLIGHT);
        term.write("]");
      else
        term.setTextColour(TEXT);
        term.write(" " .. item .. " ");
      end
    end
  else
    term.setTextColour(status_ok and HIGHLIGHT or colours.red);
    term.write(status);
    local position = "Ln " .. y;
    term.setTextColour(HIGHLIGHT);
    term.setCursorPos(width - #position + 1, height);
    term.write(position);
  end
  term.setTextColour(TEXT);
end

local function place_cursor()
  if menu_open then
    term.setCursorBlink(false);
  else
    term.setTextColour(TEXT);
    term.setCursorPos(x - scroll_x, y - scroll_y);
    term.setCursorBlink(true);
  end
end

local function redraw()
  for screen_y = 1, height - 1 do draw_line(screen_y); end
  draw_status();
  place_cursor();
end

-- Keeps the cursor on screen, redrawing everything when the view moved (then it returns
-- true); otherwise only the status line and the cursor are updated.
local function follow_cursor()
  local moved = false;
  if x - scroll_x > width then
    scroll_x, moved = x - width, true;
  elseif x - scroll_x < 1 then
    scroll_x, moved = x - 1, true;
  end
  if y - scroll_y > height - 1 then
    scroll_y, moved = y - (height - 1), true;
  elseif y - scroll_y < 1 then
    scroll_y, moved = y - 1, true;
  end
  if moved then
    redraw();
  else
    draw_status();
    place_cursor();
  end
  return moved;
end

local function set_status(text, ok)
  status, status_ok = text, ok ~= false;
end

local function save()
  if read_only then
    set_status("Access denied", false);
    return;
  end
  local dir = fs.getDir(path);
  if dir ~= "" and not fs.exists(dir) then fs.makeDir(dir); end
  local file, err = fs.open(path, "w");
  if not file then
    set_status("Error saving to " .. path .. (err and (": " .. err) or ""), false);
    return;
  end
  for _, line in ipairs(lines) do file.write(line .. "\n"); end
  file.close();
  set_status("Saved to " .. path);
end

local actions = {
  Save = save,
  Exit = function() running = false; end,
};

local function insert(text)
  local line = lines[y];
  lines[y] = line:sub(1, x - 1) .. text .. line:sub(x);
  x = x + #text;
  draw_line(y - scroll_y);
  follow_cursor();
end

local function on_key(key)
  local line = lines[y];
  if menu_open then
    if key == keys.left then
      menu_item = menu_item > 1 and menu_item - 1 or #menu;
      draw_status();
    elseif key == keys.right then
      menu_item = menu_item < #menu and menu_item + 1 or 1;
      draw_status();
    elseif key == keys.enter or key == keys.numPadEnter then
      menu_open = false;
      actions[menu[menu_item]]();
      draw_status();
      place_cursor();
    elseif key == keys.leftCtrl or key == keys.rightCtrl then
      menu_open = false;
      draw_status();
      place_cursor();
    end
    return;
  end
  if key == keys.leftCtrl or key == keys.rightCtrl then
    menu_open, menu_item = true, 1;
    draw_status();
    place_cursor();
  elseif key == keys.up then
    if y > 1 then y = y - 1; x = math.min(x, #lines[y] + 1); end
    follow_cursor();
  elseif key == keys.down then
    if y < #lines then y = y + 1; x = math.min(x, #lines[y] + 1); end
    follow_cursor();
  elseif key == keys.left then
    if x > 1 then
      x = x - 1;
    elseif y > 1 then
      y = y - 1;
      x = #lines[y] + 1;
    end
    follow_cursor();
  elseif key == keys.right then
    if x <= #line then
      x = x + 1;
    elseif y < #lines then
      y, x = y + 1, 1;
    end
    follow_cursor();
  elseif key == keys.home then
    x = 1;
    follow_cursor();
  elseif key == keys["end"] then
    x = #line + 1;
    follow_cursor();
  elseif key == keys.pageUp then
    y = math.max(1, y - (height - 1));
    x = math.min(x, #lines[y] + 1);
    follow_cursor();
  elseif key == keys.pageDown then
    y = math.min(#lines, y + (height - 1));
    x = math.min(x, #lines[y] + 1);
    follow_cursor();
  elseif key == keys.tab then
    insert(TAB);
  elseif key == keys.enter or key == keys.numPadEnter then
    local indent = line:match("^[ \t]*"):sub(1, x - 1);
    lines[y] = line:sub(1, x - 1);
    table.insert(lines, y + 1, indent .. line:sub(x));
    y, x = y + 1, #indent + 1;
    if not follow_cursor() then
      for screen_y = y - 1 - scroll_y, height - 1 do draw_line(screen_y); end
      place_cursor();
    end
  elseif key == keys.backspace then
    if x > 1 then
      lines[y] = line:sub(1, x - 2) .. line:sub(x);
      x = x - 1;
      draw_line(y - scroll_y);
      follow_cursor();
    elseif y > 1 then
      x = #lines[y - 1] + 1;
      lines[y - 1] = lines[y - 1] .. line;
      table.remove(lines, y);
      y = y - 1;
      if not follow_cursor() then redraw(); end
    end
  elseif key == keys.delete then
    if x <= #line then
      lines[y] = line:sub(1, x - 1) .. line:sub(x + 1);
      draw_line(y - scroll_y);
      place_cursor();
    elseif y < #lines then
      lines[y] = line .. lines[y + 1];
      table.remove(lines, y + 1);
      redraw();
    end
  end
end

local function close()
  term.setBackgroundColour(BACKGROUND);
  term.setTextColour(TEXT);
  term.clear();
  term.setCursorPos(1, 1);
  term.setCursorBlink(false);
end

term.setBackgroundColour(BACKGROUND);
term.clear();
redraw();
while running do
  local event, value = os.pullEventRaw();
  if event == "terminate" then
    close();
    error("Terminated", 0);
  elseif event == "key" then
    on_key(value);
  elseif (event == "char" or event == "paste") and not menu_open then
    insert(value);
  elseif event == "term_resize" then
    width, height = term.getSize();
    redraw();
  end
end
close();
