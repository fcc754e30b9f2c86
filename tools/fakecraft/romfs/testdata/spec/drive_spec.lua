-- Specs for disk drives (periphemu's "drive", floppy disks by id through CraftOS-PC's
-- insertDisk), the disk API and the programs that use them (eject, id, label, drive). A
-- pocket computer has nothing beside it (CC's PocketBrain attaches its upgrade on the back,
-- and nothing else), so on one these cases are pending.

local it_beside = pocket and pending or it;

-- The events queued so far (up to a marker), without waiting for more.
local function drain()
  os.queueEvent("spec_marker");
  local events = {};
  while true do
    local event = table.pack(os.pullEvent());
    if event[1] == "spec_marker" then return events; end
    events[#events + 1] = { table.unpack(event, 1, event.n) };
  end
end

-- What a command line printed.
local function run(line)
  local out = {};
  stub(_G, "print", function(...) out[#out + 1] = table.concat({ ... }, " "); end);
  stub(_G, "write", function(text) out[#out + 1] = tostring(text); end);
  shell.run(line);
  return table.concat(out, "\n");
end

describe("a disk drive", function()
  before_each(function()
    periphemu.create("left", "drive");
    drain();
  end);

  after_each(function()
    periphemu.remove("left");
    periphemu.remove("right");
    drain();
  end);

  it_beside("is empty at first", function()
    local drive = peripheral.wrap("left");
    expect(peripheral.getType("left")):eq("drive");
    expect(drive.isDiskPresent()):eq(false);
    expect(drive.getAudioTitle()):eq(false);
    expect(drive.getMountPath()):eq(nil);
    expect(select("#", drive.getDiskID())):eq(0);
    expect(disk.isPresent("left")):eq(false);
    expect(disk.hasData("top")):eq(false);
    expect.error(disk.isPresent, 1):eq("bad argument #1 (string expected, got number)");
    expect(run("eject left")):eq("Nothing in left drive");
    expect(run("id left")):eq("No disk in drive left");
    expect(run("label get left")):eq("No disk in left drive");
  end);

  it_beside("mounts a floppy disk at /disk while it is in, with disk and disk_eject", function()
    peripheral.call("left", "insertDisk", 40);
    expect(drain()):same({ { "disk", "left" } });
    expect(disk.isPresent("left")):eq(true);
    expect(disk.hasData("left")):eq(true);
    expect(disk.getMountPath("left")):eq("disk");
    expect(disk.getID("left")):eq(40);
    expect(disk.hasAudio("left")):eq(false);
    expect(fs.getDrive("disk")):eq("left");
    expect(fs.getCapacity("disk")):eq(125000);
    local file = fs.open("/disk/note.txt", "w");
    file.write("kept on the disk");
    file.close();
    expect(run("label set left saves")):eq("Disk label set to \"saves\"");
    expect(run("id left")):eq("The disk is #40\nLabelled \"saves\"");
    expect(run("drive disk")):str_match("^left %(");

    expect(run("eject left")):eq("");
    expect({ os.pullEvent("disk_eject") }):same({ "disk_eject", "left" });
    expect(drain()):same({});
    expect(fs.exists("/disk")):eq(false);
    expect(disk.isPresent("left")):eq(false);

    peripheral.call("left", "insertDisk", 40);
    drain();
    local again = fs.open("/disk/note.txt", "r");
    expect(again.readAll()):eq("kept on the disk");
    again.close();
    expect(disk.getLabel("left")):eq("saves");
    -- An empty label is a label, as CC keeps it (DiskDrivePeripheral maps only nil to none).
    expect(run("label set left \"\"")):eq("Disk label set to \"\"");
    expect(disk.getLabel("left")):eq("");
    expect(run("id left")):eq("The disk is #40\nLabelled \"\"");
    expect(run("label clear left")):eq("Disk label cleared");
    expect(disk.getLabel("left")):eq(nil);
    disk.eject("left");
    os.pullEvent("disk_eject");
  end);

  it_beside("mounts a second disk at /disk2, and swaps disks on insert", function()
    periphemu.create("right", "drive", 7);
    peripheral.call("left", "insertDisk", 8);
    local events = drain();
    -- As in CC, a drive attached with a disk in it mounts it before announcing itself.
    expect(events):same({ { "disk", "right" }, { "peripheral", "right" }, { "disk", "left" } });
    expect(disk.getMountPath("right")):eq("disk");
    expect(disk.getMountPath("left")):eq("disk2");
    peripheral.call("left", "insertDisk", 9);
    expect(drain()):same({ { "disk_eject", "left" }, { "disk", "left" } });
    expect(disk.getID("left")):eq(9);
    periphemu.remove("right");
    expect(drain()):same({ { "disk_eject", "right" }, { "peripheral_detach", "right" } });
    expect(fs.exists("/disk")):eq(false);
  end);

  it_beside("holds a floppy disk in one drive at a time, as CC's item", function()
    periphemu.create("right", "drive", 11);
    drain();
    expect.error(peripheral.call, "left", "insertDisk", 11)
      :eq("Could not mount: floppy disk 11 is already in another drive");
    expect(disk.isPresent("left")):eq(false);
    local ok, err = periphemu.create("top", "drive", 11);
    expect({ ok, err }):same({ false, "Could not create peripheral: drive:11: floppy disk 11 is already in another drive" });
    -- Ejected, or its drive removed, it goes in another drive.
    disk.eject("right");
    os.pullEvent("disk_eject");
    peripheral.call("left", "insertDisk", 11);
    expect(disk.getID("left")):eq(11);
    periphemu.remove("left");
    periphemu.create("left", "drive");
    peripheral.call("right", "insertDisk", 11);
    expect(disk.getID("right")):eq(11);
    periphemu.remove("right");
    drain();
  end);

  -- CC's ejectDisk asks the drive to eject, which it does on the server's next tick
  -- (DiskDriveBlockEntity's ejectQueued): until then the disk is in, and mounted.
  it_beside("ejects a disk on the next tick", function()
    peripheral.call("left", "insertDisk", 43);
    drain();
    local started = os.clock();
    disk.eject("left");
    expect(disk.isPresent("left")):eq(true);
    expect(disk.getID("left")):eq(43);
    expect(fs.exists("/disk")):eq(true);
    expect({ os.pullEvent("disk_eject") }):same({ "disk_eject", "left" });
    expect(math.floor((os.clock() - started) / 0.05 + 0.5)):eq(1); -- one tick
    expect(disk.isPresent("left")):eq(false);
    expect(fs.exists("/disk")):eq(false);
  end);

  -- CC runs setDiskLabel on the server's main thread (@LuaFunction(mainThread = true)),
  -- an empty drive's too: it answers on the next tick, its caller waiting for the task's
  -- task_complete, so an event the caller is sent meanwhile is not its own.
  it_beside("sets a disk's label on the next tick", function()
    peripheral.call("left", "insertDisk", 41);
    drain();
    os.queueEvent("drive_spec_before");
    local started = os.clock();
    disk.setLabel("left", "tick");
    expect(math.floor((os.clock() - started) / 0.05 + 0.5)):eq(1); -- one tick
    os.queueEvent("drive_spec_after");
    expect(os.pullEvent()):eq("drive_spec_after");
    expect(disk.getLabel("left")):eq("tick");
    disk.eject("left");
    os.pullEvent("disk_eject");
    started = os.clock();
    expect(select("#", peripheral.call("left", "setDiskLabel", "none"))):eq(0);
    expect(math.floor((os.clock() - started) / 0.05 + 0.5)):eq(1); -- one tick
  end);

  -- CC's disk.stopAudio tests its name with `not name`: false, as nil, stops every drive,
  -- where only a string or nothing names one.
  it_beside("stops every drive's audio when given no name, nil or false", function()
    periphemu.create("right", "drive", 12);
    drain();
    expect(select("#", disk.stopAudio())):eq(0);
    expect(select("#", disk.stopAudio(nil))):eq(0);
    expect(select("#", disk.stopAudio(false))):eq(0);
    expect(select("#", disk.stopAudio("left"))):eq(0);
    expect.error(disk.stopAudio, 1):eq("bad argument #1 (string expected, got number)");
    expect.error(disk.stopAudio, true):eq("bad argument #1 (string expected, got boolean)");
    periphemu.remove("right");
    drain();
  end);

  it_beside("takes only floppy disks from a program, never host files", function()
    expect.error(peripheral.call, "left", "insertDisk", "/"):str_match("^Could not mount: \"/\" is not a disk id");
    local ok, err = periphemu.create("top", "drive", "/");
    expect(ok):eq(false);
    expect(err):str_match("is not a disk id");
    expect(peripheral.isPresent("top")):eq(false);
  end);
end);
