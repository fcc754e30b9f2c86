-- libsandboxexec: runs the host's lua.exec chunks and shell.run command lines beside the
-- daemon's loop. Each job is a coroutine of its own, resumed with the daemon's events (as
-- parallel would resume it), with the terminal redirected to a capture around each resume
-- (the redirect is global to the computer). A job past its time is dropped and answers
-- `timeout`. Nothing here pulls events or sleeps: the daemon feeds onEvent.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');

-- Default and largest time a job may run, in milliseconds. The default stays below the
-- gateway's default request timeout (10 s) so the job's own timeout answers first.
local DEFAULT_TIMEOUT_MS = 5000;
local MAX_TIMEOUT_MS = 60000;
-- Captured output kept per job. serializeJSON may write a byte as six, so 16 KiB of output
-- stays under 96 KiB on the wire, leaving room for the return values.
local MAX_OUTPUT_BYTES = 16 * 1024;
-- The capture's size for lua.exec: wide enough that write() never wraps, tall enough that it
-- never scrolls (nor makes textutils.pagedPrint wait for a key). shell.run's capture is as wide
-- as the computer's screen instead, so programs that lay out by width (ls, textutils.tabulate)
-- print what the player would see.
local CAPTURE_WIDTH = 2 ^ 30;
local CAPTURE_HEIGHT = 2 ^ 30;
-- A line never grows past this: text beyond it would be cut from the output anyway, and a
-- cursor moved far right (tabulate's columns on a 2^30-wide terminal) must not cost a
-- gigabyte of padding.
local MAX_LINE_BYTES = MAX_OUTPUT_BYTES + 1;
-- The chunk name CC's lua program gives a line, so errors read "lua:1: ...".
local CHUNK_NAME = "=lua";

local ERR_TIMEOUT = codec.ERR_TIMEOUT;

-- A terminal of the given width (default CAPTURE_WIDTH) that records what is written to it,
-- as text lines.
local function newCapture(width)
  local lines, x, y, lastLine, clipped = {}, 1, 1, 0, false;
  local capture = {};
  width = width or CAPTURE_WIDTH;

  function capture.write(text)
    text = tostring(text);
    local start = x;
    x = x + #text;
    lastLine = math.max(lastLine, y);
    if start > MAX_LINE_BYTES then
      clipped = true;
      return;
    end
    local line = lines[y] or "";
    if #line < start - 1 then
      line = line .. string.rep(" ", start - 1 - #line);
    end
    line = line:sub(1, start - 1) .. text .. line:sub(start + #text);
    if #line > MAX_LINE_BYTES then
      line, clipped = line:sub(1, MAX_LINE_BYTES), true;
    end
    lines[y] = line;
  end
  function capture.blit(text) capture.write(text); end
  function capture.setCursorPos(newX, newY)
    x, y = math.floor(newX), math.floor(newY);
  end
  function capture.getCursorPos() return x, y; end
  function capture.getSize() return width, CAPTURE_HEIGHT; end
  function capture.clear() lines, lastLine = {}, 0; end
  function capture.clearLine() lines[y] = ""; end
  function capture.scroll(n)
    local moved = {};
    for i, line in pairs(lines) do
      if i - n >= 1 then
        moved[i - n] = line;
      end
    end
    lines, lastLine = moved, math.max(lastLine - n, 0);
  end
  function capture.isColour() return false; end
  capture.isColor = capture.isColour;
  function capture.setTextColour() end
  capture.setTextColor = capture.setTextColour;
  function capture.setBackgroundColour() end
  capture.setBackgroundColor = capture.setBackgroundColour;
  function capture.getTextColour() return colours and colours.white or 1; end
  capture.getTextColor = capture.getTextColour;
  function capture.getBackgroundColour() return colours and colours.black or 32768; end
  capture.getBackgroundColor = capture.getBackgroundColour;
  function capture.setCursorBlink() end
  function capture.getCursorBlink() return false; end
  function capture.setPaletteColour() end
  capture.setPaletteColor = capture.setPaletteColour;
  function capture.getPaletteColour() return 0, 0, 0; end
  capture.getPaletteColor = capture.getPaletteColour;

  -- What was written, lines joined by "\n", with a final "\n" when the cursor moved past the
  -- last written line (as after print). Returns the text and whether it was cut.
  function capture.text()
    local out = {};
    for i = 1, lastLine do
      out[i] = lines[i] or "";
    end
    local text = table.concat(out, "\n");
    if lastLine > 0 and y > lastLine then
      text = text .. "\n";
    end
    if #text > MAX_OUTPUT_BYTES then
      return text:sub(1, MAX_OUTPUT_BYTES), true;
    end
    return text, clipped;
  end

  return capture;
end

-- Compiles a lua.exec chunk as CC's lua program does: "return <code>" first, so an
-- expression gives its value, then the code as a statement. Returns the function, or nil and
-- the compile error of the statement form.
local function compile(code, env)
  local fn = load("return " .. code, CHUNK_NAME, "t", env);
  if fn ~= nil then
    return fn;
  end
  return load(code, CHUNK_NAME, "t", env);
end

-- A lua.exec timeoutMs (or nil) in seconds, or nil and why it is unusable.
local function timeoutSeconds(timeoutMs)
  if timeoutMs == nil then
    return DEFAULT_TIMEOUT_MS / 1000;
  end
  if type(timeoutMs) ~= "number" or timeoutMs <= 0 or timeoutMs > MAX_TIMEOUT_MS then
    return nil, "payload.timeoutMs must be a number between 1 and " .. MAX_TIMEOUT_MS;
  end
  return timeoutMs / 1000;
end

-- deps: term (redirect), os (startTimer, cancelTimer), env (the environment chunks see
-- through __index: the daemon's program environment, with shell and require), shell (nil
-- when there is none).
local function newRunner(deps)
  expect(1, deps, "table");
  field(deps, "term", "table");
  field(deps, "os", "table");
  field(deps, "env", "table");
  field(deps, "shell", "table", "nil");
  local termApi, osApi = deps.term, deps.os;
  local jobs = {}; -- timer id -> job

  local function finish(job, ok, result, err)
    jobs[job.timer] = nil;
    osApi.cancelTimer(job.timer);
    job.done(ok, result, err);
  end

  -- Resumes job with one event, the terminal redirected to its capture meanwhile.
  local function resume(job, ...)
    local previous = termApi.redirect(job.capture);
    local resumed = table.pack(coroutine.resume(job.co, ...));
    termApi.redirect(previous);
    if coroutine.status(job.co) == "dead" then
      local output, truncated = job.capture.text();
      if not resumed[1] then
        -- Our own wrapper raised (it should not): report it as the chunk's error.
        finish(job, true, { returns = textutils.empty_json_array, output = output, error = tostring(resumed[2]) });
        return;
      end
      local result = job.collect(resumed[2], output);
      if truncated then
        result.outputTruncated = true;
      end
      finish(job, true, result);
    else
      job.filter = resumed[2];
    end
  end

  -- Starts body in a coroutine of its own; done(ok, payload, error) gets the answer once.
  -- body runs under pcall inside the coroutine, so "Too long without yielding" thrown into it
  -- ends the job, not the daemon. collect(packedPcallResult, output) builds the payload.
  local function start(body, seconds, collect, done, width)
    local job = {
      seconds = seconds,
      capture = newCapture(width),
      collect = collect,
      done = done,
      co = coroutine.create(function()
        return table.pack(pcall(body));
      end),
    };
    job.timer = osApi.startTimer(seconds);
    jobs[job.timer] = job;
    resume(job);
  end

  local function execCollect(packed, output)
    if not packed[1] then
      return { returns = textutils.empty_json_array, output = output, error = tostring(packed[2]) };
    end
    local returns = {};
    for i = 2, packed.n do
      returns[i - 1] = codec.jsonSafe(packed[i]);
    end
    if packed.n < 2 then
      returns = textutils.empty_json_array;
    end
    return { returns = returns, output = output };
  end

  -- lua.exec {code, timeoutMs?}: answers {returns, output, error?}.
  local function exec(payload, done)
    if type(payload.code) ~= "string" then
      return done(false, nil, { code = codec.ERR_BAD_PAYLOAD, message = "payload.code must be a string, got " .. type(payload.code) });
    end
    local seconds, why = timeoutSeconds(payload.timeoutMs);
    if seconds == nil then
      return done(false, nil, { code = codec.ERR_BAD_PAYLOAD, message = why });
    end
    local fn, compileErr = compile(payload.code, setmetatable({}, { __index = deps.env }));
    if fn == nil then
      return done(true, { returns = textutils.empty_json_array, output = "", error = tostring(compileErr) });
    end
    start(fn, seconds, execCollect, done);
  end

  local function runCollect(packed, output)
    if not packed[1] then
      return { success = false, output = output .. tostring(packed[2]) };
    end
    return { success = packed[2] == true, output = output };
  end

  -- shell.run {command, timeoutMs?}: answers {success, output}.
  local function run(payload, done)
    if type(payload.command) ~= "string" or payload.command:match("^%s*$") then
      return done(false, nil, { code = codec.ERR_BAD_PAYLOAD, message = "payload.command must be a non-empty string" });
    end
    if deps.shell == nil then
      return done(false, nil, { code = codec.ERR_INTERNAL, message = "the sandbox daemon runs without a shell" });
    end
    local seconds, why = timeoutSeconds(payload.timeoutMs);
    if seconds == nil then
      return done(false, nil, { code = codec.ERR_BAD_PAYLOAD, message = why });
    end
    local screenWidth = termApi.getSize();
    start(function() return deps.shell.run(payload.command); end, seconds, runCollect, done, screenWidth);
  end

  -- Feeds one event to every job waiting for it; a job's own timer ends it with `timeout`.
  local function onEvent(event, ...)
    if event == "timer" and jobs[(...)] ~= nil then
      local job = jobs[(...)];
      finish(job, false, nil, {
        code = ERR_TIMEOUT,
        message = "it ran past its timeout of " .. math.floor(job.seconds * 1000 + 0.5) .. " ms and was abandoned",
      });
      return;
    end
    local waiting = {};
    for _, job in pairs(jobs) do
      if job.filter == nil or job.filter == event or event == "terminate" then
        waiting[#waiting + 1] = job;
      end
    end
    for _, job in ipairs(waiting) do
      if jobs[job.timer] == job then
        resume(job, event, ...);
      end
    end
  end

  -- Drops every job without answering (the daemon is stopping).
  local function stop()
    for timer in pairs(jobs) do
      osApi.cancelTimer(timer);
    end
    jobs = {};
  end

  local function count()
    local n = 0;
    for _ in pairs(jobs) do
      n = n + 1;
    end
    return n;
  end

  return {
    exec = exec,
    run = run,
    onEvent = onEvent,
    stop = stop,
    count = count,
  };
end

return {
  DEFAULT_TIMEOUT_MS = DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS = MAX_TIMEOUT_MS,
  MAX_OUTPUT_BYTES = MAX_OUTPUT_BYTES,
  newCapture = newCapture,
  compile = compile,
  newRunner = newRunner,
};
