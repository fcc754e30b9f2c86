-- list [dir]: the files and directories in dir (default: the current one), directories
-- first in green (light grey on basic computers). Aliases: ls, dir.

local args = { ... };

local dir = shell.dir();
if args[1] ~= nil then
  dir = shell.resolve(args[1]);
end

if not fs.isDir(dir) then
  printError("Not a directory");
  return;
end

local show_hidden = settings.get("list.show_hidden");
local dirs, files = {}, {};
for _, name in ipairs(fs.list(dir)) do
  if show_hidden or name:sub(1, 1) ~= "." then
    if fs.isDir(fs.combine(dir, name)) then
      dirs[#dirs + 1] = name;
    else
      files[#files + 1] = name;
    end
  end
end
table.sort(dirs);
table.sort(files);

local dir_colour = term.isColour() and colors.green or colors.lightGray;
textutils.pagedTabulate(dir_colour, dirs, colors.white, files);
