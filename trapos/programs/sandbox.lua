-- sandbox: talk to the trap-sandbox gateway through the sandbox daemon.
-- `sandbox health` asks the gateway to probe itself and opencode; `sandbox status` shows the
-- daemon's connection; `sandbox reconnect` makes it connect again (e.g. after fixing the
-- password, or after `sandbox stop`, which disconnects it); `sandbox setup [url]` asks for the
-- URL, the password and what the host may do, each with the current value as the answer to
-- Enter, and saves them; `sandbox link [KEY]` links the computer to an account (a code the
-- account holder approves, or an enrollment key) and saves the credential it gets as the
-- password; `sandbox uninstall` removes the client, without the gateway. User errors are one
-- red line (error(msg, 0)) that names the fix, and a failed run.

-- sandbox uninstall (libsandboxuninstall), before the client's other libraries load: it needs
-- only what the installer's uninstall needs, so that it removes a client an install left
-- half-swapped in, or one missing a file (the package lists these before this program, and
-- the installer swaps them in in that order).
local function uninstall()
  local layout = require('/apis/libsandboxlayout');
  local laidOut = layout.fitted(_ENV);
  local uninstaller = require('/apis/libsandboxuninstall').new({
    print = laidOut.print,
    printError = laidOut.printError,
    layout = layout,
    settings = require('/apis/libsandboxsettings'),
    advice = require('/apis/libsandboxadvice'),
  });
  uninstaller.uninstall(nil, function(version)
    laidOut.writeQuestion("Remove trapos-sandbox " .. version .. " and its settings from this computer? [y/N] ");
    if not layout.roomToAnswer(term) then -- as ask's questions (below), before libsandbox loads
      print();
    end
    local answer = read();
    return answer ~= nil and (answer:lower() == "y" or answer:lower() == "yes");
  end);
end
if select("#", ...) == 1 and ... == "uninstall" then
  uninstall();
  return;
end

-- libsandbox's own requires load every library of the client. One missing (this program
-- copied alone to another computer, on a floppy for a friend, or a file of the client deleted
-- to free space) stopped require with CC's traceback and the seven places it looked: the
-- player reads which file is missing and what brings the client back whole, as a user error.
local loaded, libsandbox = pcall(require, '/apis/libsandbox');
if not loaded then
  -- The line from sandbox.url (libsandboxsettings), unless that library is the one missing.
  local function installLine()
    local found, settingsLib = pcall(require, '/apis/libsandboxsettings');
    return found and settingsLib.installLine() or "wget run .../trapos/install, as its operator gives it out";
  end
  local missing = tostring(libsandbox):match("module '(/apis/[^']+)' not found");
  error(missing == nil and libsandbox or ("sandbox: " .. missing .. ".lua is missing: the trapos-sandbox client is "
    .. "not whole on this computer. Install it with the gateway's install line (" .. installLine() .. ")."), 0);
end
local advice = require('/apis/libsandboxadvice');
local linkLib = require('/apis/libsandboxlink');
local libsandboxVersion = require('/apis/libsandboxversion');
local VERSION = libsandboxVersion.VERSION;
local LOG_PATH = require('/apis/libsandboxlog').LOG_PATH;
local settingsLib = require('/apis/libsandboxsettings');
local proofLib = require('/apis/libsandboxproof');
-- The gateway's own words, shown as one line of bounded length (a broken or hostile gateway may
-- send many lines, or 128 KiB).
local oneLine, accountName = require('/apis/libsandboxcodec').oneLine, require('/apis/libsandboxcodec').accountName;

-- What this command prints, its errors and questions too, is laid out by fitLongWords: a word
-- longer than a row (a URL on a pocket computer's 26 columns) starts a row of its own and
-- breaks before a "/", ":" or "." (libsandbox.fitLongWords), where CC broke it wherever the
-- row ended ("url: ws://192.168.100.200:44" / "44/trapos/ws").
local fitLongWords = libsandbox.fitLongWords;
local layout = require('/apis/libsandboxlayout');
local laidOut = layout.fitted(_ENV);
local print, write = laidOut.print, laidOut.write;
-- A line that holds the gateway's words (an account, an error it sent, a detail of its
-- agent), among lines a player reads by their start (status, health, link's account and its
-- question): its rows after the first are indented, so that no row of the gateway's choosing
-- starts where a line of the client's does (libsandboxlayout.hangingRows).
local printHanging, writeHangingQuestion = laidOut.printHanging, laidOut.writeHangingQuestion;
local writeQuestion = laidOut.writeQuestion;

local MSG_URL_NOT_SET = "sandbox.url is not set. Run: sandbox setup";
local MSG_HTTP_DISABLED = "The http API is disabled on this computer (enable http in the server config)";

-- What `sandbox setup` shows for a password that is set: never the password, nor its length.
local PASSWORD_MASK = "********";
-- The answers `sandbox setup` takes for sandbox.allow_exec.
local EXEC_ANSWERS = { yes = true, y = true, ["true"] = true, no = false, n = false, ["false"] = false };

-- The computer's screen width; a narrower one (a pocket computer's 26 columns) gets help laid
-- out for it: the 51-column help wraps there into broken columns and, twice as long as the
-- screen's 20 rows, scrolls its top away.
local SCREEN_WIDTH = 51;

local function narrowScreen()
  local width = term.getSize();
  return width < SCREEN_WIDTH;
end

-- The commands as help lists them: the name, what it does on a computer's 51 columns, and on a
-- pocket computer's 26.
local HELP = {
  { "health", "check the gateway and its AI agent", "gateway, AI" },
  { "status", "show URL, connection, last error", "connection" },
  { "reconnect", "make the daemon connect again", "connect now" },
  { "stop", "disconnect until reconnect", "disconnect" },
  { "setup [url]", "set the URL, password, host access", "connect it" },
  { "link [KEY]", "link this computer to your account", "join account" },
  { "uninstall", "remove the client (needs no gateway)", "remove it" },
  { "help", "this help (also --help, -h)", "this help" },
  { "--version", "show the version", "the version" },
};

-- The rows a command's output shares the screen with (help, status): the command typed above
-- it and the prompt below, so that its first line stays on the screen.
local SPARE_ROWS = 2;

-- Prints lines: all of them fit the screen's width, and they are few enough to fit its height.
local function printLines(lines)
  for _, line in ipairs(lines) do
    print(line);
  end
end

-- Every line fits the screen: 51 columns, or at most 25 columns on a narrower one; on a
-- screen too short for the settings' list (a turtle's 13 rows) they are named in one line,
-- and this help's own line is left out.
local function usage()
  local narrow = narrowScreen();
  local _, height = term.getSize();
  local lines = { "Usage: sandbox <command>" };
  -- On a screen too short for every command and the settings' two lines (a turtle's 13 rows),
  -- the one for this help, which the player is reading, is left out.
  local short = narrow and 1 + #HELP + 2 + SPARE_ROWS > height;
  for _, command in ipairs(HELP) do
    if narrow and not (short and command[1] == "help") then
      lines[#lines + 1] = string.format(" %-11s %s", command[1], command[3]);
    elseif not narrow then
      lines[#lines + 1] = string.format("  %-11s %s", command[1], command[2]);
    end
  end
  if not narrow then
    lines[#lines + 1] = "Settings: sandbox.url, sandbox.password,";
    lines[#lines + 1] = "  sandbox.allow_files (none|read|write),";
    lines[#lines + 1] = "  sandbox.allow_exec (true|false),";
    lines[#lines + 1] = "  sandbox.ai_confirm (true|false),";
    lines[#lines + 1] = "  sandbox.allow_screen (none|view|control)";
    printLines(lines);
    return;
  end
  local settingsList = {
    "Settings: sandbox.url,", " sandbox.password,", " sandbox.allow_files,", " sandbox.allow_exec,",
    " sandbox.ai_confirm,", " sandbox.allow_screen",
  };
  if #lines + #settingsList + 1 + SPARE_ROWS > height then
    settingsList = { "Settings: sandbox.*;" };
  end
  for _, line in ipairs(settingsList) do
    lines[#lines + 1] = line;
  end
  lines[#lines + 1] = "set <name> describes one";
  printLines(lines);
end

-- The shell prints the error from the row's start.
local function fail(message)
  error(fitLongWords(tostring(message), (term.getSize())), 0);
end

-- The rows of a command to type on the host's shell, given as its arguments, laid out for
-- this screen (libsandboxlayout.commandRows).
local function commandRows(args)
  return layout.commandRows(args, (term.getSize()));
end

-- Fails with message, then the command to type on this computer (its words) on rows of its
-- own, as commandRows lays it out: in the sentence, the screen broke it wherever the row ended
-- ("Run: sandbox setup" / "ws://<host>:4444"), and the first row read as the whole command.
local function failRun(message, words)
  fail(message .. " Run:\n" .. table.concat(layout.commandRows(words, (term.getSize()), true), "\n"));
end

-- Prints a command to type on the host, as commandRows lays it out.
local function printCommand(command)
  local words = {};
  for word in command:gmatch("%S+") do
    words[#words + 1] = word;
  end
  printLines(commandRows(words));
end

-- Turns the daemon's reason into advice the user can act on; retryIn is the seconds to its
-- next try, when its status says (libsandbox.retrySeconds).
local function explain(why, url, retryIn)
  return advice.explain(tostring(why or "unknown error"), url, settings.get(libsandbox.SETTING_PASSWORD), nil, retryIn);
end

local function checkSetup()
  if http == nil then
    fail(MSG_HTTP_DISABLED);
  end
  if libsandbox.normaliseUrl(settings.get(libsandbox.SETTING_URL)) == nil then
    fail(MSG_URL_NOT_SET);
  end
end

local function getStatus()
  local status = libsandbox.requestStatus();
  if status == nil then
    fail(libsandbox.noDaemon());
  end
  return status;
end

-- Returns the daemon's status once it is connected; fails with the reason otherwise.
-- A daemon still connecting (just booted, settings just changed) gets REQUEST_TIMEOUT seconds.
local function awaitConnection()
  local status = libsandbox.awaitConnection();
  if status == nil then
    fail(libsandbox.noDaemon());
  elseif not status.connected then
    fail("Not connected to the gateway: " .. libsandbox.explainStatus(status));
  end
  return status;
end

local function failRequest(err, url)
  if err.code == libsandbox.ERR_TIMEOUT then
    -- Its log, which the player may not see, says why: name who to ask.
    fail("The gateway did not answer within " .. libsandbox.REQUEST_TIMEOUT
      .. " seconds: it is overloaded or stuck; try again, or ask its operator to check its log");
  elseif err.code == libsandbox.ERR_NOT_CONNECTED then
    fail("Not connected to the gateway: " .. explain(oneLine(tostring(err.message)), url));
  end
  fail("The gateway refused the request: " .. oneLine(err.code) .. ": " .. oneLine(err.message));
end

-- What health adds when the gateway's agent (opencode) does not answer it: whose fix that is
-- (opencodeDetail reads as a fix for the player, "set OPENCODE_SERVER_PASSWORD"), and that
-- nothing but ai needs it: the host's requests to this computer go through the gateway alone.
local MSG_AGENT_DOWN = "The agent is down on the gateway's host: its operator must start or fix it"
  .. " (the detail above says why). Only ai needs it; files, Lua and the screen still work.";

-- What health says when opencode answers but the gateway knows the agent cannot work there
-- (probe_gateway's aiDetail: opencode has no model the agent is set to): opencodeOk: true
-- alone read as all well, and the player learnt otherwise from ai, after a wait.
local MSG_AGENT_CANNOT = "The agent cannot answer (tell the gateway's operator): ";

local function health()
  checkSetup();
  local status, ok, payload, err = libsandbox.whileWaiting(term, function()
    -- A daemon waiting out its reconnect delay tries now, and awaitConnection waits for that
    -- try: typed right after the gateway's restart, health said "nothing answers" for seconds.
    libsandbox.retryNow();
    local connected = awaitConnection();
    return connected, libsandbox.request("probe_gateway", {}, libsandbox.REQUEST_TIMEOUT);
  end);
  if not ok then
    failRequest(err, status.url);
  end
  printHanging("sandboxOk: " .. tostring(payload.sandboxOk == true));
  printHanging("opencodeOk: " .. tostring(payload.opencodeOk == true));
  if payload.opencodeOk ~= true then
    local detail = payload.opencodeDetail;
    printHanging("opencodeDetail: " .. (type(detail) == "string" and oneLine(detail) or "no detail given"));
  end
  -- opencode answering says nothing of whether ai can ask it: a gateway runs with its agent
  -- off unless its operator turned it on, and then starting opencode changes nothing.
  local available, aiErr = libsandbox.ai.available();
  local noAgent = not available and libsandbox.noAgentLine(aiErr) or nil;
  if noAgent ~= nil then
    printHanging(noAgent);
  elseif payload.opencodeOk ~= true then
    printHanging(MSG_AGENT_DOWN);
  elseif type(payload.aiDetail) == "string" then
    printHanging(MSG_AGENT_CANNOT .. oneLine(payload.aiDetail));
  end
end

-- The daemon that runs, when it is not the installed package's (an upgrade not rebooted
-- yet: the old daemon stays in memory until then): "trapos-sandbox 0.3.0", or nil.
local function olderDaemon(status)
  if status.version == libsandbox.VERSION then
    return nil;
  elseif type(status.version) == "string" then
    return "trapos-sandbox " .. oneLine(status.version);
  end
  return "an older trapos-sandbox"; -- one from before status named its version
end

-- " (credential set by hand)" for a computer connected with a credential issued by hand
-- (trap-sandbox credentials add, set as sandbox.password), not linked: it is no link, and
-- sandbox link's words for one are not its. "" otherwise (a gateway that does not say: linked).
local function byHand(status)
  if status.credentialKind == "issued" then
    return " (credential set by hand)";
  end
  return "";
end

-- The status's update line when the gateway serves a newer trapos-sandbox than this one
-- (status.served, from its hello answer): the fix is the gateway's install line, which
-- upgrades in place. nil when the served one is not newer, or unknown (an older gateway or
-- daemon). A served version is at most 3 digits a number (libsandboxversion.parse), so
-- "wget run" stays on one row at 26 columns as at 51.
local function updateLine(status)
  if not libsandboxVersion.newer(status.served, VERSION) then
    return nil;
  end
  local line = settingsLib.installLineFor(status.url);
  return "update: " .. status.served .. " is served: "
    .. (line or "run the gateway's install line to upgrade");
end

-- The status's proof line: whether this computer sends its secret only to a gateway that
-- proves itself first (docs/protocol.md, "The gateway proves itself"), and if not, why and
-- whose fix it is. nil without a URL (nothing to prove). A record (provesSince) is what the
-- daemon acts on, whatever answers now: "required" holds beside an error of a server that
-- did not prove itself. Without one, a connected gateway that did not say proves is one that
-- cannot (older, or without a password), and a daemon not connected trusts the first answer.
-- On a narrower screen "required" goes without its date, which took a row of its own there
-- (a pocket computer's 26 columns, a turtle's 39) for what the player needs least.
local function proofLine(status)
  if status.url == nil then
    return nil;
  elseif type(status.provesSince) == "number" and narrowScreen() then
    return "proof: required";
  elseif type(status.provesSince) == "number" then
    return "proof: required since " .. proofLib.sinceShown(status.provesSince);
  elseif status.connected == true and status.proves == true then
    return "proof: offered, but this computer could not record it (is its disk full?): the next gateway to answer is trusted";
  elseif status.connected == true then
    return "proof: none: whatever answers at this URL is trusted (the gateway is older than 0.5.32"
      .. " or has no password: its operator can fix that)";
  end
  return "proof: none yet (the first to answer is trusted)";
end

-- The name a mistyped word most likely meant (the advice's rule, the installer's options' too).
local meant = advice.meant;

-- The prefix every setting of the sandbox's name starts with.
local SETTING_PREFIX = "sandbox.";
-- The longest name of a stray sandbox.* setting status names: one a player typed in set, not
-- a program's 10 000 bytes scrolling the status away.
local MAX_SHOWN_NAME = 64;

-- Whether name is one a player typed in CC's set and can type again to remove it: one word
-- (the shell splits set's arguments at spaces and tabs, a quote groups them) of bytes the
-- screen shows as themselves (no key types a control byte; a line break in it would print
-- lines of its own, a status line forged), at most MAX_SHOWN_NAME of them.
local function typedName(name)
  return #name <= MAX_SHOWN_NAME and name:find("[^!#-~\161-\255]") == nil;
end

-- The lines that say to run command after lead, the command whole on a row of its own where
-- the two do not fit one (a pocket computer's 26 columns), as failUsage lays out a command.
local function runLines(lines, lead, command)
  if #lead + 1 + #command >= term.getSize() then
    lines[#lines + 1] = lead;
    lines[#lines + 1] = command;
  else
    lines[#lines + 1] = lead .. " " .. command;
  end
end

-- The lines that count the stray sandbox.* settings status has no room to name, after
-- others it named (more) or alone, and say where to see them all: /.settings holds each by
-- name, and edit scrolls through them.
local function moreStrayLines(count, more)
  local lines = {};
  if more then
    runLines(lines, count .. " more; see " .. (count == 1 and "it" or "them") .. " with:", "edit /.settings");
  else
    runLines(lines, count .. (count == 1 and " sandbox.* setting is" or " sandbox.* settings are")
      .. " none of the sandbox's; see " .. (count == 1 and "it" or "them") .. " with:", "edit /.settings");
  end
  return lines;
end

-- The rows lines take printed on this screen by printHanging.
local function rowsOf(lines)
  local width, rows = term.getSize(), 0;
  for _, line in ipairs(lines) do
    rows = rows + #layout.hangingRows(line, width);
  end
  return rows;
end

-- The lines that name each sandbox.* setting on this computer that is none of the sandbox's:
-- a name mistyped in CC's set, which saves any name and says nothing (`set
-- sandbox.allow_file write` left files at none, and status showed only that), with the
-- setting meant when one is near, and the line that removes it. At most rows rows: a
-- player's own program may use the prefix for many names, and two lines each scrolled the
-- status off the screen; the names past those that fit are counted, with where to see them.
local function straySettingLines(rows)
  if settings.getNames == nil then
    return {};
  end
  local known, suffixes = {}, {};
  for _, name in ipairs(libsandbox.SETTING_NAMES) do
    known[name] = true;
    suffixes[#suffixes + 1] = name:sub(#SETTING_PREFIX + 1);
  end
  -- Each name a player typed is an entry of its own; names no player typed (a program's
  -- settings.set) are counted, never printed, in one entry after them.
  local entries, untyped = {}, 0;
  for _, name in ipairs(settings.getNames()) do
    if name:sub(1, #SETTING_PREFIX) == SETTING_PREFIX and not known[name] then
      if typedName(name) then
        local guess = meant(name:sub(#SETTING_PREFIX + 1), suffixes);
        local entry = { names = 1, name .. " is not a setting of the sandbox"
          .. (guess and "; did you mean " .. SETTING_PREFIX .. guess .. "?" or " (sandbox help lists them)") };
        runLines(entry, "Remove it with:", "set " .. name .. " nil");
        entries[#entries + 1] = entry;
      else
        untyped = untyped + 1;
      end
    end
  end
  if untyped == 1 then
    local entry = { names = 1, "A sandbox.* setting that is none of the sandbox's has a name set cannot type"
      .. " (a space, a control byte or over " .. MAX_SHOWN_NAME .. " bytes)" };
    runLines(entry, "Remove it with:", "edit /.settings");
    entries[#entries + 1] = entry;
  elseif untyped > 1 then
    local entry = { names = untyped, untyped .. " sandbox.* settings that are none of the sandbox's have names set cannot type"
      .. " (a space, a control byte or over " .. MAX_SHOWN_NAME .. " bytes)" };
    runLines(entry, "Remove them with:", "edit /.settings");
    entries[#entries + 1] = entry;
  end
  local lines, left = {}, 0;
  for _, entry in ipairs(entries) do
    left = left + entry.names;
  end
  for i, entry in ipairs(entries) do
    -- the lines that count the rest need their rows too, unless this is the last entry
    local rest = {};
    if i < #entries then
      rest = moreStrayLines(left - entry.names, true);
    end
    -- The count that stands for the names left takes its rows however few are free: a name
    -- that takes no more rows with the count of the rest is named (a lone `set
    -- sandbox.allow_file write` beside an error was counted, "see it with: edit /.settings",
    -- in the three rows that name it and its fix).
    local counted = rowsOf(moreStrayLines(left, #lines > 0));
    if rowsOf(lines) + rowsOf(entry) + rowsOf(rest) > math.max(rows, rowsOf(lines) + counted) then
      break;
    end
    for _, line in ipairs(entry) do
      lines[#lines + 1] = line;
    end
    left = left - entry.names;
  end
  if left > 0 then
    for _, line in ipairs(moreStrayLines(left, #lines > 0)) do
      lines[#lines + 1] = line;
    end
  end
  return lines;
end

-- The last error of a daemon whose try the gateway has not answered yet, and how to see the
-- answer: sandbox health waits for it.
local MSG_NONE_YET = "none yet (the gateway has not answered; sandbox health waits for it)";
-- Seconds sandbox status waits for a try under way, or the one it asked a waiting daemon for:
-- a gateway that is there, or still down, answers at once; one that drops the packets would
-- keep the status for CC's 30 s, and the status shows that try under way instead.
local STATUS_RETRY_WAIT = 2;

local function showStatus()
  local status = getStatus();
  local waiting = status.state == libsandbox.STATE_WAITING;
  if waiting then
    -- Not the last failure of a daemon waiting to try again (the gateway may be back since):
    -- it tries now, and the status says how that went.
    libsandbox.retryNow();
  end
  if waiting or status.state == libsandbox.STATE_CONNECTING or status.state == libsandbox.STATE_AUTHENTICATING then
    -- That try, or one under way (the daemon relabelled at this very request after a `label
    -- set`, or just booted), is answered at once by a gateway that is there: show its outcome.
    status = libsandbox.awaitConnection(STATUS_RETRY_WAIT);
    if status == nil then
      fail(libsandbox.noDaemon());
    end
  end
  -- The lines above the problem, printed once the rows left for the strays are known.
  local shown = {};
  shown[#shown + 1] = "url: " .. tostring(status.url or "not set");
  shown[#shown + 1] = "connected: " .. tostring(status.connected == true);
  -- The state says why a computer is not connected yet (e.g. "connecting" right after boot).
  local state = tostring(status.state or "unknown");
  -- Read once: the state and the fix below name the same second.
  local retryIn = libsandbox.retrySeconds(status);
  if retryIn ~= nil then
    state = state .. " (" .. retryIn .. " s)";
  end
  shown[#shown + 1] = "state: " .. state;
  shown[#shown + 1] = "traposId: " .. tostring(status.traposId);
  -- Whose computer this is, as the gateway answered the hello: local for the shared password.
  if status.account ~= nil then
    shown[#shown + 1] = "account: " .. tostring(status.account) .. byHand(status);
  end
  local problem = { "lastError: " .. tostring(status.lastError or "none") };
  if status.state == libsandbox.STATE_STOPPED then
    -- What keeps it disconnected is the stop, not an error of before it (nor "none", which
    -- read as nothing to fix above the fix).
    problem = { "lastError: stopped", "fix: " .. libsandbox.STOPPED };
  elseif status.state == libsandbox.STATE_DORMANT then
    -- Nor "none" above the fix for a computer not set up yet.
    problem = { "lastError: not set up", "fix: " .. MSG_URL_NOT_SET };
  elseif status.lastError == nil and (status.state == libsandbox.STATE_CONNECTING
      or status.state == libsandbox.STATE_AUTHENTICATING) then
    -- None yet, not none: this try (right after boot, a reconnect, a changed setting) has had
    -- no answer, which may be a refusal (a revoked credential): "none" read as nothing wrong.
    problem = { "lastError: " .. MSG_NONE_YET };
  elseif status.lastError ~= nil then
    if status.state == libsandbox.STATE_CONNECTING or status.state == libsandbox.STATE_AUTHENTICATING then
      -- A try is under way: the error is the one before it, which this try may mend.
      problem[1] = "lastError (before this try): " .. tostring(status.lastError);
    end
    local fix = explain(status.lastError, status.url, retryIn);
    if fix ~= status.lastError then
      problem[2] = "fix: " .. fix;
    end
  end
  -- The error and its fix come last, right above the prompt, on every screen: the line a
  -- player acts on is the one their eyes land on, and the order is the same on a computer and
  -- a pocket computer. On a narrower screen (a pocket computer's 26 columns and 20 rows) an
  -- error and its fix wrap to up to 13 rows, and the whole status to 22: there, while there is
  -- an error, what the host may do is left out too (nothing reaches this computer from the
  -- host until it connects), so that the status fits the screen, the command typed above it
  -- too, and if something still scrolls away, it is the top, never them. An error with no fix
  -- line is one that says its remedy itself (a server that did not prove itself: 13 rows at
  -- 26 columns), as long as one with a fix: kept only for a fix, the host's lines scrolled the
  -- URL away.
  local leaveAccessOut = narrowScreen() and (problem[2] ~= nil or status.lastError ~= nil);
  -- The proof line, left out there as well: the error of a server that did not prove itself
  -- says all of it, and the line shows again once connected.
  local proof, proofAt = proofLine(status), nil;
  if proof ~= nil and not leaveAccessOut then
    shown[#shown + 1] = proof;
    proofAt = #shown;
  end
  -- The daemon's own faults are never printed by the daemon: they are counted here and logged.
  if (status.faults or 0) > 0 then
    shown[#shown + 1] = "faults: " .. status.faults .. " (see " .. LOG_PATH .. "), the last: " .. tostring(status.lastFault);
  end
  local running = olderDaemon(status);
  if running ~= nil then
    shown[#shown + 1] = "daemon: " .. running .. " runs, " .. libsandbox.VERSION .. " is installed: reboot to start it";
  end
  local blocked, unblock = advice.bootBlocker();
  if blocked ~= nil then
    -- Said while it runs: once rebooted, the player reads it only by the command's path.
    shown[#shown + 1] = "boot: the daemon will not start at the next boot: " .. blocked .. ". " .. unblock;
  end
  -- The update line: on a pocket computer, not above an error to fix first (its rows would
  -- scroll the status away); it shows again once the error is fixed.
  local update = updateLine(status);
  if update ~= nil and not leaveAccessOut then
    shown[#shown + 1] = update;
  end
  if not leaveAccessOut then
    -- What the owner lets the host do here (read from the settings, as every request does).
    shown[#shown + 1] = "files: " .. libsandbox.filesShown();
    shown[#shown + 1] = "exec: " .. libsandbox.execShown();
    -- Whether the player is asked before the agent changes this computer (the ai command).
    shown[#shown + 1] = "ai confirm: " .. libsandbox.aiConfirmShown();
    shown[#shown + 1] = "screen: " .. libsandbox.screenShown();
    -- A value none of these reads as it is (a hand-edited "Write", a set before the client
    -- defined the setting) is named above; setup asks for each, Enter replacing it by what it
    -- reads as, so the player is not left to guess what to type.
    local strayValues = 0;
    for _, pair in ipairs({
      { libsandbox.filesShown(), libsandbox.filesAllowed() }, { libsandbox.execShown(), libsandbox.execAllowed() },
      { libsandbox.aiConfirmShown(), libsandbox.aiConfirm() }, { libsandbox.screenShown(), libsandbox.screenAllowed() },
    }) do
      if pair[1] ~= tostring(pair[2]) then
        strayValues = strayValues + 1;
      end
    end
    if strayValues > 0 then
      runLines(shown, strayValues == 1 and "Fix it with:" or "Fix them with:", "sandbox setup");
    end
    -- The strays get the rows the rest leaves on the screen, the command typed above the
    -- status and the prompt below it too.
    local _, height = term.getSize();
    local strays = straySettingLines(height - SPARE_ROWS - rowsOf(shown) - rowsOf(problem));
    -- On a narrower screen the proof line, what the player needs least, gives way to a
    -- mistyped setting that has no room beside it: a gateway without a password has a proof
    -- line of six rows at 26 columns, a computer just booted an error of four, and the
    -- stray's count took its rows however few were left, scrolling the URL off a pocket
    -- computer's top. It shows again once the setting is removed.
    if narrowScreen() and proofAt ~= nil and #strays > 0 then
      local proofRows = rowsOf({ shown[proofAt] });
      local without = straySettingLines(height - SPARE_ROWS - rowsOf(shown) + proofRows - rowsOf(problem));
      if table.concat(without, "\n") ~= table.concat(strays, "\n")
          or rowsOf(shown) + rowsOf(strays) + rowsOf(problem) > height - SPARE_ROWS then
        table.remove(shown, proofAt);
        strays = without;
      end
    end
    for _, line in ipairs(strays) do
      shown[#shown + 1] = line;
    end
  end
  -- Every line hanging, the client's own too: a row that starts at the row's start is always
  -- the start of a line the client wrote.
  for _, line in ipairs(shown) do
    printHanging(line);
  end
  for _, line in ipairs(problem) do
    printHanging(line);
  end
end

local function reconnect()
  checkSetup();
  getStatus();
  -- The daemon sees the reconnect before our next status request (events are FIFO).
  libsandbox.reconnect();
  local status = libsandbox.whileWaiting(term, awaitConnection);
  print("connected: true");
  print("traposId: " .. tostring(status.traposId));
end

-- Reads the answer to the question just written, after it, or on the next line when the
-- question ends too near the right edge for the answer to show (libsandbox.roomToAnswer;
-- room, when given, is the columns this answer needs).
local function readAnswer(replace, room)
  if not libsandbox.roomToAnswer(term, room) then
    print();
  end
  return read(replace);
end

-- Writes a question and reads its answer after it (readAnswer). A short answer's question (a
-- word: yes, no, none, read, write) puts its last word on a row of its own when the row it
-- ends has no room for the answer (writeQuestion), the answer typed beside its "[yes]:"; a
-- URL or a password, which needs room of its own (room), is typed on the row under its
-- question, which stays whole with the value in its brackets.
local function ask(question, replace, room)
  if room == nil then
    writeQuestion(question);
  else
    write(question);
  end
  return readAnswer(replace, room);
end

-- The password to save: Enter keeps the current one (shown masked), or none if none is set.
-- A computer's own credential (sandbox link, or one its operator issued) is said to be one
-- first: the question asks for the gateway's password, and a player who typed it there took
-- the computer out of its account unawares, leaving the credential in the account, which
-- then refuses this computer's next link code until its holder revokes it.
local function askPassword()
  local current = libsandbox.password(); -- as the daemon sends it: digits `set` stored as a number are text
  if current == "" then
    return ask("Gateway password (empty for none): ", "*", libsandbox.PASSWORD_ROOM);
  end
  if current:sub(1, #advice.CREDENTIAL_PREFIX) == advice.CREDENTIAL_PREFIX then
    -- A credential the gateway revoked is in no account: "Enter keeps it" read as the way to
    -- stay in one, to a player whose status had just sent them here ("or set a new
    -- credential with: sandbox setup").
    local status = libsandbox.requestStatus();
    if status ~= nil and advice.revoked(status.lastError) then
      print("sandbox.password is this computer's own credential, which the gateway revoked: type the "
        .. "gateway's password, or press Enter and then link the computer again with: sandbox link");
    else
      print("sandbox.password is this computer's own credential, from its account: Enter keeps it; "
        .. "a password typed replaces it, and the computer leaves the account.");
    end
  end
  local typed = ask("Gateway password (Enter keeps it) [" .. PASSWORD_MASK .. "]: ", "*", libsandbox.PASSWORD_ROOM);
  if typed == "" then
    return current;
  end
  return typed;
end

-- Asks until the answer is one of answers (a table from the lower-cased word to its value);
-- Enter gives current.
local function askChoice(prompt, answers, current, hint)
  while true do
    local typed = (ask(prompt) or ""):match("^%s*(.-)%s*$"):lower();
    if typed == "" then
      return current;
    elseif answers[typed] ~= nil then
      return answers[typed];
    end
    printError(hint);
  end
end

-- Asks what the host may do here (docs/capabilities.md), the current values as defaults.
local function askAccess()
  local files = libsandbox.filesAllowed();
  local exec = libsandbox.execAllowed();
  print("What may the gateway's host do here?");
  files = askChoice("Files: none, read or write [" .. files .. "]: ",
    { none = libsandbox.FILES_NONE, read = libsandbox.FILES_READ, write = libsandbox.FILES_WRITE },
    files, "Answer none, read or write.");
  exec = askChoice("Run Lua and programs? yes or no [" .. (exec and "yes" or "no") .. "]: ",
    EXEC_ANSWERS, exec, "Answer yes or no.");
  local screen = libsandbox.screenAllowed();
  screen = askChoice("Screen: none, view or control [" .. screen .. "]: ",
    { none = libsandbox.SCREEN_NONE, view = libsandbox.SCREEN_VIEW, control = libsandbox.SCREEN_CONTROL },
    screen, "Answer none, view or control.");
  local confirm = libsandbox.aiConfirm();
  confirm = askChoice("Confirm the agent's changes? yes or no [" .. (confirm and "yes" or "no") .. "]: ",
    EXEC_ANSWERS, confirm, "Answer yes or no.");
  return files, exec, screen, confirm;
end

-- Asks for the URL (default: the current one), the password and the host's access (Enter
-- keeps each), saves them as their types, and shows whether the gateway now answers. The
-- daemon reconnects on the changed settings.
-- The ws:// URL for an http(s):// one given to setup (the install line's, or the gateway's
-- base behind a proxy): the same host and port; a path other than the gateway's own gets
-- /trapos/ws, the WebSocket's place under it (a bare ws://host:port means it already).
local function wsFormOf(scheme, url)
  local authority, path = url:match("^%a[%w+.-]*://([^/?#]*)([^?#]*)");
  path = path:gsub("/+$", ""):gsub("/trapos/install$", ""):gsub("/trapos/ws$", "");
  local ws = (scheme == "https" and "wss://" or "ws://") .. authority;
  if path == "" then
    return ws;
  end
  return ws .. path .. "/trapos/ws";
end

-- The port to give for a wrong one (advice.wrongPort): the digits a port of letters meant,
-- when its O and o read as 0 and its l and I as 1 make a port of it (481OO); else the
-- gateway's, 4444, or none for a wss:// URL, whose reverse proxy listens on 443.
local function portMeant(port, scheme)
  local digits = port:gsub("[Oo]", "0"):gsub("[lI]", "1");
  local number = digits ~= port and digits:find("^%d+$") and tonumber(digits);
  if number and number >= 1 and number <= advice.MAX_PORT then
    return ":" .. digits;
  end
  return scheme == "wss" and "" or ":4444";
end

-- Every line fits the screen: 51 columns, or at most 25 on a narrower one.
local function setupUsage()
  if narrowScreen() then
    print("Usage:");
    print(" sandbox setup [url]");
    print("Asks for the URL (unless");
    print("given), the password and");
    print("the host's access, saves");
    print("them, checks the gateway.");
    return;
  end
  print("Usage: sandbox setup [url]");
  print("Asks for the gateway's URL (unless given), its");
  print("password and what the gateway's host may do here,");
  print("saves them and checks the gateway.");
end

-- "a", "a and b", "a, b and c".
local function listed(names)
  if #names == 1 then
    return names[1];
  end
  return table.concat(names, ", ", 1, #names - 1) .. " and " .. names[#names];
end

-- Sets setup's answers, each {name, value, changed} (changed: its value differs from before
-- as the daemon reads it and sandbox status shows it), saves them, and says what changed:
-- "Saved sandbox.url." naming only those, or "Nothing changed." when the player kept every
-- value (Enter at each question, or the same values typed again): "Saved sandbox.url and
-- sandbox.password." after that told them something had. A hand-edited "Write", which status
-- names, replaced by the none it reads as is a change. A value kept in another form that
-- nothing shows (digits set stored as a number, a URL the daemon completes) is rewritten as
-- the answer's all the same, changing nothing the daemon does: if only that cannot be saved,
-- nothing is lost.
-- A value the computer has and .settings does not (setup or a link could not save it, on a
-- full drive, and said to free some space and run it again) is kept by Enter all the same: it
-- is saved, and named, as the change it still is for the next boot.
local function saveAnswers(answers)
  local changed, rewritten = {}, false;
  for _, answer in ipairs(answers) do
    local name, value = answer[1], answer[2];
    local unsaved = settings.get(name) == value and settings.getDetails(name).changed
      and settingsLib.savedValue(name) ~= value;
    if answer[3] or unsaved then
      changed[#changed + 1] = name;
    end
    if settings.get(name) ~= value or unsaved then
      settings.set(name, value);
      rewritten = true;
    end
  end
  if rewritten and not settingsLib.save() and #changed > 0 then
    fail("sandbox setup: .settings could not be saved (is the disk full?): the new settings are lost at reboot; "
      .. "free some space and run sandbox setup again");
  end
  if #changed == 0 then
    print("Nothing changed.");
  else
    print("Saved " .. listed(changed) .. ".");
  end
end

-- Calls fn (one of setup's questions) and returns what it returns; a Ctrl-T there (CC's
-- terminate, raised as "Terminated") ends setup saying that nothing changed, as it has not:
-- every answer is saved only after the last question. CC's bare "Terminated" left a player
-- who had typed a new password unsure whether it was kept.
-- Ends the row a question's prompt left the cursor on (a Ctrl-T there), so what follows is
-- on a row of its own.
local function leavePromptRow()
  if term.getCursorPos() > 1 then
    print();
  end
end

local function answering(fn, ...)
  local result = table.pack(pcall(fn, ...));
  if not result[1] then
    if result[2] == "Terminated" then
      leavePromptRow();
      fail("Terminated: nothing changed.");
    end
    error(result[2], 0);
  end
  return table.unpack(result, 2, result.n);
end

local function setup(urlArg)
  -- An option is never a URL: saving "--help" as sandbox.url would break a working setup.
  -- (Any other word starting with "-" is refused before: refuseUnknownOptions.)
  if urlArg == "--help" or urlArg == "-h" then
    setupUsage();
    return;
  end
  local current = libsandbox.urlSet(); -- as the daemon reads it (libsandbox.normaliseUrl)
  local url = urlArg;
  if url == nil then
    print("Gateway URL, e.g. ws://192.168.1.20:4444");
    url = answering(ask, "[" .. tostring(current or "none") .. "]: ", nil, libsandbox.URL_ROOM);
    if url:match("^%s*$") then
      url = current;
    end
  end
  url = url and url:match("^%s*(.-)%s*$");
  if url == nil or url == "" then
    failRun("sandbox setup: no URL given.", { "sandbox", "setup", "ws://<host>:4444" });
  end
  -- The scheme as the daemon reads the URL (libsandbox.normaliseUrl): http:/host is http's,
  -- with the slash it lost, and host:4444 is ws's.
  local full = libsandbox.normaliseUrl(url);
  local scheme = full:match("^(%a[%w+.-]*)://");
  scheme = scheme and scheme:lower();
  if scheme == "http" or scheme == "https" then
    -- Not "Fix it with: sandbox setup", the command being run: the URL to give it.
    local why = advice.explain("Invalid scheme '" .. scheme .. "'", url);
    failRun(why:sub(1, #why - #advice.FIX_URL - 1), { "sandbox", "setup", wsFormOf(scheme, full) });
  elseif scheme ~= nil and scheme ~= "ws" and scheme ~= "wss" then
    -- As for http: the ws:// URL of the same host to give, not the command being run.
    local why = advice.explain("Invalid scheme '" .. scheme .. "'", url);
    local ws = "ws://<host>:4444";
    if full:match("^%a[%w+.-]*://[^/?#]") ~= nil then
      ws = wsFormOf("ws", full); -- it names a host
      if ws:match("^ws://[^/:]+$") ~= nil then
        -- ftp:/10.0.0.9 names no port and no proxy's path: ws:// alone is port 80, the
        -- gateway's is 4444
        ws = ws .. ":4444";
      end
    end
    failRun(why:sub(1, #why - #advice.FIX_URL - 1), { "sandbox", "setup", ws });
  elseif advice.namesNoHost(full) then
    -- Saved, it gave "Unknown host:  does not resolve", naming no host. The URL to give keeps
    -- the player's TLS (as advice's does): a wss:// gateway is behind a reverse proxy, whose
    -- port is not the gateway's 4444.
    failRun(advice.noHost(url) .. ".", { "sandbox", "setup", scheme == "wss" and "wss://<host>" or "ws://<host>:4444" });
  elseif advice.wrongPort(full) ~= nil then
    -- Saved, the daemon said the host did not resolve, or nothing answered there.
    local why, port = advice.wrongPort(full);
    local authority, rest = wsFormOf(scheme == "wss" and "https" or "ws", full):match("^(%a+://[^/?#]*)(.*)$");
    failRun("sandbox.url " .. url .. " " .. why .. ".",
      { "sandbox", "setup", authority:sub(1, #authority - #port - 1) .. portMeant(port, scheme) .. rest });
  end
  -- ws:/host (a slash or the colon of its :// lost) is saved as the daemon reads it, saying
  -- so: saved as typed, it was offered as the current value by the next setup, after a
  -- "Nothing changed." (the daemon reads both alike).
  local repaired = settingsLib.repairScheme(url);
  if repaired ~= url then
    print("Read " .. url .. " as " .. repaired .. ".");
    url = repaired;
  end
  -- What each setting was before the questions, as the daemon reads it and sandbox status
  -- shows it (a stray value named: 'none, as "Write" is not none/read/write').
  local was = {
    url = current and libsandbox.normaliseUrl(current), password = libsandbox.password(),
    files = libsandbox.filesShown(), exec = libsandbox.execShown(), screen = libsandbox.screenShown(),
    confirm = libsandbox.aiConfirmShown(),
  };
  local password = answering(askPassword);
  local files, exec, screen, confirm = answering(askAccess);
  saveAnswers({
    { libsandbox.SETTING_URL, url, libsandbox.normaliseUrl(url) ~= was.url },
    { libsandbox.SETTING_PASSWORD, password, password ~= was.password },
    { libsandbox.SETTING_ALLOW_FILES, files, files ~= was.files },
    { libsandbox.SETTING_ALLOW_EXEC, exec, tostring(exec) ~= was.exec },
    { libsandbox.SETTING_ALLOW_SCREEN, screen, screen ~= was.screen },
    { libsandbox.SETTING_AI_CONFIRM, confirm, tostring(confirm) ~= was.confirm },
  });
  print("Access: files " .. files .. ", exec " .. tostring(exec) .. ", screen " .. screen .. ".");
  print("ai confirm: " .. tostring(confirm));
  -- A new gateway, or the same one confirmed: the one that answers next is trusted at its
  -- first hello, and asked to prove itself from then on (libsandboxproof).
  proofLib.forget();
  checkSetup();
  getStatus();
  libsandbox.reconnect();
  health();
end

-- The code `sandbox link` has shown approved and not yet answered: a Ctrl-T declines it.
local approvedCode = nil;
-- Whether a daemon answered `sandbox link` (none runs before the reboot after an install).
local daemonRuns = false;
-- Whether that daemon was connected: after the gateway stops, it reconnects by itself once
-- the gateway is back, which its status shows.
local daemonConnected = false;
-- Whether a gateway answered that daemon's hello at sandbox.url since boot (its status's
-- answered): link's own session closed there unanswered is that gateway stopping, not
-- another server's port.
local daemonAnswered = false;
-- The epoch ms that gateway last answered the daemon at (its status's answeredUntil; nil from a
-- daemon older than 0.5.39): nothing answering link's own session there is that gateway
-- stopped since, said with the minute as sandbox status says it, not "or the address is wrong".
local daemonAnsweredUntil = nil;

-- Whether a gateway serves this computer now: the daemon's answers it (probe_gateway). After
-- a gateway stopped, closing the link session, a daemon on another replica answers, and so
-- does one already back in; one on the gateway that stopped does not: its socket was closed
-- with the session's, before the gateway's end took any request.
local function gatewayServes()
  return (libsandbox.request("probe_gateway", {}, libsandbox.REQUEST_TIMEOUT));
end

-- The advice for a link session that did not open or was closed by the gateway's end (why:
-- CC's or the gateway's reason, one line), ending with running sandbox link again: at once
-- when a gateway serves the daemon (the one that stopped was one replica of several, or is
-- back), else once the gateway is back, which sandbox status shows when the daemon reconnects.
local function linkAdvice(why, url)
  if not (daemonConnected and advice.gatewayStopped(why)) then
    return advice.explain(why, url, nil, "sandbox link");
  elseif gatewayServes() then
    return advice.said(why, url) .. "; a gateway serves this computer's daemon (another replica, or the same one back): "
      .. "run sandbox link again";
  end
  return advice.explain(why, url, nil, "sandbox link") .. " (sandbox status shows when it is connected)";
end

-- After a link with no daemon to use the credential yet: the reboot starts it.
local function printNoDaemonYet()
  print("The daemon starts with it at the reboot.");
  print("Run: reboot");
end

-- What the daemon does with the credential just saved, whichever way it came (a key or a
-- code): a sandbox status typed at once reads "connecting", which this line explains.
local function printDaemonNext()
  if daemonRuns then
    print("The daemon reconnects with the new credential.");
  else
    printNoDaemonYet();
  end
end

local function linkUsage()
  if narrowScreen() then
    -- A pocket computer's: at most 25 columns, and 11 lines for a turtle's 13 rows.
    print("Usage: sandbox link [KEY]");
    print("Links this computer to an");
    print("account: its credential");
    print("is sandbox.password.");
    print(" sandbox link");
    print("   a code the account");
    print("   holder approves, then");
    print("   you accept");
    print(" sandbox link KEY");
    print("   an enrollment key from");
    print("   trap-sandbox link key");
    return;
  end
  print("Usage: sandbox link [KEY]");
  print("Links this computer to an account: it gets a");
  print("credential of its own, saved as sandbox.password.");
  print("  sandbox link      show a code; the account holder");
  print("                    approves it, then you accept");
  print("  sandbox link KEY  use an enrollment key (tsk_...)");
  print("                    from trap-sandbox link key");
end

-- "10 min" for a lifetime in milliseconds (seconds under a minute). A gateway's number that is
-- no lifetime (none, not positive, NaN, JSON's 1e999 decoded as inf) is "a few min", one past
-- a day (a code meant to wait for the approval, not for ever) "over a day".
local function lifetime(ms)
  if type(ms) ~= "number" or ms ~= ms or ms <= 0 or ms == math.huge then
    return "a few min";
  elseif ms > 24 * 3600 * 1000 then
    return "over a day";
  elseif ms < 60000 then
    return math.ceil(ms / 1000) .. " s";
  end
  return math.floor(ms / 60000 + 0.5) .. " min";
end

-- The gateway's refusal as one sentence: head, then its message, then the fix unless the
-- message names it already (one ending in "; run sandbox link again for a new code"), when it
-- would be said twice. A refusal with no words (an empty or blank message) is head and the fix
-- alone, not "head: . fix".
local function refusal(head, message, fix, named)
  if message:find("^%s*$") ~= nil then
    return fix and (head .. ". " .. fix) or head;
  elseif fix == nil or message:find(named, 1, true) ~= nil then
    return head .. ": " .. message;
  end
  return head .. ": " .. message .. ". " .. fix;
end

-- The close code of a gateway that failed reading the session's frames (docs/protocol.md).
local CLOSE_INTERNAL_ERROR = 1011;
-- The close code of a socket that has no good hello in time, or that made room for newer ones
-- (docs/protocol.md, Admission). A link session, which said its hello at once, gets it only so:
-- evicted before its code (or at the connection cap with one), or with no code in time from a
-- gateway too slow to give one.
local CLOSE_NO_HELLO = 4008;

-- The one line for a failed link request: the gateway's refusals by code, a lost session,
-- a silent gateway. context says what was refused: "code" or "key". The gateway's words (its
-- message, a close reason) are one short line, as the daemon keeps them.
local function failLink(err, context)
  local code, message = err.code, oneLine(tostring(err.message or ""));
  if code == linkLib.ERR_LINK_DISABLED then
    fail(refusal("The gateway cannot link computers (link_disabled)", message));
  elseif code == linkLib.ERR_BUSY then
    fail(refusal("The gateway is busy (busy)", message));
  elseif code == linkLib.ERR_LINK_INVALID and context == "key"
      and message:find("unknown or wrong enrollment key", 1, true) then
    -- Cut short or mistyped: an older gateway said to check it with trap-sandbox link keys,
    -- which only its admin can run.
    fail("The gateway does not know that key (link_invalid): copy it whole, or ask whoever "
      .. "gave it to you for it again");
  elseif code == linkLib.ERR_LINK_INVALID and context == "key" then
    fail(refusal("The gateway refused the key (link_invalid)", message,
      "Ask its admin for a new one (trap-sandbox link key)", "for a new key"));
  elseif code == linkLib.ERR_LINK_INVALID then
    fail(refusal("The gateway refused the code (link_invalid)", message,
      "Run sandbox link again", "sandbox link again"));
  elseif code == libsandbox.ERR_TIMEOUT then
    fail("The gateway did not answer: " .. message .. ". Run sandbox link again");
  elseif code == libsandbox.ERR_NOT_CONNECTED and err.closeCode == linkLib.CLOSE_TOO_MANY_REQUESTS then
    -- This computer closed it: the gateway flooded it (libsandboxlink.MAX_UNASKED_FRAMES).
    fail("Link session closed: " .. message .. "; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
  elseif code == libsandbox.ERR_NOT_CONNECTED and message:find("expired", 1, true) then
    fail("The code expired; run sandbox link again.");
  elseif code == libsandbox.ERR_NOT_CONNECTED and advice.gatewayStopped(message) then
    -- It stopped or restarts (1001 as it shuts down): a link at once would find it down.
    fail("Link session closed: " .. linkAdvice(message));
  elseif code == libsandbox.ERR_NOT_CONNECTED and err.closeCode == CLOSE_NO_HELLO then
    -- Not its reason: an older gateway said "no hello in time" of a session that
    -- had said it. A new session finds room once the crowd has said its hellos or gone.
    fail("The gateway is busy: it closed the link session to make room for newer connections. Run sandbox link again");
  elseif code == libsandbox.ERR_NOT_CONNECTED and err.closeCode == CLOSE_INTERNAL_ERROR then
    -- The same frame may fail the gateway again: its operator reads why in its log.
    fail("The gateway failed and closed the link session (" .. advice.gatewaysWords(message) .. "). Run sandbox link again; "
      .. "if it fails again, tell the gateway's operator (its log says why)");
  elseif code == libsandbox.ERR_NOT_CONNECTED then
    fail("The gateway closed the link session (" .. advice.gatewaysWords(message) .. "). Run sandbox link again");
  end
  fail(refusal("The gateway refused the link: " .. oneLine(tostring(code)), message));
end

-- Fails saying a link's credential could not be saved: `sandbox link` run again saves it
-- (refuseIfLinked) while the daemon holds it, until the reboot.
local function failUnsaved(account)
  fail("Linked to " .. account .. ", but .settings could not be saved (is the disk full?): "
    .. "the link is lost at reboot; free some space and run sandbox link again");
end

-- Saves the credential as sandbox.password and makes the daemon say hello with it (the
-- changed setting does too; reconnect covers a credential equal to the one set).
local function saveCredential(credential, account)
  settings.set(libsandbox.SETTING_PASSWORD, credential);
  local saved = settingsLib.save();
  libsandbox.reconnect();
  if not saved then
    failUnsaved(account);
  end
end

-- The longest credential saved as sandbox.password: a gateway's are about 50 bytes
-- (tsc_<id>_<secret>, docs/protocol.md).
local MAX_CREDENTIAL_BYTES = 256;

-- The credential of a link answer, or a failure: the gateway must send one, of the form
-- docs/protocol.md gives it. Anything else is not saved: /.settings would hold up to 128 KiB
-- of a broken gateway's (on a 1 MB drive), which every hello would then fail to carry.
local function credentialOf(payload)
  local credential = payload.credential;
  if type(credential) ~= "string" or credential == "" then
    fail("The gateway linked the computer but sent no credential; is it up to date? Run sandbox link again");
  elseif #credential > MAX_CREDENTIAL_BYTES or not credential:find("^tsc_[%w]+_[%w_-]+$") then
    fail("The gateway linked the computer but sent no credential of the form tsc_<id>_<secret> ("
      .. #credential .. " bytes), so it is not saved; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
  end
  return credential;
end

-- Opens the link session to url, or fails with the reason and its fix. A
-- gateway that proved itself at url before is asked for its proof first, as the daemon asks it
-- (libsandboxproof's record): whatever else answers there gets no key, plants no credential
-- and names no account to accept. A revoked computer's way back is the gateway's proof of its
-- refusal (0.5.36 on), after which the link goes on on that socket; the same words without it
-- may be another program's on the port, which would have the player link the computer to an
-- account of its choosing, so they link nothing (a 0.5.35 link went on with a code then).
local function openLink(session, url, key)
  local since, proveWith = proofLib.provesSince(url), nil;
  if since ~= nil then
    proveWith = { since = since, secret = settingsLib.password(), key = proofLib.proofKey(url) };
  end
  -- The link's own socket and hello: a gateway that takes the connection and does not answer
  -- holds it for its hello timeout, with the notice up rather than a blank screen.
  local ok, err = libsandbox.whileWaiting(term, session.open, url, proveWith);
  if ok then
    return;
  elseif err.code == linkLib.ERR_NOT_PROVED then
    local fix = "; sandbox link " .. (key ~= nil and "gives a key" or "links") .. " only through a server that proves"
      .. " itself here: if it is the gateway, run sandbox setup first (it forgets the proof, and trusts the next"
      .. " server to answer), then sandbox link";
    if err.refusedCredential then
      -- The gateway proves its refusal of a revoked credential: these words came without it.
      -- It is the gateway when older, or when its accounts were restored from a backup older
      -- than the link (it then holds no key to prove with): setup trusts the next server.
      fix = "; the gateway (0.5.36 on) proves a revoked credential's refusal, so another program may hold its port:"
        .. " ask the gateway's operator; if it is the gateway, run sandbox setup (it forgets the proof), then sandbox link";
    end
    fail("Not linked: " .. err.message .. fix);
  elseif err.code == linkLib.ERR_UNSUPPORTED or err.code == libsandbox.ERR_UNAUTHORIZED then
    -- An older gateway took the hello as the computer's own: the daemon must say hello again.
    libsandbox.reconnect();
    fail("The gateway at " .. url .. " does not support sandbox link: update trap-sandbox on its host, "
      .. "or set a credential with: sandbox setup");
  elseif err.code == libsandbox.ERR_NOT_CONNECTED and err.closeCode ~= CLOSE_NO_HELLO then
    -- Its own session: the daemon's retries do not run it again.
    local why = oneLine(tostring(err.message)); -- a close reason of the gateway's is said as its own (libsandboxlink)
    -- As the daemon says it (whyUnanswered).
    if why == "Connection closed" and err.step ~= nil and not (daemonConnected or daemonAnswered) then
      why = advice.closedUnanswered(err.step);
    elseif type(daemonAnsweredUntil) == "number" then
      why = advice.stoppedAnswering(why, daemonAnsweredUntil);
    end
    fail("Cannot reach the gateway: " .. linkAdvice(why, url));
  end
  failLink(err, "code");
end

-- Asks the player whether to link to account, typed y or n and Enter (Enter alone is no),
-- while the session answers the gateway's pings. Returns the answer, or nil when the session
-- closed first, and why it closed (nil if it did not). A session closed under the question
-- ends it at once: no answer could link the computer any more (a y has no session to go
-- to), and the player who waited for the outcome of a y read only then that it was moot.
local function askAccept(session, account)
  local answer, closed = nil, nil;
  parallel.waitForAny(function()
    -- The account is the gateway's: the question's rows after the first are indented, as
    -- "Approved by account …" above it, so none of them reads as a line of the computer's.
    writeHangingQuestion("Link this computer to " .. account .. "? [y/N] ");
    answer = readAnswer() or "";
  end, function()
    closed = session.keepAlive();
  end);
  if answer == nil then
    leavePromptRow();
    return nil, closed;
  end
  answer = answer:match("^%s*(.-)%s*$"):lower();
  return answer == "y" or answer == "yes", closed;
end

-- The account a link answer names, or a failure: only a name in the shape the gateway gives
-- its accounts (libsandboxcodec.accountName) is asked about and saved to, so that no words
-- of the gateway's ("mallory Link this computer to alice", nil) stand in the question.
local function linkedAccount(value)
  local account = accountName(value);
  if account == nil then
    fail("The gateway named no account of the form accounts have (a-z, 0-9, . _ -, up to 63), so "
      .. "the computer is not linked; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
  end
  return account;
end

-- The code flow: a code the account holder approves on the host, then the player's answer.
local function linkWithCode(session)
  local ok, begun, err = session.request(linkLib.TYPE_BEGIN, {}, linkLib.ANSWER_WAIT);
  if not ok then
    failLink(err, "code");
  elseif type(begun.code) ~= "string" or begun.code == "" then
    fail("The gateway sent no link code; is it up to date? Run sandbox link again");
  elseif not linkLib.isCode(begun.code) then
    -- It goes into the command the account holder runs on the host: only a plain word does.
    fail("The gateway's link code is not one word of letters, digits and - (" .. #begun.code .. " bytes, at most "
      .. linkLib.MAX_CODE_BYTES .. "), so it is not shown; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
  end
  local code = begun.code;
  print("Link code: " .. code .. " (valid " .. lifetime(begun.expiresInMs) .. ")");
  print("On the host, the account holder runs:");
  printCommand(linkLib.approveLine(code));
  print("Waiting... (Ctrl-T to cancel)");
  local state;
  repeat
    local polled, pollErr;
    ok, polled, pollErr = session.request(linkLib.TYPE_POLL, { code = code, waitMs = linkLib.POLL_WAIT_MS },
      linkLib.POLL_WAIT_MS / 1000 + linkLib.ANSWER_WAIT);
    if not ok then
      failLink(pollErr, "code");
    end
    state = polled;
  until state.state ~= linkLib.STATE_PENDING
  if state.state == linkLib.STATE_EXPIRED then
    fail("The code expired; run sandbox link again.");
  elseif state.state ~= linkLib.STATE_APPROVED then
    fail("The gateway answered the code's state as '" .. oneLine(tostring(state.state)) .. "'; is it up to date? Run sandbox link again");
  end
  local account = linkedAccount(state.account);
  -- Who approved, when it is not the account itself ("bob (admin)", the gateway's operator).
  local by = state.approvedBy;
  if by ~= nil and oneLine(tostring(by)) ~= account then
    printHanging("Approved by account " .. account .. " " .. linkLib.approverShown(oneLine(tostring(by))) .. ".");
  else
    printHanging("Approved by account " .. account .. ".");
  end
  -- Until the answer, a Ctrl-T declines, so the approved code cannot be accepted later.
  approvedCode = code;
  local accept, closed = askAccept(session, account);
  approvedCode = nil;
  if accept == false then
    session.request(linkLib.TYPE_ACCEPT, { code = code, accept = false }, linkLib.ANSWER_WAIT);
    print("Not linked.");
    return;
  elseif closed ~= nil then
    local _, closeCode = session.closedWhy();
    failLink({ code = libsandbox.ERR_NOT_CONNECTED, message = closed, closeCode = closeCode }, "code");
  end
  local accepted, acceptErr;
  ok, accepted, acceptErr = session.request(linkLib.TYPE_ACCEPT, { code = code, accept = true }, linkLib.ANSWER_WAIT);
  if not ok then
    failLink(acceptErr, "code");
  end
  -- The player said yes to the account the poll named: a credential into another one is not
  -- saved (the gateway's own answer names the same account as its poll).
  if accepted.account ~= nil and accountName(accepted.account) ~= account then
    fail("The gateway linked the computer to " .. (accountName(accepted.account) or "an account it did not name")
      .. ", not to " .. account
      .. " as you agreed, so its credential is not saved; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
  end
  saveCredential(credentialOf(accepted), account);
  printHanging("Linked to " .. account .. ".");
  printDaemonNext();
end

-- The key flow: the key holder typed it here, so there is no code and no question.
local function linkWithKey(session, key)
  local ok, answer, err = session.request(linkLib.TYPE_BEGIN, { key = key }, linkLib.KEY_ANSWER_WAIT);
  if not ok then
    failLink(err, "key");
  elseif answer.state ~= linkLib.STATE_APPROVED then
    fail("The gateway did not approve the key (state '" .. oneLine(tostring(answer.state)) .. "'); is it up to date?");
  end
  local account = linkedAccount(answer.account);
  saveCredential(credentialOf(answer), account);
  printHanging("Linked to " .. account .. ".");
  printDaemonNext();
end

-- The account of a computer on the shared password (or a gateway without one), as the
-- gateway answers its hello (docs/protocol.md): no credential of its own.
local SHARED_ACCOUNT = "local";

-- Fails when this computer holds a credential of an account that the gateway accepts right
-- now (the daemon is connected as that account): a new link would save another credential
-- and leave that one in the store, where it keeps its account from ever approving a computer
-- of this id again. Only the computer knows: a link session claims its computer id without a
-- secret. Its credential refused (revoked: unauthorized), or no connection, it links.
-- Returns whether a daemon answered (none runs before the reboot that follows an install),
-- whether it was connected, false, whether a gateway answered its hello at sandbox.url since
-- boot (its status's answered; nil from an older daemon) and until when (its answeredUntil);
-- or saves the credential of a link whose save failed (a full drive), and returns true, true,
-- true: the link is done.
local function refuseIfLinked()
  -- A daemon still saying hello (the computer just booted) is waited for: its answer decides.
  local status = libsandbox.whileWaiting(term, libsandbox.awaitConnection);
  if status == nil then
    return false;
  elseif not status.connected or type(status.account) ~= "string" or status.account == SHARED_ACCOUNT then
    return true, status.connected == true, false, status.answered == true, status.answeredUntil;
  end
  local account = oneLine(status.account);
  local what = status.credentialKind == "issued" and "has a credential of " or "is linked to ";
  if settingsLib.savedValue(libsandbox.SETTING_PASSWORD) ~= settings.get(libsandbox.SETTING_PASSWORD) then
    -- Linked while .settings could not be saved: the daemon holds the credential until the
    -- reboot, and the account holds it too, so a new link would be refused. Saving keeps it.
    if not settingsLib.save() then
      failUnsaved(account);
    end
    print("This computer " .. what .. account .. " already; its credential is saved now.");
    return true, true, true;
  end
  -- The command on rows of its own, as link's approve line: in the sentence, the screen broke
  -- it wherever a row ended (on a pocket computer, always: it is 31 columns and more).
  fail("This computer " .. what .. status.account .. " already. To link it anew, first revoke its "
    .. "credential on the host:\n" .. table.concat(commandRows({ "trap-sandbox", "computers", "revoke",
      oneLine(tostring(status.traposId)) }), "\n"));
end

-- sandbox link [KEY]: its own short link session to sandbox.url (the daemon's stays up).
-- Ctrl-T cancels at any point, closing the session (and declining an approved code).
local function link(key)
  if key == "--help" or key == "-h" then
    linkUsage();
    return;
  end
  checkSetup();
  if key ~= nil and not linkLib.isKey(key) then
    -- Not echoed: a mistyped key is still mostly a secret.
    if key:sub(1, 4):lower() == "tsk_" then
      fail("sandbox link: that enrollment key is cut short or mistyped (a key is tsk_<id>_<secret>, "
        .. "one word). Type it again as trap-sandbox link key printed it");
    end
    fail("sandbox link: that is not an enrollment key (tsk_...; made with trap-sandbox link key). "
      .. "Run sandbox link alone for a code");
  end
  local saved;
  daemonRuns, daemonConnected, saved, daemonAnswered, daemonAnsweredUntil = refuseIfLinked();
  if saved then
    return;
  end
  local url = libsandbox.normaliseUrl(settings.get(libsandbox.SETTING_URL));
  local session = linkLib.newSession({ http = http, os = os, pullEvent = os.pullEventRaw });
  local ok, err = pcall(function()
    openLink(session, url, key);
    if key ~= nil then
      linkWithKey(session, key);
    else
      linkWithCode(session);
    end
  end);
  local declined = false;
  if not ok and err == "Terminated" and approvedCode ~= nil then
    -- The decline waits for its answer, as n's does: the gateway drops a request whose session
    -- closes before it is answered, and the code would stay approved, its approver told that
    -- the player still decides. A second Ctrl-T ends the wait.
    leavePromptRow(); -- the Ctrl-T came at the question
    local called, answered = pcall(session.request, linkLib.TYPE_ACCEPT, { code = approvedCode, accept = false },
      linkLib.ANSWER_WAIT);
    declined = called and answered;
  end
  session.close();
  if declined then
    -- As n does: "Cancelled." did not say that the approved code was declined on the gateway.
    fail("Terminated: the code was declined; this computer is not linked.");
  elseif not ok and err == "Terminated" then
    fail("Cancelled.");
  elseif not ok then
    error(err, 0);
  end
end

-- Disconnects the daemon until `sandbox reconnect` (Ctrl-T does not: it is the foreground
-- program's). The daemon sees the stop before our status request (events are FIFO).
local function stop()
  getStatus();
  libsandbox.stopDaemon();
  local status = getStatus();
  local running = olderDaemon(status);
  if status.state ~= libsandbox.STATE_STOPPED and running ~= nil then
    -- A daemon older than the command (0.3.0 had no stop) ignores it and stays connected.
    fail("The daemon did not stop: " .. running .. " runs, which has no sandbox stop; reboot to start "
      .. libsandbox.VERSION .. ", installed already");
  end
  print("state: " .. tostring(status.state));
  print("sandbox reconnect starts it again.");
end

local COMMANDS = {
  health = health,
  status = showStatus,
  reconnect = reconnect,
  stop = stop,
  setup = setup,
  link = link,
  uninstall = uninstall,
};

-- How many arguments each command takes after its name.
local MAX_ARGS = { setup = 1, link = 1 };

-- The commands with a usage of their own, which --help and -h print (and `sandbox help
-- <command>`); the others are described by sandbox --help alone.
local OWN_USAGE = { setup = setupUsage, link = linkUsage };
local HELP_OPTIONS = { ["--help"] = true, ["-h"] = true };

-- Fails for a mistake in how a command was typed: what is wrong, then, on a line of its own,
-- lead and the command to run, which the screen would otherwise break in two; on a screen too
-- narrow for both (a pocket computer's 26 columns) the command has a line of its own too.
local function failUsage(problem, lead, command)
  local width = term.getSize();
  local fix = lead .. " " .. command;
  if #fix >= width then
    fix = lead .. "\n" .. command;
  end
  fail(problem .. "\n" .. fix);
end

-- Fails for option, a word starting with "-" that sandbox (name nil) or its command name does
-- not know, naming the help to read. Every command says it in these words, before it runs:
-- `sandbox link --x` is no mistyped key, `sandbox setup -k` no URL to save.
local function failUnknownOption(name, option)
  local program = name == nil and "sandbox" or "sandbox " .. name;
  local help = OWN_USAGE[name] and program .. " --help" or "sandbox --help";
  failUsage(program .. ": unknown option '" .. option .. "'.", "Run:", help);
end

-- As for an unknown option, the help to read is the command's own where it has one (setup's
-- URL, link's KEY), not the list of commands.
local function failUnexpectedArgument(name, extra)
  local help = OWN_USAGE[name] and "sandbox " .. name .. " --help" or "sandbox --help";
  failUsage("sandbox " .. name .. ": unexpected argument '" .. extra .. "'.", "Run:", help);
end

-- Fails for word, which names no command; program is what it was typed after ("sandbox",
-- "sandbox help"), and what the guess is offered with.
local function failUnknownCommand(program, word)
  local problem = program .. ": unknown command '" .. word .. "'.";
  local guess = meant(word, libsandbox.SUBCOMMANDS, program == "sandbox help" and "help" or nil);
  if guess ~= nil then
    failUsage(problem, "Did you mean:", program .. " " .. guess);
  end
  failUsage(problem, "Run:", "sandbox --help");
end

local function refuseUnknownOptions(name, words)
  for _, word in ipairs(words) do
    if word:sub(1, 1) == "-" and not (OWN_USAGE[name] and HELP_OPTIONS[word]) then
      failUnknownOption(name, word);
    end
  end
end

-- sandbox help [command]: the command's own usage (setup, link), else the list of them all.
local function help(name, extra)
  for _, word in ipairs({ name, extra }) do
    if word:sub(1, 1) == "-" and not HELP_OPTIONS[word] then
      failUnknownOption("help", word);
    end
  end
  if extra ~= nil then
    failUnexpectedArgument("help", extra);
  end
  if name ~= nil and not HELP_OPTIONS[name] and name ~= "help" and COMMANDS[name] == nil then
    failUnknownCommand("sandbox help", name);
  end
  (OWN_USAGE[name] or usage)();
end

local args = { ... };
local command = args[1];

libsandbox.defineSettings();

if command == nil or HELP_OPTIONS[command] then
  usage();
elseif command == "--version" then
  print("sandbox " .. VERSION);
elseif command:sub(1, 1) == "-" then
  failUnknownOption(nil, command);
elseif command == "help" then
  help(table.unpack(args, 2));
elseif COMMANDS[command] == nil then
  failUnknownCommand("sandbox", command);
else
  refuseUnknownOptions(command, { table.unpack(args, 2) });
  if #args > 1 + (MAX_ARGS[command] or 0) then
    failUnexpectedArgument(command, args[2 + (MAX_ARGS[command] or 0)]);
  end
  COMMANDS[command](table.unpack(args, 2));
end
