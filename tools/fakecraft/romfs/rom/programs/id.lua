-- id [drive]: prints the computer's id and label, or what is in a disk drive: a music
-- disc's title, or a floppy disk's id and label.

local args = { ... };

if #args == 0 then
  print("This is computer #" .. os.getComputerID());
  local label = os.getComputerLabel();
  if label then
    print("This computer is labelled \"" .. label .. "\"");
  end
  return;
end

local drive = tostring(args[1]);
if disk.hasAudio(drive) then
  local title = disk.getAudioTitle(drive);
  if title then
    print("Has audio track \"" .. title .. "\"");
  else
    print("Has untitled audio");
  end
  return;
end
if not disk.hasData(drive) then
  print("No disk in drive " .. drive);
  return;
end
local id = disk.getID(drive);
if id then
  print("The disk is #" .. id);
else
  print("Non-disk data source");
end
local label = disk.getLabel(drive);
if label then
  print("Labelled \"" .. label .. "\"");
end
