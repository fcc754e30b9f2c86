-- help [topic]: shows a help topic (default: intro); `help index` lists the topics.
-- A topic that fits on the screen is printed; a longer one opens a viewer: the text
-- fills the screen above a "Help: <topic>" line, the arrow keys, Page Up/Down, Home and
-- End scroll it, and Q (or Ctrl-T) closes it.

local strings = require("cc.strings");
local discard_char = require("cc.internal.event").discard_char;

local args = { ... };
local topic = args[1] or "intro";

if topic == "index" then
  print("Help topics available:");
  textutils.pagedTabulate(help.topics());
  return;
end

local function read_topic(name)
  local path = help.lookup(name);
  local file = path and fs.open(path, "r");
  if not file then return nil; end
  local text = file.readAll() or "";
  file.close();
  -- A file's final newline would show as a blank last line.
  if text:sub(-1) == "\n" then text = text:sub(1, -2); end
  return text;
end

local text = read_topic(topic);
if not text then
  printError("No help available");
  return;
end

local width, height = term.getSize();
local lines = strings.wrap(text, width);

if #lines <= height - 1 then
  for _, line in ipairs(lines) do
    print(line);
  end
  return;
end

local offset = 0;

local function last_offset()
  return math.max(#lines - (height - 1), 0);
end

local function draw()
  term.setTextColour(colours.white);
  for y = 1, height - 1 do
    term.setCursorPos(1, y);
    term.clearLine();
    local line = lines[y + offset];
    if line then term.write(line); end
  end
  term.setCursorPos(1, height);
  term.clearLine();
  if term.isColour() then term.setTextColour(colours.yellow); end
  local tag = "Help: " .. topic;
  term.write(tag);
  local hint = "Press Q to exit";
  if width >= #tag + #hint + 1 then
    term.setCursorPos(width - #hint + 1, height);
    term.write(hint);
  end
  term.setTextColour(colours.white);
end

local function scroll_to(new_offset)
  new_offset = math.max(0, math.min(new_offset, last_offset()));
  if new_offset ~= offset then
    offset = new_offset;
    draw();
  end
end

draw();
while true do
  local event, param = os.pullEventRaw();
  if event == "key" then
    local page = height - 2;
    if param == keys.up then
      scroll_to(offset - 1);
    elseif param == keys.down then
      scroll_to(offset + 1);
    elseif param == keys.pageUp then
      scroll_to(offset - page);
    elseif param == keys.pageDown then
      scroll_to(offset + page);
    elseif param == keys.home then
      scroll_to(0);
    elseif param == keys["end"] then
      scroll_to(last_offset());
    elseif param == keys.q then
      -- The Q's char event must not reach the shell's prompt.
      discard_char();
      break;
    end
  elseif event == "mouse_scroll" then
    scroll_to(offset + param);
  elseif event == "term_resize" then
    width, height = term.getSize();
    lines = strings.wrap(text, width);
    offset = math.min(offset, last_offset());
    draw();
  elseif event == "terminate" then
    break;
  end
end

term.clear();
term.setCursorPos(1, 1);
