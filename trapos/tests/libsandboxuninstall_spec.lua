-- Specs for /apis/libsandboxuninstall: the uninstall `sandbox uninstall` and the installer run,
-- on the test computer's own drive, in a directory of its own (the record and the hook at
-- their real places, removed after each spec).

local lib = require('/apis/libsandboxuninstall');
local layout = require('/apis/libsandboxlayout');
local advice = require('/apis/libsandboxadvice');
local config = require('/apis/libsandboxsettings');

local DIR = "uninstallspec"; -- the package's files in these specs, without the leading /

-- Whether the setting name is set: another spec may have defined it, with a default that
-- settings.get returns when it is not.
local NOT_SET = {};
local function isSet(name)
  return settings.get(name, NOT_SET) ~= NOT_SET;
end

-- Writes text to path.
local function put(path, text)
  local handle = fs.open(path, "w");
  handle.write(text);
  handle.close();
end

-- An uninstaller whose lines go to printed (red ones marked "!"), saving settings with saved's
-- answer (true unless false).
local function newUninstaller(saved)
  local printed = {};
  local uninstaller = lib.new({
    print = function(line) printed[#printed + 1] = line or ""; end,
    printError = function(line) printed[#printed + 1] = "!" .. line; end,
    layout = layout,
    settings = { SETTING_PASSWORD = config.SETTING_PASSWORD, save = function() return saved ~= false; end },
    advice = advice,
  });
  return uninstaller, printed;
end

-- A computer as the installer left it: two files of the package in DIR (which it made), the
-- hook at hook, the record naming them, and sandbox settings.
local function installed(hook)
  fs.makeDir("/" .. DIR);
  put("/" .. DIR .. "/a.lua", "return 1");
  put("/" .. DIR .. "/b.lua", "return 2");
  put(hook, "-- the hook");
  put(lib.MANIFEST, textutils.serialize({ version = "0.5.31", files = { DIR .. "/a.lua", DIR .. "/b.lua" }, hook = hook, dirs = { "/" .. DIR } }));
  settings.set("sandbox.url", "ws://127.0.0.1:4444/trapos/ws");
  settings.set("sandbox.ai_confirm", false);
end

describe("libsandboxuninstall", function()
  after_each(function()
    for _, path in ipairs({ "/" .. DIR, lib.MANIFEST, lib.HOOK, lib.HOOK_BESIDE, lib.HOOK_NEW, lib.GATEWAY_PROOFS }) do
      fs.delete(path);
    end
    if fs.isDir("/startup") and #fs.list("/startup") == 0 then
      fs.delete("/startup");
    end
    for _, name in ipairs(settings.getNames()) do
      if name:sub(1, 8) == "sandbox." then
        settings.unset(name);
      end
    end
  end);

  it("removes the recorded files, the hook, the record, the directory and every sandbox setting, and counts the files", function()
    installed(lib.HOOK);
    put("/" .. DIR .. "/b.lua" .. lib.NEW, "return 3"); -- beside its file: removed, not counted
    put(lib.GATEWAY_PROOFS, "{}"); -- the daemon's record of the gateways that proved themselves: removed, not counted
    local uninstaller, printed = newUninstaller();
    expect(uninstaller.uninstall()):eq(true);
    expect(printed):same({
      "Removed trapos-sandbox 0.5.31: 2 files, the startup hook /startup/00-sandbox.lua and the sandbox settings.",
      "Reboot to stop the daemon.",
    });
    for _, path in ipairs({ "/" .. DIR, lib.HOOK, lib.MANIFEST, lib.GATEWAY_PROOFS }) do
      expect(fs.exists(path)):eq(false);
    end
    expect(isSet("sandbox.url")):eq(false);
    expect(isSet("sandbox.ai_confirm")):eq(false);
  end);

  it("asks confirm with the installed version first, and removes nothing when it says no", function()
    installed(lib.HOOK);
    local uninstaller, printed = newUninstaller();
    local asked;
    expect(uninstaller.uninstall(nil, function(version) asked = version; return false; end)):eq(false);
    expect(asked):eq("0.5.31");
    expect(printed):same({ "Nothing removed." });
    for _, path in ipairs({ "/" .. DIR .. "/b.lua", lib.HOOK, lib.MANIFEST }) do
      expect(fs.exists(path)):eq(true);
    end
    expect(isSet("sandbox.url")):eq(true);
    expect(uninstaller.uninstall(nil, function() return true; end)):eq(true);
    expect(fs.exists(lib.MANIFEST)):eq(false);
  end);

  it("keeps a directory that holds a file of the player's", function()
    installed(lib.HOOK);
    put("/" .. DIR .. "/mine.lua", "return 'mine'");
    local uninstaller = newUninstaller();
    uninstaller.uninstall();
    expect(fs.list("/" .. DIR)):same({ "mine.lua" });
  end);

  it("names the line to take out of the player's startup file for the hook beside it", function()
    installed(lib.HOOK_BESIDE);
    local uninstaller, printed = newUninstaller();
    uninstaller.uninstall();
    expect(printed[1]):eq("Removed trapos-sandbox 0.5.31: 2 files, the startup hook /sandbox-startup.lua and the sandbox settings.");
    expect(printed[2]):eq("Also remove this line from your startup file:");
    -- on rows of their own, two on a pocket computer's 26 columns
    expect((table.concat(printed, "", 3, #printed - 1):gsub("%s", ""))):eq('shell.run("/sandbox-startup.lua")');
  end);

  it("names the host's command that revokes the computer's own credential", function()
    installed(lib.HOOK);
    settings.set(config.SETTING_PASSWORD, advice.CREDENTIAL_PREFIX .. "yaktoatevomn6_s3cret");
    local uninstaller, printed = newUninstaller();
    uninstaller.uninstall();
    expect(printed[2]):eq("This computer's credential stays valid in its account: to link the computer again, first revoke it on the host:");
    -- on rows of their own, continued with \ on a pocket computer's 26 columns
    expect((table.concat(printed, " ", 3, #printed - 1):gsub("[%s\\]+", " "))):str_match("^ ?trap%-sandbox credentials revoke yaktoatevomn6$");
    expect(isSet(config.SETTING_PASSWORD)):eq(false);
  end);

  it("names no credential to revoke when the daemon heard the gateway revoked it already", function()
    installed(lib.HOOK);
    settings.set(config.SETTING_PASSWORD, advice.CREDENTIAL_PREFIX .. "yaktoatevomn6_s3cret");
    local uninstaller, printed = newUninstaller();
    -- The daemon, beside the uninstall, answers its status request as a revoked one does.
    parallel.waitForAny(uninstaller.uninstall, function()
      local _, replyId = os.pullEvent("trapos_sandbox_status_request");
      os.queueEvent("trapos_sandbox_status", replyId, { state = "revoked", lastError = "revoked: this computer's credential was revoked" });
      os.pullEvent("never");
    end);
    expect(printed[1]):str_match("^Removed trapos%-sandbox 0%.5%.31: 2 files");
    expect(printed[2]):eq("Reboot to stop the daemon.");
    expect(settings.get(config.SETTING_PASSWORD, nil) ~= advice.CREDENTIAL_PREFIX .. "yaktoatevomn6_s3cret"):eq(true);
  end);

  it("says when .settings could not be saved", function()
    installed(lib.HOOK);
    local uninstaller, printed = newUninstaller(false);
    uninstaller.uninstall();
    expect(printed[1]):eq("!.settings could not be saved: the sandbox settings are back at the next boot; free some space, then run the uninstall again.");
  end);

  it("removes what a stopped first install left beside the paths it is given", function()
    fs.makeDir("/" .. DIR);
    put("/" .. DIR .. "/a.lua" .. lib.NEW, "return 1");
    put(lib.HOOK_NEW, "-- the hook");
    local uninstaller, printed = newUninstaller();
    expect(uninstaller.uninstall({ DIR .. "/a.lua", DIR .. "/b.lua" })):eq(true);
    expect(printed):same({ "Removed 2 files that a stopped install had left." });
    expect(fs.exists("/" .. DIR)):eq(false);
    expect(fs.exists(lib.HOOK_NEW)):eq(false);
  end);

  it("removes what a stopped first install left beside the package's files when given none, as sandbox uninstall", function()
    -- sandbox uninstall gave no paths: it said nothing was installed, and left a stopped first
    -- install's files where the install line's uninstall removed them.
    local left = { "/apis/libsandboxscreen.lua" .. lib.NEW, "/programs/ai.lua" .. lib.NEW, "/help/sandbox.txt" .. lib.NEW };
    local players = { "/apis/mine.lua" .. lib.NEW, "/apis/libsandboxscreen.lua.old" };
    for _, path in ipairs(left) do
      put(path, "-- the installer's");
    end
    for _, path in ipairs(players) do
      put(path, "-- the player's");
    end
    local uninstaller, printed = newUninstaller();
    local ok, err = pcall(uninstaller.uninstall);
    local kept = {};
    for _, path in ipairs(players) do
      kept[#kept + 1] = fs.exists(path);
      fs.delete(path);
    end
    for _, path in ipairs(left) do
      fs.delete(path);
    end
    expect({ ok, err }):same({ true, true });
    expect(printed):same({ "Removed 3 files that a stopped install had left." });
    expect(kept):same({ true, true });
    expect({ fs.exists("/apis/libsandboxscreen.lua"), fs.exists("/programs/ai.lua"), fs.exists("/help/sandbox.txt") })
      :same({ true, true, true });
  end);

  it("removes nothing without a record, and says so", function()
    local uninstaller, printed = newUninstaller();
    expect(uninstaller.uninstall()):eq(true);
    expect(printed):same({ "trapos-sandbox was not installed by the gateway's installer: nothing to remove." });
  end);
end);
