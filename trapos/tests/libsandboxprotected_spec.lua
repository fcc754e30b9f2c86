-- Specs for /apis/libsandboxprotected: which file changes only sandbox.allow_exec allows,
-- with every path trick the host could use, read the way CC's own fs.combine reads them.

local lib = require('/apis/libsandboxprotected');

local function refused(msgType, payload)
  return lib.refusal(fs, msgType, payload);
end

local function expectRefused(msgType, payload, shows)
  local why = refused(msgType, payload);
  if why == nil then
    fail(msgType .. " " .. textutils.serialize(payload, { compact = true }) .. " was not refused");
  end
  expect(why):str_match("needs sandbox%.allow_exec");
  expect(why):str_match("set sandbox%.allow_exec true$");
  if shows ~= nil then
    expect(why):str_match("change " .. shows:gsub("[%.%*%-]", "%%%0") .. ", ");
  end
end

local function expectAllowed(msgType, payload)
  local why = refused(msgType, payload);
  if why ~= nil then
    fail(msgType .. " " .. textutils.serialize(payload, { compact = true }) .. " was refused: " .. why);
  end
end

-- The same file under every spelling CC (or the drive under it) reads as it.
local function spellings(path)
  local name = path:sub(2);
  return {
    path, name, "//" .. name, "/./" .. name, "/x/../" .. name, "/x/y/../../" .. name, "\\" .. name,
    "/" .. name:upper(), "/" .. name .. ".", "/" .. name .. " ", " /" .. name, "/" .. name .. " . .",
    "/" .. name .. "*", "/" .. name:sub(1, 2) .. "?" .. name:sub(3), "/" .. name .. "\t", "/" .. name .. ":",
    "/x/..*/" .. name, "/x/..?/" .. name,
    -- A name is cut at 255 bytes: whatever follows is lost, spaces before the cut then trimmed.
    "/" .. name .. string.rep(" ", 255 - #name:match("[^/]+$")) .. "tail",
  };
end

describe("libsandboxprotected", function()
  describe("refuses changes to", function()
    local cases = {
      { "/.settings", "/.settings" },
      { "/startup.lua", "/startup.lua" },
      { "/startup", "/startup" },
      { "/startup/00-sandbox.lua", "/startup" },
      { "/startup/deep/er.lua", "/startup" },
      { "/disk/startup.lua", "/disk*/startup.lua" },
      { "/disk2/startup", "/disk*/startup" },
      { "/disk3/startup/x.lua", "/disk*/startup" },
      { "/shell", "/shell" },
      { "/shell.lua", "/shell.lua" },
      { "/motd.lua", "/motd.lua" },
      { "/apis/libsandbox.lua", "/apis/libsandbox*" },
      { "/apis/libsandboxcodec.lua", "/apis/libsandbox*" },
      { "/apis/libsandboxcodec.lua.new", "/apis/libsandbox*" },
      { "/servers/sandbox.lua", "/servers/sandbox*" },
      { "/programs/sandbox.lua", "/programs/sandbox*" },
      -- The shell finds /programs/sandbox before /programs/sandbox.lua.
      { "/programs/sandbox", "/programs/sandbox*" },
      -- The ai command, which asks the player before the agent's changes.
      { "/programs/ai.lua", "/programs/ai.lua*" },
      { "/programs/ai.lua.new", "/programs/ai.lua*" },
      { "/programs/ai", "/programs/ai" },
      -- The page CC's help program shows for help sandbox, under each name it looks for.
      { "/help/sandbox.txt", "/help/sandbox*" },
      { "/help/sandbox.md", "/help/sandbox*" },
      { "/help/sandbox", "/help/sandbox*" },
      -- And the page for help ai.
      { "/help/ai.txt", "/help/ai.*" },
      { "/help/ai.txt.new", "/help/ai.*" },
      { "/help/ai.md", "/help/ai.*" },
      { "/help/ai", "/help/ai" },
      -- require('cc.expect') in /servers/sandbox.lua looks in /servers/cc/ before the ROM.
      { "/servers/cc/expect.lua", "/servers/cc" },
      { "/programs/cc/expect/init.lua", "/programs/cc" },
      { "/.trapos-sandbox", "/.trapos-sandbox*" },
      { "/.trapos-sandbox-hook.new", "/.trapos-sandbox*" },
      { "/sandbox-startup.lua", "/sandbox-startup.lua" },
    };
    for _, case in ipairs(cases) do
      local path, shows = case[1], case[2];
      it(path .. " by fs.write, in every spelling", function()
        for _, spelling in ipairs(spellings(path)) do
          expectRefused("fs.write", { path = spelling, data = "x" }, shows);
          -- CC's yield limit is wall time per resume: yield between spellings, so a slow
          -- machine (or -race) never adds nineteen requests up to it.
          os.queueEvent("spec_spelling_done");
          os.pullEvent("spec_spelling_done");
        end
      end);
    end

    it("a protected path by fs.delete, fs.makeDir and either end of fs.move", function()
      expectRefused("fs.delete", { path = "/STARTUP.lua" }, "/startup.lua");
      expectRefused("fs.makeDir", { path = "/startup" }, "/startup");
      expectRefused("fs.makeDir", { path = "/Startup/evil" }, "/startup");
      expectRefused("fs.makeDir", { path = "/startup.lua" }, "/startup.lua");
      expectRefused("fs.move", { from = "/.settings", to = "/old-settings" }, "/.settings");
      expectRefused("fs.move", { from = "/evil.lua", to = "/startup/evil.lua" }, "/startup");
      expectRefused("fs.move", { from = "/evil.lua", to = "/x/../STARTUP.LUA." }, "/startup.lua");
      -- Both ends are checked, whatever else the move is told (an overwrite flag included).
      expectRefused("fs.move", { from = "/a", to = "/servers/sandbox.lua", overwrite = true }, "/servers/sandbox*");
    end);

    it("a directory holding a protected path, deleted or moved away or into its place", function()
      expectRefused("fs.delete", { path = "/apis" }, "/apis/libsandbox*");
      expectRefused("fs.delete", { path = "/servers/" }, "/servers/sandbox*");
      expectRefused("fs.delete", { path = "/" }, "/.settings");
      expectRefused("fs.delete", { path = "/DISK2" }, "/disk*/startup");
      expectRefused("fs.move", { from = "/programs", to = "/old-programs" }, "/programs/sandbox*");
      expectRefused("fs.move", { from = "/mine", to = "/servers" }, "/servers/sandbox*");
    end);

    it("names a Windows drive may read as a protected one", function()
      -- 8.3 short names: SETTIN~1 is /.settings, LIBSAN~1.LUA one of /apis/libsandbox*.
      expectRefused("fs.write", { path = "/SETTIN~1", data = "x" });
      expectRefused("fs.write", { path = "/apis/LIBSAN~1.LUA", data = "x" });
      expectRefused("fs.write", { path = "/STARTU~1/x.lua", data = "x" });
      -- Dots and spaces only: CC keeps ". ." as a name; Windows drops all of it.
      expectRefused("fs.write", { path = "/. ./startup.lua", data = "x" });
      local why = refused("fs.write", { path = "/SETTIN~1", data = "x" });
      expect(why):str_match("8%.3 short name");
    end);

    it("says what the path is and why it needs exec", function()
      expect(refused("fs.write", { path = "/STARTUP.LUA", data = "x" })):eq(
        "fs.write of /STARTUP.LUA needs sandbox.allow_exec: it would change /startup.lua, a startup file (CC runs "
        .. "/startup, /startup.lua and every file in /startup/ at boot), and changing how the computer boots runs code; "
        .. "the owner can allow it with: set sandbox.allow_exec true");
      expect(refused("fs.move", { from = "/x", to = "/.settings" })):str_match("^fs%.move to /%.settings needs");
      expect(refused("fs.delete", { path = "/help" })):eq(
        "fs.delete of /help needs sandbox.allow_exec: it would change /help/sandbox*, one of the sandbox's own files "
        .. "(its page for help sandbox), and the player types what it says; the owner can allow it with: set sandbox.allow_exec true");
    end);

    it("gives each path the why that is true of it: the boot, a command, a load, the setting", function()
      local function why(path)
        return (refused("fs.write", { path = path, data = "x" }):match(", and (.-); the owner can allow it"));
      end
      for _, path in ipairs({ "/startup.lua", "/startup/x.lua", "/disk/startup", "/shell", "/motd.lua",
          "/servers/sandbox.lua", "/sandbox-startup.lua" }) do
        expect(why(path)):eq("changing how the computer boots runs code");
      end
      expect(why("/.settings")):eq("it holds sandbox.allow_exec itself");
      expect(why("/programs/sandbox.lua")):eq("typing sandbox runs it");
      expect(why("/programs/sandbox-install.lua")):eq("typing sandbox runs it");
      expect(why("/programs/ai.lua")):eq("typing ai runs it");
      expect(why("/programs/ai")):eq("typing ai runs it");
      expect(why("/apis/libsandboxcodec.lua")):eq("the daemon, sandbox and ai load it");
      expect(why("/servers/cc/expect.lua")):eq("a module put there runs in place of the ROM's");
      expect(why("/programs/cc/expect.lua")):eq("a module put there runs in place of the ROM's");
      expect(why("/.trapos-sandbox")):eq("the installer, the daemon and sandbox uninstall act on what it says");
    end);
  end);

  -- Paths put together from these pieces, at random (a fixed seed), the way a host would try
  -- them: separators, dot names, case, the characters CC drops or cuts at, and every level of
  -- the protected names.
  local PIECES = {
    "/", "/", "/", "\\", ".", "..", "...", " ", "*", "?", ":", "\"", "<", "|", "\t", "\0", "\127", "~1",
    "x", "startup", "STARTUP", "startup.lua", "Startup.Lua", ".settings", "disk", "disk2", "apis",
    "libsandbox.lua", "servers", "sandbox.lua", "programs", "ai", "ai.lua", "cc", "expect.lua",
    "shell", "motd.lua", ".trapos-sandbox", "sandbox-startup.lua",
  };
  local WRITES = 500;

  -- Every file and directory below dir, by its path, but inside a read-only one (rom, the
  -- package's own files here), where no write lands.
  local function entries(dir, out)
    for _, name in ipairs(fs.list(dir)) do
      local path = fs.combine(dir, name);
      out[path] = true;
      if fs.isDir(path) and not fs.isReadOnly(path) then
        entries(path, out);
      end
    end
    return out;
  end

  it("lets no write through that CC opens as a protected file, in paths made at random", function()
    local before = entries("/", {});
    -- Park and Miller's generator: the same paths on every run, whatever math.random is.
    local seed = 40;
    local function random(n)
      seed = seed * 16807 % 2147483647;
      return seed % n + 1;
    end
    local passed = 0;
    for i = 1, WRITES do
      local parts = {};
      for j = 1, random(6) do
        parts[j] = PIECES[random(#PIECES)];
      end
      local path = table.concat(parts);
      if refused("fs.write", { path = path, data = "x" }) == nil then
        local ok, handle = pcall(fs.open, path, "w");
        if ok and handle ~= nil then
          passed = passed + 1;
          handle.write("x");
          handle.close();
          -- What the write made, by the name the drive gave it, must be allowed under that name
          -- too; then it goes, with the directories the write made.
          local made = {};
          for madePath in pairs(entries("/", {})) do
            if not before[madePath] then
              made[#made + 1] = madePath;
            end
          end
          table.sort(made, function(a, b) return #a > #b; end);
          for _, madePath in ipairs(made) do
            if refused("fs.write", { path = "/" .. madePath, data = "x" }) ~= nil then
              fail(string.format("%q was let through, and wrote /%s", path, madePath));
            end
            fs.delete(madePath);
          end
        end
      end
      if i % 20 == 0 then
        -- CC's yield limit is wall time per resume (a slow machine, -race)
        os.queueEvent("spec_random_done");
        os.pullEvent("spec_random_done");
      end
    end
    -- the pieces reach the drive: a quarter of the paths at least are written
    expect(passed > WRITES / 4):eq(true);
  end);

  describe("allows", function()
    it("files elsewhere, and names that only look alike", function()
      for _, path in ipairs({
        "/notes.txt", "/startup.txt", "/startups/x.lua", "/x/startup.lua", "/x/.settings", "/my-startup",
        "/apis/libother.lua", "/apis/sandbox.lua", "/servers/other.lua", "/programs/other.lua", "/programs/ccx/y",
        "/programs/aim.lua", "/programs/air", "/ai.lua", "/help/base.txt", "/help.txt", "/x/help/sandbox.txt",
        "/help/aim.txt", "/help/air", "/x/help/ai.txt",
        "/disk/notes.txt", "/diskette/startup.lua", "/settings", "/.settings2", "/backup~x",
        "/docs/FOO~1.TXT", "/x/. ./y",
      }) do
        expectAllowed("fs.write", { path = path, data = "x" });
      end
    end);

    it("making the directories protected files live in, and moving other files", function()
      expectAllowed("fs.makeDir", { path = "/apis" });
      expectAllowed("fs.makeDir", { path = "/servers" });
      expectAllowed("fs.move", { from = "/a.txt", to = "/b.txt" });
      expectAllowed("fs.delete", { path = "/x/startup.lua" });
    end);

    it("paths above the root (CC answers Invalid Path itself), other types and non-string fields", function()
      expectAllowed("fs.write", { path = "/../startup.lua", data = "x" });
      expectAllowed("fs.read", { path = "/.settings" });
      expectAllowed("fs.list", { path = "/startup" });
      expectAllowed("fs.write", { path = 7, data = "x" });
      expectAllowed("ping", {});
    end);
  end);

  it("checks its arguments", function()
    expect.error(lib.refusal, nil, "fs.write", {}):eq("bad argument #1 (table expected, got nil)");
    expect.error(lib.refusal, fs, "fs.write", nil):eq("bad argument #3 (table expected, got nil)");
  end);
end);
