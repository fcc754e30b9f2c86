-- multishell: the top-level program of an advanced computer. It runs programs side by
-- side, each in a tab with a window of its own; once two or more tabs are open a tab bar
-- takes the top row (click a title to switch). Typed input and mouse events go to the tab
-- on show, every other event to all tabs. The `multishell` API below is handed to the
-- shell of the first tab and, through shell.openTab, to every shell started from it.
--
-- CC's bios starts it with no arguments: the first tab is a shell at its prompt. Given
-- arguments (fakecraft's bios passes its launcher), that first shell runs them as its
-- command instead. It ends when the last tab has ended.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

-- Tab bar colours: the tab on show, and the others (and the bar itself).
local FOCUS_TEXT, FOCUS_BACKGROUND = colours.yellow, colours.black;
local OTHER_TEXT, OTHER_BACKGROUND = colours.black, colours.grey;
if not term.isColour() then
  FOCUS_TEXT = colours.white;
end

-- Events that come from the person at the computer: only the tab on show hears them.
local INPUT_EVENTS = {
  char = true, key = true, key_up = true, paste = true, terminate = true,
  file_transfer = true,
};

-- Mouse events other than a click, which carry a position (and so skip the bar).
local MOUSE_EVENTS = { mouse_drag = true, mouse_up = true, mouse_scroll = true };

local parent = term.current();
local width, height = parent.getSize();

local tabs = {};       -- in bar order; a tab's index is its position here
local focus = nil;     -- index of the tab on show
local running = nil;   -- index of the tab being resumed (multishell.getCurrent)
local bar_shown = false;
local first_shown = 1; -- index of the leftmost title on the bar (it scrolls sideways)
local more_right = false;
local resized = false; -- windows moved: every tab gets a term_resize

local function tab_area()
  if bar_shown then
    return 2, height - 1;
  end
  return 1, height;
end

local function show(index)
  if focus == index then
    return;
  end
  if focus and tabs[focus] then
    tabs[focus].window.setVisible(false);
  end
  focus = index;
  if index then
    tabs[index].window.setVisible(true);
    tabs[index].seen = true;
  end
end

local function draw_bar()
  if not bar_shown then
    return;
  end
  parent.setCursorPos(1, 1);
  parent.setBackgroundColour(OTHER_BACKGROUND);
  parent.clearLine();
  local used = 0;
  if first_shown > 1 then
    parent.setTextColour(OTHER_TEXT);
    parent.write("<");
    used = 1;
  end
  for i = first_shown, #tabs do
    if i == focus then
      parent.setTextColour(FOCUS_TEXT);
      parent.setBackgroundColour(FOCUS_BACKGROUND);
    else
      parent.setTextColour(OTHER_TEXT);
      parent.setBackgroundColour(OTHER_BACKGROUND);
    end
    parent.write(" " .. tabs[i].title .. " ");
    used = used + #tabs[i].title + 2;
  end
  more_right = used > width;
  if more_right then
    parent.setTextColour(OTHER_TEXT);
    parent.setBackgroundColour(OTHER_BACKGROUND);
    parent.setCursorPos(width, 1);
    parent.write(">");
  end
  if focus and tabs[focus] then
    tabs[focus].window.restoreCursor();
  end
end

-- Fits every window to the area below the bar (or the whole screen without it), keeping
-- each one's cursor row on screen.
local function fit_windows()
  local top, rows = tab_area();
  for _, tab in ipairs(tabs) do
    local x, y = tab.window.getCursorPos();
    if y > rows then
      tab.window.scroll(y - rows);
      tab.window.setCursorPos(x, rows);
    end
    tab.window.reposition(1, top, width, rows);
  end
  resized = true;
end

local function set_bar(visible)
  if bar_shown ~= visible then
    bar_shown = visible;
    fit_windows();
    draw_bar();
  end
end

-- Resumes one tab with an event, if its filter lets the event through, drawing into the
-- tab's own terminal while it runs.
local function resume(index, ...)
  local tab = tabs[index];
  local event = ...;
  if tab.filter ~= nil and tab.filter ~= event and event ~= "terminate" then
    return;
  end
  local previous = running;
  running = index;
  term.redirect(tab.terminal);
  local ok, result = coroutine.resume(tab.co, ...);
  tab.terminal = term.current();
  if ok then
    tab.filter = result;
  else
    printError(result);
  end
  running = previous;
end

local function open(focused, env, path, ...)
  local args = table.pack(...);
  local top, rows = tab_area();
  local tab = {
    title = fs.getName(path),
    window = window.create(parent, 1, top, width, rows, false),
    seen = false,
  };
  -- Programs see only the terminal's own functions, not the window's extras.
  tab.terminal = {};
  for name in pairs(term.native()) do
    tab.terminal[name] = tab.window[name];
  end
  tab.co = coroutine.create(function()
    os.run(env, path, table.unpack(args, 1, args.n));
    -- A tab nobody looked at keeps its output until someone reads it.
    if not tab.seen then
      term.setCursorBlink(false);
      print("Press any key to continue");
      os.pullEvent("char");
    end
  end);
  tabs[#tabs + 1] = tab;
  local index = #tabs;
  if focused then
    show(index);
  end
  resume(index);
  return index;
end

-- Removes a tab whose program has ended; the one before it comes on show if it was.
local function close_if_done(index)
  if coroutine.status(tabs[index].co) ~= "dead" then
    return false;
  end
  if focus == index then
    show(nil);
  end
  table.remove(tabs, index);
  if focus and focus > index then
    focus = focus - 1;
  elseif focus == nil and #tabs > 0 then
    show(math.max(index - 1, 1));
  end
  if first_shown > 1 then
    first_shown = first_shown - 1;
  end
  return true;
end

local function close_ended()
  local any = false;
  for i = #tabs, 1, -1 do
    if close_if_done(i) then
      any = true;
    end
  end
  return any;
end

local function after_closing(closed)
  if closed then
    set_bar(#tabs >= 2);
    draw_bar();
  end
end

-- The tab whose title covers column x of the bar, or nil.
local function tab_at(x)
  local left = first_shown > 1 and 2 or 1;
  for i = first_shown, #tabs do
    local right = left + #tabs[i].title + 1;
    if x >= left and x <= right then
      return i;
    end
    left = right + 1;
  end
  return nil;
end

local multishell = {};

--- The index of the tab on show.
function multishell.getFocus()
  return focus;
end

--- Shows tab n; false when there is no such tab.
function multishell.setFocus(n)
  expect(1, n, "number");
  if n < 1 or n > #tabs then
    return false;
  end
  show(n);
  draw_bar();
  return true;
end

--- The title of tab n, or nil when there is no such tab.
function multishell.getTitle(n)
  expect(1, n, "number");
  local tab = tabs[n];
  return tab and tab.title or nil;
end

--- Renames tab n (nothing happens when there is no such tab).
function multishell.setTitle(n, title)
  expect(1, n, "number");
  expect(2, title, "string");
  if tabs[n] then
    tabs[n].title = title;
    draw_bar();
  end
end

--- The index of the tab whose program is running now.
function multishell.getCurrent()
  return running;
end

--- Opens a tab in the background running the program at path with env and the
--- arguments; returns its index (valid until the next yield: tabs before it may close).
function multishell.launch(env, path, ...)
  expect(1, env, "table");
  expect(2, path, "string");
  local caller_term = term.current();
  set_bar(#tabs + 1 >= 2);
  local index = open(false, env, path, ...);
  draw_bar();
  term.redirect(caller_term);
  return index;
end

--- How many tabs are open.
function multishell.getCount()
  return #tabs;
end

parent.clear();
set_bar(false);
open(true, { shell = shell, multishell = multishell }, "/rom/programs/shell.lua", ...);

while #tabs > 0 do
  local event = table.pack(os.pullEventRaw());
  local name = event[1];
  if name == "term_resize" then
    width, height = parent.getSize();
    fit_windows();
    draw_bar();
  elseif INPUT_EVENTS[name] then
    resume(focus, table.unpack(event, 1, event.n));
    after_closing(close_if_done(focus));
  elseif name == "mouse_click" then
    local button, x, y = event[2], event[3], event[4];
    if bar_shown and y == 1 then
      if x == 1 and first_shown > 1 then
        first_shown = first_shown - 1;
      elseif more_right and x == width then
        first_shown = first_shown + 1;
      else
        local index = tab_at(x);
        if index then
          show(index);
        end
      end
      draw_bar();
    else
      resume(focus, name, button, x, bar_shown and y - 1 or y);
      after_closing(close_if_done(focus));
    end
  elseif MOUSE_EVENTS[name] then
    local value, x, y = event[2], event[3], event[4];
    if bar_shown and y == 1 then
      if name == "mouse_scroll" then
        if value == -1 and first_shown > 1 then
          first_shown = first_shown - 1;
          draw_bar();
        elseif value == 1 and more_right then
          first_shown = first_shown + 1;
          draw_bar();
        end
      end
    else
      resume(focus, name, value, x, bar_shown and y - 1 or y);
      after_closing(close_if_done(focus));
    end
  else
    -- Tabs opened while this event is handed round do not get it.
    local count = #tabs;
    for i = 1, count do
      resume(i, table.unpack(event, 1, event.n));
    end
    after_closing(close_ended());
  end

  if resized then
    resized = false;
    local count = #tabs;
    for i = 1, count do
      resume(i, "term_resize");
    end
    after_closing(close_ended());
  end
end

term.redirect(parent);
