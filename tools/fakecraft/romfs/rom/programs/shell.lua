-- shell: finds and runs programs. Run with arguments, it runs them as one command
-- and returns whether that command succeeded. Run with none it is interactive, as CC's
-- is: the top-level shell first runs /rom/startup.lua (the computer's startup files),
-- then each line read at its "> " prompt is a command, until `exit` (shell.exit).
-- Files dropped on the computer while the prompt waits are saved (as `import` does).
--
-- Every program gets a fresh environment (falling back to _G) holding `shell`,
-- `multishell`, `require`, `package` and `arg`, and runs in its own coroutine so that
-- its errors are caught and printed instead of ending the computer. A program file
-- whose first line is "#!program words" is run by that program instead; one that does not
-- compile gets its syntax error explained (cc.internal.syntax). Under multishell the shell
-- also has openTab and switchTab.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;
local make_package = dofile("rom/modules/main/cc/require.lua").make;

-- Program search path when there is no parent shell to inherit one from: CC's own default
-- (a turtle's has its programs where a computer's has rednet and fun; pocket and command
-- computers add theirs). TrapOS adds /programs itself at boot (see boot.lua), so a plain CC
-- computer without it does not find TrapOS programs here either.
local function default_path()
  local path = ".:/rom/programs:/rom/programs/http";
  if term.isColour() then
    path = path .. ":/rom/programs/advanced";
  end
  if turtle then
    path = path .. ":/rom/programs/turtle";
  else
    path = path .. ":/rom/programs/rednet:/rom/programs/fun";
    if term.isColour() then
      path = path .. ":/rom/programs/fun/advanced";
    end
  end
  if pocket then
    path = path .. ":/rom/programs/pocket";
  end
  if commands then
    path = path .. ":/rom/programs/command";
  end
  return path;
end

-- Aliases CC's shell sets up; programs missing from this ROM simply do not resolve.
local DEFAULT_ALIASES = {
  ls = "list",
  dir = "list",
  cp = "copy",
  mv = "move",
  rm = "delete",
  clr = "clear",
  rs = "redstone",
  sh = "shell",
};

-- How many program files one command may pass through by their "#!" lines (CC's limit).
local MAX_HASHBANG_DEPTH = 100;

local parent = shell;
local multishell = multishell;
if multishell then
  multishell.setTitle(multishell.getCurrent(), "shell");
end

local shell = {};
local current_dir = parent and parent.dir() or "";
local search_path = parent and parent.path() or default_path();
local aliases = {};
local completion_info = parent and parent.getCompletionInfo() or {};
local ensure_rom_completions; -- defined below, once the shell API exists

if parent then
  for name, target in pairs(parent.aliases()) do
    aliases[name] = target;
  end
else
  for name, target in pairs(DEFAULT_ALIASES) do
    aliases[name] = target;
  end
end

-- Running programs, innermost last. Servers started at boot run programs
-- concurrently from parallel coroutines, so runs do not nest strictly: each run
-- removes its own entry (not just the top one), and the program coroutine that
-- asks is looked up first so it gets its own path even when another run started
-- after it.
local running = {};
local running_by_coroutine = setmetatable({}, { __mode = "k" });

local function remove_running(entry)
  for i = #running, 1, -1 do
    if running[i] == entry then
      table.remove(running, i);
      return;
    end
  end
end

-- Splits a command line on spaces and tabs; text in double quotes is one word
-- (possibly empty) and never joins the text around it.
local function tokenise(...)
  local line = table.concat({ ... }, " ");
  local words = {};
  local quoted = false;
  local start = 1;
  while true do
    local quote = line:find('"', start, true);
    local segment = line:sub(start, (quote or (#line + 1)) - 1);
    if quoted then
      words[#words + 1] = segment;
    else
      for word in segment:gmatch("[^ \t]+") do
        words[#words + 1] = word;
      end
    end
    if not quote then
      break;
    end
    quoted = not quoted;
    start = quote + 1;
  end
  return words;
end

-- path.."."..extension, dropping one trailing slash first.
local function with_extension(path, extension)
  local last = path:sub(-1);
  if last == "/" or last == "\\" then
    path = path:sub(1, -2);
  end
  return path .. "." .. extension;
end

-- The file for a candidate path, trying it as is and then with ".lua".
local function existing_file(path)
  if fs.exists(path) and not fs.isDir(path) then
    return path;
  end
  local with_lua = with_extension(path, "lua");
  if fs.exists(with_lua) and not fs.isDir(with_lua) then
    return with_lua;
  end
  return nil;
end

local function create_env(dir)
  local env = { shell = shell, multishell = multishell };
  env.require, env.package = make_package(env, dir);
  return setmetatable(env, { __index = _G });
end

-- Runs fn(...) in its own coroutine, passing every event through: the coroutine's
-- filter is yielded upwards as is, so the caller sees the same events it would
-- see running fn directly. Returns true and fn's results, or false, the error and the
-- coroutine it happened in (whose frames say where). The coroutine is tied to the run's
-- entry for getRunningProgram.
local function run_isolated(entry, fn, ...)
  local co = coroutine.create(fn);
  running_by_coroutine[co] = entry;
  local result = table.pack(coroutine.resume(co, ...));
  while coroutine.status(co) ~= "dead" do
    local event = table.pack(coroutine.yield(result[2]));
    result = table.pack(coroutine.resume(co, table.unpack(event, 1, event.n)));
  end
  if not result[1] then
    return false, result[2], co;
  end
  return table.unpack(result, 1, result.n);
end

-- How big a program may be for its syntax error to be explained: past this, load's message
-- alone is shown, as CC's shell does.
local MAX_EXPLAINED_SIZE = 128 * 1024;

-- Prints why the program at path did not compile: cc.internal.syntax's explanation of its
-- syntax error (what is wrong, and where), or load's message when that finds none.
local function explain_load_error(path, load_err)
  local handle = fs.open(path, "r");
  local source = handle and handle.readAll() or "";
  if handle then handle.close(); end
  if #source < MAX_EXPLAINED_SIZE then
    local syntax = create_env("rom/programs").require("cc.internal.syntax");
    if not syntax.parse_program(source) then
      return;
    end
  end
  if load_err ~= nil and load_err ~= "" then
    printError(load_err);
  end
end

-- The first line of a program file when it is a "#!" line (without the "#!"), or nil.
local function read_hashbang(path)
  local handle = fs.open(path, "r");
  if not handle then
    return nil;
  end
  local first = handle.readLine() or "";
  handle.close();
  if first:sub(1, 2) == "#!" then
    return first:sub(3);
  end
  return nil;
end

-- Runs the program file at path with args (args[0] is the name it was run by). A "#!"
-- first line runs the program it names instead, with the line's own words, then this
-- file's path, then args; at most MAX_HASHBANG_DEPTH files deep.
local function run_program(entry, path, args, remaining)
  local hashbang = read_hashbang(path);
  if hashbang then
    remaining = remaining - 1;
    if remaining == 0 then
      printError("Hashbang recursion depth limit reached when loading file: " .. path);
      return false;
    end
    local words = tokenise(hashbang);
    local name = table.remove(words, 1) or "";
    local interpreter = shell.resolveProgram(name);
    if not interpreter then
      printError("Hashbang program not found: " .. name);
      return false;
    end
    -- "#!shell" alone would run this same file again through shell.run, for ever.
    if interpreter == "rom/programs/shell.lua" and #words == 0 then
      printError("Cannot use the shell as a hashbang program");
      return false;
    end
    words[#words + 1] = path;
    for i = 1, #args do
      words[#words + 1] = args[i];
    end
    words[0] = name;
    return run_program(entry, interpreter, words, remaining);
  end

  local env = create_env(fs.getDir(path));
  env.arg = args;
  local fn, load_err = loadfile(path, nil, env);
  if not fn then
    explain_load_error(path, load_err);
    return false;
  end
  -- Under bios.strict_globals a new global is a mistake (a missing local), placed where the
  -- program made it; _G stays writable.
  if settings.get("bios.strict_globals", false) then
    getmetatable(env).__newindex = function(_, name)
      error("Attempt to create global " .. tostring(name), 2);
    end;
  end

  local outcome = table.pack(run_isolated(entry, fn, table.unpack(args, 1, #args)));
  if outcome[1] then
    return true;
  end
  -- An exception the program threw stands for an error in the coroutine it names, as CC's
  -- shell reads it (cc.internal.exception's try); false, nil and "" print nothing there.
  local exception = create_env("rom/programs").require("cc.internal.exception");
  local err, co = exception.unwrap(outcome[2], outcome[3]);
  if err and err ~= "" then
    printError(err);
    -- Under the message, the line it happened on and a mark at its column, as CC 1.109+.
    exception.report(err, co);
  end
  return false;
end

-- A program's tab title: its file name without ".lua".
local function title_of(path)
  local name = fs.getName(path);
  if name:sub(-4) == ".lua" then
    name = name:sub(1, -5);
  end
  return name;
end

-- Under multishell, the tab is named after the innermost program this shell runs.
local function retitle()
  if multishell then
    local top = running[#running];
    multishell.setTitle(multishell.getCurrent(), top and title_of(top.path) or "shell");
  end
end

--- Runs a program with exactly the given arguments; returns whether it succeeded.
function shell.execute(command, ...)
  expect(1, command, "string");
  for i = 1, select("#", ...) do
    expect(i + 1, (select(i, ...)), "string");
  end

  local path = shell.resolveProgram(command);
  if path == nil then
    printError("No such program");
    return false;
  end

  local entry = { path = path };
  running[#running + 1] = entry;
  retitle();
  local ok = run_program(entry, path, { [0] = command, ... }, MAX_HASHBANG_DEPTH);
  remove_running(entry);
  retitle();
  return ok;
end

--- Runs a command line: the arguments are joined with spaces, then split again
--- (double quotes group words). Returns whether the program succeeded.
function shell.run(...)
  local words = tokenise(...);
  local command = words[1];
  if command == nil then
    return false;
  end
  return shell.execute(command, table.unpack(words, 2, #words));
end

--- Asks the shell to leave its prompt loop after the current program.
local exiting = false;
function shell.exit()
  exiting = true;
end

--- The current directory, without leading "/".
function shell.dir()
  return current_dir;
end

--- Changes the current directory.
function shell.setDir(dir)
  expect(1, dir, "string");
  if not fs.isDir(dir) then
    error("Not a directory", 2);
  end
  current_dir = fs.combine(dir, "");
end

--- The colon-separated program search path.
function shell.path()
  return search_path;
end

--- Replaces the program search path.
function shell.setPath(path)
  expect(1, path, "string");
  search_path = path;
end

--- A path relative to the current directory made absolute ("/" = root).
function shell.resolve(path)
  expect(1, path, "string");
  local first = path:sub(1, 1);
  if first == "/" or first == "\\" then
    return fs.combine("", path);
  end
  return fs.combine(current_dir, path);
end

--- The file a command name runs, or nil. Aliases apply first; a name with "/" is
--- a path, any other name is looked for in each directory of the search path.
function shell.resolveProgram(command)
  expect(1, command, "string");
  if aliases[command] ~= nil then
    command = aliases[command];
  end

  if command:find("/", 1, true) or command:find("\\", 1, true) then
    return existing_file(shell.resolve(command));
  end

  for dir in search_path:gmatch("[^:]+") do
    local found = existing_file(fs.combine(shell.resolve(dir), command));
    if found then
      return found;
    end
  end
  return nil;
end

--- Sorted names of the programs on the search path (".lua" dropped); names
--- starting with "." only when include_hidden.
function shell.programs(include_hidden)
  expect(1, include_hidden, "boolean", "nil");
  local seen = {};
  for dir in search_path:gmatch("[^:]+") do
    local resolved = shell.resolve(dir);
    if fs.isDir(resolved) then
      for _, name in ipairs(fs.list(resolved)) do
        if not fs.isDir(fs.combine(resolved, name))
          and (include_hidden or name:sub(1, 1) ~= ".") then
          if name:sub(-4) == ".lua" then
            name = name:sub(1, -5);
          end
          seen[name] = true;
        end
      end
    end
  end
  local names = {};
  for name in pairs(seen) do
    names[#names + 1] = name;
  end
  table.sort(names);
  return names;
end

--- A copy of the alias table.
function shell.aliases()
  local copy = {};
  for name, target in pairs(aliases) do
    copy[name] = target;
  end
  return copy;
end

--- Makes command run program.
function shell.setAlias(command, program)
  expect(1, command, "string");
  expect(2, program, "string");
  aliases[command] = program;
end

--- Removes an alias.
function shell.clearAlias(command)
  expect(1, command, "string");
  aliases[command] = nil;
end

if multishell then
  --- Opens a multishell tab running a command line (tokenised as shell.run's); returns
  --- the tab's index. A command other than the shell runs under a shell of its own.
  function shell.openTab(...)
    local words = tokenise(...);
    local command = words[1];
    if command == nil then
      return nil;
    end
    local path = shell.resolveProgram(command);
    if path == nil then
      printError("No such program");
      return nil;
    end
    local env = create_env("rom/programs");
    if path == "rom/programs/shell.lua" then
      return multishell.launch(env, path, table.unpack(words, 2, #words));
    end
    return multishell.launch(env, "rom/programs/shell.lua", command, table.unpack(words, 2, #words));
  end

  --- Shows the multishell tab with the given index.
  function shell.switchTab(id)
    expect(1, id, "number");
    multishell.setFocus(id);
  end
end

--- Path (without leading "/") of the program that is running, or nil.
function shell.getRunningProgram()
  local own = running_by_coroutine[coroutine.running()];
  if own then
    return own.path;
  end
  local top = running[#running];
  return top and top.path or nil;
end

--- Registers fn(shell, index, text, previous) as the completion function of the
--- program at path (absolute, without leading "/").
function shell.setCompletionFunction(path, fn)
  expect(1, path, "string");
  expect(2, fn, "function");
  completion_info[path] = { fnComplete = fn };
end

--- The table of registered completion functions, by program path.
function shell.getCompletionInfo()
  ensure_rom_completions();
  return completion_info;
end

--- Suffixes completing a program name: aliases, programs on the path, and, for
--- names with "/", files relative to the current directory.
function shell.completeProgram(prefix)
  expect(1, prefix, "string");
  -- Hidden programs and files only for a "." typed, or under shell.autocomplete_hidden.
  local include_hidden = settings.get("shell.autocomplete_hidden");
  if prefix:find("/", 1, true) or prefix:find("\\", 1, true) then
    if fs.complete then
      return fs.complete(prefix, current_dir, {
        include_files = true, include_dirs = false, include_hidden = include_hidden,
      });
    end
    return {};
  end
  local seen = {};
  local results = {};
  local function offer(name)
    if #name > #prefix and name:sub(1, #prefix) == prefix then
      local rest = name:sub(#prefix + 1);
      if not seen[rest] then
        seen[rest] = true;
        results[#results + 1] = rest;
      end
    end
  end
  for name in pairs(aliases) do
    offer(name);
  end
  for _, name in ipairs(shell.programs(include_hidden)) do
    offer(name);
  end
  table.sort(results);
  return results;
end

--- Suffixes completing the last word of a command line.
function shell.complete(line)
  expect(1, line, "string");
  if #line == 0 then
    return nil;
  end
  local words = tokenise(line);
  local index = #words;
  local last = line:sub(-1);
  if last == " " or last == "\t" then
    index = index + 1;
  end
  if index == 1 then
    return shell.completeProgram(words[1] or "");
  end
  ensure_rom_completions();
  local program = shell.resolveProgram(words[1]);
  local info = program and completion_info[program];
  if not info then
    return nil;
  end
  local previous = {};
  for i = 1, index - 1 do
    previous[i] = words[i];
  end
  return info.fnComplete(shell, index - 1, words[index] or "", previous);
end

-- Completion of the ROM programs' arguments, registered the first time completion is
-- asked for (so a shell that only runs one command never loads it); the table is shared
-- with every shell started from this one. Entries a program set itself are kept.
local rom_completions_registered = false;
local function register_completions()
  local env = setmetatable({}, { __index = _G });
  env.require, env.package = make_package(env, "rom/programs");
  local completion = env.require("cc.shell.completion");
  local function program(name, ...)
    local path = "rom/programs/" .. name .. ".lua";
    if completion_info[path] == nil then
      shell.setCompletionFunction(path, completion.build(...));
    end
  end
  -- The programs and completions CC 1.113.1's rom/startup.lua registers, and cat, which is
  -- fakecraft's own; a program CC registers none for (programs) completes nothing.
  local two_paths = { { completion.dirOrFile, true }, completion.dirOrFile };
  local a_program_and_its_arguments = { completion.programWithArgs, 2, many = true };
  -- An argument that depends on the one before: fn for the words of previous[2].
  local after = function(words)
    return function(shell_, text, previous)
      local fn = words[previous[2]];
      if fn then return fn(shell_, text, previous); end
      return nil;
    end;
  end;
  local function peripheral_then_space(shell_, text, previous)
    return completion.peripheral(shell_, text, previous, true);
  end
  local function peripheral_name(shell_, text, previous)
    return completion.peripheral(shell_, text, previous, false);
  end
  program("alias", nil, completion.program);
  program("cd", completion.dir);
  program("clear", { completion.choice, { "screen", "palette", "all" } });
  program("copy", table.unpack(two_paths));
  program("delete", { completion.dirOrFile, many = true });
  program("drive", completion.dir);
  program("edit", completion.file);
  program("eject", completion.peripheral);
  program("gps", { completion.choice, { "host", "host ", "locate" } });
  program("help", completion.help);
  program("id", completion.peripheral);
  program("label", { completion.choice, { "get", "get ", "set ", "clear", "clear " } }, completion.peripheral);
  program("list", completion.dir);
  program("mkdir", { completion.dir, many = true });
  -- monitor NAME PROGRAM ARGS..., or monitor scale NAME SCALE.
  local function program_on_monitor(shell_, text, previous)
    if previous[2] ~= "scale" then
      return completion.programWithArgs(shell_, text, previous, 3);
    end
    return nil;
  end
  program("monitor",
    function(shell_, text, previous)
      local names = peripheral_then_space(shell_, text, previous);
      for _, word in ipairs(completion.choice(shell_, text, previous, { "scale" }, true)) do
        names[#names + 1] = word;
      end
      return names;
    end,
    function(shell_, text, previous)
      if previous[2] == "scale" then return peripheral_then_space(shell_, text, previous); end
      return completion.programWithArgs(shell_, text, previous, 3);
    end,
    { program_on_monitor, many = true });
  program("move", table.unpack(two_paths));
  program("redstone", { completion.choice, { "probe", "set ", "pulse " } }, completion.side);
  program("rename", table.unpack(two_paths));
  program("shell", a_program_and_its_arguments);
  program("type", completion.dirOrFile);
  program("set", { completion.setting, true });
  program("advanced/bg", a_program_and_its_arguments);
  program("advanced/fg", a_program_and_its_arguments);
  program("fun/dj", { completion.choice, { "play", "play ", "stop " } }, completion.peripheral);
  program("fun/speaker", { completion.choice, { "play ", "sound ", "stop " } },
    after({ play = completion.file, stop = peripheral_name }),
    after({ play = peripheral_name }));
  program("fun/advanced/paint", completion.file);
  program("http/pastebin", { completion.choice, { "put ", "get ", "run " } },
    after({ put = function(_, text) return fs.complete(text, shell.dir(), true, false); end }));
  program("rednet/chat", { completion.choice, { "host ", "join " } });
  program("command/exec", completion.command);
  program("http/wget", { completion.choice, { "run " } });
  program("cat", { completion.file, many = true });
end

function ensure_rom_completions()
  if rom_completions_registered then return; end
  rom_completions_registered = true;
  local ok, err = pcall(register_completions);
  if not ok then printError(err); end
end

local args = table.pack(...);
if args.n > 0 then
  return shell.run(...);
end

-- Interactive: a prompt (yellow on colour terminals), one command per line, until `exit`.
-- fakecraft's `run` answers read() from its input, one line per prompt; `shell` from the keyboard.
local prompt_colour = term.isColour() and colours.yellow or colours.white;
local parent_term = term.current();

local function show_prompt()
  term.setBackgroundColour(colours.black);
  term.setTextColour(prompt_colour);
  write(shell.dir() .. "> ");
  term.setTextColour(colours.white);
end

-- Files dropped on the computer while the prompt waits (a file_transfer event): the
-- prompt is left on its line, the files are imported, and the prompt comes back below
-- with what was typed so far.
local function import_files(transfer)
  local _, height = term.getSize();
  local _, y = term.getCursorPos();
  if y == height then
    term.scroll(1);
    term.setCursorPos(1, y);
  else
    term.setCursorPos(1, y + 1);
  end
  term.setCursorBlink(false);
  local env = create_env("rom/programs");
  local ok, err = env.require("cc.internal.import")(transfer.getFiles());
  if not ok and err then
    printError(err);
  end
  show_prompt();
  term.setCursorBlink(true);
end

-- read() in a coroutine of its own, so the prompt can see a file_transfer first; every
-- other event goes to read as os.pullEvent would hand it over.
local function read_command(history, complete)
  local reader = coroutine.create(read);
  local ok, filter = coroutine.resume(reader, nil, history, complete);
  if not ok then
    error(filter, 0);
  end
  while coroutine.status(reader) ~= "dead" do
    local event = table.pack(os.pullEvent());
    if event[1] == "file_transfer" then
      import_files(event[2]);
      event = { "term_resize", n = 1 }; -- read redraws its line on a resize
    end
    if filter == nil or event[1] == filter or event[1] == "terminate" then
      ok, filter = coroutine.resume(reader, table.unpack(event, 1, event.n));
      if not ok then
        error(filter, 0);
      end
    end
  end
  return filter;
end

term.setBackgroundColour(colours.black);
term.setTextColour(prompt_colour);
print(os.version());
term.setTextColour(colours.white);
if parent == nil then
  shell.run("/rom/startup.lua");
end

local history = {};
while not exiting do
  term.redirect(parent_term);
  show_prompt();
  local complete = nil;
  if settings.get("shell.autocomplete") then complete = shell.complete; end
  local line = read_command(history, complete);
  if line:match("%S") and history[#history] ~= line then
    history[#history + 1] = line;
  end
  shell.run(line);
end
return true;
