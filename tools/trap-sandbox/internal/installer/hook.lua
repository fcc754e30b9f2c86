-- trapos-sandbox startup hook, written by the trap-sandbox gateway's installer
-- (`wget run http://<gateway>/trapos/install`; `... install uninstall` or `sandbox uninstall`
-- removes it).
--
-- CC: Tweaked runs /startup.lua, then every file in /startup/, each to completion. A daemon
-- started in front would keep every later startup file, and the prompt, from ever running;
-- a basic computer has no multishell to put it in the background. So this hook sorts first
-- in /startup/ and runs the sandbox daemon beside the rest of the boot: the startup files
-- that sort after it, each to completion as CC would, and then the shell.

local DAEMON = "/servers/sandbox.lua";
local PROGRAMS = "/programs";

if not fs.exists(DAEMON) then
  return; -- the package is gone; boot as if this hook were not here
end

if not string.find(":" .. shell.path() .. ":", ":" .. PROGRAMS .. ":", 1, true) then
  shell.setPath(shell.path() .. ":" .. PROGRAMS);
end

-- The startup files CC would run after this one (it lists /startup/ sorted by name).
local self = "/" .. shell.getRunningProgram();
local later = {};
if fs.getDir(self) == "startup" then
  local after = false;
  for _, name in ipairs(fs.list("/startup")) do
    local path = "/startup/" .. name;
    if after and not fs.isDir(path) then
      later[#later + 1] = path;
    end
    after = after or path == self;
  end
end

local function daemon()
  shell.run(DAEMON);
end

-- The shell below is a second one, and a shell starts by printing CC's header (os.version()),
-- which the first printed right before the startup files: the player would read "CraftOS 1.9"
-- twice at every boot. So the next print is skipped when it is that header, and print is CC's
-- own again from then on, whatever it printed. (The daemon beside it never prints.)
local function skipNextHeader()
  local print = _G.print;
  local header = os.version();
  _G.print = function(...)
    _G.print = print;
    if select("#", ...) == 1 and ... == header then
      return 0; -- the lines print printed
    end
    return print(...);
  end;
end

local function boot()
  for _, path in ipairs(later) do
    shell.run(path);
  end
  skipNextHeader();
  shell.run("shell");
  -- Leaving the shell ends the computer, as leaving the top-level shell does; returning
  -- would make CC run the later startup files a second time.
  os.shutdown();
end

parallel.waitForAll(daemon, boot);
