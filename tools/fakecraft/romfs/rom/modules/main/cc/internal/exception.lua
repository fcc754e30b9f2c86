-- cc.internal.exception: runs a program's function so that its runtime error can be shown
-- with the line it happened on and a mark under its column, as CC: Tweaked 1.109 and later
-- do under an error of the shell's programs, the lua prompt and edit's Run (internal to
-- the ROM, as in CC). Written for fakecraft from CC's documentation; it shares no code with
-- CC's ROM.
--
--   try(func, ...)                   -> true, results... | false, message, thread
--   report(err, thread [, sources])  prints the line and mark of err, where it can
--   unwrap(err, thread)              -> message, thread (fakecraft's: see below)
--
-- An exception is a table whose metatable's __name is "exception", with a string `message`
-- and the coroutine it happened in as `thread` (a coroutine manager's way to pass an error
-- of an inner coroutine up): try answers with its message and thread. unwrap is that answer
-- for an error of a coroutine run otherwise (the shell's, which ties its coroutine to the
-- running program); CC's module has no such function, the shell calling try.
--
-- The column comes from debug.getinfo's currentcolumn, which fakecraft knows for what can
-- fail (a call, an index, an operator: the token Cobalt places the error at). Where it
-- knows none, or the line cannot be read, report prints nothing, as CC's does then.

local expect = require("cc.expect").expect;
local error_printer = require("cc.internal.error_printer");

-- How many frames of the failed coroutine are searched for the one the message names.
local FRAMES_SEARCHED = 16;

local function is_exception(err)
  if type(err) ~= "table" then return false; end
  local meta = getmetatable(err);
  return type(meta) == "table" and meta.__name == "exception"
    and type(rawget(err, "message")) == "string" and type(rawget(err, "thread")) == "thread";
end

-- The error err of thread as try answers it: an exception's message and thread, else err
-- and thread.
local function unwrap(err, thread)
  if is_exception(err) then
    return rawget(err, "message"), rawget(err, "thread");
  end
  return err, thread;
end

local function try(func, ...)
  expect(1, func, "function");
  local co = coroutine.create(func);
  local result = table.pack(coroutine.resume(co, ...));
  while coroutine.status(co) ~= "dead" do
    local filter = result[2];
    local event = table.pack(os.pullEventRaw(filter));
    if filter == nil or event[1] == filter or event[1] == "terminate" then
      result = table.pack(coroutine.resume(co, table.unpack(event, 1, event.n)));
    end
  end
  if result[1] then
    return table.unpack(result, 1, result.n);
  end
  return false, unwrap(result[2], co);
end

-- The frame of thread that is at file's line, a Lua function's, or nil.
local function frame_at(thread, file, line)
  for level = 0, FRAMES_SEARCHED - 1 do
    local frame = debug.getinfo(thread, level, "Sl");
    if not frame then return nil; end
    if frame.what ~= "C" and frame.short_src == file and frame.currentline == line then
      return frame;
    end
  end
  return nil;
end

-- Line number `line` of text, or nil.
local function line_of(text, line)
  local n = 0;
  for content in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1;
    if n == line then return content; end
  end
  return nil;
end

-- Line number `line` of the file at path, or nil.
local function line_of_file(path, line)
  local handle = fs.open(path, "r");
  if not handle then return nil; end
  local content;
  for _ = 1, line do
    content = handle.readLine();
    if content == nil then break; end
  end
  handle.close();
  return content;
end

-- sources maps a chunk name (debug.getinfo's source) to its text, or to a table
-- { contents = text, offset = n } for a text compiled with n characters put in front of it
-- (the lua prompt's "return "), whose columns then count from the text's own start.
local function report(err, thread, sources)
  expect(2, thread, "thread");
  expect(3, sources, "table", "nil");
  if type(err) ~= "string" then return; end
  local file, line = err:match("^([^:]+):(%d+):");
  if not file then return; end
  line = tonumber(line);

  local frame = frame_at(thread, file, line);
  if not frame or not frame.currentcolumn then return; end
  local column, text = frame.currentcolumn, nil;
  local source = sources and sources[frame.source];
  if type(source) == "table" then
    column = column - source.offset;
    text = line_of(source.contents, line);
  elseif type(source) == "string" then
    text = line_of(source, line);
  elseif frame.source:sub(1, 2) == "@/" then
    text = line_of_file(frame.source:sub(3), line);
  end
  if not text or text == "" or column < 1 then return; end

  error_printer({
    get_pos = function() return line, column; end,
    get_line = function() return text; end,
  }, {
    { tag = "annotate", start_pos = column, end_pos = column, msg = "" },
  });
end

return {
  try = try,
  report = report,
  unwrap = unwrap,
};
