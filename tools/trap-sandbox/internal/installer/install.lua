-- The trapos-sandbox installer. The gateway serves it at /trapos/install with a SOURCE table
-- in front (where it was served from, the package's version and files, the startup hook), so
-- a player types one line on a computer:
--
--   wget run http://<gateway>:4444/trapos/install [password]
--   wget run http://<gateway>:4444/trapos/install uninstall
--
-- `wget run` passes the words after the URL as `...`. Installing again upgrades in place and
-- keeps the settings. New files are written beside the old ones and swapped in only when every
-- one has arrived, so a failed download leaves the old install working.

local MANIFEST = "/.trapos-sandbox";       -- what this installer put on the computer
local HOOK = "/startup/00-sandbox.lua";    -- sorts first in /startup/ (see the hook's comment)
local HOOK_BESIDE = "/sandbox-startup.lua"; -- the hook when /startup is a file of the player's
local NEW = ".new";                        -- suffix of a downloaded file not yet swapped in
local HOOK_NEW = "/.trapos-sandbox-hook.new"; -- the hook before it is swapped in

local SETTING_URL = "sandbox.url";
local SETTING_PASSWORD = "sandbox.password";
local SETTING_ALLOW_FILES = "sandbox.allow_files";
local SETTING_ALLOW_EXEC = "sandbox.allow_exec";

local args = { ... };

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

local function writeFile(path, bytes)
  local dir = fs.getDir(path);
  if dir ~= "" and not fs.exists(dir) then
    fs.makeDir(dir);
  end
  local handle, err = fs.open(path, "wb");
  if handle == nil then
    return false, err or "cannot open";
  end
  handle.write(bytes);
  handle.close();
  return true;
end

local function download(path)
  local url = SOURCE.files .. path;
  local response, err = http.get(url, nil, true);
  if response == nil then
    return nil, (err or "no answer") .. " (" .. url .. ")";
  end
  local body = response.readAll();
  response.close();
  return body or "";
end

-- Moves temp over path (fs.move refuses to overwrite).
local function swapIn(path, temp)
  if fs.exists(path) then
    fs.delete(path);
  end
  fs.move(temp, path);
end

-- TrapOS starts a package's autostart servers itself; its package manager marks it.
local function isTrapOS()
  return shell ~= nil and shell.resolveProgram("ccpm") ~= nil;
end

-- Records each directory a path needs that does not exist yet (to remove it on uninstall).
local function noteNewDirs(path, dirs)
  local dir = fs.getDir(path);
  local missing = {};
  while dir ~= "" and not fs.exists("/" .. dir) do
    table.insert(missing, 1, "/" .. dir);
    dir = fs.getDir(dir);
  end
  for _, d in ipairs(missing) do
    local known = false;
    for _, have in ipairs(dirs) do
      known = known or have == d;
    end
    if not known then
      dirs[#dirs + 1] = d;
    end
  end
end

local function removeEmptyDirs(dirs)
  for i = #dirs, 1, -1 do
    local d = dirs[i];
    if fs.isDir(d) and #fs.list(d) == 0 then
      fs.delete(d);
    end
  end
end

-- Where the hook goes. When /startup/ cannot hold it without touching a file of the player's,
-- it goes to HOOK_BESIDE and the second result says which startup file must run it.
local function hookPlace(old)
  if fs.exists("/startup") and not fs.isDir("/startup") then
    return HOOK_BESIDE, "/startup";
  end
  if fs.exists(HOOK) and not (old and old.hook == HOOK) then
    return HOOK_BESIDE, "/startup.lua";
  end
  return HOOK, nil;
end

local function savePassword(old)
  local password = args[1];
  if password == nil then
    local current = settings.get(SETTING_PASSWORD);
    if type(current) == "number" then
      -- `set sandbox.password 1234` stored a number; the daemon needs the string.
      settings.set(SETTING_PASSWORD, tostring(current));
      return;
    elseif current ~= nil or old ~= nil then
      return; -- set already, or left empty at the first install: an upgrade asks nothing
    end
    write("Gateway password (empty if it has none): ");
    password = read("*");
  end
  if password == "" then
    settings.unset(SETTING_PASSWORD);
  else
    settings.set(SETTING_PASSWORD, password);
  end
end

-- Asks the player once, on a first install run without arguments, whether the gateway's host
-- may work with this computer (docs/capabilities.md); the default is no. Run with arguments,
-- as an upgrade, or when the settings already say, nothing is asked and they stay as they are
-- (no files, no exec by default).
local function askPermissions(old)
  if old ~= nil or args[1] ~= nil or settings.get(SETTING_ALLOW_FILES) ~= nil or settings.get(SETTING_ALLOW_EXEC) ~= nil then
    return;
  end
  -- One print, so CC wraps it at the screen's width (a pocket computer's is 26).
  print("The gateway's host (e.g. an AI agent) can read and write this computer's files and run Lua and programs on it.");
  write("Allow it? [y/N] ");
  local answer = read() or "";
  if answer:match("^%s*[yY]") then
    settings.set(SETTING_ALLOW_FILES, "write");
    settings.set(SETTING_ALLOW_EXEC, true);
    print("Allowed. Undo with: set " .. SETTING_ALLOW_FILES .. " none; set " .. SETTING_ALLOW_EXEC .. " false");
  else
    settings.set(SETTING_ALLOW_FILES, "none");
    settings.set(SETTING_ALLOW_EXEC, false);
    print("Not allowed. Change it with: set " .. SETTING_ALLOW_FILES .. " write; set " .. SETTING_ALLOW_EXEC .. " true");
  end
end

local function install()
  local old = readManifest();
  local trapos = isTrapOS();
  local hookPath, runFrom = nil, nil;
  if not trapos then
    hookPath, runFrom = hookPlace(old);
  end

  local files = {};
  for _, path in ipairs(SOURCE.paths) do
    files[#files + 1] = { path = "/" .. path, temp = "/" .. path .. NEW, source = path };
  end
  if hookPath ~= nil then
    -- Not beside the hook: CC would run a stray file in /startup/ at boot.
    files[#files + 1] = { path = hookPath, temp = HOOK_NEW, body = SOURCE.hook };
  end

  local dirs = old and old.dirs or {};
  for _, f in ipairs(files) do
    noteNewDirs(f.path, dirs);
  end

  -- 1. Every file beside its place; the first failure undoes this step and stops.
  local written = {};
  for _, f in ipairs(files) do
    local body, err = f.body, nil;
    if body == nil then
      body, err = download(f.source);
    end
    local ok = body ~= nil;
    if ok then
      ok, err = writeFile(f.temp, body);
    end
    if not ok then
      for _, done in ipairs(written) do
        fs.delete(done.temp);
      end
      removeEmptyDirs(old and {} or dirs);
      printError("Could not get " .. f.path .. ": " .. tostring(err));
      if old ~= nil then
        printError("Nothing changed: trapos-sandbox " .. tostring(old.version) .. " still works.");
      else
        printError("Nothing was installed.");
      end
      return false;
    end
    written[#written + 1] = f;
  end

  -- 2. All arrived: swap them in, then drop what the new version no longer ships.
  local keep = {};
  for _, f in ipairs(written) do
    swapIn(f.path, f.temp);
    keep[f.path] = true;
  end
  if old ~= nil then
    for _, path in ipairs(old.files) do
      if not keep["/" .. path] and fs.exists("/" .. path) then
        fs.delete("/" .. path);
      end
    end
    if old.hook ~= nil and old.hook ~= hookPath and fs.exists(old.hook) then
      fs.delete(old.hook);
    end
  end

  -- 3. Settings, as strings; an upgrade keeps what the player set.
  local url = settings.get(SETTING_URL);
  if url == nil or url == "" then
    settings.set(SETTING_URL, SOURCE.websocket);
    url = SOURCE.websocket;
  end
  savePassword(old);
  askPermissions(old);
  settings.save();

  local manifest = { version = SOURCE.version, files = SOURCE.paths, hook = hookPath, dirs = dirs };
  writeFile(MANIFEST, textutils.serialize(manifest));

  if old ~= nil and old.version == SOURCE.version then
    print("Reinstalled trapos-sandbox " .. SOURCE.version .. ".");
  elseif old ~= nil then
    print("Upgraded trapos-sandbox " .. tostring(old.version) .. " to " .. SOURCE.version .. ".");
  else
    print("Installed trapos-sandbox " .. SOURCE.version .. ".");
  end
  print("sandbox.url is " .. tostring(url));
  if url ~= SOURCE.websocket then
    print("(this gateway is " .. SOURCE.websocket .. "; change it with: sandbox setup)");
  end
  if trapos then
    print("TrapOS starts the daemon at boot (autostart).");
  elseif runFrom ~= nil then
    print("To start the daemon at boot, add this line");
    print("at the end of " .. runFrom .. ":");
    print('  shell.run("' .. HOOK_BESIDE .. '")');
  end
  print("Run: reboot");
  print("Then: sandbox health");
  return true;
end

local function uninstall()
  local manifest = readManifest();
  if manifest == nil then
    print("trapos-sandbox was not installed by this installer: nothing to remove.");
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
  if fs.exists(HOOK_NEW) then
    fs.delete(HOOK_NEW);
  end
  fs.delete(MANIFEST);
  removeEmptyDirs(manifest.dirs);
  settings.unset(SETTING_URL);
  settings.unset(SETTING_PASSWORD);
  settings.save();
  print("Removed trapos-sandbox " .. tostring(manifest.version) .. ": " .. removed .. " files"
    .. (hook and (", the startup hook " .. hook) or "") .. " and the sandbox settings.");
  if hook == HOOK_BESIDE then
    print('Also remove the line shell.run("' .. HOOK_BESIDE .. '") from your startup file.');
  end
  print("Reboot to stop the daemon.");
  return true;
end

if args[1] == "uninstall" then
  return uninstall();
end
return install();
