-- Specs for /apis/libsandboxfiles: the fs.* requests against the computer's real fs, and
-- each failure answering fs_error with CC's own message, with no Lua position in front.

local lib = require('/apis/libsandboxfiles');

local DIR = "/spec-files";

local files = lib.newFiles({ fs = fs });

local function call(msgType, payload)
  local ok, result, err = files[msgType](payload);
  return ok, result, err;
end

local function expectFsError(msgType, payload, pattern)
  local ok, result, err = call(msgType, payload);
  expect(ok):eq(false);
  expect(result):eq(nil);
  expect(err.code):eq("fs_error");
  expect(err.message):str_match(pattern);
end

local function allBytes()
  local out = {};
  for byte = 0, 255 do
    out[#out + 1] = string.char(byte);
  end
  return table.concat(out);
end

local function fresh()
  if fs.exists(DIR) then
    fs.delete(DIR);
  end
  fs.makeDir(DIR);
end

describe("libsandboxfiles", function()
  describe("fs.write and fs.read", function()
    it("writes and reads back every byte value", function()
      fresh();
      local data = allBytes() .. allBytes();
      local ok, result = call("fs.write", { path = DIR .. "/bytes.bin", data = data });
      expect(ok):eq(true);
      expect(result):same({ size = 512 });
      ok, result = call("fs.read", { path = DIR .. "/bytes.bin" });
      expect(ok):eq(true);
      expect(result):same({ data = data, size = 512, eof = true });
    end);

    it("appends", function()
      fresh();
      call("fs.write", { path = DIR .. "/a.txt", data = "one" });
      local ok, result = call("fs.write", { path = DIR .. "/a.txt", data = "two", append = true });
      expect(ok):eq(true);
      expect(result.size):eq(6);
      expect(select(2, call("fs.read", { path = DIR .. "/a.txt" })).data):eq("onetwo");
    end);

    it("reads a window with offset and length, and says when it reached the end", function()
      fresh();
      call("fs.write", { path = DIR .. "/w.txt", data = "0123456789" });
      local _, result = call("fs.read", { path = DIR .. "/w.txt", offset = 2, length = 3 });
      expect(result):same({ data = "234", size = 10, eof = false });
      _, result = call("fs.read", { path = DIR .. "/w.txt", offset = 8, length = 100 });
      expect(result):same({ data = "89", size = 10, eof = true });
      _, result = call("fs.read", { path = DIR .. "/w.txt", offset = 20 });
      expect(result):same({ data = "", size = 10, eof = true });
    end);

    it("stamps a read with the file's modification time when asked", function()
      fresh();
      call("fs.write", { path = DIR .. "/s.txt", data = "0123456789" });
      local ok, result = call("fs.read", { path = DIR .. "/s.txt", length = 4, stamp = true });
      expect(ok):eq(true);
      expect(result):same({ data = "0123", size = 10, eof = false, stamp = fs.attributes(DIR .. "/s.txt").modified });
      ok, result = call("fs.read", { path = DIR .. "/s.txt", length = 4 });
      expect(ok):eq(true);
      expect(result):same({ data = "0123", size = 10, eof = false });
      local _, _, err = call("fs.read", { path = DIR .. "/s.txt", stamp = "yes" });
      expect(err.message):eq("payload.stamp must be a boolean when given, got string");
    end);

    it("answers at most MAX_READ_BYTES per read, whatever length asks", function()
      fresh();
      local big = string.rep("\255", lib.MAX_READ_BYTES + 10);
      call("fs.write", { path = DIR .. "/big.bin", data = big });
      local _, result = call("fs.read", { path = DIR .. "/big.bin", length = 10 * lib.MAX_READ_BYTES });
      expect(#result.data):eq(lib.MAX_READ_BYTES);
      expect(result.eof):eq(false);
      -- Worst-case escaping (six bytes each) of a full chunk still fits a frame.
      local json = require('/apis/libsandboxcodec').encodeFrame({
        event = "computer_response", messageId = "00000000-0000-0000-0000-000000000000",
        type = "fs.read", ok = true, payload = result,
      });
      expect(json):type("string");
    end);

    it("fails on a missing file", function()
      fresh();
      expectFsError("fs.read", { path = DIR .. "/nope" }, "^/spec%-files/nope: No such file$");
    end);

    it("fails on a directory where a file is expected", function()
      fresh();
      expectFsError("fs.read", { path = DIR }, "^/spec%-files: Not a file$");
      expectFsError("fs.write", { path = DIR, data = "x" }, "spec%-files: Cannot write to directory$");
    end);

    it("fails on read-only /rom", function()
      expectFsError("fs.write", { path = "/rom/new.lua", data = "x" }, "^/rom/new.lua: Access denied$");
      expectFsError("fs.delete", { path = "/rom/programs/shell.lua" }, "^/rom/programs/shell.lua: Access denied$");
      expectFsError("fs.makeDir", { path = "/rom/new" }, "^/rom/new: Access denied$");
    end);

    it("fails when the disk is full", function()
      fresh();
      local tooBig = string.rep("x", fs.getFreeSpace("/") + 1);
      expectFsError("fs.write", { path = DIR .. "/full.bin", data = tooBig }, "Out of space$");
    end);

    it("fails on a path escaping with ..", function()
      expectFsError("fs.read", { path = "../../etc/passwd" }, "Invalid Path$");
      expectFsError("fs.write", { path = "../x", data = "x" }, "Invalid Path$");
      expectFsError("fs.list", { path = ".." }, "^/%.%.: Invalid Path$");
    end);

    it("refuses a bad payload naming the field", function()
      local ok, _, err = call("fs.read", { path = 3 });
      expect(ok):eq(false);
      expect(err.code):eq("bad_payload");
      expect(err.message):str_match("payload.path must be a string");
      _, _, err = call("fs.read", { path = "x", offset = -1 });
      expect(err.message):str_match("payload.offset");
      _, _, err = call("fs.write", { path = "x" });
      expect(err.message):str_match("payload.data");
      _, _, err = call("fs.write", { path = "x", data = "", append = "yes" });
      expect(err.message):str_match("payload.append");
    end);
  end);

  describe("fs.list", function()
    it("lists names, kinds and sizes", function()
      fresh();
      call("fs.write", { path = DIR .. "/f.txt", data = "hello" });
      call("fs.makeDir", { path = DIR .. "/sub" });
      local ok, result = call("fs.list", { path = DIR });
      expect(ok):eq(true);
      expect(result.entries):same({
        { name = "f.txt", isDir = false, size = 5 },
        { name = "sub", isDir = true, size = 0 },
      });
    end);

    it("lists an empty directory as an empty array", function()
      fresh();
      local _, result = call("fs.list", { path = DIR });
      expect(textutils.serializeJSON(result)):eq('{"entries":[]}');
    end);

    it("fails on a missing directory and on a file", function()
      fresh();
      expectFsError("fs.list", { path = DIR .. "/nope" }, "^/spec%-files/nope: No such file$");
      call("fs.write", { path = DIR .. "/f", data = "" });
      expectFsError("fs.list", { path = DIR .. "/f" }, "Not a directory$");
    end);

    -- The host's look at what a path names lists the directory it is in, which may not be
    -- there (a put that makes its directories): with absentOk that is an answer, not an
    -- fs_error the gateway logs as a failed request. A file is still no directory.
    it("answers absent for a missing directory when asked with absentOk", function()
      fresh();
      local ok, result = call("fs.list", { path = DIR .. "/nope/deeper", absentOk = true });
      expect(ok):eq(true);
      expect(textutils.serializeJSON(result)):eq('{"absent":true,"entries":[]}');
      call("fs.write", { path = DIR .. "/f", data = "" });
      expectFsError("fs.list", { path = DIR .. "/f", absentOk = true }, "Not a directory$");
      local _, listed = call("fs.list", { path = DIR, absentOk = true });
      expect(listed.absent):eq(nil);
      expect(listed.entries):same({ { name = "f", isDir = false, size = 0 } });
      expectFsError("fs.list", { path = "..", absentOk = true }, "^/%.%.: Invalid Path$");
      local _, _, err = call("fs.list", { path = DIR, absentOk = "yes" });
      expect(err.message):str_match("payload.absentOk");
    end);

    -- CC's Cobalt places an error a native function raises at the nearest Lua code: under
    -- pcall(fs.list, ...) the library's line that called pcall (fakecraft too: the failures
    -- above go through it). A stand-in fs raises one such, and one placed elsewhere.
    it("answers CC's message without the library's position that CC puts in front", function()
      local libSource = debug.getinfo(lib.newFiles, "S").short_src;
      local likeCC = setmetatable({
        list = function(path) error(libSource .. ":57: /" .. path .. ": Not a directory", 0); end,
        makeDir = function() error("/programs/other.lua:3: kept as it is", 0); end,
      }, { __index = fs });
      local answers = lib.newFiles({ fs = likeCC });
      local ok, result, err = answers["fs.list"]({ path = "x" });
      expect({ ok, result, err }):same({ false, nil, { code = "fs_error", message = "/x: Not a directory" } });
      err = select(3, answers["fs.makeDir"]({ path = "y" }));
      expect(err):same({ code = "fs_error", message = "/programs/other.lua:3: kept as it is" });
    end);
  end);

  describe("fs.delete, fs.move, fs.makeDir", function()
    it("moves, makes directories and deletes", function()
      fresh();
      call("fs.write", { path = DIR .. "/a", data = "A" });
      expect(call("fs.move", { from = DIR .. "/a", to = DIR .. "/b" })):eq(true);
      expect(fs.exists(DIR .. "/a")):eq(false);
      expect(fs.exists(DIR .. "/b")):eq(true);
      expect(call("fs.makeDir", { path = DIR .. "/d/e" })):eq(true);
      expect(fs.isDir(DIR .. "/d/e")):eq(true);
      local ok, result = call("fs.delete", { path = DIR .. "/b" });
      expect(ok):eq(true);
      expect(result):same({});
      expect(fs.exists(DIR .. "/b")):eq(false);
    end);

    it("fails as CC does", function()
      fresh();
      expectFsError("fs.move", { from = DIR .. "/none", to = DIR .. "/x" }, "^No such file$");
      call("fs.write", { path = DIR .. "/a", data = "A" });
      call("fs.write", { path = DIR .. "/b", data = "B" });
      -- CC's fs.move names no path in its refusals.
      expectFsError("fs.move", { from = DIR .. "/a", to = DIR .. "/b" }, "^File exists$");
      expectFsError("fs.makeDir", { path = DIR .. "/a" }, "^/spec%-files/a: File exists$");
      expectFsError("fs.delete", { path = DIR .. "/none" }, "No such file$");
      -- The path CC looked at: fs.combine keeps the * and ? that fs.exists drops.
      expectFsError("fs.delete", { path = DIR .. "/none?*" }, "^/spec%-files/none: No such file$");
    end);

    it("replaces a file with overwrite, and nothing else", function()
      fresh();
      call("fs.write", { path = DIR .. "/new", data = "NEW" });
      call("fs.write", { path = DIR .. "/old", data = "OLD" });
      expect(call("fs.move", { from = DIR .. "/new", to = DIR .. "/old", overwrite = true })):eq(true);
      expect(fs.exists(DIR .. "/new")):eq(false);
      local h = fs.open(DIR .. "/old", "rb");
      expect(h.readAll()):eq("NEW");
      h.close();
      -- A missing source keeps the target.
      expectFsError("fs.move", { from = DIR .. "/none", to = DIR .. "/old", overwrite = true }, "^No such file$");
      expect(fs.exists(DIR .. "/old")):eq(true);
      -- A directory is never deleted to make room.
      fs.makeDir(DIR .. "/d");
      call("fs.write", { path = DIR .. "/d/keep", data = "K" });
      expectFsError("fs.move", { from = DIR .. "/old", to = DIR .. "/d", overwrite = true },
        "^/spec%-files/d: Cannot write to directory$");
      expect(fs.exists(DIR .. "/d/keep")):eq(true);
      -- To a free name it is a plain move.
      expect(call("fs.move", { from = DIR .. "/old", to = DIR .. "/free", overwrite = true })):eq(true);
      local ok, _, err = call("fs.move", { from = DIR .. "/free", to = DIR .. "/x", overwrite = "yes" });
      expect(ok):eq(false);
      expect(err.code):eq("bad_payload");
      expect(err.message):str_match("payload.overwrite");
    end);

    it("keeps the target when the move cannot succeed", function()
      fresh();
      local function content(path)
        local h = fs.open(path, "rb");
        local data = h.readAll();
        h.close();
        return data;
      end
      call("fs.write", { path = DIR .. "/a", data = "A" });
      -- Onto itself, in any spelling: CC's own refusal, and the file stays.
      expectFsError("fs.move", { from = DIR .. "/a", to = DIR .. "/a", overwrite = true }, "^File exists$");
      expectFsError("fs.move", { from = DIR .. "/a", to = DIR .. "/d/../a/", overwrite = true }, "^File exists$");
      expect(content(DIR .. "/a")):eq("A");
      -- From the read-only ROM.
      local rom = "/rom/" .. fs.list("/rom")[1];
      expectFsError("fs.move", { from = rom, to = DIR .. "/a", overwrite = true }, "^Access denied$");
      expect(content(DIR .. "/a")):eq("A");
      -- Into itself: a directory onto a file inside it.
      fs.makeDir(DIR .. "/d");
      call("fs.write", { path = DIR .. "/d/c", data = "C" });
      expectFsError("fs.move", { from = DIR .. "/d", to = DIR .. "/d/c", overwrite = true }, "^File exists$");
      expect(content(DIR .. "/d/c")):eq("C");
    end);

    it("refuses missing fields", function()
      local ok, _, err = call("fs.move", { from = "a" });
      expect(ok):eq(false);
      expect(err.code):eq("bad_payload");
      expect(err.message):str_match("payload.to");
    end);
  end);
end);
