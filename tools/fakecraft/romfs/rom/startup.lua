-- fakecraft's /rom/startup.lua, run by the top-level shell before its first prompt. Of CC:
-- Tweaked's boot it does the part a headless computer has: the computer's own startup
-- programs. With shell.allow_startup (the default), /startup or /startup.lua (whichever the
-- shell resolves "/startup" to) and then every file of /startup/, sorted by name, each run
-- to completion in turn through shell.run. (No disk drives, so no disk startup.) Before
-- them, with motd.enable, the message of the day.

if settings.get("motd.enable") then
  shell.run("motd");
end

if not settings.get("shell.allow_startup") then
  return;
end

local startups = {};
local program = shell.resolveProgram("/startup");
if program ~= nil then
  startups[#startups + 1] = "/" .. program;
end
if fs.isDir("/startup") then
  for _, name in ipairs(fs.list("/startup")) do
    local path = "/startup/" .. name;
    if not fs.isDir(path) then
      startups[#startups + 1] = path;
    end
  end
end

for _, path in ipairs(startups) do
  shell.run(path);
end
