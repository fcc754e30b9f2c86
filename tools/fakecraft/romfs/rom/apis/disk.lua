-- disk: floppy disks and music discs in disk drives, by the drive's name (a side, or a
-- name on a wired network). Every function is a thin layer over the drive peripheral's
-- methods that does nothing (and answers false or nil) when the name is not a drive.
-- Loaded with os.loadAPI. Written for fakecraft from CC: Tweaked's documented behaviour; it
-- shares no code with CC's. setLabel, the one function whose drive method can fail (a music
-- disc's label cannot change), calls it on line 62, where CC's does: its error reads
-- "/rom/apis/disk.lua:62: ..." here as in CC (see term.lua).

-- Whether name is a drive; a name that is not a string is the caller's caller's mistake.
local function is_drive(name)
  if type(name) ~= "string" then
    error("bad argument #1 (string expected, got " .. type(name) .. ")", 3);
  end
  return peripheral.getType(name) == "drive";
end

-- A function calling a drive method, answering otherwise when name is not a drive.
local function drive_method(method, otherwise)
  return function(name, ...)
    if is_drive(name) then return peripheral.call(name, method, ...); end
    return otherwise;
  end;
end

--- Whether the drive holds a disk (or anything else).
local isPresent = drive_method("isDiskPresent", false);
--- The label of the disk in the drive.
local getLabel = drive_method("getDiskLabel", nil);
--- Whether the drive holds a disk with files (mounted at getMountPath).
local hasData = drive_method("hasData", false);
--- Where the disk's files are mounted ("disk", "disk2", …).
local getMountPath = drive_method("getMountPath", nil);
--- Whether the drive holds a music disc.
local hasAudio = drive_method("hasAudio", false);
--- The title of the music disc in the drive.
local getAudioTitle = drive_method("getAudioTitle", nil);
--- The id of the floppy disk in the drive.
local getID = drive_method("getDiskID", nil);

--- Plays the music disc in the drive.
local function playAudio(name)
  if is_drive(name) then peripheral.call(name, "playAudio"); end
end

--- Stops the music disc in the drive, or in every drive when none is named (nil or false).
local function stopAudio(name)
  if not name then
    for _, each in ipairs(peripheral.getNames()) do stopAudio(each); end
    return;
  end
  if is_drive(name) then peripheral.call(name, "stopAudio"); end
end

--- Ejects what the drive holds.
local function eject(name)
  if is_drive(name) then peripheral.call(name, "ejectDisk"); end
end

--- Sets (or, with nil, clears) the label of the disk in the drive.
local function setLabel(name, label)
  if is_drive(name) then
    peripheral.call(name, "setDiskLabel", label);
  end
end

-- The API's names, set in the order CC's disk.lua defines its functions, so that
-- pairs(disk) walks them as in CC (the functions above are placed for their lines).
_ENV.isPresent = isPresent;
_ENV.getLabel = getLabel;
_ENV.setLabel = setLabel;
_ENV.hasData = hasData;
_ENV.getMountPath = getMountPath;
_ENV.hasAudio = hasAudio;
_ENV.getAudioTitle = getAudioTitle;
_ENV.playAudio = playAudio;
_ENV.stopAudio = stopAudio;
_ENV.eject = eject;
_ENV.getID = getID;
