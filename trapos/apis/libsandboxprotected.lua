-- libsandboxprotected: the paths a host may change only when the owner allows exec, because
-- changing them is running code: the settings file (it holds sandbox.allow_exec itself), what
-- the computer runs at boot, and the sandbox's own files. docs/capabilities.md lists them.
-- A path is compared in the form CC opens it on the real drive: fs.combine's reading (`\` is
-- `/`, repeated slashes, `.` and `..`, spaces around names, names cut at 255 bytes), without
-- the `*` and `?` CC drops from a path it opens, in lowercase (the drive may be a Windows or
-- macOS folder, where /STARTUP.LUA is /startup.lua), and without the trailing dots and spaces
-- a Windows drive drops (/startup.lua. is /startup.lua there).

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');
local config = require('/apis/libsandboxsettings');

-- What each protected path is, as a list of name patterns matched against the canonical
-- names of a path, one per level. A path is refused when it is one of them or lies inside
-- one; deleting or moving a directory that holds one, or moving something into its place,
-- is refused too.
local WHAT_SETTINGS = "the settings file";
local WHAT_STARTUP = "a startup file (CC runs /startup, /startup.lua and every file in /startup/ at boot)";
local WHAT_DISK_STARTUP = "a disk's startup file (CC runs it at boot instead of the computer's own)";
local WHAT_BOOT_PROGRAM = "a program the boot runs by its name (the sandbox's startup hook runs shell, CC runs motd)";
local WHAT_SANDBOX = "one of the sandbox's own files";
local WHAT_MODULE = "where require('cc.*') in the sandbox's programs looks before the ROM";
-- Why changing a protected path is running code, said after it in the refusal: the boot runs
-- it, unless the entry's own changes says what does (the player's command, the sandbox's
-- programs loading it, the owner's own setting). Short: a pocket computer shows 26 columns.
local CHANGES_BOOT = "changing how the computer boots runs code";
local CHANGES_SETTINGS = "it holds " .. config.SETTING_ALLOW_EXEC .. " itself";
local CHANGES_LOADED = "the daemon, sandbox and ai load it";
local CHANGES_MODULES = "a module put there runs in place of the ROM's";
local CHANGES_RECORD = "the installer, the daemon and sandbox uninstall act on what it says";
local PROTECTED = {
  { parts = { "^%.settings$" }, shows = "/.settings", what = WHAT_SETTINGS, changes = CHANGES_SETTINGS },
  { parts = { "^startup$" }, shows = "/startup", what = WHAT_STARTUP },
  { parts = { "^startup%.lua$" }, shows = "/startup.lua", what = WHAT_STARTUP },
  { parts = { "^disk%d*$", "^startup$" }, shows = "/disk*/startup", what = WHAT_DISK_STARTUP },
  { parts = { "^disk%d*$", "^startup%.lua$" }, shows = "/disk*/startup.lua", what = WHAT_DISK_STARTUP },
  { parts = { "^shell$" }, shows = "/shell", what = WHAT_BOOT_PROGRAM },
  { parts = { "^shell%.lua$" }, shows = "/shell.lua", what = WHAT_BOOT_PROGRAM },
  { parts = { "^motd$" }, shows = "/motd", what = WHAT_BOOT_PROGRAM },
  { parts = { "^motd%.lua$" }, shows = "/motd.lua", what = WHAT_BOOT_PROGRAM },
  { parts = { "^apis$", "^libsandbox" }, shows = "/apis/libsandbox*", what = WHAT_SANDBOX, changes = CHANGES_LOADED },
  { parts = { "^servers$", "^sandbox" }, shows = "/servers/sandbox*", what = WHAT_SANDBOX },
  -- /programs/sandbox-install.lua, an older installer's copy, is run as sandbox-install.
  { parts = { "^programs$", "^sandbox" }, shows = "/programs/sandbox*", what = WHAT_SANDBOX,
    changes = "typing sandbox runs it" },
  -- The ai command asks the player before the agent changes anything: changed, it would not.
  { parts = { "^programs$", "^ai$" }, shows = "/programs/ai", what = WHAT_SANDBOX .. " (the ai command)",
    changes = "typing ai runs it" },
  { parts = { "^programs$", "^ai%.lua" }, shows = "/programs/ai.lua*", what = WHAT_SANDBOX .. " (the ai command)",
    changes = "typing ai runs it" },
  -- CC's help program finds /help/sandbox, .md or .txt (the package's page): the player reads
  -- it as the sandbox's own words on what to type, which a changed page could make anything.
  { parts = { "^help$", "^sandbox" }, shows = "/help/sandbox*", what = WHAT_SANDBOX .. " (its page for help sandbox)",
    changes = "the player types what it says" },
  -- And /help/ai, .md or .txt, the ai command's page, for the same reason.
  { parts = { "^help$", "^ai$" }, shows = "/help/ai", what = WHAT_SANDBOX .. " (its page for help ai)",
    changes = "the player types what it says" },
  { parts = { "^help$", "^ai%." }, shows = "/help/ai.*", what = WHAT_SANDBOX .. " (its page for help ai)",
    changes = "the player types what it says" },
  { parts = { "^%.trapos%-sandbox" }, shows = "/.trapos-sandbox*", what = WHAT_SANDBOX .. " (the installer's record)",
    changes = CHANGES_RECORD },
  { parts = { "^sandbox%-startup" }, shows = "/sandbox-startup.lua", what = WHAT_SANDBOX .. " (its startup hook)" },
  { parts = { "^servers$", "^cc$" }, shows = "/servers/cc", what = WHAT_MODULE, changes = CHANGES_MODULES },
  { parts = { "^programs$", "^cc$" }, shows = "/programs/cc", what = WHAT_MODULE, changes = CHANGES_MODULES },
};

-- A name a Windows drive may read as another: an 8.3 short name (SETTIN~1 is .settings when
-- the drive keeps short names), or one of dots and spaces only, which loses them all there
-- (CC keeps ". ." as a name). Such a name is taken to be any protected name at its level.
local SHORT_NAME = "~%d";
local WHAT_AMBIGUOUS = "a Windows drive may read this name as another (an 8.3 short name, or dots and spaces only)";

-- The path fields of each request that changes files, and whether a directory holding a
-- protected path counts as changing it (deleting or moving it takes the path along; moving
-- something to its place puts new files there).
local CHANGES = {
  [codec.TYPE_FS_WRITE] = { { field = "path", label = "of" } },
  [codec.TYPE_FS_MAKE_DIR] = { { field = "path", label = "of" } },
  [codec.TYPE_FS_DELETE] = { { field = "path", label = "of", holder = true } },
  [codec.TYPE_FS_MOVE] = { { field = "from", label = "from", holder = true }, { field = "to", label = "to", holder = true } },
};

-- The canonical names of path, root first, or nil for a path above the root (CC refuses
-- it as "Invalid Path"). An ambiguous name is false.
local function canonicalNames(fsApi, path)
  local combined = fsApi.combine((path:gsub("[%*%?]", "")));
  if combined == ".." or combined:sub(1, 3) == "../" then
    return nil;
  end
  local names = {};
  for name in combined:gmatch("[^/]+") do
    local plain = name:lower():gsub("[%. ]+$", "");
    if plain == "" or plain:find(SHORT_NAME) then
      names[#names + 1] = false;
    else
      names[#names + 1] = plain;
    end
  end
  return names;
end

-- Whether the first n names match the entry's first n patterns; the second result says a
-- name matched only by being ambiguous.
local function matchesUpTo(names, entry, n)
  local ambiguous = false;
  for i = 1, n do
    local name = names[i];
    if name == false then
      ambiguous = true;
    elseif not name:find(entry.parts[i]) then
      return false, false;
    end
  end
  return true, ambiguous;
end

-- The protected entry path is, lies in, or (with holder) holds; and whether it was matched
-- through an ambiguous name. nil when the path touches none.
local function find(fsApi, path, holder)
  local names = canonicalNames(fsApi, path);
  if names == nil then
    return nil;
  end
  for _, entry in ipairs(PROTECTED) do
    local depth = #entry.parts;
    if #names >= depth or holder then
      local ok, ambiguous = matchesUpTo(names, entry, math.min(#names, depth));
      if ok then
        return entry, ambiguous;
      end
    end
  end
  return nil;
end

-- Why msgType with payload may not run while exec is not allowed, or nil. Fields that are
-- not strings are left to the request's own check (bad_payload).
local function refusal(fsApi, msgType, payload)
  expect(1, fsApi, "table");
  field(fsApi, "combine", "function");
  expect(2, msgType, "string");
  expect(3, payload, "table");
  for _, change in ipairs(CHANGES[msgType] or {}) do
    local path = payload[change.field];
    if type(path) == "string" then
      local entry, ambiguous = find(fsApi, path, change.holder);
      if entry ~= nil then
        local what = entry.shows .. ", " .. entry.what;
        if ambiguous then
          what = what .. "; " .. WHAT_AMBIGUOUS;
        end
        return msgType .. " " .. change.label .. " " .. path .. " needs " .. config.SETTING_ALLOW_EXEC
          .. ": it would change " .. what .. ", and " .. (entry.changes or CHANGES_BOOT) .. ";"
          .. " the owner can allow it with: set " .. config.SETTING_ALLOW_EXEC .. " true";
      end
    end
  end
  return nil;
end

return {
  PROTECTED = PROTECTED,
  refusal = refusal,
};
