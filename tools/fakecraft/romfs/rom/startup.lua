-- fakecraft's /rom/startup.lua, run by the top-level shell before its first prompt. Of CC:
-- Tweaked's boot it does the part a headless computer has: the startup programs. With
-- shell.allow_startup (the default), the computer's own: /startup or /startup.lua
-- (whichever the shell resolves "/startup" to) and then every file of /startup/, sorted by
-- name. With shell.allow_disk_startup (the default too), the first disk in a drive (in
-- peripheral.getNames order) that has such programs of its own runs those instead. Each
-- runs to completion in turn through shell.run. Before them, with motd.enable, the
-- message of the day.

if settings.get("motd.enable") then
  shell.run("motd");
end

-- The startup programs under dir (the root or a disk's mount path), in the order they run,
-- or nil when it has none.
local function startupsUnder(dir)
  local found = {};
  local program = shell.resolveProgram("/" .. fs.combine(dir, "startup"));
  if program ~= nil then
    found[#found + 1] = "/" .. program;
  end
  local folder = "/" .. fs.combine(dir, "startup");
  if fs.isDir(folder) then
    for _, name in ipairs(fs.list(folder)) do
      local path = fs.combine(folder, name);
      if not fs.isDir(path) then
        found[#found + 1] = "/" .. path;
      end
    end
  end
  if #found == 0 then
    return nil;
  end
  return found;
end

local startups;
if settings.get("shell.allow_startup") then
  startups = startupsUnder("/");
end
if settings.get("shell.allow_disk_startup") then
  for _, name in ipairs(peripheral.getNames()) do
    if disk.isPresent(name) and disk.hasData(name) then
      local found = startupsUnder(disk.getMountPath(name));
      if found ~= nil then
        startups = found;
        break;
      end
    end
  end
end

for _, path in ipairs(startups or {}) do
  shell.run(path);
end
