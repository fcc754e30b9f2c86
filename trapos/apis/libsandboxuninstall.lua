-- libsandboxuninstall: where the gateway's installer puts what is not a file of the package
-- (its record, the startup hook, the names it writes beside them), and the uninstall that
-- takes the package away again. One home for both: the installer loads it from its
-- SOURCE.uninstall (the gateway sends this file along, as it sends libsandboxlayout), and
-- `sandbox uninstall` from the computer's drive, which needs no gateway. Before it, the
-- installer kept a copy of itself on the computer for that (OLD_INSTALLER_COPY, 80 KB of a
-- drive of 1 MB).
--
-- It requires nothing of the package: the installer runs it before the package is on the
-- computer, and `sandbox uninstall` runs it before the client's libraries load, so that a
-- client an install left half-swapped in is removed all the same. The package lists this file
-- before programs/sandbox.lua, and the installer swaps the files in in that order: once the
-- command is in its place, so is this file.

local expect = require('cc.expect').expect;

local MANIFEST = "/.trapos-sandbox";       -- what the installer put on the computer
local HOOK = "/startup/00-sandbox.lua";    -- sorts first in /startup/ (see the hook's comment)
local HOOK_BESIDE = "/sandbox-startup.lua"; -- the hook when /startup is a file of the player's
local NEW = ".new";                        -- suffix of a downloaded file not yet swapped in
local HOOK_NEW = "/.trapos-sandbox-hook.new"; -- the hook before it is swapped in
-- Where a /startup file of the player's goes when they agree: in /startup/, sorted after HOOK,
-- which runs it beside the daemon. Its undo, `mv startup/startup.lua /`, fits a pocket
-- computer's 26 columns.
local MOVED_STARTUP = "/startup/startup.lua";
-- Where earlier installers kept /startup while /startup/ was made, a hidden name CC never
-- runs at boot: a computer stopped then still has it there (finishStoppedMove).
local STARTUP_MOVING = "/.trapos-sandbox-startup.moving";
-- The copy of itself the installer of 0.5.29 and 0.5.30 kept on the computer (its uninstall,
-- `sandbox-install uninstall`, needed no gateway), recorded as the manifest's installer. An
-- install removes it, the uninstall too.
local OLD_INSTALLER_COPY = "/programs/sandbox-install.lua";
-- The daemon's record of the gateways that proved themselves (libsandboxproof): not the
-- installer's, but like its record not a file of the package, and gone with it.
local GATEWAY_PROOFS = "/.trapos-sandbox-gateways";

local SETTINGS_PREFIX = "sandbox."; -- every setting of the package's, which uninstall removes

-- The package's install paths, without the leading / (packages/trapos-sandbox/ccpm.json's
-- files, in its order: tests/packages holds this list to it). The installer gives its own to
-- uninstall; `sandbox uninstall` has no record after a stopped first install, and looks beside
-- these for the files it left (<path>.new), which are the installer's by their names.
local PACKAGE_FILES = {
  "apis/libsandbox.lua",
  "apis/libsandboxcodec.lua",
  "apis/libsandboxsettings.lua",
  "apis/libsandboxevents.lua",
  "apis/libsandboxdaemon.lua",
  "apis/libsandboxversion.lua",
  "apis/libsandboxadvice.lua",
  "apis/libsandboxrequests.lua",
  "apis/libsandboxfiles.lua",
  "apis/libsandboxexec.lua",
  "apis/libsandboxprotected.lua",
  "apis/libsandboxlog.lua",
  "apis/libsandboxserve.lua",
  "apis/libsandboxai.lua",
  "apis/libsandboxscreen.lua",
  "apis/libsandboxlink.lua",
  "apis/libsandboxlayout.lua",
  "apis/libsandboxuninstall.lua",
  "apis/libsandboxproof.lua",
  "servers/sandbox.lua",
  "programs/sandbox.lua",
  "programs/ai.lua",
  "help/sandbox.txt",
  "help/ai.txt",
};

-- The installer's record: its version, files (install paths, without the leading /), hook
-- and dirs (the directories it made); nil when there is none, or it is not one.
local function readManifest()
  if not fs.exists(MANIFEST) then
    return nil;
  end
  local handle = fs.open(MANIFEST, "r");
  if handle == nil then
    return nil;
  end
  local manifest = textutils.unserialize(handle.readAll() or "");
  handle.close();
  if type(manifest) ~= "table" or type(manifest.files) ~= "table" then
    return nil;
  end
  manifest.dirs = type(manifest.dirs) == "table" and manifest.dirs or {};
  return manifest;
end

-- Removes each of dirs that is empty, the deepest (the last noted) first.
local function removeEmptyDirs(dirs)
  for i = #dirs, 1, -1 do
    local d = dirs[i];
    if fs.isDir(d) and #fs.list(d) == 0 then
      fs.delete(d);
    end
  end
end

-- A name at the root, not yet taken, for a program of the player's that cannot go back to
-- its place: ls shows it (a name beginning with "." it hides) and CC never runs it at boot.
local function freeOldName()
  local path, n = "/startup.old", 1;
  while fs.exists(path) do
    n = n + 1;
    path = "/startup.old." .. n;
  end
  return path;
end

-- The running daemon's status, asked as sandbox status asks it: the daemon answers from its
-- event loop at once. The wait is 3 s at most, as a computer on a busy server runs its events
-- late; nil when it runs out (no daemon runs), which each caller reads as the answer that is
-- never wrong. (The event names are libsandboxevents', which this file cannot require.)
local function daemonStatus()
  local t = os.startTimer(3);
  os.queueEvent("trapos_sandbox_status_request", t);
  repeat
    local e, a, b = os.pullEventRaw();
    if e == "trapos_sandbox_status" and a == t then
      return type(b) == "table" and b or nil;
    end
  until e == "terminate" or e == "timer" and a == t
  return nil;
end

-- The functions that print, with out's: print and printError (the caller's, laid out for the
-- screen), and the package's rules they use: layout (libsandboxlayout), settings
-- (libsandboxsettings) and advice (libsandboxadvice).
local function new(out)
  expect(1, out, "table");
  local print, printError = out.print, out.printError;

  -- A computer stopped during an older installer's move of /startup (its chunk unloaded, the
  -- server stopped) left the player's program at STARTUP_MOVING, a hidden name CC never runs
  -- at boot. The hook cannot see it there: it is not in /startup/ yet, and no startup file
  -- names the one beside. So each run of the install line (uninstall too) looks first, and
  -- finishes the move the player agreed to; when /startup or MOVED_STARTUP is another program
  -- by then, the moved one goes to a free name of its own (freeOldName), and on a drive too
  -- full for /startup/ back to /startup. Nothing is overwritten. Says what it did in one
  -- line; true when the move is finished.
  local function finishStoppedMove()
    if not fs.exists(STARTUP_MOVING) then
      return false;
    end
    local stopped = "An install stopped while it moved /startup";
    if not fs.exists("/startup") then
      pcall(fs.makeDir, "/startup"); -- a directory costs space: on a full drive it fails
    end
    if not fs.exists("/startup") then
      fs.move(STARTUP_MOVING, "/startup");
      print(stopped .. ": it is back, the drive has no room for /startup/.");
      return false;
    end
    if fs.isDir("/startup") and not fs.exists(MOVED_STARTUP) then
      fs.move(STARTUP_MOVING, MOVED_STARTUP);
      print(stopped .. ": finished moving it to " .. MOVED_STARTUP .. ".");
      return true;
    end
    local taken = fs.isDir("/startup") and (", and " .. MOVED_STARTUP .. " is") or ", which is";
    local old = freeOldName();
    fs.move(STARTUP_MOVING, old);
    print(stopped .. taken .. " another program now: the one it moved is at " .. old .. ".");
    return false;
  end

  -- The line of a startup file of the player's that runs the hook beside it (HOOK_BESIDE),
  -- indented, on rows of its own. A pocket computer's 26 columns broke it mid-name
  -- ("/sandbox-star" / "tup.lua"), and inside a sentence mid-call ("shell" / ".run(..."):
  -- there it takes two rows that are Lua as two lines of the file, and as one typed together.
  local function printHookCall()
    local line = 'shell.run("' .. HOOK_BESIDE .. '")';
    if #line + 2 <= term.getSize() then
      print("  " .. line);
    else
      print("  shell.run(");
      print('  "' .. HOOK_BESIDE .. '")');
    end
  end

  -- Removes what a first install stopped before its record (the manifest) left: the package's
  -- files written beside their place (<file>.new, of paths, the package's install paths; the
  -- hook's), which are the installer's by their names, and the directories they were in once
  -- empty (a player's own file keeps its directory). Returns how many files it removed.
  local function removeStoppedInstall(paths)
    local removed, dirs = 0, {};
    for _, path in ipairs(paths) do
      local temp = "/" .. path .. NEW;
      if fs.exists(temp) and not fs.isDir(temp) then
        fs.delete(temp);
        removed = removed + 1;
      end
      local dir = fs.getDir(path);
      while dir ~= "" do
        table.insert(dirs, 1, "/" .. dir);
        dir = fs.getDir(dir);
      end
    end
    for _, temp in ipairs({ HOOK_NEW, OLD_INSTALLER_COPY .. NEW }) do
      if fs.exists(temp) then
        fs.delete(temp);
        removed = removed + 1;
      end
    end
    if removed > 0 then
      removeEmptyDirs(dirs);
    end
    return removed;
  end

  -- Removes the package as the manifest names it: its files (and any beside them), the hook,
  -- the record, the directories the installer made once empty, and every sandbox.* setting;
  -- says what it removed, and what the player has left to do. Without a manifest, the files a
  -- stopped first install left beside paths (the package's install paths, as the installer
  -- gives them; nil: PACKAGE_FILES, this client's own, for `sandbox uninstall`). confirm, when
  -- given, is asked with the installed version before anything is removed: `sandbox
  -- uninstall` is two words (one with completion) where the install line's is typed out whole,
  -- and it takes the computer's settings and credential with it. False from it removes nothing.
  local function uninstall(paths, confirm)
    expect(1, paths, "table", "nil");
    expect(2, confirm, "function", "nil");
    finishStoppedMove();
    local manifest = readManifest();
    if manifest ~= nil and confirm ~= nil and not confirm(tostring(manifest.version)) then
      print("Nothing removed.");
      return false;
    end
    if manifest == nil then
      local removed = removeStoppedInstall(paths or PACKAGE_FILES);
      if removed > 0 then
        print("Removed " .. removed .. (removed == 1 and " file" or " files") .. " that a stopped install had left.");
      else
        print("trapos-sandbox was not installed by the gateway's installer: nothing to remove.");
      end
      return true;
    end
    local removed = 0;
    for _, path in ipairs(manifest.files) do
      for _, p in ipairs({ "/" .. path, "/" .. path .. NEW }) do
        if fs.exists(p) then
          fs.delete(p);
          removed = removed + (p:sub(-#NEW) == NEW and 0 or 1);
        end
      end
    end
    local hook = manifest.hook;
    if hook ~= nil and fs.exists(hook) then
      fs.delete(hook);
    end
    -- The installer's copy an older install kept is counted with the package's files, as the
    -- temporary ones beside them are not.
    for _, p in ipairs({ HOOK_NEW, OLD_INSTALLER_COPY, OLD_INSTALLER_COPY .. NEW, GATEWAY_PROOFS, GATEWAY_PROOFS .. NEW }) do
      if fs.exists(p) then
        fs.delete(p);
        removed = removed + (p == OLD_INSTALLER_COPY and 1 or 0);
      end
    end
    fs.delete(MANIFEST);
    removeEmptyDirs(manifest.dirs);
    -- The id of the computer's own credential (tsc_<id>_<secret>), before its setting goes: the
    -- account holds it on after the uninstall, and refuses a new link of this computer id until
    -- it is revoked, which nothing told a player who reinstalled and ran sandbox link.
    local password = settings.get(out.settings.SETTING_PASSWORD);
    local credentialId = type(password) == "string" and password:match("^" .. out.advice.CREDENTIAL_PREFIX .. "(%w+)_[^_]+$");
    -- One the gateway revoked already (the daemon heard so: closed 4003, or its hello refused)
    -- is in no account: revoking it again would be needless, and the line said it stayed valid.
    -- Asked before the settings go, which restart the daemon and clear what it heard.
    if credentialId then
      local status = daemonStatus();
      if status ~= nil and (status.state == "revoked" or out.advice.revoked(status.lastError)) then
        credentialId = nil;
      end
    end
    -- Every sandbox.* setting, not only those the installer sets: the client defines more
    -- (sandbox.ai_confirm, from sandbox setup), and a later client may add others.
    for _, name in ipairs(settings.getNames()) do
      if name:sub(1, #SETTINGS_PREFIX) == SETTINGS_PREFIX then
        settings.unset(name);
      end
    end
    if not out.settings.save() then
      printError(".settings could not be saved: the sandbox settings are back at the next boot; free some space, then run the uninstall again.");
    end
    print("Removed trapos-sandbox " .. tostring(manifest.version) .. ": " .. removed .. " files"
      .. (hook and (", the startup hook " .. hook) or "") .. " and the sandbox settings.");
    if hook == HOOK_BESIDE then
      print("Also remove this line from your startup file:");
      printHookCall();
    end
    if credentialId then
      -- The command on rows of its own, as sandbox link's: in a sentence a pocket computer's
      -- 26 columns broke it anywhere.
      print("This computer's credential stays valid in its account: to link the computer again, first revoke it on the host:");
      for _, row in ipairs(out.layout.commandRows({ "trap-sandbox", "credentials", "revoke", credentialId }, (term.getSize()))) do
        print(row);
      end
    end
    print("Reboot to stop the daemon.");
    return true;
  end

  return {
    finishStoppedMove = finishStoppedMove,
    printHookCall = printHookCall,
    uninstall = uninstall,
  };
end

return {
  MANIFEST = MANIFEST,
  HOOK = HOOK,
  HOOK_BESIDE = HOOK_BESIDE,
  NEW = NEW,
  HOOK_NEW = HOOK_NEW,
  MOVED_STARTUP = MOVED_STARTUP,
  STARTUP_MOVING = STARTUP_MOVING,
  OLD_INSTALLER_COPY = OLD_INSTALLER_COPY,
  PACKAGE_FILES = PACKAGE_FILES,
  GATEWAY_PROOFS = GATEWAY_PROOFS,
  readManifest = readManifest,
  daemonStatus = daemonStatus,
  removeEmptyDirs = removeEmptyDirs,
  new = new,
};
