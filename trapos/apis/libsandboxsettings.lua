-- libsandboxsettings: the settings a computer's owner sets for trap-sandbox, and the rules
-- for reading them (the gateway URL's normal form, what the host may do on the computer).

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;

-- Path a bare "ws://host:port" URL is completed with (the gateway's WebSocket endpoint).
local DEFAULT_PATH = "/trapos/ws";

-- Settings read by the daemon and the command.
local SETTING_URL = "sandbox.url";
local SETTING_PASSWORD = "sandbox.password";
-- What the host may do here (docs/capabilities.md); read on every request.
local SETTING_ALLOW_FILES = "sandbox.allow_files";
local SETTING_ALLOW_EXEC = "sandbox.allow_exec";
-- Whether the player confirms each write, delete and run the gateway's agent asks for
-- (docs/ai.md); read at every confirm.
local SETTING_AI_CONFIRM = "sandbox.ai_confirm";
local SETTING_ALLOW_SCREEN = "sandbox.allow_screen";
-- Every setting of the sandbox, as `sandbox help` lists them: a sandbox.* name not among them
-- is a mistyped one (`set sandbox.allow_file write`), which CC's set saves all the same.
local SETTING_NAMES = {
  SETTING_URL, SETTING_PASSWORD, SETTING_ALLOW_FILES, SETTING_ALLOW_EXEC, SETTING_AI_CONFIRM, SETTING_ALLOW_SCREEN,
};

-- Levels of sandbox.allow_files, each including the ones before it.
local FILES_NONE = "none";
local FILES_READ = "read";
local FILES_WRITE = "write";
local FILES_RANK = { [FILES_NONE] = 0, [FILES_READ] = 1, [FILES_WRITE] = 2 };

-- Levels of sandbox.allow_screen, each including the ones before it: control types keys
-- and clicks, as strong as exec.
local SCREEN_NONE = "none";
local SCREEN_VIEW = "view";
local SCREEN_CONTROL = "control";
local SCREEN_RANK = { [SCREEN_NONE] = 0, [SCREEN_VIEW] = 1, [SCREEN_CONTROL] = 2 };

-- The file CC loads the settings from at boot (settings.save's default).
local SETTINGS_FILE = "/.settings";
-- save writes the new settings file here first, beside the old one, which it replaces only
-- once complete.
local SAVE_SUFFIX = ".saving";

-- The schemes a URL that lost the colon of its "://" is read with (ws//host).
local LOST_COLON_SCHEMES = { ws = true, wss = true, http = true, https = true };

-- The one place a text setting's value (sandbox.url, sandbox.password) is read as text: text
-- as it is, a number as its digits (CC's set stores digits as one while the setting's type is
-- not defined yet: before the daemon's first boot, `set sandbox.password 1234`), and any other
-- value (a hand-edited .settings) as nil, not set.
local function textOf(value)
  if type(value) == "number" then
    return tostring(value);
  elseif type(value) ~= "string" then
    return nil;
  end
  return value;
end

-- sandbox.url as set, as text (textOf): what `sandbox setup` offers to keep; nil when not set.
local function urlSet(settingsApi)
  expect(1, settingsApi, "table", "nil");
  return textOf((settingsApi or settings).get(SETTING_URL));
end

-- sandbox.password as the hello sends it (the gateway compares text): "" when none is set.
local function password(settingsApi)
  expect(1, settingsApi, "table", "nil");
  return textOf((settingsApi or settings).get(SETTING_PASSWORD)) or "";
end

-- url (text, trimmed) with the "://" of its scheme whole again where it lost a slash or its
-- colon (ws:/host, ws:host, ws//host); any other URL as it is. normaliseUrl reads a URL so, and
-- sandbox setup saves the URL so: saved as typed, the next setup offered the misspelt
-- ws:/host as the current value after saying "Nothing changed.".
local function repairScheme(url)
  expect(1, url, "string");
  -- ws//host: the colon of ws:// lost. CC would put ws:// in front and look the host "ws" up
  -- (Unknown host: ws). Only the schemes of a gateway's URL, and http's, which are refused by
  -- name: host//path is a host (localhost//trapos/ws).
  local lost, afterSlashes = url:match("^(%a+)//(.*)$");
  if lost ~= nil and LOST_COLON_SCHEMES[lost:lower()] then
    url = lost .. "://" .. afterSlashes;
  end
  local scheme, afterColon = url:match("^(%a+):/?([^/].*)$");
  -- ws:4444 is a host named ws and its port (a compose service's name), no scheme: read as
  -- one, the port became the host (ws://4444). Digits alone after the colon are a port.
  local isPort = url:match("^%a+:%d+$") or url:match("^%a+:%d+[/?#]");
  if scheme ~= nil and not isPort then
    url = scheme .. "://" .. afterColon;
  end
  return url;
end

-- Completes a bare "ws://host:port" or "wss://host" (or with a trailing "/") with the gateway
-- path; an explicit path is kept, and so is a URL of another scheme, which the connection
-- refuses naming it as set: completed, ftp://10.0.0.9 was refused as ftp://10.0.0.9/trapos/ws,
-- a URL the player never typed. A URL without a scheme gets ws://, as CC's websocket does; one that
-- lost a slash of its scheme's "//" (ws:/host, ws:host, ftp:/host) gets it back: with ws://
-- put in front, as CC would, it named the host "ws" (ws://ws:/host), and the player read
-- Unknown host: ws (sandbox setup saved ftp:/host as a host named ftp); so does one that lost
-- its colon (ws//host, LOST_COLON_SCHEMES). A word of letters
-- before the colon is a scheme unless a port, digits alone, follows it (host:4444).
-- url is sandbox.url's value as stored, read as text by textOf (a number is its digits, any
-- other value that is not text is not set). Read as a string, such a value (a hand-edited
-- .settings too) stopped the daemon at every boot with a traceback on the screen, and
-- sandbox health and setup with it.
-- Returns nil for nil, blank or such input.
local function normaliseUrl(url)
  url = textOf(url);
  if url == nil then
    return nil;
  end
  url = url:match("^%s*(.-)%s*$");
  if url == "" then
    return nil;
  end
  url = repairScheme(url);
  if not url:find("://", 1, true) then
    url = "ws://" .. url;
  end
  local prefix, rest = url:match("^(%a[%w+.-]*://[^/?#]*)(.*)$");
  if prefix == nil then
    return url;
  end
  local scheme = prefix:match("^(%a[%w+.-]*)://"):lower();
  if (rest == "" or rest == "/") and (scheme == "ws" or scheme == "wss") then
    return prefix .. DEFAULT_PATH;
  end
  return url;
end

-- The install line for the gateway sandbox.url names (url: the daemon's, normalised), or nil
-- when url is not the gateway's WebSocket: ws://host:port/trapos/ws (behind a path, or bare)
-- is served http://host:port/trapos/install, wss:// as https://.
local function installLineFor(url)
  if type(url) ~= "string" then
    return nil;
  end
  -- A scheme in any case (WSS://): CC's websocket takes it so.
  local scheme, authority, path = url:match("^(%a+)://([^/?#]+)([^?#]*)$");
  scheme = scheme and scheme:lower();
  if scheme ~= "ws" and scheme ~= "wss" then
    return nil;
  end
  path = path:gsub("/+$", "");
  if path ~= "" and path:sub(-#"/trapos/ws") ~= "/trapos/ws" then
    return nil;
  end
  path = path:gsub("/trapos/ws$", "");
  return "wget run " .. (scheme == "wss" and "https://" or "http://") .. authority .. path .. "/trapos/install";
end

-- The install line that brings the client back whole (a library of it missing: the guards
-- of the sandbox and ai programs and of the boot daemon): the gateway's, from sandbox.url as
-- set (installLineFor), or, with none set or one that names no gateway's WebSocket, the
-- generic line with where to get the real one.
local function installLine(settingsApi)
  expect(1, settingsApi, "table", "nil");
  return installLineFor(normaliseUrl(urlSet(settingsApi)))
    or "wget run .../trapos/install, as its operator gives it out";
end

-- The host of a URL (for messages), or the URL itself when it has none.
local function urlHost(url)
  expect(1, url, "string");
  return url:match("^%a[%w+.-]*://([^/?#:]+)") or url;
end

-- Why a daemon whose socket to url is open is not connected yet: the server there has not
-- answered the hello (a slow gateway, or not a trap-sandbox gateway at all).
local function helloUnanswered(url)
  return "the server at " .. tostring(url) .. " has not answered the hello yet"
    .. " (is sandbox.url a trap-sandbox gateway?)";
end

-- Defines the sandbox settings (so `set` type-checks them and shows their description).
local function defineSettings(settingsApi)
  expect(1, settingsApi, "table", "nil");
  settingsApi = settingsApi or settings;
  settingsApi.define(SETTING_URL, {
    description = "WebSocket URL of the trap-sandbox gateway, e.g. ws://127.0.0.1:4444",
    type = "string",
  });
  settingsApi.define(SETTING_PASSWORD, {
    -- What CC's `set sandbox.password` prints under the value, which it shows in full: the
    -- password, or since a link this computer's own credential, which is no shared secret.
    description = "The trap-sandbox gateway's password, or this computer's own credential (sandbox link);"
      .. " set shows it to anyone at the screen",
    type = "string",
    default = "",
  });
  settingsApi.define(SETTING_ALLOW_FILES, {
    description = "What the trap-sandbox host may do with this computer's files: none, read or write (write includes read)",
    type = "string",
    default = FILES_NONE,
  });
  settingsApi.define(SETTING_ALLOW_EXEC, {
    description = "Whether the trap-sandbox host may run Lua code and programs on this computer (lua.exec, shell.run)",
    type = "boolean",
    default = false,
  });
  settingsApi.define(SETTING_AI_CONFIRM, {
    description = "Whether the player confirms each file write, delete and run the gateway's agent asks for (false: the agent's requests are allowed without asking)",
    type = "boolean",
    default = true,
  });
  settingsApi.define(SETTING_ALLOW_SCREEN, {
    description = "What the trap-sandbox host may do with this computer's screen: none, view or control (control includes view: it types keys and clicks)",
    type = "string",
    default = SCREEN_NONE,
  });
end

-- The one place a level setting's value is read: its level, or none and the value itself when
-- it is none of the levels (another case, a typo: `set sandbox.allow_files Write`), so that
-- whoever shows the level can say why it is none. Not set is none.
local function levelOf(settingsApi, name, rank, none)
  expect(1, settingsApi, "table", "nil");
  local value = (settingsApi or settings).get(name);
  if value == nil then
    return none, nil;
  elseif rank[value] == nil then
    return none, value;
  end
  return value, nil;
end

-- A level as the owner reads it: "none", or 'none, as "Write" is not none/read/write' when the
-- setting holds something else.
local function levelShown(level, unknown, levels)
  if unknown == nil then
    return level;
  end
  return level .. ", as " .. string.format("%q", tostring(unknown)) .. " is not " .. levels;
end

-- The file access the owner allows: "none", "read" or "write"; an unknown value is "none"
-- (and is the second result).
local function filesAllowed(settingsApi)
  return levelOf(settingsApi, SETTING_ALLOW_FILES, FILES_RANK, FILES_NONE);
end

-- filesAllowed as the owner reads it, naming an unknown value.
local function filesShown(settingsApi)
  local level, unknown = filesAllowed(settingsApi);
  return levelShown(level, unknown, FILES_NONE .. "/" .. FILES_READ .. "/" .. FILES_WRITE);
end

-- Whether the owner allows `need` ("read" or "write") file access.
local function filesAllow(settingsApi, need)
  return FILES_RANK[filesAllowed(settingsApi)] >= FILES_RANK[need];
end

-- Whether the owner allows lua.exec and shell.run (only the boolean true does).
local function execAllowed(settingsApi)
  expect(1, settingsApi, "table", "nil");
  return (settingsApi or settings).get(SETTING_ALLOW_EXEC) == true;
end

-- Whether the player confirms the agent's changes (anything but the boolean false does).
local function aiConfirm(settingsApi)
  expect(1, settingsApi, "table", "nil");
  return (settingsApi or settings).get(SETTING_AI_CONFIRM) ~= false;
end

-- A boolean setting as the owner reads it: its effect ("false"), or, when the setting holds
-- something else (a hand-edited "true", which counts as the default), 'false, as "true" is not
-- the boolean true', as levelShown names a level setting's stray value.
local function booleanShown(settingsApi, name, effect)
  local value = (settingsApi or settings).get(name);
  if value == nil or type(value) == "boolean" then
    return tostring(effect);
  end
  return tostring(effect) .. ", as " .. string.format("%q", tostring(value)) .. " is not the boolean " .. tostring(not effect);
end

-- execAllowed as the owner reads it, naming a value that is not a boolean.
local function execShown(settingsApi)
  expect(1, settingsApi, "table", "nil");
  return booleanShown(settingsApi, SETTING_ALLOW_EXEC, execAllowed(settingsApi));
end

-- aiConfirm as the owner reads it, naming a value that is not a boolean.
local function aiConfirmShown(settingsApi)
  expect(1, settingsApi, "table", "nil");
  return booleanShown(settingsApi, SETTING_AI_CONFIRM, aiConfirm(settingsApi));
end

-- The screen access the owner allows: "none", "view" or "control"; an unknown value is "none"
-- (and is the second result).
local function screenAllowed(settingsApi)
  return levelOf(settingsApi, SETTING_ALLOW_SCREEN, SCREEN_RANK, SCREEN_NONE);
end

-- screenAllowed as the owner reads it, naming an unknown value.
local function screenShown(settingsApi)
  local level, unknown = screenAllowed(settingsApi);
  return levelShown(level, unknown, SCREEN_NONE .. "/" .. SCREEN_VIEW .. "/" .. SCREEN_CONTROL);
end

-- Whether the owner allows `need` ("view" or "control") screen access.
local function screenAllow(settingsApi, need)
  return SCREEN_RANK[screenAllowed(settingsApi)] >= SCREEN_RANK[need];
end

-- Saves the settings (settingsApi.save) to path, by default the file CC loads at boot, so that
-- the old file is never lost. CC's settings.save opens its file for writing, which empties it,
-- and then writes: on a full drive the write raises "Out of space" and every setting, the
-- gateway's URL and password too, is gone at the next boot (as when the computer is turned off
-- mid-save). Here the new file is written beside the old one and replaces it only once
-- complete: a delete and a move with no yield between (CC's fs calls do not yield), so nothing
-- on the computer sees the path empty. Returns true, or false when the settings could not be
-- saved; the old file is then as it was, unless the move itself failed after the delete (a
-- rename on the same drive, which needs no space), when the new file is left at
-- path .. SAVE_SUFFIX.
local function save(settingsApi, fsApi, path)
  expect(1, settingsApi, "table", "nil");
  expect(2, fsApi, "table", "nil");
  expect(3, path, "string", "nil");
  settingsApi, fsApi, path = settingsApi or settings, fsApi or fs, path or SETTINGS_FILE;
  local temp = path .. SAVE_SUFFIX;
  pcall(fsApi.delete, temp); -- what a save cut short left
  local ok, saved = pcall(settingsApi.save, temp);
  if not ok or not saved or not fsApi.exists(temp) then
    pcall(fsApi.delete, temp);
    return false;
  end
  if fsApi.exists(path) and not pcall(fsApi.delete, path) then
    pcall(fsApi.delete, temp);
    return false;
  end
  return (pcall(fsApi.move, temp, path));
end

-- The value of the setting name as the settings file at path (by default the one CC loads at
-- boot) holds it: what the computer has after a reboot, where settings.get gives what it has
-- now. nil when the file, or the setting in it, is missing, or the file is not settings.
local function savedValue(name, fsApi, path)
  expect(1, name, "string");
  expect(2, fsApi, "table", "nil");
  expect(3, path, "string", "nil");
  fsApi, path = fsApi or fs, path or SETTINGS_FILE;
  local handle = fsApi.open(path, "r");
  if handle == nil then
    return nil;
  end
  local text = handle.readAll();
  handle.close();
  local saved = textutils.unserialise(text or "");
  if type(saved) ~= "table" then
    return nil;
  end
  return saved[name];
end

return {
  DEFAULT_PATH = DEFAULT_PATH,
  SETTINGS_FILE = SETTINGS_FILE,
  SETTING_URL = SETTING_URL,
  SETTING_PASSWORD = SETTING_PASSWORD,
  SETTING_ALLOW_FILES = SETTING_ALLOW_FILES,
  SETTING_ALLOW_EXEC = SETTING_ALLOW_EXEC,
  SETTING_AI_CONFIRM = SETTING_AI_CONFIRM,
  SETTING_ALLOW_SCREEN = SETTING_ALLOW_SCREEN,
  SETTING_NAMES = SETTING_NAMES,
  FILES_NONE = FILES_NONE,
  FILES_READ = FILES_READ,
  FILES_WRITE = FILES_WRITE,
  SCREEN_NONE = SCREEN_NONE,
  SCREEN_VIEW = SCREEN_VIEW,
  SCREEN_CONTROL = SCREEN_CONTROL,
  screenAllowed = screenAllowed,
  screenShown = screenShown,
  screenAllow = screenAllow,
  filesAllowed = filesAllowed,
  filesShown = filesShown,
  filesAllow = filesAllow,
  execAllowed = execAllowed,
  execShown = execShown,
  aiConfirm = aiConfirm,
  aiConfirmShown = aiConfirmShown,
  normaliseUrl = normaliseUrl,
  installLineFor = installLineFor,
  installLine = installLine,
  repairScheme = repairScheme,
  urlSet = urlSet,
  password = password,
  urlHost = urlHost,
  helloUnanswered = helloUnanswered,
  defineSettings = defineSettings,
  save = save,
  savedValue = savedValue,
};
