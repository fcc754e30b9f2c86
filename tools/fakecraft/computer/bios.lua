-- fakecraft bios: the Lua half of a CC: Tweaked computer's global environment, then the boot
-- sequence (ROM APIs, settings, the shell running fakecraft's launcher, /.fakecraft/boot.lua).
-- Written for fakecraft from CC's documented behaviour; it shares no code with CC's bios.

local BIOS = _FAKECRAFT_BIOS;
_FAKECRAFT_BIOS = nil;
local native_term = _FAKECRAFT_TERM;
_FAKECRAFT_TERM = nil;

local co_yield = coroutine.yield;
local pack, unpack, select, type, tostring, error, setmetatable =
  table.pack, table.unpack, select, type, tostring, error, setmetatable;

local COLOUR_RED = 0x4000;
local KEY_ENTER, KEY_BACKSPACE = 257, 259;

local function expect_arg(index, value, ...)
  local t = type(value);
  for i = 1, select("#", ...) do
    if t == select(i, ...) then return value; end
  end
  local names = table.concat({ ... }, " or ");
  error(("bad argument #%d (%s expected, got %s)"):format(index, names, t), 3);
end

-- CC's legacy bit API, a shim over bit32.
bit = {
  bnot = bit32.bnot, band = bit32.band, bor = bit32.bor, bxor = bit32.bxor,
  brshift = bit32.arshift, blshift = bit32.lshift, blogic_rshift = bit32.rshift,
};

-- os: the Lua half.
function os.version() return "CraftOS 1.9"; end

function os.pullEventRaw(filter)
  return co_yield(filter);
end

function os.pullEvent(filter)
  local event = pack(co_yield(filter));
  if event[1] == "terminate" then error("Terminated", 0); end
  return unpack(event, 1, event.n);
end

function sleep(time)
  if time ~= nil then expect_arg(1, time, "number"); end
  local id = os.startTimer(time or 0);
  repeat
    local _, fired = os.pullEvent("timer");
  until fired == id;
end
os.sleep = sleep;

-- os.shutdown and os.reboot never return, as in CC, whose bios wraps its Java ones so: the
-- computer stops at the caller's yield, before its next line runs (a prompt after
-- `os.reboot()` at the lua program is never drawn).
local native_shutdown, native_reboot = os.shutdown, os.reboot;
function os.shutdown()
  native_shutdown();
  while true do co_yield(); end
end
function os.reboot()
  native_reboot();
  while true do co_yield(); end
end

-- term is the native terminal until the ROM's apis/term.lua, loaded with the other APIs
-- below, replaces it with the API that forwards to a redirect target, as CC's bios leaves
-- its native term to CC's term.lua.
term = native_term;

function write(text)
  expect_arg(1, text, "string", "number");
  text = tostring(text);
  local width, height = term.getSize();
  local x, y = term.getCursorPos();
  local lines = 0;
  local function newline()
    if y < height then
      term.setCursorPos(1, y + 1);
    else
      term.setCursorPos(1, height);
      term.scroll(1);
    end
    x, y = term.getCursorPos();
    lines = lines + 1;
  end
  local pos = 1;
  while pos <= #text do
    local space = text:match("^[ \t]+", pos);
    if space then
      term.write(space);
      x, y = term.getCursorPos();
      pos = pos + #space;
    elseif text:sub(pos, pos) == "\n" then
      newline();
      pos = pos + 1;
    else
      local word = text:match("^[^ \t\n]+", pos);
      pos = pos + #word;
      if #word > width then
        -- A word longer than a line is cut wherever the edge falls.
        while #word > 0 do
          if x > width then newline(); end
          local room = width - x + 1;
          term.write(word:sub(1, room));
          word = word:sub(room + 1);
          x, y = term.getCursorPos();
        end
      else
        if x > 1 and x + #word - 1 > width then newline(); end
        term.write(word);
        x, y = term.getCursorPos();
      end
    end
  end
  return lines;
end

function print(...)
  local lines = 0;
  local n = select("#", ...);
  for i = 1, n do
    if i > 1 then lines = lines + write("\t"); end
    lines = lines + write(tostring((select(i, ...))));
  end
  return lines + write("\n");
end

function printError(...)
  if term.isColour() then
    local previous = term.getTextColour();
    term.setTextColour(COLOUR_RED);
    print(...);
    term.setTextColour(previous);
  else
    print(...);
  end
end

-- read([replace_char [, history [, complete [, default]]]]): a line editor over char,
-- paste and key events. Left/right/home/end move, backspace/delete erase, up/down walk
-- history, tab accepts the shown completion. The line scrolls sideways when it is longer
-- than the space left on the row.
local KEY_TAB, KEY_DELETE, KEY_RIGHT, KEY_LEFT, KEY_DOWN, KEY_UP, KEY_HOME, KEY_END =
  258, 261, 262, 263, 264, 265, 268, 269;
local KEY_NUMPAD_ENTER = 335;
local COLOUR_GREY = 0x80;

function read(replace_char, history, complete, default)
  if replace_char ~= nil then expect_arg(1, replace_char, "string"); end
  if history ~= nil then expect_arg(2, history, "table"); end
  if complete ~= nil then expect_arg(3, complete, "function"); end
  if default ~= nil then expect_arg(4, default, "string"); end
  local mask = replace_char and replace_char:sub(1, 1) or nil;
  local line = default or "";
  local pos = #line;               -- characters before the cursor
  local history_pos = nil;         -- index into history while walking it
  local completions, completion = nil, nil;
  local start_x, start_y = term.getCursorPos();
  local scroll = 0;

  local function recomplete()
    completions, completion = nil, nil;
    if complete and pos == #line then
      local found = complete(line);
      if type(found) == "table" and #found > 0 then
        completions, completion = found, 1;
      end
    end
  end

  -- How many cells the last redraw covered, so a shorter line blanks only the rest.
  local drawn = 0;

  local function redraw()
    -- On the row the cursor is on now, as CC's read: after the shell put its prompt back
    -- on a new row (a file_transfer), the line follows it there.
    local _, y = term.getCursorPos();
    start_y = y;
    local width = term.getSize();
    local room = width - start_x;
    if pos - scroll > room then scroll = pos - room; end
    if pos < scroll then scroll = pos; end
    if scroll < 0 then scroll = 0; end
    term.setCursorPos(start_x, start_y);
    local visible = line:sub(scroll + 1, scroll + room + 1);
    if mask then visible = mask:rep(#visible); end
    term.write(visible);
    local shown = #visible;
    -- A hint that is only blanks (the space after a complete word) shows nothing.
    if completion and shown <= room and completions[completion]:find("%S") then
      local suffix = completions[completion]:sub(1, room + 1 - shown);
      local previous = term.getTextColour();
      if term.isColour() then term.setTextColour(COLOUR_GREY); end
      term.write(suffix);
      term.setTextColour(previous);
      shown = shown + #suffix;
    end
    if drawn > shown then term.write((" "):rep(drawn - shown)); end
    drawn = shown;
    term.setCursorPos(start_x + pos - scroll, start_y);
  end

  local function set_line(text)
    line, pos = text, #text;
    recomplete();
    redraw();
  end

  local function insert(text)
    line = line:sub(1, pos) .. text .. line:sub(pos + 1);
    pos = pos + #text;
    recomplete();
    redraw();
  end

  term.setCursorBlink(true);
  recomplete();
  redraw();
  while true do
    local event, value = os.pullEvent();
    if event == "char" or event == "paste" then
      insert(value);
    elseif event == "key" then
      if value == KEY_ENTER or value == KEY_NUMPAD_ENTER then
        if completion then
          completion = nil;
          redraw();
        end
        break;
      elseif value == KEY_LEFT then
        if pos > 0 then
          completion = nil;
          pos = pos - 1;
          redraw();
        end
      elseif value == KEY_RIGHT then
        if pos < #line then
          pos = pos + 1;
          recomplete();
          redraw();
        elseif completion then
          insert(completions[completion]);
        end
      elseif value == KEY_HOME then
        completion = nil;
        pos = 0;
        redraw();
      elseif value == KEY_END then
        pos = #line;
        recomplete();
        redraw();
      elseif value == KEY_TAB then
        if completion then insert(completions[completion]); end
      elseif value == KEY_BACKSPACE then
        if pos > 0 then
          line = line:sub(1, pos - 1) .. line:sub(pos + 1);
          pos = pos - 1;
          if scroll > 0 then scroll = scroll - 1; end
          recomplete();
          redraw();
        end
      elseif value == KEY_DELETE then
        if pos < #line then
          line = line:sub(1, pos) .. line:sub(pos + 2);
          recomplete();
          redraw();
        end
      elseif (value == KEY_UP or value == KEY_DOWN) and completion and #completions > 1 then
        if value == KEY_UP then
          completion = completion > 1 and completion - 1 or #completions;
        else
          completion = completion < #completions and completion + 1 or 1;
        end
        redraw();
      elseif (value == KEY_UP or value == KEY_DOWN) and history and #history > 0 then
        if value == KEY_UP then
          if history_pos == nil then
            history_pos = #history;
          elseif history_pos > 1 then
            history_pos = history_pos - 1;
          end
        elseif history_pos ~= nil then
          history_pos = history_pos + 1;
          if history_pos > #history then history_pos = nil; end
        end
        set_line(history_pos and history[history_pos] or "");
      end
    elseif event == "term_resize" then
      redraw();
    end
  end
  term.setCursorBlink(false);
  local width = term.getSize();
  local _, y = term.getCursorPos();
  term.setCursorPos(width + 1, y);
  print();
  return line;
end

-- loadfile(path [, mode [, env]]), also the older loadfile(path, env).
function loadfile(path, mode, env)
  expect_arg(1, path, "string");
  if type(mode) == "table" and env == nil then mode, env = nil, mode; end
  if mode ~= nil then expect_arg(2, mode, "string"); end
  if env ~= nil then expect_arg(3, env, "table"); end
  local file = fs.open(path, "r");
  if not file then return nil, "File not found"; end
  local content = file.readAll();
  file.close();
  return load(content or "", "@/" .. fs.combine(path), mode, env);
end

function dofile(path)
  expect_arg(1, path, "string");
  local fn, err = loadfile(path, nil, _G);
  if not fn then error(err, 2); end
  return fn();
end

function os.run(env, path, ...)
  expect_arg(1, env, "table");
  expect_arg(2, path, "string");
  setmetatable(env, { __index = _G });
  -- Under bios.strict_globals a program's new global is an error where it is made, as in the
  -- shell; CC's bios sets _ENV in the table before it guards it.
  if settings and settings.get("bios.strict_globals", false) then
    env._ENV = env;
    getmetatable(env).__newindex = function(_, name)
      error("Attempt to create global " .. tostring(name), 2);
    end;
  end
  local fn, err = loadfile(path, nil, env);
  if not fn then
    if err and err ~= "" then printError(err); end
    return false;
  end
  local result = pack(pcall(fn, ...));
  if not result[1] then
    if result[2] and result[2] ~= "" then printError(result[2]); end
    return false;
  end
  return true;
end

local loading = {};
-- CC 1.113.1's os.loadAPI raises an API that does not load, or fails as it runs, with
-- error(message, 1) at lines 510 and 506 of its bios.lua, where Cobalt places it.
local LOAD_FAILED_AT, RUN_FAILED_AT = "bios.lua:510: ", "bios.lua:506: ";

function os.loadAPI(path)
  expect_arg(1, path, "string");
  local name = fs.getName(path);
  if name:sub(-4) == ".lua" then name = name:sub(1, -5); end
  if loading[name] then
    printError("API " .. name .. " is already being loaded");
    return false;
  end
  loading[name] = true;
  local env = setmetatable({}, { __index = _G });
  local fn, err = loadfile(path, nil, env);
  if not fn then
    loading[name] = nil;
    error(LOAD_FAILED_AT .. "Failed to load API " .. name .. " due to " .. err, 0);
  end
  local ok, run_err = pcall(fn);
  if not ok then
    loading[name] = nil;
    error(RUN_FAILED_AT .. "Failed to load API " .. name .. " due to " .. run_err, 0);
  end
  local api = {};
  for k, v in pairs(env) do
    if k ~= "_ENV" then api[k] = v; end
  end
  _G[name] = api;
  loading[name] = nil;
  return true;
end

function os.unloadAPI(name)
  expect_arg(1, name, "string");
  if name ~= "_G" and type(_G[name]) == "table" then _G[name] = nil; end
end

-- Boot: ROM APIs, settings, then the shell running boot.lua.
if fs and fs.isDir("/rom/apis") then
  local names = fs.list("/rom/apis");
  table.sort(names);
  for _, file in ipairs(names) do
    local path = fs.combine("/rom/apis", file);
    if file:sub(1, 1) ~= "." and not fs.isDir(path) then os.loadAPI(path); end
  end
end

-- Values from `--set` are converted as CC's set program converts its argument.
local function convert_setting(value)
  if value == "nil" then return nil; end
  if value == "true" then return true; end
  if value == "false" then return false; end
  local n = tonumber(value);
  if n ~= nil then return n; end
  return value;
end

if settings then
  -- CC: Tweaked 1.113.1's bios's settings, worded as its are (`set NAME` shows the
  -- description), but motd.enable, fakecraft's false (README: no message of the day).
  local builtin = {
    { "shell.allow_startup", true, "boolean", "Run startup files when the computer turns on." },
    { "shell.allow_disk_startup", true, "boolean", "Run startup files from disk drives when the computer turns on." },
    { "shell.autocomplete", true, "boolean", "Autocomplete program and arguments in the shell." },
    { "edit.autocomplete", true, "boolean", "Autocomplete API and function names in the editor." },
    { "lua.autocomplete", true, "boolean", "Autocomplete API and function names in the Lua REPL." },
    { "edit.default_extension", "lua", "string", [[The file extension the editor will use if none is given. Set to "" to disable.]] },
    { "paint.default_extension", "nfp", "string", [[The file extension the paint program will use if none is given. Set to "" to disable.]] },
    { "list.show_hidden", false, "boolean", [[Whether the list program show  hidden files (those starting with ".").]] },
    { "motd.enable", false, "boolean", "Display a random message when the computer starts up." },
    { "motd.path", "/rom/motd.txt:/motd.txt", "string", [[The path to load random messages from. Should be a colon (":") separated string of file paths.]] },
    { "lua.warn_against_use_of_local", true, "boolean", [[Print a message when input in the Lua REPL starts with the word 'local'. Local variables defined in the Lua REPL are be inaccessible on the next input.]] },
    { "lua.function_args", true, "boolean", "Show function arguments when printing functions." },
    { "lua.function_source", false, "boolean", "Show where a function was defined when printing functions." },
    { "bios.strict_globals", false, "boolean", "Prevents assigning variables into a program's environment. Make sure you use the local keyword or assign to _G explicitly." },
    { "shell.autocomplete_hidden", false, "boolean", [[Autocomplete hidden files and folders (those starting with ".").]] },
  };
  -- Only a colour computer can show multishell's tabs.
  if term.isColour() then
    builtin[#builtin + 1] = { "bios.use_multishell", true, "boolean", [[Allow running multiple programs at once, through the use of the "fg" and "bg" programs.]] };
  end
  for _, def in ipairs(builtin) do
    pcall(settings.define, def[1], { default = def[2], type = def[3], description = def[4] });
  end
  local keys = {};
  for k in pairs(BIOS.settings) do keys[#keys + 1] = k; end
  table.sort(keys);
  local applied = {}; -- { key, converted value (nil: unset) }, for each one that took
  for _, k in ipairs(keys) do
    local value = convert_setting(BIOS.settings[k]);
    local ok, err;
    if value == nil then
      ok, err = pcall(settings.unset, k);
    else
      ok, err = pcall(settings.set, k, value);
    end
    if ok then
      applied[#applied + 1] = { k, value };
    else
      printError(err);
    end
  end
  settings.load("/.settings");
  -- The computer's own /.settings wins over these values, as over a server's default
  -- settings; whoever gave them hears which lost to it (never on this screen).
  if BIOS.settingOverridden ~= nil then
    for _, kv in ipairs(applied) do
      local now = settings.getDetails(kv[1]);
      local lost;
      if kv[2] == nil then lost = now.changed; else lost = now.value ~= kv[2]; end
      if lost then
        BIOS.settingOverridden(kv[1], textutils.serialize(now.value, { compact = true }));
      end
    end
  end
end

-- A TrapOS computer's shell runs fakecraft's launcher (boot.lua); a bare one (no BIOS.boot)
-- is a plain CC computer: its shell runs the startup files and then its prompt.
if BIOS.boot ~= nil then
  _FAKECRAFT_BOOT = BIOS.bootTable;
end
-- On an advanced computer CC's bios starts multishell, whose first tab is the shell
-- (fakecraft's multishell hands that shell the launcher); the host may turn it off.
local top_program = BIOS.shell;
if BIOS.multishell ~= nil and term.isColour() and settings and settings.get("bios.use_multishell") then
  top_program = BIOS.multishell;
end
local shell_fn, shell_err = loadfile(top_program, nil, setmetatable({}, { __index = _G }));
if not shell_fn then
  BIOS.bootTable.finish(false);
  error(shell_err, 0);
end
local shell_ok;
local function run_shell()
  if BIOS.boot ~= nil then
    shell_ok = shell_fn(BIOS.boot);
  else
    shell_ok = shell_fn();
  end
end
-- As CC's bios does, rednet's daemon runs beside the shell (and stops with it), so modem
-- messages become rednet_message events whatever program runs.
if rednet and rednet.run and parallel then
  local ok, err = pcall(parallel.waitForAny, run_shell, rednet.run);
  if not ok then error(err, 0); end
else
  run_shell();
end
BIOS.bootTable.finish(shell_ok ~= false);
