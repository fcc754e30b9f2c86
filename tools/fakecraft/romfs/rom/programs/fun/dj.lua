-- dj [play [drive]] | dj stop: plays the music disc in a disk drive (a random one when no
-- drive is named), or stops every drive's music.

local args = { ... };

local function usage()
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usages:");
  print(name .. " play");
  print(name .. " play <drive>");
  print(name .. " stop");
end

local function has_music(name)
  return disk.isPresent(name) and disk.hasAudio(name);
end

local function play(drive)
  if drive == nil then
    local drives = {};
    for _, name in ipairs(peripheral.getNames()) do
      if has_music(name) then drives[#drives + 1] = name; end
    end
    if #drives == 0 then
      print("No Music Discs in attached disk drives");
      return;
    end
    drive = drives[math.random(1, #drives)];
  end
  if not has_music(drive) then
    print("No Music Disc in disk drive: " .. drive);
    return;
  end
  print("Playing " .. disk.getAudioTitle(drive));
  disk.playAudio(drive);
end

if #args > 2 then
  usage();
elseif args[1] == "stop" then
  disk.stopAudio();
elseif args[1] == "play" or args[1] == nil then
  play(args[2]);
else
  usage();
end
