-- label get | set <text> | clear: shows or changes the computer's label. fakecraft has
-- no disk drives, so the <drive> forms always answer that there is none.

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

local function no_drive(drive)
  print("No disk drive named " .. drive);
end

local function get()
  local label = os.getComputerLabel();
  if label then
    print("Computer label is \"" .. label .. "\"");
  else
    print("No Computer label");
  end
end

local function set(text)
  os.setComputerLabel(text);
  local label = os.getComputerLabel();
  if label then
    print("Computer label set to \"" .. label .. "\"");
  else
    print("Computer label cleared");
  end
end

local command = args[1];
if command == "get" and #args == 1 then
  get();
elseif command == "get" and #args == 2 then
  no_drive(args[2]);
elseif command == "set" and #args == 2 then
  set(args[2]);
elseif command == "set" and #args == 3 then
  no_drive(args[2]);
elseif command == "clear" and #args == 1 then
  set(nil);
elseif command == "clear" and #args == 2 then
  no_drive(args[2]);
else
  usage();
end
