-- cc.internal.error_printer: shows an error message of cc.internal.syntax.errors on the
-- terminal (internal to the ROM, as in CC: Tweaked). Written for fakecraft from CC's
-- documentation and its prompt's look; it shares no code with CC's ROM.
--
--   error_printer(context, message)
--
-- message is a list of lines (text or cc.pretty documents) and annotations. An annotation
-- shows "Line N", the source line (cut to the screen with « and » where it does not fit),
-- a mark under the place it points at and its note, all behind a bar down the left edge;
-- the annotations take the colours red, green, magenta and orange in turn. context gives
-- get_pos(pos) (line and column) and get_line(pos) (the text of that line).

local pretty = require("cc.pretty");
local expect = require("cc.expect");
local wrap = require("cc.strings").wrap;

local MARK_COLOURS = { colours.red, colours.green, colours.magenta, colours.orange };
local BAR = "\149";   -- the left edge of an annotation
local UNDERLINE = "\131"; -- the mark under the source
local bar = pretty.text(BAR, colours.cyan);

-- Writes text (a string or document) from the cursor's column to the screen's right edge,
-- wrapping; each new line starts with continue(y) and at that same column.
local function write_aligned(text, continue)
  local left = term.getCursorPos();
  local width, height = term.getSize();
  local room = width - left + 1;

  local function new_line()
    local _, y = term.getCursorPos();
    if y >= height then
      term.scroll(1);
    else
      y = y + 1;
    end
    continue(y);
    term.setCursorPos(left, y);
  end

  local function write_wrapped(str)
    local x = term.getCursorPos();
    local lines = wrap((" "):rep(x - left) .. str, room);
    term.write(lines[1]:sub(x - left + 1));
    for i = 2, #lines do
      new_line();
      term.write(lines[i]);
    end
  end

  local function write_doc(doc)
    if doc.tag == "text" then
      local previous = term.getTextColour();
      if doc.colour then term.setTextColour(doc.colour); end
      write_wrapped(doc.text);
      term.setTextColour(previous);
    elseif doc.tag == "concat" then
      for i = 1, doc.n do write_doc(doc[i]); end
    end
  end

  if type(text) == "string" then
    write_wrapped(text);
  else
    write_doc(text);
  end
  print();
end

local function show_annotation(context, note, colour)
  local line, column = context.get_pos(note.start_pos);
  local end_line, end_column = context.get_pos(note.end_pos);
  local source = context.get_line(note.start_pos);
  local width = term.getSize();
  if end_line ~= line then end_column = #source; end

  -- The first column shown: as far right as needed to show the place, but never past 10
  -- characters after its start, 5 after its end, or the end of the line.
  local first = math.max(1, math.min(column + 10, end_column + 5, #source + 1) - width + 1);
  local shown_start, shown_end = first, first + width - 2;
  local before, after = "", "";
  if first > 1 then
    shown_start = shown_start + 1;
    before = pretty.text("\171", colours.grey);
  end
  if shown_end < #source then
    shown_end = shown_end - 1;
    after = pretty.text("\187", colours.grey);
  end

  pretty.print(bar .. pretty.text("Line " .. line, colours.cyan));
  pretty.print(bar .. before .. pretty.text(source:sub(shown_start, shown_end), colours.lightGrey) .. after);

  local digit = colours.toBlit(colour);
  local mark_length = math.min(end_column, shown_end) - column + 1;
  local _, y = term.getCursorPos();
  pretty.write(bar);
  if mark_length > 0 then
    term.setCursorPos(column - first + 2, y);
    term.blit(UNDERLINE:rep(mark_length), digit:rep(mark_length), ("f"):rep(mark_length));
  end
  print();

  if note.msg ~= "" then
    term.blit(BAR, digit, "f");
    write_aligned(note.msg, function(next_y)
      term.setCursorPos(1, next_y);
      term.blit(BAR, digit, "f");
    end);
  end
end

return function(context, message)
  expect.expect(1, context, "table");
  expect.expect(2, message, "table");
  expect.field(context, "get_pos", "function");
  expect.field(context, "get_line", "function");
  if #message == 0 then error("Message is empty", 2); end

  local colour = 0;
  for i, part in ipairs(message) do
    if i > 1 then print(); end
    if type(part) == "table" and part.tag == "annotate" then
      colour = colour % #MARK_COLOURS + 1;
      show_annotation(context, part, MARK_COLOURS[colour]);
    elseif type(part) == "table" then
      pretty.print(part);
    else
      print(part);
    end
  end
end
