-- libsandboxexec: runs the host's lua.exec chunks and shell.run command lines beside the
-- daemon's loop. Each job is a coroutine of its own, resumed with the daemon's events (as
-- parallel would resume it, less the player's keyboard and mouse), with the terminal
-- redirected to a screen of its own around each resume (the redirect is global to the
-- computer). A job past its time is dropped and answers `timeout`. Nothing here pulls events
-- or sleeps: the daemon feeds onEvent.

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
-- The chunk name CC's lua program gives a line, so errors read "lua:1: ...".
local CHUNK_NAME = "=lua";
-- Events a job never sees: the player's keyboard and mouse belong to the player's shell (a
-- host job reading them would steal the player's keys), and the job's screen never resizes.
-- terminate (Ctrl-T held, or the host's screen.input) is the program in front's too: the
-- daemon keeps running on it, and so do its jobs (`sandbox stop` ends them).
local WITHHELD_EVENTS = {
  key = true, key_up = true, char = true, paste = true,
  mouse_click = true, mouse_up = true, mouse_drag = true, mouse_scroll = true,
  term_resize = true, terminate = true,
};

local ERR_TIMEOUT = codec.ERR_TIMEOUT;
-- An answer's powerOff: the job called os.shutdown or os.reboot (the shutdown and reboot
-- programs do), so the computer is turning off or restarting as the answer goes out.
local POWER_OFF_SHUTDOWN = "shutdown";
local POWER_OFF_REBOOT = "reboot";

-- A row with its trailing spaces removed.
local function trimRow(row)
  return (row:gsub(" +$", ""));
end

-- A terminal of width x height that the player never sees: what the computer's own screen
-- would show, plus the rows scrolled off its top (the output of a program that prints).
-- native, when given, is the terminal whose colour support and palette it reports.
local function newCapture(width, height, native)
  expect(1, width, "number");
  expect(2, height, "number");
  expect(3, native, "table", "nil");
  width, height = math.max(1, math.floor(width)), math.max(1, math.floor(height));
  local blank = string.rep(" ", width);
  local rows = {};            -- y -> a row of exactly width characters; nil is blank
  local scrolled = {};        -- rows scrolled off the top, trimmed, oldest first
  local scrolledBytes, scrolledCut = 0, false;
  local x, y = 1, 1;
  local colour = native ~= nil and native.isColour() or false;
  local textColour, backgroundColour = 1, 32768; -- colours.white, colours.black
  local blink = false;
  local palette = {};         -- colour -> {r, g, b} the job set
  local capture = {};

  function capture.write(text)
    text = tostring(text);
    local start = x;
    x = x + #text;
    if y < 1 or y > height then
      return;
    end
    -- Only the columns 1..width of [start, start + #text) are drawn, as on a real screen.
    local from, to = math.max(start, 1), math.min(start + #text - 1, width);
    if from > to then
      return;
    end
    local row = rows[y] or blank;
    rows[y] = row:sub(1, from - 1) .. text:sub(from - start + 1, to - start + 1) .. row:sub(to + 1);
  end
  function capture.blit(text, textColours, backgroundColours)
    expect(1, text, "string");
    expect(2, textColours, "string");
    expect(3, backgroundColours, "string");
    if #textColours ~= #text or #backgroundColours ~= #text then
      error("Arguments must be the same length", 2);
    end
    capture.write(text);
  end
  function capture.setCursorPos(newX, newY)
    expect(1, newX, "number");
    expect(2, newY, "number");
    -- CC refuses NaN and the infinities as it does any non-number (a NaN row would also break
    -- the rows table here).
    for i, v in ipairs({ newX, newY }) do
      if v ~= v or v == math.huge or v == -math.huge then
        error(("bad argument #%d (number expected, got %s)"):format(i, tostring(v)), 2);
      end
    end
    x, y = math.floor(newX), math.floor(newY);
  end
  function capture.getCursorPos() return x, y; end
  function capture.getSize() return width, height; end
  function capture.clear() rows = {}; end
  function capture.clearLine()
    if y >= 1 and y <= height then
      rows[y] = nil;
    end
  end
  -- scroll(n) moves the rows up by n (down when n < 0); the rows leaving the top are kept
  -- as output until they fill it (then the first of them stay).
  function capture.scroll(n)
    expect(1, n, "number");
    n = math.floor(n);
    for i = 1, math.min(n, height) do
      local row = trimRow(rows[i] or "");
      if scrolledCut or scrolledBytes + #row + 1 > MAX_OUTPUT_BYTES then
        scrolledCut = true;
      else
        scrolled[#scrolled + 1] = row;
        scrolledBytes = scrolledBytes + #row + 1;
      end
    end
    local moved = {};
    for i, row in pairs(rows) do
      if i - n >= 1 and i - n <= height then
        moved[i - n] = row;
      end
    end
    rows = moved;
  end
  function capture.isColour() return colour; end
  capture.isColor = capture.isColour;
  function capture.setTextColour(c) expect(1, c, "number"); textColour = c; end
  capture.setTextColor = capture.setTextColour;
  function capture.getTextColour() return textColour; end
  capture.getTextColor = capture.getTextColour;
  function capture.setBackgroundColour(c) expect(1, c, "number"); backgroundColour = c; end
  capture.setBackgroundColor = capture.setBackgroundColour;
  function capture.getBackgroundColour() return backgroundColour; end
  capture.getBackgroundColor = capture.getBackgroundColour;
  function capture.setCursorBlink(on) expect(1, on, "boolean"); blink = on; end
  function capture.getCursorBlink() return blink; end
  function capture.setPaletteColour(c, r, g, b)
    expect(1, c, "number");
    if type(r) == "number" and g == nil and b == nil then
      r, g, b = colours.unpackRGB(r);
    end
    palette[c] = { r, g, b };
  end
  capture.setPaletteColor = capture.setPaletteColour;
  function capture.getPaletteColour(c)
    expect(1, c, "number");
    if palette[c] ~= nil then
      return table.unpack(palette[c]);
    elseif native ~= nil then
      return native.getPaletteColour(c);
    end
    return 0, 0, 0;
  end
  capture.getPaletteColor = capture.getPaletteColour;

  -- The last row of the screen that shows something, 0 when it is blank.
  local function lastShown()
    for row = height, 1, -1 do
      if rows[row] ~= nil and rows[row] ~= blank then
        return row;
      end
    end
    return 0;
  end

  -- What the screen shows now: its rows down to the last that shows something, trailing
  -- spaces trimmed, joined by "\n" ("" for a blank screen).
  function capture.screen()
    local out = {};
    for row = 1, lastShown() do
      out[row] = trimRow(rows[row] or "");
    end
    return table.concat(out, "\n");
  end

  -- The output: the rows scrolled off the top, then the screen as it is now, joined by "\n",
  -- with a final "\n" when the cursor sits below the last row that shows something (as after
  -- print). The screen is always whole; the scrolled rows are cut, oldest kept, to keep the
  -- whole under MAX_OUTPUT_BYTES. Returns the text and whether it was cut.
  function capture.text()
    local shown = lastShown();
    local screenText = capture.screen();
    local cut = scrolledCut;
    local out, size = {}, #screenText;
    for _, row in ipairs(scrolled) do
      if size + #row + 1 > MAX_OUTPUT_BYTES then
        cut = true;
        break;
      end
      out[#out + 1] = row;
      size = size + #row + 1;
    end
    if shown > 0 then
      out[#out + 1] = screenText;
    end
    if #out == 0 then
      return "", cut;
    end
    local text = table.concat(out, "\n");
    if y > shown then
      text = text .. "\n";
    end
    if #text > MAX_OUTPUT_BYTES then
      return text:sub(1, MAX_OUTPUT_BYTES), true;
    end
    return text, cut;
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

-- Print and tabulate without pausing: a job's textutils.pagedPrint and pagedTabulate, since
-- nobody can press the key a paged listing waits for (ls, help, cat of a long file would
-- otherwise wait until their timeout).
local function unpaged(textutilsApi)
  local tabulate = textutilsApi.tabulate;
  return {
    pagedPrint = function(text, freeLines)
      expect(2, freeLines, "number", "nil");
      return print(text);
    end,
    pagedTabulate = function(...)
      return tabulate(...);
    end,
  };
end

-- deps: term (redirect, native), os (startTimer, cancelTimer), env (the environment chunks
-- see through __index: the daemon's program environment, with shell and require), shell (nil
-- when there is none), textutils (the global by default: its paged functions are swapped
-- for unpaged ones while a job runs), and withdrawn() (nil while the owner allows jobs, else
-- why not: the running jobs then stop).
local function newRunner(deps)
  expect(1, deps, "table");
  field(deps, "term", "table");
  field(deps, "os", "table");
  field(deps, "env", "table");
  field(deps, "shell", "table", "nil");
  field(deps, "textutils", "table", "nil");
  field(deps, "withdrawn", "function");
  local termApi, osApi = deps.term, deps.os;
  local textutilsApi = deps.textutils or textutils;
  local jobPaging = unpaged(textutilsApi);
  local jobs = {}; -- timer id -> job

  local function finish(job, ok, result, err)
    jobs[job.timer] = nil;
    osApi.cancelTimer(job.timer);
    job.done(ok, result, err);
  end

  -- Resumes job's coroutine with one event, with the terminal redirected to the job's,
  -- paging off and os.shutdown and os.reboot noting that the job called them, meanwhile (all
  -- are global to the computer, so they are put back before anything else runs). The job's
  -- terminal is its capture, or where the job redirected it (a window on it). Returns what
  -- coroutine.resume returned, packed.
  local function step(job, ...)
    local previous = termApi.redirect(job.term);
    local pagedPrint, pagedTabulate = textutilsApi.pagedPrint, textutilsApi.pagedTabulate;
    textutilsApi.pagedPrint, textutilsApi.pagedTabulate = jobPaging.pagedPrint, jobPaging.pagedTabulate;
    local shutdown, reboot = osApi.shutdown, osApi.reboot;
    osApi.shutdown = function(...)
      job.powerOff = job.powerOff or POWER_OFF_SHUTDOWN;
      return shutdown(...);
    end
    osApi.reboot = function(...)
      job.powerOff = job.powerOff or POWER_OFF_REBOOT;
      return reboot(...);
    end
    local resumed = table.pack(coroutine.resume(job.co, ...));
    osApi.shutdown, osApi.reboot = shutdown, reboot;
    textutilsApi.pagedPrint, textutilsApi.pagedTabulate = pagedPrint, pagedTabulate;
    job.term = termApi.redirect(previous);
    return resumed;
  end

  -- Ends the program of a job that was answered without it (its timeout) or dropped (the
  -- daemon stopping) with one terminate, as CC ends the program in front on Ctrl-T. A
  -- coroutine that is only dropped never returns from its shell.run, whose own code after
  -- the program is what takes the program off the shell's stack of running programs (CC's
  -- is private to its shell.lua, so nothing else can): left there, shell.getRunningProgram()
  -- in the daemon's shell would name the dead job's program from then on. The job's output
  -- is not looked at any more. A program that ignores terminate (os.pullEventRaw) is dropped
  -- as it is.
  local function unwind(job)
    if coroutine.status(job.co) == "suspended" then
      step(job, "terminate");
    end
  end

  -- Resumes job with one event; once its body has returned, answers with what it gave. A
  -- job that called os.shutdown or os.reboot is answered as this step ends, returned or not,
  -- with powerOff naming the call: CC stops the computer, the daemon and its socket with it,
  -- at the next yield of the computer's code, so an answer sent before that gets out (CC
  -- sends the frames queued before it closes the socket), and one left for later is lost
  -- with the job. The host then knows the code ran, and why the computer went away.
  local function resume(job, ...)
    local resumed = step(job, ...);
    if coroutine.status(job.co) == "dead" then
      local output, truncated = job.capture.text();
      if not resumed[1] then
        -- Our own wrapper raised (it should not): report it as the chunk's error.
        finish(job, true, { returns = textutils.empty_json_array, output = output, error = tostring(resumed[2]), powerOff = job.powerOff });
        return;
      end
      local result = job.collect(resumed[2], output);
      if truncated then
        result.outputTruncated = true;
      end
      result.powerOff = job.powerOff;
      finish(job, true, result);
    elseif job.powerOff ~= nil then
      -- Still running: what it returns, it never will (a shell.run's program has not
      -- succeeded). The computer stops at this yield, so the job is not stepped again.
      local output, truncated = job.capture.text();
      local result = job.collect(table.pack(true), output);
      if truncated then
        result.outputTruncated = true;
      end
      result.powerOff = job.powerOff;
      finish(job, true, result);
    else
      job.filter = resumed[2];
    end
  end

  -- Starts body in a coroutine of its own; done(ok, payload, error) gets the answer once.
  -- body runs under pcall inside the coroutine, so "Too long without yielding" thrown into it
  -- ends the job, not the daemon. collect(packedPcallResult, output) builds the payload.
  -- The job's terminal is the size of the computer's own screen, so a full-screen program
  -- (edit, a loop over every row) draws and waits as it would there.
  -- defaulted: the payload gave no timeoutMs, so seconds is DEFAULT_TIMEOUT_MS's.
  local function start(kind, body, seconds, defaulted, collect, done)
    local native = termApi.native();
    local width, height = native.getSize();
    local capture = newCapture(width, height, native);
    local job = {
      kind = kind,
      seconds = seconds,
      defaulted = defaulted,
      capture = capture,
      term = capture,
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
    start(codec.TYPE_LUA_EXEC, fn, seconds, payload.timeoutMs == nil, execCollect, done);
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
    start(codec.TYPE_SHELL_RUN, function() return deps.shell.run(payload.command); end, seconds, payload.timeoutMs == nil, runCollect, done);
  end

  -- The timeout answer: what ended the job, and what its screen showed then (an editor, a
  -- prompt waiting for input, the last lines printed). A default the request never named is
  -- said to be one: "its timeout of 5000 ms" read as a number the host had sent.
  local function timeoutError(job)
    local limit = "its timeout of " .. math.floor(job.seconds * 1000 + 0.5) .. " ms";
    if job.defaulted then
      limit = "its default timeout of " .. DEFAULT_TIMEOUT_MS .. " ms (the request's payload gave no timeoutMs; it takes 1 to "
        .. MAX_TIMEOUT_MS .. ")";
    end
    local message = "it ran past " .. limit .. " and was abandoned (a job gets no keyboard or mouse input)";
    local screen = job.capture.screen();
    if screen == "" then
      message = message .. "; its screen was blank";
    else
      message = message .. "; its screen showed:\n" .. screen;
    end
    return { code = ERR_TIMEOUT, message = message };
  end

  -- Feeds one event to every job waiting for it, but for the player's input
  -- (WITHHELD_EVENTS); a job's own timer ends it with `timeout`. Once the owner withdraws
  -- the permission (`set sandbox.allow_exec false` while a job waits up to a minute), every
  -- job stops before it sees another event: it answers `forbidden`, without its screen,
  -- which the host may no longer see. Checked at every event rather than on
  -- setting_changed alone, so that however the setting changed, no job runs on: not even to
  -- the terminate that ends a timed-out job (unwind), since its program might go on past it,
  -- so a shell.run stopped this way stays on the shell's stack of running programs.
  local function onEvent(event, ...)
    if next(jobs) ~= nil then
      local why = deps.withdrawn();
      if why ~= nil then
        local running = {};
        for _, job in pairs(jobs) do
          running[#running + 1] = job;
        end
        for _, job in ipairs(running) do
          finish(job, false, nil, { code = codec.ERR_FORBIDDEN, message = job.kind .. " was stopped while it ran: " .. why });
        end
        return;
      end
    end
    if event == "timer" and jobs[(...)] ~= nil then
      local job = jobs[(...)];
      finish(job, false, nil, timeoutError(job));
      unwind(job);
      return;
    end
    if WITHHELD_EVENTS[event] then
      return;
    end
    local waiting = {};
    for _, job in pairs(jobs) do
      if job.filter == nil or job.filter == event then
        waiting[#waiting + 1] = job;
      end
    end
    for _, job in ipairs(waiting) do
      if jobs[job.timer] == job then
        resume(job, event, ...);
      end
    end
  end

  -- Ends every job without answering (the daemon is stopping).
  local function stop()
    local running = jobs;
    jobs = {};
    for timer, job in pairs(running) do
      osApi.cancelTimer(timer);
      unwind(job);
    end
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
  WITHHELD_EVENTS = WITHHELD_EVENTS,
  POWER_OFF_SHUTDOWN = POWER_OFF_SHUTDOWN,
  POWER_OFF_REBOOT = POWER_OFF_REBOOT,
  newCapture = newCapture,
  compile = compile,
  newRunner = newRunner,
};
