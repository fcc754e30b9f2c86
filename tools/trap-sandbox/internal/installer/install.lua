-- The trapos-sandbox installer. The gateway serves it at /trapos/install with a SOURCE table
-- in front (where it was served from, the package's version and files, the startup hook), so
-- a player types one line on a computer:
--
--   wget run http://<gateway>:4444/trapos/install [password] [options]
--   wget run http://<gateway>:4444/trapos/install uninstall
--
-- (`sandbox uninstall` does the same on the computer, without the gateway: libsandboxuninstall.)
--
-- `wget run` passes the words after the URL as `...` (`--help` lists the options). Before it
-- changes anything it asks the gateway whether the password is right, so a wrong one is told
-- now, not after the reboot. Installing again upgrades in place and keeps the settings. New
-- files are written beside the old ones and swapped in only when every one has arrived, so a
-- failed download leaves the old install working.

local PROGRAMS = "/programs";              -- where the commands are (the hook's PROGRAMS)
local HELP_DIR = "/help";                  -- where help/sandbox.txt is (libsandbox.HELP_DIR)

-- The host's file and screen access levels (sandbox.allow_files, sandbox.allow_screen), and
-- the words --allow-exec takes.
local FILES_LEVELS = { none = true, read = true, write = true };
local SCREEN_LEVELS = { none = true, view = true, control = true };
local EXEC_WORDS = { yes = true, no = false, ["true"] = true, ["false"] = false };

-- Seconds the password check waits for the gateway's answer. A right password is answered at
-- once; a wrong one may be held back by the gateway's failed-hello limit (docs/protocol.md).
local CHECK_WAIT = 20;
-- Appended to the check's WebSocket URL (the gateway ignores it): CC tells sockets apart only
-- by their URL string, and the daemon's socket, if it runs, uses the plain one.
local CHECK_QUERY = "?check";

-- URLs on the screen: the package's rule, from the package's own libsandboxlayout, which the
-- gateway sends along (SOURCE.layout) since the installer runs before the package's files are
-- on the computer. Every line the installer prints goes through it, so that a URL longer than
-- a row (the install line's, the WebSocket's, on a pocket computer's 26 columns) breaks
-- before a "/" or ":", not wherever the row ends.
-- The room a typed answer needs after its question is the package's rule too (roomToAnswer).
local layout = assert(load(SOURCE.layout, "@/apis/libsandboxlayout.lua", "t", _ENV))();
local laidOut = layout.fitted(_ENV);
local print, printError, write = laidOut.print, laidOut.printError, laidOut.write;

-- The settings' names, how the daemon reads sandbox.url (a bare ws://host:port means the
-- gateway's path, and ws:/host or ws//host ws://host) and how .settings is saved: the package's
-- own rules, libsandboxsettings, sent along as SOURCE.settings. A copy of the URL rule here
-- knew only the bare form, so an upgrade of a computer set up with ws:/host took this gateway
-- for another and checked no password.
local settingsRules = assert(load(SOURCE.settings, "@/apis/libsandboxsettings.lua", "t", _ENV))();
local wsUrl = settingsRules.normaliseUrl;
local SETTING_URL, SETTING_PASSWORD = settingsRules.SETTING_URL, settingsRules.SETTING_PASSWORD;
local SETTING_ALLOW_FILES, SETTING_ALLOW_EXEC = settingsRules.SETTING_ALLOW_FILES, settingsRules.SETTING_ALLOW_EXEC;
local SETTING_ALLOW_SCREEN = settingsRules.SETTING_ALLOW_SCREEN;

-- settings.get returns this default only when a setting is not set (not even to its default).
local NOT_SET = {};

-- What a refused password may hide (a space at an end, a ? for a character CC cannot hold),
-- and how a computer's own credential begins: the package's own advice, libsandboxadvice, sent
-- along as SOURCE.advice, which says the same to sandbox health and status. A copy of the ?
-- rule here said it in other words.
local adviceRules = assert(load(SOURCE.advice, "@/apis/libsandboxadvice.lua", "t", _ENV))();
-- A password on the line does not replace a credential of the computer's own (sandbox link)
-- while the gateway accepts it.
local CREDENTIAL_PREFIX = adviceRules.CREDENTIAL_PREFIX;

-- Where this installer puts what is not a file of the package (its record, the hook, the names
-- written beside them), and the uninstall: the package's own libsandboxuninstall, sent along as
-- SOURCE.uninstall, which `sandbox uninstall` runs on the computer without the gateway.
local places = assert(load(SOURCE.uninstall, "@/apis/libsandboxuninstall.lua", "t", _ENV))();
local MANIFEST, HOOK, HOOK_BESIDE, NEW = places.MANIFEST, places.HOOK, places.HOOK_BESIDE, places.NEW;
local HOOK_NEW, MOVED_STARTUP = places.HOOK_NEW, places.MOVED_STARTUP;
local OLD_INSTALLER_COPY = places.OLD_INSTALLER_COPY;
local readManifest, removeEmptyDirs, daemonStatus = places.readManifest, places.removeEmptyDirs, places.daemonStatus;
local uninstaller = places.new({ print = print, printError = printError, layout = layout, settings = settingsRules, advice = adviceRules });
local finishStoppedMove, printHookCall = uninstaller.finishStoppedMove, uninstaller.printHookCall;

-- This file's name as CC puts it in front of an error raised at one of its lines. CC places
-- the error of a native function pcall calls directly (fs.makeDir, a handle's write,
-- http.websocket) at the nearest Lua code, the line of this file that called pcall: a place
-- the player has no use for. (The package's own libraries do the same with
-- codec.withoutPositionIn; this installer runs before they are there.)
local HERE = debug.getinfo(1, "S").short_src;

-- err as text, without the position CC gave it at a line of this file.
local function message(err)
  err = tostring(err);
  if err:sub(1, #HERE + 1) ~= HERE .. ":" then
    return err;
  end
  return err:match("^%d+: (.*)$", #HERE + 2) or err;
end

local function writeFile(path, bytes)
  local dir = fs.getDir(path);
  if dir ~= "" and not fs.exists(dir) then
    -- A directory costs space too: on a full drive makeDir raises "Out of space".
    local ok, dirErr = pcall(fs.makeDir, dir);
    if not ok then
      return false, message(dirErr), true;
    end
  end
  local handle, err = fs.open(path, "wb");
  if handle == nil then
    -- A new file costs space too: on a full drive fs.open answers "...: Out of space".
    return false, err or "cannot open", tostring(err):find("Out of space", 1, true) ~= nil;
  end
  -- A full drive raises "Out of space" from write: answered, and the part written removed.
  local ok, writeErr = pcall(handle.write, bytes);
  handle.close();
  if not ok then
    fs.delete(path);
    return false, message(writeErr), true;
  end
  return true;
end

-- CC's reason in err without the path CC's fs error begins with ("/startup: Out of space"),
-- when that path is path; else nil. The line that names the path already says it once: twice
-- cost a pocket computer rows.
local function reasonAt(err, path)
  err = tostring(err);
  local bare = path:gsub("^/", "");
  for _, named in ipairs({ "/" .. bare .. ": ", bare .. ": " }) do
    if err:sub(1, #named) == named then
      return err:sub(#named + 1);
    end
  end
  return nil;
end

-- The line for a file of the install that could not be written: its real name once, and CC's
-- reason. CC's fs.open names the path it opened ("/apis/x.lua.new: Cannot write to directory"),
-- the name beside the file, which repeated the real one and cost a pocket computer two rows.
-- That name is said as where the file is written first, which a player needs when it is
-- what is in the way (a directory of theirs at /apis/x.lua.new).
local function couldNotWrite(f, err)
  local reason = reasonAt(err, f.temp);
  if reason ~= nil then
    local first = f.temp == f.path .. NEW and NEW or f.temp;
    return "Could not write " .. f.path .. " (written first as " .. first .. "): " .. reason;
  end
  return "Could not write " .. f.path .. ": " .. tostring(err);
end

-- Saves the settings with the package's own rule (libsandboxsettings.save): the new .settings
-- is written beside the old one and moved in only once complete, so a full drive never empties
-- it (settings.save empties the file, then writes). True when saved.
local function saveSettings()
  return settingsRules.save();
end

-- Replaces the file at path by bytes as saveSettings does: written beside it, then moved in,
-- so a full drive leaves the old file whole. Returns writeFile's results.
local function replaceFile(path, bytes)
  local ok, err, full = writeFile(path .. NEW, bytes);
  if not ok then
    return false, err, full;
  end
  if fs.exists(path) then
    fs.delete(path);
  end
  fs.move(path .. NEW, path);
  return true;
end

-- What a player reads when the drive is full, after what failed.
-- The line to run again goes on a line of its own (printAgain): after the sentence it began
-- mid-row, and the screen broke it anywhere ("... again: wget" / "run http://...").
local DISK_FULL = "The computer's drive is full: free some space (delete files you do not need), then run the install line again:";

-- What CC charges a file or a directory on a drive: its size, but at least this many bytes.
local MINIMUM_FILE_COST = 500;

-- Room for the records written once the files are in, each beside the old one until it is
-- complete: the manifest (its text, about 1 KB) and .settings (the player's, and the
-- sandbox's few lines, SETTINGS_GROWTH), so that the room counted is the room the install
-- takes, and one who frees what it says is short sees it finish.
local SETTINGS_GROWTH = 300;

-- KB as a player reads them on the screen (1 KB is 1000 bytes, as CC's computer_space_limit
-- of 1000000 is its 1 MB): what is needed rounded up, what is free rounded down. Printed as
-- CC's drive program prints them, the unit joined to the number ("40KB"), so that a narrow
-- screen never breaks the two apart.
local function kilobytesUp(bytes)
  return math.ceil(bytes / 1000);
end
local function kilobytesDown(bytes)
  return math.floor(bytes / 1000);
end

-- Whether the file at path holds exactly bytes: an upgrade leaves such a file as it is, so
-- that it needs room only for the files that changed (each is written beside the old one
-- until every one has arrived).
local function holds(path, bytes)
  if not fs.exists(path) or fs.isDir(path) or fs.getSize(path) ~= #bytes then
    return false;
  end
  local handle = fs.open(path, "rb");
  if handle == nil then
    return false;
  end
  local have = handle.readAll() or "";
  handle.close();
  return have == bytes;
end

local function printAgain(advice)
  printError(advice);
  print("wget run " .. SOURCE.install);
end

-- The bytes at url (a package file).
local function download(url)
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

-- TrapOS starts a package's autostart servers itself; its package manager marks it. Returns
-- where the shell finds ccpm ("/ccpm.lua"), or nil on a computer without it.
local function isTrapOS()
  local ccpm = shell ~= nil and shell.resolveProgram("ccpm") or nil;
  return ccpm and "/" .. fs.combine(ccpm, "") or nil;
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

-- Moves the player's /startup file to MOVED_STARTUP. A directory cannot take the name of the
-- file it replaces, so the file goes by /startup.lua (free: startupCanMove), which CC runs at
-- boot in /startup's place, then in /startup/ too: a computer stopped between the steps (its
-- chunk unloaded, the server stopped) boots with the program where CC runs it, and the install
-- line run again asks to move that /startup.lua. Returns true, or false and why, with the file
-- back at /startup.
local function moveStartupFile()
  local ok, err = pcall(fs.move, "/startup", "/startup.lua");
  if not ok then
    return false, message(err);
  end
  ok, err = pcall(function()
    fs.makeDir("/startup");
    fs.move("/startup.lua", MOVED_STARTUP);
  end);
  if not ok then
    if fs.isDir("/startup") and #fs.list("/startup") == 0 then
      fs.delete("/startup");
    end
    if fs.exists("/startup.lua") and not fs.exists("/startup") then
      fs.move("/startup.lua", "/startup");
    end
    return false, message(err);
  end
  return true;
end

-- Whether MAJOR.MINOR.PATCH version a is above b; false when either is not one.
local function newerVersion(a, b)
  local x = { tostring(a):match("^(%d+)%.(%d+)%.(%d+)$") };
  local y = { tostring(b):match("^(%d+)%.(%d+)%.(%d+)$") };
  if #x ~= 3 or #y ~= 3 then
    return false;
  end
  for i = 1, 3 do
    if tonumber(x[i]) ~= tonumber(y[i]) then
      return tonumber(x[i]) > tonumber(y[i]);
    end
  end
  return false;
end

-- Whether the player's startup file names the hook already: the line they were told to add
-- on the first install, which an upgrade need not ask for again.
local function namesHook(startup)
  local file = fs.open(startup, "r");
  if file == nil then
    return false;
  end
  local text = file.readAll() or "";
  file.close();
  return text:find(HOOK_BESIDE, 1, true) ~= nil;
end

-- The computer's screen width; a narrower one (a pocket computer's 26 columns, a turtle's 39)
-- gets the help laid out for it.
local SCREEN_WIDTH = 51;
local MORE = "Press any key to continue";
-- Queued behind the key that turned a page: printPaged takes what CC queued with the key (its
-- char) off the queue up to it.
local PAGE_TURNED = "trapos_install_page_turned";

-- Prints lines, and on a screen too short for them all (a turtle's 13 rows) waits for a key
-- each time a screenful is shown, so that none scrolls away unread.
local function printPaged(lines)
  local _, height = term.getSize();
  local shown = 0;
  for _, line in ipairs(lines) do
    if shown >= height - 1 then
      write(MORE);
      os.pullEvent("key");
      -- The key's char, which CC queues right behind a printable key, goes with it: left in
      -- the queue it stood typed at the shell's prompt after the help.
      os.queueEvent(PAGE_TURNED);
      os.pullEvent(PAGE_TURNED);
      term.clearLine();
      term.setCursorPos(1, select(2, term.getCursorPos()));
      shown = 0;
    end
    shown = shown + print(line);
  end
end

-- Every line fits the 51-column computer screen (the URL wraps on its own), or at most 25
-- columns on a narrower one, where the whole (18 lines) fits a pocket computer's 20 rows
-- under the wget line.
local function usage()
  if term.getSize() < SCREEN_WIDTH then
    printPaged({
      "Installs trapos-sandbox.",
      "Usage: wget run <URL>",
      "  [password] [options]",
      "or: wget run <URL>",
      "  uninstall",
      "Options, for a script:",
      " --allow-files=X",
      "   X: none, read or write",
      " --allow-exec=yes|no",
      "   may the host run code",
      " --allow-screen=X",
      "   X: none, view, control",
      " --no-questions",
      "   ask nothing",
      " --move-startup",
      "   move /startup(.lua)",
      "Without them a first",
      "install asks.",
    });
    return;
  end
  printPaged({
    "Installs or upgrades trapos-sandbox from",
    SOURCE.install,
    "Usage: wget run <that URL> [password] [options]",
    "       wget run <that URL> uninstall",
    "Options, e.g. to install from a script:",
    "  --allow-files=none|read|write",
    "      the host's access to this computer's files",
    "  --allow-exec=yes|no",
    "      whether the host may run Lua and programs",
    "  --allow-screen=none|view|control",
    "      see the screen (view), also type (control)",
    "  --no-questions",
    "      ask nothing: no password unless given,",
    "      no access for the host unless allowed",
    "  --move-startup",
    "      move /startup or /startup.lua into /startup/",
    "Without them a first install asks whether the host",
    "may use this computer's files, programs and screen.",
  });
end

-- What a mistyped option's error says to do, short enough for a computer's 51 columns.
local FIX_OPTIONS = "For the options, run the line again with --help.";
-- And an unknown option's other fix: it may be a password that begins with --, which the
-- line cannot take (the user guide says so), nor this computer tell from a mistyped option.
local FIX_DASHED_PASSWORD = "A password that begins with -- goes in at the prompt: run the line without it.";
-- What is wrong with the words on the line, for what the refusal says after the problem:
-- FIX_OPTIONS; for an unknown option FIX_DASHED_PASSWORD too; for a second password the line
-- with the password's words in quotes as well (withQuotedPassword); for two passwords, one
-- of them quoted, that the line takes one; for a password beside the word uninstall the
-- uninstall line (beside the word mistyped, the word as well).
local MISTYPED, UNKNOWN, UNINSTALL_WITH_PASSWORD = "mistyped", "unknown", "uninstall with a password";
local UNINSTALL_MISTYPED_WITH_PASSWORD = "uninstall mistyped, with a password";
local SECOND_PASSWORD = "second password";
-- Two passwords where one was in quotes ("my pass", a word with a space only quotes make, or
-- "", an empty one): not a password the shell split, which the line in quotes would fix, but
-- two the player gave.
local TWO_PASSWORDS = "two passwords";

-- The options' names, of which an unknown one's guess is made (the package's rule, meant),
-- and those that take no value.
local OPTIONS = { "help", "no-questions", "move-startup", "allow-files", "allow-exec", "allow-screen" };
local FLAGS = { help = true, ["no-questions"] = true, ["move-startup"] = true };

-- The option an unknown one most likely meant, as typed with its value (--allow-files=write
-- for --allow-file=write; a flag without one: --help for --help=x); nil when none is near.
local function meantOption(name, value)
  local guess = adviceRules.meant(name, OPTIONS);
  return guess and ("--" .. guess .. ((value and not FLAGS[guess]) and ("=" .. value) or ""));
end

-- Whether word, refused as a password, was most likely meant as the word uninstall: the same
-- word in another case, or at most (2 unless given) letters typed wrong, missing or extra
-- (unistall).
local function meantUninstall(word, most)
  most = most or 2;
  local a, b = word:lower(), "uninstall";
  if word == b or math.abs(#a - #b) > most then
    return false;
  end
  local prev = {};
  for j = 0, #b do
    prev[j] = j;
  end
  for i = 1, #a do
    local cur = { [0] = i };
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1;
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
    end
    prev = cur;
  end
  return prev[#b] <= most;
end

-- The words after the URL as options: password (the one word that is not an option),
-- uninstall, help, noQuestions, moveStartup, files, exec, screen. Returns nil, the problem
-- for a bad word and what is wrong: MISTYPED, UNKNOWN, SECOND_PASSWORD, TWO_PASSWORDS,
-- UNINSTALL_WITH_PASSWORD or UNINSTALL_MISTYPED_WITH_PASSWORD; for UNKNOWN the option meant, when one is near, for
-- UNINSTALL_MISTYPED_WITH_PASSWORD the word uninstall as typed.
local function parseArgs(words)
  local opts = {};
  for _, word in ipairs(words) do
    local name, value = word:match("^%-%-([%w-]+)=(.*)$");
    if name == nil then
      name = word:match("^%-%-([%w-]+)$");
    end
    if name == nil then
      if opts.password ~= nil then
        -- The install line recalled with the Up key and the word added after its password.
        if word == "uninstall" or opts.password == "uninstall" then
          return nil, "uninstall takes no password", UNINSTALL_WITH_PASSWORD;
        end
        -- That word mistyped (Uninstall, unistall) is meant so too, not as a password with a
        -- space, whose quotes would keep the player from the uninstall they asked for.
        if meantUninstall(word, 1) or meantUninstall(opts.password, 1) then
          return nil, "uninstall takes no password", UNINSTALL_MISTYPED_WITH_PASSWORD,
            meantUninstall(word, 1) and word or opts.password;
        end
        -- A word with a ' of its own (pass' of 'my pass') in double quotes: 'pass'' read as a
        -- typo of the installer's.
        local function named(w)
          local quote = w:find("'", 1, true) and '"' or "'";
          return quote .. w .. quote;
        end
        if word:find(" ", 1, true) or opts.password:find(" ", 1, true) or word == "" or opts.password == "" then
          -- pw "my pass": the quotes offered around both words made "pw my pass", a third;
          -- pw "": "pw ", a password with a space at its end.
          return nil, "two passwords given, " .. named(opts.password) .. " and " .. named(word), TWO_PASSWORDS;
        end
        return nil, named(word) .. " is a second password", SECOND_PASSWORD;
      end
      opts.password = word;
    elseif name == "help" and value == nil then
      opts.help = true;
    elseif name == "no-questions" and value == nil then
      opts.noQuestions = true;
    elseif name == "move-startup" and value == nil then
      opts.moveStartup = true;
    elseif name == "allow-files" then
      if not FILES_LEVELS[value] then
        return nil, "--allow-files takes none, read or write", MISTYPED;
      end
      opts.files = value;
    elseif name == "allow-exec" then
      if EXEC_WORDS[value] == nil then
        return nil, "--allow-exec takes yes or no", MISTYPED;
      end
      opts.exec = EXEC_WORDS[value];
    elseif name == "allow-screen" then
      if not SCREEN_LEVELS[value] then
        return nil, "--allow-screen takes none, view or control", MISTYPED;
      end
      opts.screen = value;
    else
      return nil, "unknown option " .. word, UNKNOWN, meantOption(name, value);
    end
  end
  if opts.password == "uninstall" then
    opts.password, opts.uninstall = nil, true;
  end
  return opts;
end

-- Whether the owner has set name (a running daemon defines defaults, which do not count).
local function isSet(name)
  return settings.get(name, NOT_SET) ~= NOT_SET;
end

-- The password to save and check: the one on the line; else the one set (an upgrade asks
-- nothing, and keeps none if none was given at the first install); else the one typed.
-- A linked credential set comes before the line's password, which is then the second result:
-- the one to use if the gateway refuses the credential (revoked, or from another gateway).
-- The third is true when the password is the one set, not one the player gave.
local function choosePassword(opts, old)
  local current = settings.get(SETTING_PASSWORD);
  if opts.password ~= nil then
    if type(current) == "string" and current ~= opts.password
        and current:sub(1, #CREDENTIAL_PREFIX) == CREDENTIAL_PREFIX then
      return current, opts.password;
    end
    return opts.password;
  end
  if type(current) == "number" then
    return tostring(current), nil, true; -- `set sandbox.password 1234` stored a number; the daemon sends its digits
  elseif type(current) == "string" and (current ~= "" or isSet(SETTING_PASSWORD)) then
    return current, nil, true;
  elseif old ~= nil or opts.noQuestions then
    return "";
  end
  write("Gateway password (empty if it has none): ");
  -- read() shows what fits after the cursor: the 16 characters a password should have, as
  -- stars, and the cursor need the rest of the line, else the answer goes on the next one.
  if not layout.roomToAnswer(term, layout.PASSWORD_ROOM) then
    print();
  end
  return read("*");
end


-- Asks the gateway whether it accepts password: a hello with check=true (docs/protocol.md),
-- which it answers as the daemon's hello but registers nothing, so a daemon that is connected
-- stays so. Returns true or false (the gateway's verdict) and, with false, the gateway's
-- reason (with true, how a computer's own credential was made: its answer's credentialKind,
-- "issued" for one set by hand, then the version of this package the gateway serves, its
-- answer's servedClient, nil when it names none); or nil and why it could not ask.
local function checkPassword(password)
  local url = SOURCE.websocket .. CHECK_QUERY;
  local ok, ws, err = pcall(http.websocket, url);
  if not ok then
    return nil, message(ws);
  elseif not ws then
    return nil, tostring(err or "Could not connect");
  end
  local id = tostring(os.getComputerID()) .. ":" .. (os.getComputerLabel() or "");
  local messageId = "install-check-" .. tostring(math.random(1, 2 ^ 30));
  -- serializeJSON writes each byte of the password as the daemon's hello does (the same call).
  local sent = pcall(ws.send, textutils.serializeJSON({
    event = "computer_request",
    traposSenderId = id,
    messageId = messageId,
    type = "hello",
    payload = { traposId = id, secret = password, clientVersion = SOURCE.version, check = true },
  }));
  local timer = os.startTimer(CHECK_WAIT);
  local verdict, why, served = nil, nil, nil;
  if not sent then
    verdict, why = nil, "the connection closed";
  end
  while sent do
    local event, eventUrl, text = os.pullEventRaw();
    if event == "terminate" then
      pcall(ws.close);
      error("Terminated", 0);
    elseif event == "timer" and eventUrl == timer then
      why = "no answer within " .. CHECK_WAIT .. " s";
      break;
    elseif event == "websocket_closed" and eventUrl == url then
      why = "the gateway closed the connection" .. (text and (" (" .. tostring(text) .. ")") or "");
      break;
    elseif event == "websocket_message" and eventUrl == url then
      local frame = textutils.unserializeJSON(text);
      if type(frame) == "table" and frame.event == "gateway_response" and frame.messageId == messageId then
        local e = type(frame.error) == "table" and frame.error or {};
        if frame.ok == true then
          verdict = true;
          local payload = type(frame.payload) == "table" and frame.payload or {};
          why = payload.credentialKind;
          local client = type(payload.servedClient) == "table" and payload.servedClient or {};
          if client.name == SOURCE.package and type(client.version) == "string" then
            served = client.version;
          end
        elseif e.code == "unauthorized" then
          verdict, why = false, tostring(e.message);
        else
          why = "the gateway answered " .. tostring(e.code) .. ": " .. tostring(e.message);
        end
        break;
      end
    end
  end
  os.cancelTimer(timer);
  pcall(ws.close);
  return verdict, why, served;
end

-- Whether the gateway's reason for refusing a secret is that it is a revoked credential (the
-- package's rule, which the daemon's advice reads too). The rule takes a reason as the daemon
-- words it, its code first ("unauthorized: …"), and from 0.5.36 no other: the same words after
-- "the server at … gave no proof it is the gateway" are not the gateway's. The check's reason
-- is the gateway's message alone, answered on the address this installer came from, so it is
-- read with the code the gateway refused it under.
local function isRevoked(why)
  return type(why) == "string" and adviceRules.revoked("unauthorized: " .. why);
end

-- The first sentence of a refused check: password's, which the gateway refused for why; set
-- says it was the computer's own sandbox.password, not one the player gave (a line without
-- one, on an upgrade: "it" read as a password the player had not typed).
local function refusal(password, why, set)
  if password == "" then
    return "The gateway needs a password";
  elseif isRevoked(why) then
    return set and "This computer's credential was revoked on the gateway" or "That credential was revoked on the gateway";
  end
  return set and "Wrong password: the gateway refused this computer's sandbox.password" or "Wrong password: the gateway refused it";
end

-- Why the check could not be made, as one line that says what it means for the daemon;
-- installed says whether there will be a daemon to reboot into.
local function uncheckedAdvice(why, installed)
  if why:find("Websocket connections are disabled", 1, true) then
    return "Could not check the password: websockets are disabled on this Minecraft server; "
      .. "the daemon needs them (websocket_enabled = true under [http] in computercraft-server.toml).";
  end
  local line = "Could not check the password: " .. why .. " (" .. SOURCE.websocket .. ").";
  if installed then
    line = line .. " After the reboot, sandbox status says whether the daemon got through.";
  end
  return line;
end

-- The lines that say what the host may do after the question's answer (allowed: yes to all,
-- else no to all) and how to change it. Each command on a line of its own: wrapped into one
-- paragraph, a line broke between set and its setting. A screen too narrow for the longest (a
-- pocket computer's 26 columns) broke each one there, its value alone on the next line: it
-- names sandbox setup instead, which asks the same and works at once (the install puts it on
-- this shell's path).
local function answerAdvice(allowed)
  local undo = allowed and { SETTING_ALLOW_FILES .. " none", SETTING_ALLOW_EXEC .. " false", SETTING_ALLOW_SCREEN .. " none" }
    or { SETTING_ALLOW_FILES .. " write", SETTING_ALLOW_EXEC .. " true", SETTING_ALLOW_SCREEN .. " control" };
  if term.getSize() < #("set " .. SETTING_ALLOW_SCREEN .. " control") then
    return { allowed and "Allowed. To undo it," or "Not allowed. To change it,", "run: sandbox setup" };
  end
  local advice = { allowed and "Allowed. Undo with:" or "Not allowed. Change it with:" };
  for _, line in ipairs(undo) do
    advice[#advice + 1] = "set " .. line;
  end
  return advice;
end

-- The host's access to set: what the options say; on a first install without them, the
-- answer to a question (default no; --no-questions takes the default); on an upgrade, nothing
-- (the owner's answers stay). Returns the sandbox.allow_files, sandbox.allow_exec and
-- sandbox.allow_screen values to set, nil for "leave", then after an answer the lines that
-- say how to change it, printed once installed (before, a failed install said how to change
-- a setting it never made).
local function chooseAccess(opts, old)
  local files, exec, screen = opts.files, opts.exec, opts.screen;
  local first = old == nil and not isSet(SETTING_ALLOW_FILES) and not isSet(SETTING_ALLOW_EXEC);
  if not first or files ~= nil or exec ~= nil or screen ~= nil then
    if first then
      -- say "not allowed" for what the options left out (the screen's default is none)
      return files or "none", exec == true, screen;
    end
    return files, exec, screen;
  elseif opts.noQuestions then
    -- The question's default answer, said as the answer is: a script's install said nothing
    -- of the host, and its player never learnt it may do nothing yet, nor how to change that.
    return "none", false, nil, answerAdvice(false);
  end
  -- One print, so CC wraps it at the screen's width (a pocket computer's is 26).
  print("The gateway's host (e.g. an AI agent) can read and write this computer's files, run Lua and programs on it, and see and type on its screen.");
  write("Allow it? [y/N] ");
  local answer = read() or "";
  if answer:match("^%s*[yY]") ~= nil then
    -- The screen is part of the yes: typing on it is as strong as running programs.
    return "write", true, "control", answerAdvice(true);
  end
  return "none", false, nil, answerAdvice(false);
end

-- Prints what the host may do with this computer now, in the question's answers' words: after
-- options that set it, which skip the question and its answer (the screen left private on a
-- first install, or the settings an upgrade keeps, went unsaid). As the daemon reads them.
local function printAccess()
  local allowed, notAllowed = {}, {};
  local function say(yes, what)
    table.insert(yes and allowed or notAllowed, what);
  end
  local files, screen = settingsRules.filesAllowed(), settingsRules.screenAllowed();
  if files == settingsRules.FILES_READ then
    say(true, "read files");
    say(false, "write files");
  else
    say(files == settingsRules.FILES_WRITE, files == settingsRules.FILES_WRITE and "read and write files" or "read or write files");
  end
  say(settingsRules.execAllowed(), "run Lua and programs");
  if screen == settingsRules.SCREEN_VIEW then
    say(true, "see the screen");
    say(false, "type on the screen");
  else
    say(screen == settingsRules.SCREEN_CONTROL, screen == settingsRules.SCREEN_CONTROL and "see and type on the screen" or "see or type on the screen");
  end
  if #allowed > 0 then
    print("Allowed: " .. table.concat(allowed, ", ") .. ".");
  end
  if #notAllowed > 0 then
    print("Not allowed: " .. table.concat(notAllowed, ", ") .. ".");
  end
end

-- Prints why nothing was installed or changed (after the line that says what failed), in one
-- row of a computer's 51 columns ("is as it was" took two from 0.5.10 on).
local function nothingChanged(old, still)
  if old ~= nil then
    printError("Nothing changed: trapos-sandbox " .. tostring(old.version) .. " " .. still .. ".");
  else
    printError("Nothing was installed.");
  end
end

-- After a line with the word uninstall mistyped (meantUninstall), typed as word: the word, and
-- the line to run on a row of its own. "In lower case" only where the case is what differs
-- (Uninstall): said of unistall, typed in lower case, it pointed at what was right.
local function printUninstallWord(word)
  print("To uninstall, the word is uninstall" .. (word:lower() == "uninstall" and ", in lower case:" or ":"));
  print("wget run " .. SOURCE.install .. " uninstall");
end

-- Puts the commands on the path of the shell the install line was typed in (wget run hands
-- the installer that shell's API), so that `sandbox` typed before the reboot runs (`sandbox
-- setup`, `sandbox help`; `sandbox status` says the daemon starts at the reboot) rather than
-- CraftOS's "No such program": the hook puts them on the path of the shell of each boot, this
-- one was started before. CC's shell.setPath is that shell's own, for its next command (other
-- multishell tabs keep theirs until the reboot). Nothing to do on TrapOS, whose shell has them.
local function commandsNow()
  if shell == nil or type(shell.path) ~= "function" or type(shell.setPath) ~= "function" then
    return;
  end
  local path = shell.path();
  if not string.find(":" .. path .. ":", ":" .. PROGRAMS .. ":", 1, true) then
    shell.setPath(path .. ":" .. PROGRAMS);
  end
  -- `help sandbox` too: the daemon adds the page's directory at each boot.
  path = help.path();
  if not string.find(":" .. path .. ":", ":" .. HELP_DIR .. ":", 1, true) then
    help.setPath(path .. ":" .. HELP_DIR);
  end
end

-- What CC's boot runs instead of the computer's startup files, which the client's advice knows
-- (the package's rule, as sandbox status says it).
local diskStartupDrive, driveName = adviceRules.diskStartupDrive, adviceRules.driveName;

-- Whether the player's /startup file can move to MOVED_STARTUP: not beside a /startup.lua,
-- which CC would then run in its place. CC runs /startup to completion before the files in
-- /startup/, so the line the player was told to add at its end never ran under the usual
-- startup program, one that never ends (a door's loop, a server's): the daemon never started
-- and nothing said why. In /startup/, after the hook, it runs beside the daemon whatever it does.
local function startupCanMove()
  return not fs.exists("/startup.lua");
end

-- Asks whether the player's startup file (/startup or /startup.lua) may move: never done
-- without the player's yes, the answer typed or --move-startup on the line (a script
-- installing on many computers; with --no-questions alone it is no).
local function askToMoveStartup(opts, startup)
  if opts.moveStartup then
    return true;
  elseif opts.noQuestions then
    return false;
  end
  -- One print, so CC wraps it at the screen's width (a pocket computer's is 26). The move is
  -- put as what it would do: "Moved to ..., it runs" read as done already, before the
  -- question and the "Moved ... To undo:" of the move made.
  print("Your " .. startup .. " runs before the daemon at boot: a program in it that never ends (a loop) keeps the daemon from starting. "
    .. "In " .. MOVED_STARTUP .. " it would run beside the daemon.");
  write("Move it there? [y/N] ");
  return (read() or ""):match("^%s*[yY]") ~= nil;
end

-- The files to put on the computer: the package's (bodies, by path) and, unless TrapOS
-- starts the daemon, the hook at hookPath, each with the temporary name it is written to.
local function packageFiles(bodies, hookPath)
  local list = {};
  for _, path in ipairs(SOURCE.paths) do
    list[#list + 1] = { path = "/" .. path, temp = "/" .. path .. NEW, body = bodies[path] };
  end
  if hookPath ~= nil then
    -- Not beside the hook: CC would run a stray file in /startup/ at boot.
    list[#list + 1] = { path = hookPath, temp = HOOK_NEW, body = SOURCE.hook };
  end
  return list;
end

-- The files of list that must be written (changed) and those that hold their bytes already
-- (unchanged: an upgrade leaves them as they are); or nil, having said so, when the drive has
-- too little room for the changed ones (less what a stopped install left in their temporary
-- places), the directories they need and the records (the manifest naming hookPath and dirs,
-- and .settings), each written beside the old one. movingStartup: the player's /startup file
-- moves into a new /startup/ (moveStartupFile), a directory that costs room as any other; on a
-- drive without it the install wrote everything, then could not save .settings.
local function roomFor(old, list, hookPath, dirs, movingStartup)
  local changed, unchanged, need = {}, {}, 0;
  for _, f in ipairs(list) do
    if holds(f.path, f.body) then
      unchanged[#unchanged + 1] = f;
    else
      changed[#changed + 1] = f;
      need = need + math.max(#f.body, MINIMUM_FILE_COST);
      if fs.exists(f.temp) and not fs.isDir(f.temp) then
        -- Left by a stopped install: written over, its room is the install's own (counted as
        -- the player's, it asked them to free its size in files of their own).
        need = need - math.max(fs.getSize(f.temp), MINIMUM_FILE_COST);
      end
    end
  end
  local newDirs = {};
  for _, f in ipairs(changed) do
    noteNewDirs(f.path, newDirs);
  end
  need = need + (#newDirs + (movingStartup and 1 or 0)) * MINIMUM_FILE_COST;
  local records = #textutils.serialize({ version = SOURCE.version, files = SOURCE.paths, hook = hookPath, dirs = dirs });
  local settingsNow = fs.exists("/.settings") and fs.getSize("/.settings") or 0;
  need = need + math.max(records, MINIMUM_FILE_COST) + math.max(settingsNow + SETTINGS_GROWTH, MINIMUM_FILE_COST);
  local free = fs.getFreeSpace("/");
  if type(free) == "number" and need > free then
    -- How much to free: the player read only that the drive was full (CC's drive program
    -- says what is free, not what the install needs), and an upgrade needed every file's room
    -- twice.
    printError("The computer's drive has too little room: trapos-sandbox needs " .. kilobytesUp(need) .. "KB, "
      .. kilobytesDown(free) .. "KB are free.");
    printAgain("Free at least " .. (kilobytesUp(need) - kilobytesDown(free)) .. "KB (delete files you do not need), then run the install line again:");
    nothingChanged(old, "still works");
    return nil;
  end
  return changed, unchanged;
end

-- The player's files in /startup/ whose names sort before the hook's (0-server.lua,
-- 00-alarm.lua, a name beginning with a dash or a dot), each with a name of its own that sorts
-- after it and is free (the same without what comes before its first letter, else with z in
-- front). CC runs the files in /startup/ in name order, each to completion, so these run before
-- the hook: a program there that never ends keeps the daemon from starting, as a /startup.lua
-- does. (fs.list's order, by character code, is Lua's < on these names.)
-- given: the names in /startup/ that advice printed before names already (a set), which none
-- of these takes.
local function startupFilesBeforeHook(given)
  local before = {};
  local hookName = fs.getName(HOOK);
  if not fs.isDir("/startup") then
    return before;
  end
  -- The renames given so far: -server.lua and 0-server.lua both read server.lua, and the
  -- second mv, typed as printed, would fail on the first one's file.
  given = given or {};
  for _, name in ipairs(fs.list("/startup")) do
    if name < hookName and not fs.isDir("/startup/" .. name) then
      local renamed = name:gsub("^[^%a]+", "");
      if renamed == "" then
        renamed = name;
      end
      while renamed <= hookName or fs.exists("/startup/" .. renamed) or given[renamed] do
        renamed = "z" .. renamed;
      end
      given[renamed] = true;
      before[#before + 1] = { name = name, renamed = renamed };
    end
  end
  return before;
end

-- The name in /startup/ for the player's /startup.lua that the advice's mv gives it: its own
-- (MOVED_STARTUP's, as `mv startup.lua startup` keeps it) when free, else startup2.lua,
-- startup3.lua, …, the first free one. CC's mv refuses a name that is taken ("Destination
-- exists"); each of these sorts after the hook.
local function freeStartupName()
  local name, n = fs.getName(MOVED_STARTUP), 1;
  while fs.exists("/startup/" .. name) do
    n = n + 1;
    name = "startup" .. n .. ".lua";
  end
  return name;
end

-- Whether the daemon that runs is this version's; not known, Run: reboot is said.
local function daemonRunsThis()
  local status = daemonStatus();
  return status ~= nil and status.version == SOURCE.version;
end

local function install(opts)
  local old = readManifest();
  -- The startup file of the player's moved to MOVED_STARTUP, for the undo printed at the end.
  local movedStartup = finishStoppedMove() and "/startup" or nil;

  -- 0. The answers, and the password checked with the gateway, before anything is written.
  local url = settings.get(SETTING_URL);
  if type(url) ~= "string" or url:match("^%s*$") then
    url = nil;
  end
  local password, onLine, passwordSet = choosePassword(opts, old);
  local unchecked, uncheckedWhy, keptCredential = nil, nil, onLine ~= nil;
  local replacedCredential = nil; -- why the gateway refused the credential the line's password replaces
  if url == nil or wsUrl(url) == SOURCE.websocket then
    -- Said before the check: a gateway that takes the connection and never answers (stopped,
    -- overloaded) holds the check for CC's 30 s connect timeout and then the first download
    -- for its own, and a screen showing nothing for a minute read as an installer that hung.
    print("Checking the password with the gateway...");
    local verdict, why, served = checkPassword(password);
    if verdict == true and why == "issued" and keptCredential then
      -- trap-sandbox credentials add: not a link. Only a line with a password of its own
      -- kept anything; without one the computer's setting is simply used.
      keptCredential = "set by hand";
    end
    if verdict == false and onLine ~= nil then
      password, keptCredential, replacedCredential = onLine, false, why;
      passwordSet = false;
      verdict, why, served = checkPassword(password);
    end
    if served ~= nil and served ~= SOURCE.version then
      -- An installer saved as a program (wget without run, on a floppy for a friend) and run
      -- after the gateway was upgraded: its list of files and its version are the old ones,
      -- the files it would download the new ones, and the client it made would be neither.
      printAgain("This installer is trapos-sandbox " .. SOURCE.version .. "'s, saved before the gateway moved on to " ..
        served .. ". Run the gateway's install line:");
      nothingChanged(old, "is kept");
      return false;
    end
    if verdict == false then
      -- The line to run on a line of its own: after the sentence it began mid-line, and a
      -- narrow screen broke it anywhere.
      printError(refusal(password, why, passwordSet) .. ". Run again with the gateway's password (its SANDBOX_PASSWORD):");
      print("wget run " .. SOURCE.install .. " <password>");
      -- Typed (or pasted) at the prompt's stars, or set before: what it hides cannot be seen.
      local doubt, doubtWhy = adviceRules.passwordDoubt(password);
      if opts.password ~= nil and meantUninstall(opts.password) then
        printUninstallWord(opts.password);
      elseif opts.password ~= nil and opts.password:find("^'.+'$") then
        -- A Unix shell's quotes ('s3cret'), which CC's shell keeps as part of the word.
        print("The password is in single quotes, which CC's shell keeps as part of it: if they are not, type it without.");
      elseif doubt == "space" then
        print("The password " .. doubtWhy .. ", type it without.");
      elseif doubt == "unheld" then
        print("The password " .. doubtWhy .. ".");
      end
      nothingChanged(old, "is kept");
      return false;
    elseif verdict == nil then
      unchecked, uncheckedWhy = uncheckedAdvice(why, true), why;
    end
  else
    unchecked = "The password was not checked: sandbox.url names another gateway.";
  end
  -- 1. Every file of the package downloaded, and the room it needs counted, before any
  -- question: a gateway gone since the check, or a drive without room, is told before the
  -- player answers anything (they answered, then read that nothing was installed).
  local bodies, urls = {}, {};
  for _, path in ipairs(SOURCE.paths) do
    urls[#urls + 1] = { key = path, shown = "/" .. path, url = SOURCE.files .. path };
  end
  for _, u in ipairs(urls) do
    local body, err = download(u.url);
    if body == nil then
      printError("Could not get " .. u.shown .. ": " .. tostring(err));
      if uncheckedWhy ~= nil then
        -- Often the same cause (the gateway went away); when not, the player needs both.
        printError(uncheckedAdvice(uncheckedWhy, false));
      end
      printAgain("Check that the gateway runs, then run the install line again:");
      nothingChanged(old, "still works");
      return false;
    end
    bodies[u.key] = body;
  end
  local trapos = isTrapOS();
  local droppedHook = nil; -- the last install's hook, removed since TrapOS starts the daemon
  local removedBeside = false; -- whether the last install's hook beside (HOOK_BESIDE) was removed
  local droppedCopy = false; -- whether the last install's copy of its installer was removed
  local hookPath, runFrom = nil, nil;
  if not trapos then
    hookPath, runFrom = hookPlace(old);
  end
  local dirs = old and old.dirs or {};
  if roomFor(old, packageFiles(bodies, hookPath), hookPath, dirs) == nil then
    return false;
  end

  local files, exec, screen, accessAdvice = chooseAccess(opts, old);
  -- A /startup that names the hook (the line an earlier install advised) is asked about too:
  -- a program that never ends never reaches that line. Moved, the hook goes into /startup/
  -- and the one beside is removed, so the line (the player's file is never edited) can never
  -- start a second daemon; the player is told to delete it.
  local canMove, moveStartup, hookLine = false, false, false;
  if runFrom == "/startup" and startupCanMove() then
    canMove, moveStartup, hookLine = true, askToMoveStartup(opts, runFrom), namesHook(runFrom);
    if moveStartup then
      hookPath, runFrom = HOOK, nil;
    end
  elseif opts.moveStartup and runFrom == "/startup" then
    -- Asked for by name: a script's operator reads why this computer's was not moved.
    printError("/startup was not moved: CC would run your /startup.lua in its place.");
  end
  -- A /startup.lua runs before the hook as a /startup file does, and is asked about the same
  -- way (answered no, the advice below names the command): one rename, which a computer
  -- stopped at any point leaves in one place or the other, never overwriting a program there.
  -- It may name the hook too: a /startup stopped on its way into /startup/ (moveStartupFile).
  local moveStartupLua = false;
  if hookPath == HOOK and runFrom == nil and fs.exists("/startup.lua") and not fs.isDir("/startup.lua") then
    if not fs.exists(MOVED_STARTUP) then
      moveStartupLua, hookLine = askToMoveStartup(opts, "/startup.lua"), namesHook("/startup.lua");
    elseif opts.moveStartup then
      printError("/startup.lua was not moved: " .. MOVED_STARTUP .. " is another program.");
    end
  end

  -- The files as the answers place them (the hook in /startup/ once the player's /startup
  -- moves), counted again with the directory /startup/ that move makes.
  local downloads = packageFiles(bodies, hookPath);
  for _, f in ipairs(downloads) do
    noteNewDirs(f.path, dirs);
  end
  local changed, unchanged = roomFor(old, downloads, hookPath, dirs, moveStartup);
  if changed == nil then
    return false;
  end

  -- 2. The changed files beside their place; the first failure undoes this step and stops.
  local written = {};
  for _, f in ipairs(changed) do
    local ok, err, full = writeFile(f.temp, f.body);
    if not ok then
      for _, done in ipairs(written) do
        fs.delete(done.temp);
      end
      removeEmptyDirs(old and {} or dirs);
      -- The room was there when counted (step 1): a drive full now is the rare case.
      printError(couldNotWrite(f, err));
      printAgain(full and DISK_FULL or "Fix that, then run the install line again:");
      nothingChanged(old, "still works");
      return false;
    end
    written[#written + 1] = f;
  end

  -- 3. All arrived: swap them in, then drop what the new version no longer ships. The hook's
  -- place in /startup/ needs the player's /startup file moved out of the way first; when it
  -- cannot move, the hook goes beside it, as without the player's yes.
  if moveStartup then
    local ok, err = moveStartupFile();
    if ok then
      movedStartup = "/startup";
    else
      printError("Could not move /startup: " .. (reasonAt(err, "/startup") or tostring(err)));
      hookPath, runFrom = HOOK_BESIDE, "/startup";
      for _, f in ipairs(written) do
        if f.temp == HOOK_NEW then
          f.path = hookPath;
        end
      end
    end
  end
  local keep = {};
  for _, f in ipairs(written) do
    swapIn(f.path, f.temp);
    keep[f.path] = true;
  end
  if moveStartupLua then
    local ok, err = pcall(fs.move, "/startup.lua", MOVED_STARTUP);
    if ok then
      movedStartup = "/startup.lua";
    else
      printError("Could not move /startup.lua: " .. message(err));
    end
  end
  for _, f in ipairs(unchanged) do
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
      removedBeside = old.hook == HOOK_BESIDE;
      if trapos then
        droppedHook = old.hook;
      end
    end
    -- The installer's copy an older install kept for its uninstall: sandbox uninstall does
    -- that now, from a few KB of the package.
    if old.installer == OLD_INSTALLER_COPY then
      for _, p in ipairs({ OLD_INSTALLER_COPY, OLD_INSTALLER_COPY .. NEW }) do
        if fs.exists(p) and not fs.isDir(p) then
          fs.delete(p);
          droppedCopy = droppedCopy or p == OLD_INSTALLER_COPY;
        end
      end
    end
  end

  -- 4. Settings, as strings; an upgrade keeps what the player set.
  if url == nil then
    url = SOURCE.websocket;
    settings.set(SETTING_URL, url);
  end
  -- Another secret forgets the gateways that proved themselves with the old one (the daemon's
  -- record, libsandboxproof): it is for this gateway's secret, trusted on its first hello.
  local before = settings.get(SETTING_PASSWORD);
  if tostring(before or "") ~= password then
    for _, p in ipairs({ places.GATEWAY_PROOFS, places.GATEWAY_PROOFS .. NEW }) do
      if fs.exists(p) then
        fs.delete(p);
      end
    end
  end
  if password == "" then
    settings.unset(SETTING_PASSWORD);
  else
    settings.set(SETTING_PASSWORD, password);
  end
  if files ~= nil then
    settings.set(SETTING_ALLOW_FILES, files);
  end
  if exec ~= nil then
    settings.set(SETTING_ALLOW_EXEC, exec);
  end
  if screen ~= nil then
    settings.set(SETTING_ALLOW_SCREEN, screen);
  end

  -- The manifest first: a later run (or uninstall) knows these files even if the settings fail.
  local manifest = { version = SOURCE.version, files = SOURCE.paths, hook = hookPath, dirs = dirs };
  if not replaceFile(MANIFEST, textutils.serialize(manifest)) then
    printError("Installed the files of trapos-sandbox " .. SOURCE.version .. ", but the drive had no room left to record them (" .. MANIFEST .. ") or to save .settings.");
    printAgain(DISK_FULL);
    return false;
  end
  if not saveSettings() then
    printError("Installed trapos-sandbox " .. SOURCE.version .. ", but .settings could not be saved: the computer does not know the gateway yet.");
    printAgain(DISK_FULL);
    return false;
  end

  if old ~= nil and old.version == SOURCE.version then
    print("Reinstalled trapos-sandbox " .. SOURCE.version .. ".");
  elseif old ~= nil and newerVersion(old.version, SOURCE.version) then
    -- A gateway older than the computer's client (a newer client works with it as it is).
    print("Downgraded trapos-sandbox " .. tostring(old.version) .. " to " .. SOURCE.version .. ".");
    print("(the gateway serves an older client)");
  elseif old ~= nil then
    print("Upgraded trapos-sandbox " .. tostring(old.version) .. " to " .. SOURCE.version .. ".");
  else
    print("Installed trapos-sandbox " .. SOURCE.version .. ".");
  end
  -- The URL as the daemon reads it (host:port is ws://host:port/trapos/ws): printed as set, the
  -- player could not tell whether a URL without its scheme would do. What was set beside it.
  local reads = wsUrl(url) or url;
  print("sandbox.url is " .. reads .. (reads ~= url and (" (set as " .. url .. ")") or ""));
  if keptCredential then
    print("Kept this computer's own credential (" .. (keptCredential == "set by hand" and keptCredential or "sandbox link")
      .. "): the password on the line was not needed.");
  elseif replacedCredential ~= nil then
    -- The computer leaves its account for the shared password's: its player must know.
    print("This computer's own credential was refused (" .. (isRevoked(replacedCredential) and "revoked" or "not this gateway's")
      .. "): it now uses the password on the line. To link it to your account again: sandbox link");
  end
  if wsUrl(url) ~= SOURCE.websocket then
    print("(this gateway is " .. SOURCE.websocket .. "; change it with: sandbox setup)");
  end
  if droppedCopy then
    -- The player may know the copy's command, which is gone now: the one that replaces it, on
    -- a row of its own.
    print("Removed the installer's copy " .. OLD_INSTALLER_COPY .. ". To uninstall, also without the gateway, run:");
    print("sandbox uninstall");
  end
  for _, line in ipairs(accessAdvice or {}) do
    print(line);
  end
  if opts.files ~= nil or opts.exec ~= nil or opts.screen ~= nil then
    printAccess();
  end
  if opts.password ~= nil and meantUninstall(opts.password, 1) then
    -- Installed all the same: a gateway without a password takes any, a linked computer
    -- keeps its own credential. The player meant to remove it (a letter off at most: two
    -- would take install, which a player typing it meant).
    printUninstallWord(opts.password);
  end
  if unchecked ~= nil then
    printError(unchecked);
  end
  commandsNow();
  local bootDrive = diskStartupDrive();
  if bootDrive ~= nil then
    printError("The disk in " .. driveName(bootDrive) .. " has a startup file: CC runs it at boot instead of this "
      .. "computer's, so the daemon would not start. Take the disk out before you reboot.");
  end
  if settings.get("shell.allow_startup") == false then
    -- CC's rom/startup.lua then runs none of the computer's startup files, the hook (or
    -- TrapOS's autostart) among them; the reboot below would start nothing.
    printError("shell.allow_startup is false: CC runs no startup file at boot, so the daemon would not start. "
      .. "Run: set shell.allow_startup true");
  end
  if removedBeside then
    -- A startup file of the player's that still runs the hook beside, gone now (a /startup.lua
    -- kept at the move's question, one stopped on its way into /startup/): CC answers its line
    -- "No such program" at every boot. The player's file is never edited: they are told.
    for _, startup in ipairs({ "/startup.lua", MOVED_STARTUP }) do
      local told = startup == MOVED_STARTUP and movedStartup ~= nil and hookLine;
      if not told and fs.exists(startup) and not fs.isDir(startup) and namesHook(startup) then
        print("The startup hook " .. HOOK_BESIDE .. " is removed, "
          .. (trapos and "TrapOS starts the daemon" or "the daemon starts from /startup/") .. " now: delete its line from " .. startup .. ":");
        printHookCall();
      end
    end
  end
  local named = {}; -- the names in /startup/ the advice gives, so that no two give the same
  if not trapos and runFrom == nil and fs.exists("/startup.lua") and not fs.isDir("/startup.lua") then
    -- CC runs /startup.lua first, then the files in /startup/ (the hook among them), each to
    -- completion: a server's loop there (the usual place for one) held the boot before the
    -- hook, and the computer never connected. The hook runs the files after it in /startup/
    -- beside the daemon.
    -- The command on a row of its own, short enough for a pocket computer's 26 columns (mv
    -- into a directory keeps the name) while /startup/startup.lua is free; else it names a
    -- free name there, and wraps there as the renames below do.
    local name = freeStartupName();
    named[name] = true;
    print("Your /startup.lua runs before the daemon at boot: a program in it that never ends (a server's loop) "
      .. "keeps the daemon from starting. Move such a program into /startup/, whose files run beside the daemon:");
    print("mv startup.lua startup" .. (name == fs.getName(MOVED_STARTUP) and "" or ("/" .. name)));
    if opts.noQuestions and name == fs.getName(MOVED_STARTUP) then
      -- No without a yes: a stopped move's /startup.lua looks like any other.
      print("(or run the install line again with --move-startup)");
    end
  end
  if not trapos and hookPath == HOOK then
    -- As for /startup.lua above; the command on a row of its own, which on a pocket computer
    -- wraps where the names are long.
    for _, file in ipairs(startupFilesBeforeHook(named)) do
      print("Your /startup/" .. file.name .. " runs before the daemon at boot (CC runs the files in /startup/ in name order, "
        .. "the daemon's is " .. fs.getName(HOOK) .. "): a program in it that never ends keeps the daemon from starting. "
        .. "Rename such a program to sort after it:");
      print("mv startup/" .. file.name .. " startup/" .. file.renamed);
    end
  end
  if movedStartup ~= nil then
    -- The undo on a row of its own: back at the root (as /startup.lua, which CC runs as it
    -- ran /startup) it runs before the daemon again.
    print("Moved " .. movedStartup .. " to " .. MOVED_STARTUP .. ": it runs beside the daemon. To undo:");
    print("mv startup/startup.lua /");
    if hookLine then
      print("Its line that ran the daemon is not needed now, delete it from " .. MOVED_STARTUP .. ":");
      printHookCall();
    end
  end
  if trapos then
    print("TrapOS starts the daemon at boot (autostart).");
    if droppedHook ~= nil then
      -- A program named ccpm is all that tells TrapOS apart, and any file can have its name
      -- (one the host wrote with sandbox.allow_files write, one the player downloaded): without
      -- the hook a plain CC computer starts the daemon at no boot, so the player reads which
      -- file decided it, and the way back.
      print("Removed the startup hook " .. droppedHook .. " of the last install: " .. trapos
        .. " is TrapOS's ccpm. If this computer is not TrapOS, delete " .. trapos
        .. " and run the install line again, or the daemon starts at no boot.");
    end
  elseif canMove and runFrom ~= nil then
    -- A program that never ends never reaches a line at its end (the one below, or the one
    -- the player added before); the move is the way then. Run again with --no-questions,
    -- the same line would not ask: the option is the yes.
    print("If your /startup never ends, a line at its end never runs: run the install line again "
      .. (opts.noQuestions and "with --move-startup." or "and let it move /startup."));
  end
  -- TrapOS too: its autostart starts the daemon at a boot, so a first install reboots as
  -- CraftOS's does, and a reinstall whose daemon runs these files needs none.
  if not trapos and runFrom ~= nil and not namesHook(runFrom) then
    print("To start the daemon at boot, add this line");
    print("at the end of " .. runFrom .. ":");
    printHookCall();
    -- Rebooted first, the computer knows no sandbox command: the hook puts it on the path.
    print("Add it, then run: reboot");
  elseif old and #changed == 0 and not movedStartup and daemonRunsThis() then
    -- No reboot to come first: the check is the step itself, not a "Then" after none.
    print("The daemon runs these files: no reboot needed.");
    print("Run: sandbox health");
    return true;
  else
    print("Run: reboot");
  end
  print("Then: sandbox health");
  return true;
end

-- The words of the line with those that are not options (a password with a space, which CC's
-- shell split into words) as one, in double quotes, which CC's shell takes as one word; the
-- options after it as typed: a list of the line's words after the URL. Nil when a word holds
-- a " (the shell has no escape for it). True second when the words were in single quotes, as
-- a Unix shell takes a password with a space ('my pass'): CC's shell groups double quotes
-- only, and kept the single ones as part of the password, so they are left out of the line
-- (it gave "'my pass'" in double quotes, a password with the quotes in it).
local function withQuotedPassword(words)
  local password, options = {}, {};
  for _, word in ipairs(words) do
    if word:find('"', 1, true) then
      return nil;
    end
    table.insert(word:match("^%-%-") and options or password, word);
  end
  local joined = table.concat(password, " ");
  local unquoted = joined:match("^'([^']*)'$");
  return { '"' .. (unquoted or joined) .. '"', table.unpack(options) }, unquoted ~= nil;
end

-- Prints the install line with words after its URL, on rows of its own: a word that does not
-- fit the rest of a row starts the next, so that a quoted password ("my pass") is not broken
-- at its space, where a pocket computer's row ended and it read as two words again.
local function printInstallLine(words)
  local width = term.getSize();
  write("wget run " .. SOURCE.install);
  for _, word in ipairs(words) do
    if term.getCursorPos() + #word > width and #word <= width then
      print();
      write(word);
    else
      write(" " .. word);
    end
  end
  print();
end

local opts, problem, wrong, guess = parseArgs({ ... });
if opts == nil then
  -- The fix on a line of its own, in words: the line with the gateway's URL is longer than
  -- the screen, and broke wherever it wrapped (the player recalls it with the Up key).
  if wrong == UNINSTALL_WITH_PASSWORD then
    printError("Nothing done: " .. problem .. ". To uninstall, run:");
    print("wget run " .. SOURCE.install .. " uninstall");
    return false;
  end
  printError("Nothing done: " .. problem .. ".");
  if wrong == UNINSTALL_MISTYPED_WITH_PASSWORD then
    printUninstallWord(guess);
    return false;
  end
  local quoted, singleQuotes = nil, false;
  if wrong == SECOND_PASSWORD then
    quoted, singleQuotes = withQuotedPassword({ ... });
  end
  if quoted then
    -- The line on a row of its own, as the uninstall line above; the options' --help, which
    -- stood between the problem and this fix, is not this line's: its options were right.
    if singleQuotes then
      printError("A password with a space goes in double quotes (CC's shell keeps a ' as part of the password):");
    else
      printError("A password with a space goes in quotes:");
    end
    printInstallLine(quoted);
    return false;
  end
  if wrong == TWO_PASSWORDS then
    printError("The line takes one: the gateway's, in quotes if it has a space.");
    return false;
  end
  if guess then
    -- An option near one of the installer's is that one mistyped, not a password.
    printError("Did you mean " .. guess .. "?");
  end
  printError(FIX_OPTIONS);
  if wrong == UNKNOWN and not guess then
    printError(FIX_DASHED_PASSWORD);
  end
  return false;
elseif opts.help then
  usage();
  return true;
elseif opts.uninstall then
  return uninstaller.uninstall(SOURCE.paths);
end
-- Ctrl-T (CC's terminate, raised as the error "Terminated") at a question, or while the
-- password is checked or the files download: CC's "Terminated" alone left the player unsure
-- what state the computer was in. It can only land before anything is written: from the
-- first file written to the last line printed the install never yields, and a terminate
-- waits for a yield. One line, which a pocket computer's 26 columns wrap between words.
local ok, result = pcall(install, opts);
if ok then
  return result;
elseif result ~= "Terminated" then
  error(result, 0);
end
if term.getCursorPos() > 1 then
  print(); -- after the question's prompt, on a row of its own
end
local old = readManifest();
if old ~= nil then
  printError("Terminated: nothing changed, trapos-sandbox " .. tostring(old.version) .. " is kept.");
else
  printError("Terminated: nothing was installed.");
end
return false;
