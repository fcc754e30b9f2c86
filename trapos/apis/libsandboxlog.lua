-- libsandboxlog: the sandbox daemon's log file. The daemon shares the screen with the
-- player's shell, so what goes wrong inside it (a failing handler, an answer it cannot send,
-- a gateway it drops) is written here and counted in `sandbox status`, never printed.
-- The file stays small on a 1 MB drive: past MAX_LOG_BYTES it becomes <path>.old (replacing
-- the one there), and at most LOG_LINES_PER_MINUTE lines are written a minute; the next
-- line written says how many were left out.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');

-- Where servers/sandbox.lua writes (a dot file: `ls` does not show it).
local LOG_PATH = "/.sandbox.log";
local MAX_LOG_BYTES = 8 * 1024;
local LOG_LINES_PER_MINUTE = 20;
-- The longest message a line keeps; the rest is cut, saying how long it was. Twice what the
-- daemon keeps of the gateway's text, so a fault it cut already is written whole.
local MAX_LINE_BYTES = 2 * codec.MAX_SHOWN_BYTES;
local MINUTE_MS = 60 * 1000;

-- A function that logs one message as a line. deps: fs, clock (epoch ms), and optionally
-- date (os.date), path (LOG_PATH) and maxBytes (MAX_LOG_BYTES). Writing never raises: a
-- full or read-only drive loses the line.
local function newFileLog(deps)
  expect(1, deps, "table");
  field(deps, "fs", "table");
  field(deps, "clock", "function");
  field(deps, "date", "function", "nil");
  field(deps, "path", "string", "nil");
  field(deps, "maxBytes", "number", "nil");
  local fsApi, clock, date = deps.fs, deps.clock, deps.date or os.date;
  local path = deps.path or LOG_PATH;
  local old = path .. ".old";
  local maxBytes = deps.maxBytes or MAX_LOG_BYTES;
  local windowStart, written, leftOut = nil, 0, 0;

  local function append(text)
    if fsApi.exists(path) and fsApi.getSize(path) + #text > maxBytes then
      if fsApi.exists(old) then
        fsApi.delete(old);
      end
      fsApi.move(path, old);
    end
    local handle = fsApi.open(path, "ab");
    if handle ~= nil then
      -- A full drive raises on write ("Out of space"): the file is closed all the same, or each
      -- line logged after would hold one more handle open.
      pcall(function() handle.write(text); end);
      handle.close();
    end
  end

  return function(message)
    local now = clock();
    if windowStart == nil or now - windowStart >= MINUTE_MS then
      windowStart, written = now, 0;
    end
    if written >= LOG_LINES_PER_MINUTE then
      leftOut = leftOut + 1;
      return;
    end
    written = written + 1;
    local stamp = date("!%Y-%m-%dT%H:%M:%SZ", math.floor(now / 1000));
    -- One line of bounded length: a message may quote the gateway, up to 128 KiB of it.
    local text = stamp .. " " .. codec.oneLine(tostring(message), MAX_LINE_BYTES) .. "\n";
    if leftOut > 0 then
      text = stamp .. " (" .. leftOut .. " more lines were not logged)\n" .. text;
      leftOut = 0;
    end
    pcall(append, text);
  end
end

return {
  LOG_PATH = LOG_PATH,
  MAX_LOG_BYTES = MAX_LOG_BYTES,
  LOG_LINES_PER_MINUTE = LOG_LINES_PER_MINUTE,
  MAX_LINE_BYTES = MAX_LINE_BYTES,
  newFileLog = newFileLog,
};
