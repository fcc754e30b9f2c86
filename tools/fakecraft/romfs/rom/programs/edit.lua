-- edit <path>: a full-screen text editor, as CC's. Arrow keys, Home/End and Page Up/Down
-- move; typing inserts, Backspace/Delete erase (Backspace takes a four-space indent at
-- once), Enter splits the line keeping its leading spaces, Tab indents four spaces. Ctrl
-- opens the menu at the bottom (Save, Run under multishell, Print with a printer, Exit):
-- Left/Right choose, Enter or an item's first letter runs it, Ctrl closes it; a click on
-- the bottom row opens it too. While the cursor ends a line, the completion of the name
-- before it is shown in grey (setting edit.autocomplete): Tab or Right takes it, Up/Down
-- pick another. Lua is coloured: keywords yellow, strings red, comments green. A new file
-- named without an extension gets edit.default_extension (lua).

local args = { ... };
if #args == 0 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <path>");
  return;
end

local path = shell.resolve(args[1]);
local read_only = fs.isReadOnly(path);
if fs.exists(path) and fs.isDir(path) then
  print("Cannot edit a directory.");
  return;
end
if not fs.exists(path) and not path:find(".", 1, true) then
  local extension = settings.get("edit.default_extension");
  if type(extension) == "string" and extension ~= "" then
    path = path .. "." .. extension;
  end
end

local TAB = "    ";

local colour = term.isColour();
local TEXT = colours.white;
local BACKGROUND = colours.black;
local HIGHLIGHT = colour and colours.yellow or colours.white;
local KEYWORD = colour and colours.yellow or colours.white;
local COMMENT = colour and colours.green or colours.white;
local STRING = colour and colours.red or colours.white;
local ERROR = colour and colours.red or colours.white;

-- Lua 5.1's keywords, as CC's edit colours them (not goto).
local KEYWORDS = {};
for word in ("and break do else elseif end false for function if in local nil not or repeat return then true until while"):gmatch("%a+") do
  KEYWORDS[word] = true;
end

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
if shell.openTab then menu[#menu + 1] = "Run"; end
if peripheral.find("printer") then menu[#menu + 1] = "Print"; end
menu[#menu + 1] = "Exit";
local running = true;

local status, status_ok;
local function set_status(text, ok)
  status, status_ok = text, ok ~= false;
end
if read_only then
  set_status("File is read only", false);
elseif fs.getFreeSpace(path) < 1024 then
  set_status("Disk is low on space", false);
else
  -- A colour computer's screen takes clicks; the hint is shortened where it would run into
  -- the line number at the row's end (a pocket computer's 26 columns).
  local hint = colour and "Press Ctrl or click here to access menu" or "Press Ctrl to access menu";
  if #hint > width - 5 then hint = "Press Ctrl for menu"; end
  set_status(hint);
end

-- Completions of the name ending the cursor's line, while the cursor ends it.
local completions, completion;
local complete_env = _ENV;
local function update_completions()
  completions, completion = nil, nil;
  local line = lines[y];
  if menu_open or read_only or x ~= #line + 1 or not settings.get("edit.autocomplete") then
    return;
  end
  local word = line:match("[a-zA-Z0-9_%.:]+$");
  if word then
    completions = textutils.complete(word, complete_env);
    if completions and #completions > 0 then completion = 1; end
  end
end

-- The length of the piece of text at its start that CC's edit colours as one: a comment,
-- a string, a word, or a single character; and its colour.
local function next_piece(text)
  local piece = text:match("^%-%-%[%[.-%]%]") or text:match("^%-%-.*");
  if piece then return piece, COMMENT; end
  piece = text:match('^""') or text:match('^".-[^\\]"') or text:match("^''")
    or text:match("^'.-[^\\]'") or text:match("^%[%[.-%]%]");
  if piece then return piece, STRING; end
  piece = text:match("^[%w_]+");
  if piece then return piece, KEYWORDS[piece] and KEYWORD or TEXT; end
  return text:sub(1, 1), TEXT;
end

-- Writes a line's text at the cursor with Lua syntax colours.
local function write_highlighted(text)
  while #text > 0 do
    local piece, fg = next_piece(text);
    term.setTextColour(fg);
    term.write(piece);
    text = text:sub(#piece + 1);
  end
  term.setTextColour(TEXT);
end

local function draw_line(n)
  local line = lines[n];
  if not line then return; end
  term.setCursorPos(1 - scroll_x, n - scroll_y);
  term.setBackgroundColour(BACKGROUND);
  term.clearLine();
  write_highlighted(line);
  if n == y and completion then
    term.setTextColour(colours.white);
    term.setBackgroundColour(colours.grey);
    term.write(completions[completion]);
    term.setTextColour(TEXT);
    term.setBackgroundColour(BACKGROUND);
  end
end

local function draw_text()
  for screen_y = 1, height - 1 do
    local n = screen_y + scroll_y;
    if lines[n] then
      draw_line(n);
    else
      term.setCursorPos(1, screen_y);
      term.clearLine();
    end
  end
end

local function place_cursor()
  term.setCursorPos(x - scroll_x, y - scroll_y);
end

local function draw_status()
  term.setCursorPos(1, height);
  term.clearLine();
  local number = "Ln " .. y;
  term.setCursorPos(width - #number + 1, height);
  term.setTextColour(HIGHLIGHT);
  term.write("Ln ");
  term.setTextColour(TEXT);
  term.write(tostring(y));
  term.setCursorPos(1, height);
  if menu_open then
    for i, item in ipairs(menu) do
      if i == menu_item then
        term.setTextColour(HIGHLIGHT);
        term.write("[");
        term.setTextColour(TEXT);
        term.write(item);
        term.setTextColour(HIGHLIGHT);
        term.write("]");
        term.setTextColour(TEXT);
      else
        term.write(" " .. item .. " ");
      end
    end
  else
    term.setTextColour(status_ok and HIGHLIGHT or ERROR);
    term.write(status);
    term.setTextColour(TEXT);
  end
  place_cursor();
end

local function set_menu(open)
  menu_open = open;
  term.setCursorBlink(not open);
  draw_status();
end

-- Moves the cursor, scrolling the view to keep it on screen, and redraws what changed.
local function move_to(new_x, new_y)
  local old_y = y;
  x, y = new_x, new_y;
  local moved = false;
  if x - scroll_x < 1 then
    scroll_x, moved = x - 1, true;
  elseif x - scroll_x > width then
    scroll_x, moved = x - width, true;
  end
  if y - scroll_y < 1 then
    scroll_y, moved = y - 1, true;
  elseif y - scroll_y > height - 1 then
    scroll_y, moved = y - (height - 1), true;
  end
  update_completions();
  if moved then
    draw_text();
  else
    if old_y ~= y then draw_line(old_y); end
    draw_line(y);
  end
  draw_status();
end

-- Writes the file with write(handle): true, or false, the error and fs.open's reason.
local function write_file(target, write)
  local dir = fs.getDir(target);
  if dir ~= "" and not fs.exists(dir) then fs.makeDir(dir); end
  local handle, open_err = fs.open(target, "w");
  local ok, err = pcall(function()
    if not handle then error("Failed to open " .. target); end
    write(handle);
  end);
  if handle then handle.close(); end
  return ok, err, open_err;
end

local function save()
  if read_only then
    set_status("Access denied", false);
    return;
  end
  local ok, _, open_err = write_file(path, function(handle)
    for _, line in ipairs(lines) do handle.write(line .. "\n"); end
  end);
  if ok then
    set_status("Saved to " .. path);
  elseif open_err then
    set_status("Error saving: " .. open_err, false);
  else
    set_status("Error saving to " .. path, false);
  end
end

-- Prints the text on the printer's pages, a page's lines as wide as the page: the first
-- titled with the file's name, the others (and then the first) "name (page n)".
local function print_pages()
  local printer = peripheral.find("printer");
  if not printer then
    set_status("No printer attached", false);
    return;
  end
  if printer.getInkLevel() < 1 then
    set_status("Printer out of ink", false);
    return;
  elseif printer.getPaperLevel() < 1 then
    set_status("Printer out of paper", false);
    return;
  end
  local name = fs.getName(path);
  local pages = 0;
  local screen = term.current();
  local function tell(text, ok)
    set_status(text, ok);
    term.redirect(screen);
    draw_status();
  end
  local page = {
    getCursorPos = printer.getCursorPos,
    setCursorPos = printer.setCursorPos,
    getSize = printer.getPageSize,
    write = printer.write,
  };
  -- Text scrolling off a page goes on at the top of a new one.
  function page.scroll()
    if pages == 1 then printer.setPageTitle(name .. " (page 1)"); end
    while not printer.newPage() do
      if printer.getInkLevel() < 1 then
        tell("Printer out of ink, please refill", false);
      elseif printer.getPaperLevel() < 1 then
        tell("Printer out of paper, please refill", false);
      else
        tell("Printer output tray full, please empty", false);
      end
      term.redirect(page);
      sleep(0.5);
    end
    pages = pages + 1;
    printer.setPageTitle(pages == 1 and name or name .. " (page " .. pages .. ")");
  end

  menu_open = false;
  term.redirect(page);
  local ok, err = pcall(function()
    page.scroll();
    for _, line in ipairs(lines) do print(line); end
  end);
  term.redirect(screen);
  if not ok then print(err); end
  while not printer.endPage() do
    set_status("Printer output tray full, please empty");
    draw_status();
    sleep(0.5);
  end
  menu_open = true;
  set_status(pages > 1 and "Printed " .. pages .. " Pages" or "Printed 1 Page");
end

-- The program a Run tab runs: the text, under the file's name, in a tab titled after it,
-- through cc.internal.exception's try (which reads an exception the text throws as the
-- error it stands for); then it waits for a key. (CC's runner means to say "Program finished." when the program
-- ends well, but reads a variable out of its scope, so it never does.)
local RUNNER = [[
multishell.setTitle(multishell.getCurrent(), %q)
local tab = term.current()
local contents, name = %q, %q
local fn, err = load(contents, name, nil, _ENV)
if fn then
  local exception = require("cc.internal.exception")
  local ok, failure, co = exception.try(fn, ...)
  term.redirect(tab)
  term.setTextColour(term.isColour() and colours.yellow or colours.white)
  term.setBackgroundColour(colours.black)
  term.setCursorBlink(false)
  if not ok then
    printError(failure)
    exception.report(failure, co, { [name] = contents })
  end
elseif require("cc.internal.syntax").parse_program(contents) then
  printError(err)
end
local lines = require("cc.strings").wrap("Press any key to continue.", (term.getSize()))
local _, at = term.getCursorPos()
local _, h = term.getSize()
local top = h - #lines + 1
if at >= top then term.scroll(at - top + 1) end
for i, text in ipairs(lines) do
  term.setCursorPos(1, top + i - 1)
  term.write(text)
end
os.pullEvent("key")
require("cc.internal.event").discard_char()
]];

local function run()
  local title = fs.getName(path);
  if title:sub(-4) == ".lua" then title = title:sub(1, -5); end
  local temp = read_only and ".temp." .. title or fs.combine(fs.getDir(path), ".temp." .. title);
  if fs.exists(temp) then
    set_status("Error saving to " .. temp, false);
    return;
  end
  local ok = write_file(temp, function(handle)
    handle.write(RUNNER:format(title, table.concat(lines, "\n"), "@/" .. path));
  end);
  if ok then
    local tab = shell.openTab("/" .. temp);
    if tab then
      shell.switchTab(tab);
    else
      set_status("Error starting Task", false);
    end
    fs.delete(temp);
  else
    set_status("Error saving to " .. temp, false);
  end
end

local actions = {
  Save = save,
  Run = run,
  Print = print_pages,
  Exit = function() running = false; end,
};

local function choose(n)
  actions[menu[n]]();
  if menu_open then
    menu_open = false;
    term.setCursorBlink(true);
  end
  draw_status();
end

local function insert(text)
  local line = lines[y];
  lines[y] = line:sub(1, x - 1) .. text .. line:sub(x);
  move_to(x + #text, y);
end

local function take_completion()
  local text = completions[completion];
  lines[y] = lines[y] .. text;
  move_to(x + #text, y);
end

local function on_menu_key(key)
  if key == keys.left then
    menu_item = menu_item > 1 and menu_item - 1 or #menu;
    draw_status();
  elseif key == keys.right then
    menu_item = menu_item < #menu and menu_item + 1 or 1;
    draw_status();
  elseif key == keys.enter or key == keys.numPadEnter then
    choose(menu_item);
  elseif key == keys.leftCtrl or key == keys.rightCtrl or key == keys.rightAlt then
    set_menu(false);
  end
end

local function on_key(key)
  if menu_open then
    on_menu_key(key);
    return;
  end
  local line = lines[y];
  if key == keys.leftCtrl or key == keys.rightCtrl then
    set_menu(true);
  elseif key == keys.up then
    if completion then
      completion = completion > 1 and completion - 1 or #completions;
      draw_line(y);
      place_cursor();
    elseif y > 1 then
      move_to(math.min(x, #lines[y - 1] + 1), y - 1);
    end
  elseif key == keys.down then
    if completion then
      completion = completion < #completions and completion + 1 or 1;
      draw_line(y);
      place_cursor();
    elseif y < #lines then
      move_to(math.min(x, #lines[y + 1] + 1), y + 1);
    end
  elseif key == keys.left then
    if x > 1 then
      move_to(x - 1, y);
    elseif y > 1 then
      move_to(#lines[y - 1] + 1, y - 1);
    end
  elseif key == keys.right then
    if x <= #line then
      move_to(x + 1, y);
    elseif completion then
      take_completion();
    elseif y < #lines then
      move_to(1, y + 1);
    end
  elseif key == keys.home then
    if x > 1 then move_to(1, y); end
  elseif key == keys["end"] then
    if x <= #line then move_to(#line + 1, y); end
  elseif key == keys.pageUp then
    local to = math.max(1, y - (height - 1));
    move_to(math.min(x, #lines[to] + 1), to);
  elseif key == keys.pageDown then
    local to = math.min(#lines, y + (height - 1));
    move_to(math.min(x, #lines[to] + 1), to);
  elseif read_only then
    return;
  elseif key == keys.tab then
    if completion then take_completion(); else insert(TAB); end
  elseif key == keys.enter or key == keys.numPadEnter then
    local indent = line:match("^ *");
    lines[y] = line:sub(1, x - 1);
    table.insert(lines, y + 1, indent .. line:sub(x));
    move_to(#indent + 1, y + 1);
    draw_text();
    place_cursor();
  elseif key == keys.backspace then
    if x > 1 then
      local before = line:sub(1, x - 1);
      local cut = (x > 4 and before:sub(-4) == TAB and not before:find("%S")) and 4 or 1;
      lines[y] = line:sub(1, x - 1 - cut) .. line:sub(x);
      move_to(x - cut, y);
    elseif y > 1 then
      local joined_at = #lines[y - 1] + 1;
      lines[y - 1] = lines[y - 1] .. line;
      table.remove(lines, y);
      move_to(joined_at, y - 1);
      draw_text();
      place_cursor();
    end
  elseif key == keys.delete then
    if x <= #line then
      lines[y] = line:sub(1, x - 1) .. line:sub(x + 1);
      update_completions();
      draw_line(y);
      place_cursor();
    elseif y < #lines then
      lines[y] = line .. lines[y + 1];
      table.remove(lines, y + 1);
      update_completions();
      draw_text();
      place_cursor();
    end
  end
end

local function on_click(button, click_x, click_y)
  if menu_open then
    if click_y ~= height then
      set_menu(false);
      return;
    end
    -- Each item spans its text and the brackets or spaces around it.
    local left = 1;
    for n, item in ipairs(menu) do
      local right = left + #item + 1;
      if click_x > left and click_x < right then choose(n); end
      left = right + 1;
    end
  elseif button == 1 then
    if click_y < height then
      local to = math.min(math.max(scroll_y + click_y, 1), #lines);
      move_to(math.min(math.max(scroll_x + click_x, 1), #lines[to] + 1), to);
    else
      set_menu(true);
    end
  end
end

local function on_scroll(direction)
  if menu_open then return; end
  if direction == -1 and scroll_y > 0 then
    scroll_y = scroll_y - 1;
  elseif direction == 1 and scroll_y < #lines - (height - 1) then
    scroll_y = scroll_y + 1;
  else
    return;
  end
  draw_text();
  place_cursor();
end

term.setBackgroundColour(BACKGROUND);
term.clear();
term.setCursorPos(x, y);
term.setCursorBlink(true);
update_completions();
draw_text();
draw_status();
while running do
  local event, a, b, c = os.pullEvent();
  if event == "key" then
    on_key(a);
  elseif event == "char" then
    if menu_open then
      for n, item in ipairs(menu) do
        if item:sub(1, 1):lower() == a:lower() then
          choose(n);
          break;
        end
      end
    elseif not read_only then
      insert(a);
    end
  elseif event == "paste" then
    if not read_only then
      if menu_open then set_menu(false); end
      insert(a);
    end
  elseif event == "mouse_click" then
    on_click(a, b, c);
  elseif event == "mouse_scroll" then
    on_scroll(a);
  elseif event == "term_resize" then
    width, height = term.getSize();
    move_to(x, y);
    draw_text();
    draw_status();
  end
end

term.clear();
term.setCursorBlink(false);
term.setCursorPos(1, 1);
