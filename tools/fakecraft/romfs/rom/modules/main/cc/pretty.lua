-- cc.pretty: a document-based pretty printer, as CC: Tweaked's module (after Wadler's "A
-- prettier printer"). A document is text with places where it may break into lines; group
-- lets a part be laid out on one line when it fits. Written for fakecraft from CC's
-- documentation and test suite; it shares no code with CC's ROM.
--
-- Documents are tables tagged by kind, with the Doc metatable:
--   empty                    nothing
--   text    { text, colour } a piece of one line; colour nil means the terminal's own
--   line    { flat }         a line break; flat is what it becomes when its group fits
--   concat  { n, [1..n] }    documents one after another
--   nest    { depth, [1] }   later lines of [1] indented by depth more spaces
--   group   { [1], [2] }     [1] (the flat layout) when it fits, else [2]

local expect_mod = require("cc.expect");
local expect, field = expect_mod.expect, expect_mod.field;

-- Part of a line's width that text (not indentation) may take before a group breaks.
local DEFAULT_RIBBON = 0.6;

-- Words that cannot be written as a bare key (`{ ["and"] = 1 }`): Lua 5.1's, as CC's list
-- (so `goto` stays bare).
local KEYWORDS = {};
for word in ("and break do else elseif end false for function if in local nil not or repeat return then true until while"):gmatch("%a+") do
  KEYWORDS[word] = true;
end

local Doc = {};

-- A document, for the checks: cc.expect is called (so it words the message and names the
-- function) only when the value is not one, since "document" is no Lua type.
local function is_doc(value)
  return getmetatable(value) == Doc;
end


local function new_doc(fields)
  return setmetatable(fields, Doc);
end

local empty = new_doc({ tag = "empty" });
local space = new_doc({ tag = "text", text = " " });
local line = new_doc({ tag = "line", flat = empty });
local space_line = new_doc({ tag = "line", flat = space });

-- The strings whose document is a shared constant.
local CONSTANTS = { [""] = empty, [" "] = space, ["\n"] = space_line };

local function one_line(str, colour)
  return CONSTANTS[str] or new_doc({ tag = "text", text = str, colour = colour });
end

local function new_concat(parts, n)
  parts.tag, parts.n = "concat", n;
  return new_doc(parts);
end

--- A document of str; each "\n" in it becomes space_line, so a group can join the lines.
local function text(str, colour)
  expect(1, str, "string");
  expect(2, colour, "number", "nil");
  if CONSTANTS[str] then return CONSTANTS[str]; end
  if not str:find("\n", 1, true) then return one_line(str, colour); end

  local parts, n, start = {}, 0, 1;
  while true do
    local stop = str:find("\n", start, true);
    local piece = str:sub(start, (stop or 0) - 1);
    -- Empty pieces between newlines are left out: the breaks alone keep the lines.
    if piece ~= "" then n = n + 1; parts[n] = one_line(piece, colour); end
    if not stop then break; end
    n = n + 1;
    parts[n] = space_line;
    start = stop + 1;
  end
  return new_concat(parts, n);
end

--- Documents (or strings) one after another; also the .. operator on documents.
local function concat(...)
  local n = select("#", ...);
  local parts = { ... };
  for i = 1, n do
    if type(parts[i]) == "string" then parts[i] = text(parts[i]); end
    if not is_doc(parts[i]) then expect(i, parts[i], "document"); end
  end
  if n == 0 then return empty; end
  if n == 1 then return parts[1]; end
  return new_concat(parts, n);
end

Doc.__concat = concat;

--- doc, with every line after its first indented by depth more spaces.
local function nest(depth, doc)
  expect(1, depth, "number");
  if not is_doc(doc) then expect(2, doc, "document"); end
  if depth <= 0 then error("depth must be a positive number", 2); end
  return new_doc({ tag = "nest", depth = depth, doc });
end

-- The one-line layout of doc. A document with no line break in it is its own flat layout,
-- so group can tell that grouping it would change nothing.
local function flatten(doc)
  local tag = doc.tag;
  if tag == "line" then
    return doc.flat;
  elseif tag == "nest" then
    return flatten(doc[1]);
  elseif tag == "group" then
    return doc[1];
  elseif tag == "concat" then
    local parts, changed = {}, false;
    for i = 1, doc.n do
      parts[i] = flatten(doc[i]);
      changed = changed or parts[i] ~= doc[i];
    end
    if not changed then return doc; end
    return new_concat(parts, doc.n);
  end
  return doc;
end

--- doc laid out on one line when it fits in the width left, as it is otherwise.
local function group(doc)
  if not is_doc(doc) then expect(1, doc, "document"); end
  if doc.tag == "group" then return doc; end
  local flat = flatten(doc);
  if flat == doc then return doc; end
  return new_doc({ tag = "group", flat, doc });
end

-- Whether the one-line document flat takes at most room columns.
local function fits(flat, room)
  local function width_left(doc, left)
    if doc.tag == "text" then
      return left - #doc.text;
    elseif doc.tag == "concat" then
      for i = 1, doc.n do
        left = width_left(doc[i], left);
        if left < 0 then break; end
      end
    end
    return left;
  end
  return width_left(flat, room) >= 0;
end

-- The ribbon: how many columns of a line's text (past its indentation) a group may use.
local function ribbon_width(width, ribbon_frac)
  return math.max(0, math.min(width, (ribbon_frac or DEFAULT_RIBBON) * width));
end

-- Walks doc as laid out in width columns (nil: every group flat), starting at column col,
-- calling out.text(doc) for each piece of text and out.line(indent) for each line break.
local function layout(doc, width, ribbon_frac, col, out)
  local ribbon = width and ribbon_width(width, ribbon_frac);
  local function go(d, indent, at)
    local tag = d.tag;
    if tag == "text" then
      out.text(d);
      return at + #d.text;
    elseif tag == "line" then
      out.line(indent);
      return indent;
    elseif tag == "concat" then
      for i = 1, d.n do at = go(d[i], indent, at); end
      return at;
    elseif tag == "nest" then
      return go(d[1], indent + d.depth, at);
    elseif tag == "group" then
      local room = width and math.min(width - at, ribbon - (at - indent));
      return go((not width or fits(d[1], room)) and d[1] or d[2], indent, at);
    end
    return at;
  end
  go(doc, 0, col);
end

--- doc as a string, laid out for width columns (no width: every group on one line). The
--- width only chooses the layout: text longer than it is not cut.
local function render(doc, width, ribbon_frac)
  if not is_doc(doc) then expect(1, doc, "document"); end
  expect(2, width, "number", "nil");
  expect(3, ribbon_frac, "number", "nil");
  local out = {};
  layout(doc, width, ribbon_frac, 0, {
    text = function(d) out[#out + 1] = d.text; end,
    line = function(indent) out[#out + 1] = "\n" .. (" "):rep(indent); end,
  });
  return table.concat(out);
end

Doc.__tostring = function(doc) return render(doc); end;

--- Writes doc on the terminal from the cursor, laid out for the terminal's width, each
--- piece of text in its colour (the terminal's text colour when it has none).
local function write_doc(doc, ribbon_frac)
  if not is_doc(doc) then expect(1, doc, "document"); end
  expect(2, ribbon_frac, "number", "nil");
  local width, height = term.getSize();
  local default_colour = term.getTextColour();
  local colour = default_colour;
  local col = math.max(term.getCursorPos() - 1, 0);
  layout(doc, width, ribbon_frac, col, {
    text = function(d)
      local wanted = d.colour or default_colour;
      if wanted ~= colour then
        term.setTextColour(wanted);
        colour = wanted;
      end
      write(d.text);
    end,
    line = function(indent)
      local _, y = term.getCursorPos();
      if y >= height then
        term.scroll(1);
        y = height - 1;
      end
      term.setCursorPos(indent + 1, y + 1);
    end,
  });
  if colour ~= default_colour then term.setTextColour(default_colour); end
end

--- write, then a new line.
local function print_doc(doc, ribbon_frac)
  if not is_doc(doc) then expect(1, doc, "document"); end
  expect(2, ribbon_frac, "number", "nil");
  write_doc(doc, ribbon_frac);
  write("\n");
end

-- Keys in the order they are shown: strings, then numbers, each ascending; other keys
-- last, in no particular order.
local function key_before(a, b)
  local ta, tb = type(a), type(b);
  for _, kind in ipairs({ "string", "number" }) do
    if ta == kind and tb == kind then return a < b; end
    if ta == kind or tb == kind then return ta == kind; end
  end
  return false;
end

-- A function as tostring shows it, or as function<file:line> with function_source, and
-- its parameter names after it with function_args (for Lua functions, which have them).
local function describe_function(fn, options)
  local info = debug and debug.getinfo and debug.getinfo(fn, "Su");
  local shown = tostring(fn);
  if options.function_source and info and info.short_src and (info.linedefined or 0) >= 1 then
    shown = ("function<%s:%d>"):format(info.short_src, info.linedefined);
  end
  if options.function_args and info and info.what == "Lua" and info.nparams and debug.getlocal then
    local params = {};
    for i = 1, info.nparams do params[i] = debug.getlocal(fn, i) or "?"; end
    if info.isvararg then params[#params + 1] = "..."; end
    shown = shown .. "(" .. table.concat(params, ", ") .. ")";
  end
  return shown;
end

local comma = text(",");
local open_brace, close_brace = text("{"), text("}");
local open_key, close_key = text("["), text("] = ");

local show;

-- The entries of tbl (the list part, then the other keys sorted), one group that breaks
-- after each comma when the table does not fit on the line.
local function show_table(tbl, options, seen)
  seen[tbl] = true;
  local length = #tbl;
  local keys = {};
  for k in pairs(tbl) do
    if not (type(k) == "number" and k % 1 == 0 and k >= 1 and k <= length) then
      keys[#keys + 1] = k;
    end
  end
  table.sort(keys, key_before);

  local parts = { space_line };
  local function add(...)
    if #parts > 1 then
      parts[#parts + 1] = comma;
      parts[#parts + 1] = space_line;
    end
    for i = 1, select("#", ...) do parts[#parts + 1] = (select(i, ...)); end
  end
  for i = 1, length do add(show(tbl[i], options, seen)); end
  for _, k in ipairs(keys) do
    local value = show(tbl[k], options, seen);
    if type(k) == "string" and not KEYWORDS[k] and k:match("^[%a_][%w_]*$") then
      add(text(k .. " = "), value);
    else
      add(open_key, show(k, options, seen), close_key, value);
    end
  end
  seen[tbl] = nil;
  return group(concat(open_brace, nest(2, concat(table.unpack(parts))), space_line, close_brace));
end

function show(value, options, seen)
  local kind = type(value);
  if kind == "string" then
    -- %q continues a newline on the next line; shown as \n it stays one line.
    return text((("%q"):format(value):gsub("\\\n", "\\n")), colours.red);
  elseif kind == "number" then
    return text(tostring(value), colours.magenta);
  elseif kind == "function" then
    return text(describe_function(value, options), colours.lightGrey);
  elseif kind ~= "table" or seen[value] then
    return text(tostring(value), colours.lightGrey);
  end
  local mt = getmetatable(value);
  if type(mt) == "table" and mt.__tostring then
    return text(tostring(value));
  elseif next(value) == nil then
    return text("{}");
  end
  return show_table(value, options, seen);
end

--- A document showing value: tables written out (a table inside itself is shown by
--- tostring), strings quoted, each kind in its colour. options.function_args adds a
--- function's parameter names, options.function_source shows where it was defined.
local function pretty(value, options)
  expect(2, options, "table", "nil");
  options = options or {};
  return show(value, {
    function_args = field(options, "function_args", "boolean", "nil") or false,
    function_source = field(options, "function_source", "boolean", "nil") or false,
  }, {});
end

--- print(pretty(value, options), ribbon_frac).
local function pretty_print(value, options, ribbon_frac)
  expect(2, options, "table", "nil");
  expect(3, ribbon_frac, "number", "nil");
  print_doc(pretty(value, options), ribbon_frac);
end

return {
  empty = empty,
  space = space,
  line = line,
  space_line = space_line,
  text = text,
  concat = concat,
  nest = nest,
  group = group,
  write = write_doc,
  print = print_doc,
  render = render,
  pretty = pretty,
  pretty_print = pretty_print,
};
