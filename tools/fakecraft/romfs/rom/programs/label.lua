-- label get | set <text> | clear, each optionally for a <drive>: shows or changes the
-- computer's label, or the label of the disk in a disk drive.

local args = { ... };

local function usage()
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usages:");
  print(name .. " get");
  print(name .. " get <drive>");
  print(name .. " set <text>");
  print(name .. " set <drive> <text>");
  print(name .. " clear");
  print(name .. " clear <drive>");
end

-- Whether drive is a disk drive holding a disk with files, saying why not.
local function has_disk(drive)
  if peripheral.getType(drive) ~= "drive" then
    print("No disk drive named " .. drive);
    return false;
  end
  if not disk.hasData(drive) then
    print("No disk in " .. drive .. " drive");
    return false;
  end
  return true;
end

-- The label of the disk in drive (or the computer's, without one), how to print it, and
-- how to set it.
local function target(drive)
  if drive == nil then
    return "Computer", os.getComputerLabel, os.setComputerLabel;
  end
  return "Disk", function() return disk.getLabel(drive); end, function(text) disk.setLabel(drive, text); end;
end

local function get(drive)
  if drive ~= nil and not has_disk(drive) then return; end
  local what, read = target(drive);
  local label = read();
  if label then
    print(what .. " label is \"" .. label .. "\"");
  else
    print("No " .. what .. " label");
  end
end

local function set(drive, text)
  if drive ~= nil and not has_disk(drive) then return; end
  local what, read, write = target(drive);
  write(text);
  local label = read();
  if label then
    print(what .. " label set to \"" .. label .. "\"");
  else
    print(what .. " label cleared");
  end
end

local command = args[1];
if command == "get" and #args == 1 then
  get(nil);
elseif command == "get" and #args == 2 then
  get(args[2]);
elseif command == "set" and #args == 2 then
  set(nil, args[2]);
elseif command == "set" and #args == 3 then
  set(args[2], args[3]);
elseif command == "clear" and #args == 1 then
  set(nil, nil);
elseif command == "clear" and #args == 2 then
  set(args[2], nil);
else
  usage();
end
