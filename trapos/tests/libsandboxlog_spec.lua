-- Specs for /apis/libsandboxlog: the daemon's log file, bounded in size and in lines a
-- minute, on the computer's real fs with a scripted clock.

local lib = require('/apis/libsandboxlog');

local DIR = "/spec-log";
local PATH = DIR .. "/sandbox.log";

local function read(path)
  local handle = fs.open(path, "rb");
  if handle == nil then
    return nil;
  end
  local text = handle.readAll();
  handle.close();
  return text;
end

local function lines(path)
  local out = {};
  for line in (read(path) or ""):gmatch("[^\n]+") do
    out[#out + 1] = line;
  end
  return out;
end

-- A log on a fresh directory; world.now is its clock (epoch ms).
local function newLog(opts)
  if fs.exists(DIR) then
    fs.delete(DIR);
  end
  fs.makeDir(DIR);
  local world = { now = 1700000000000 };
  world.log = lib.newFileLog({
    fs = fs, path = PATH, maxBytes = opts and opts.maxBytes,
    clock = function() return world.now; end,
  });
  return world;
end

describe("libsandboxlog", function()
  it("appends one stamped line per message", function()
    local world = newLog();
    world.log("first");
    world.now = world.now + 1500;
    world.log("second\nline");
    expect(lines(PATH)):same({ "2023-11-14T22:13:20Z first", "2023-11-14T22:13:21Z second line" });
  end);

  it("keeps a line short whatever the message quotes", function()
    local world = newLog();
    -- A fault quoting a gateway request's type of 70 000 bytes, lines in it.
    world.log("cannot answer " .. ("t"):rep(35000) .. "\n" .. ("t"):rep(35000));
    local got = lines(PATH);
    expect(#got):eq(1);
    expect(#got[1]):eq(#"2023-11-14T22:13:20Z " + lib.MAX_LINE_BYTES + #"...(cut, 70015 bytes)");
    expect(got[1]):str_match("%.%.%.%(cut, 70015 bytes%)$");
    expect(fs.getSize(PATH) < lib.MAX_LINE_BYTES * 2):eq(true);
  end);

  it("writes a message the daemon cut already whole", function()
    local world = newLog();
    local cut = require('/apis/libsandboxcodec').oneLine("cannot answer " .. ("t"):rep(70000));
    world.log(cut);
    expect(lines(PATH)):same({ "2023-11-14T22:13:20Z " .. cut });
  end);

  it("writes at most 20 lines a minute and says how many it left out", function()
    local world = newLog();
    for i = 1, lib.LOG_LINES_PER_MINUTE + 5 do
      world.log("flood " .. i);
    end
    expect(#lines(PATH)):eq(lib.LOG_LINES_PER_MINUTE);
    world.now = world.now + 60 * 1000;
    world.log("calm again");
    local got = lines(PATH);
    expect(#got):eq(lib.LOG_LINES_PER_MINUTE + 2);
    expect(got[#got - 1]):eq("2023-11-14T22:14:20Z (5 more lines were not logged)");
    expect(got[#got]):eq("2023-11-14T22:14:20Z calm again");
  end);

  it("moves a full file aside, keeping one old file", function()
    local world = newLog({ maxBytes = 100 });
    for i = 1, 9 do
      world.now = world.now + 60 * 1000;
      world.log(string.format("message %d %s", i, string.rep("x", 20)));
    end
    expect(fs.getSize(PATH) <= 100):eq(true);
    expect(fs.getSize(PATH .. ".old") <= 100):eq(true);
    local newest = lines(PATH);
    expect(newest[#newest]):str_match("message 9 ");
    expect(fs.list(DIR)):same({ "sandbox.log", "sandbox.log.old" });
  end);

  it("loses the line, not the daemon, on a drive it cannot write", function()
    local world = { now = 0 };
    local log = lib.newFileLog({
      fs = { exists = function() return false; end, open = function() error("/x: Access denied", 0); end },
      clock = function() return world.now; end,
    });
    log("nowhere to go");
  end);

  it("closes its file when a full drive refuses the line", function()
    local opened, closed = 0, 0;
    local log = lib.newFileLog({
      fs = {
        exists = function() return false; end,
        open = function()
          opened = opened + 1;
          return {
            write = function() error("Out of space", 0); end,
            close = function() closed = closed + 1; end,
          };
        end,
      },
      clock = function() return 0; end,
    });
    log("first");
    log("second");
    expect(opened):eq(2);
    expect(closed):eq(2);
  end);

  it("writes to /.sandbox.log by default", function()
    expect(lib.LOG_PATH):eq("/.sandbox.log");
  end);
end);
