-- Specs for the programs of turtles, pocket computers and command computers, for about and
-- apis, and for speaker. fakecraft has no turtles or command computers, and these specs run
-- on a computer as well as a pocket computer, so each spec stubs the API the program drives
-- (turtle, pocket, commands) as a plain table; speaker plays on a periphemu speaker on the
-- back, where a pocket computer wears one too. Messages are CC: Tweaked's.

-- Runs a command line, returning what it printed with print/write and with printError.
local function capture(line)
  local output, errors = {}, {};
  stub(_G, "print", function(...)
    local parts = table.pack(...);
    for i = 1, parts.n do parts[i] = tostring(parts[i]); end
    output[#output + 1] = table.concat(parts, " ", 1, parts.n) .. "\n";
    return 1;
  end);
  stub(_G, "write", function(text) output[#output + 1] = tostring(text); return 0; end);
  stub(_G, "printError", function(...)
    errors[#errors + 1] = table.concat({ ... }, " ") .. "\n";
  end);
  local ok = shell.run(line);
  return { ok = ok, output = table.concat(output), error = table.concat(errors) };
end

-- A turtle whose moves are recorded; blocked[move] moves fail that many times first.
local function fake_turtle(fields)
  local t = { moves = {}, blocked = {} };
  for _, move in ipairs({ "forward", "back", "up", "down", "turnLeft", "turnRight" }) do
    t[move] = function()
      if (t.blocked[move] or 0) > 0 then
        t.blocked[move] = t.blocked[move] - 1;
        return false;
      end
      t.moves[#t.moves + 1] = move;
      return true;
    end
  end
  t.getFuelLevel = function() return 100; end
  for k, v in pairs(fields or {}) do t[k] = v; end
  stub(_G, "turtle", t);
  return t;
end

describe("turtle programs", function()
  it("need a turtle", function()
    stub(_G, "turtle", nil);
    for _, program in ipairs({ "go", "turn", "craft", "refuel", "equip", "unequip" }) do
      expect(capture("/rom/programs/turtle/" .. program .. ".lua"))
        :same({ ok = true, output = "", error = "Requires a Turtle\n" });
    end
  end);

  it("go moves in each direction given, with its count", function()
    local t = fake_turtle();
    capture("/rom/programs/turtle/go.lua fd 2 UP lt bk 1");
    expect(t.moves):same({ "forward", "forward", "up", "turnLeft", "back" });
    expect(capture("/rom/programs/turtle/go.lua sideways").output)
      :eq("No such direction: sideways\nTry: forward, back, up, down\n");
    expect(capture("/rom/programs/turtle/go.lua").output)
      :eq("Usage: /rom/programs/turtle/go.lua <direction> <distance>\n");
  end);

  it("go tries a blocked move again, and stops when out of fuel", function()
    local t = fake_turtle();
    t.blocked.up = 2;
    capture("/rom/programs/turtle/go.lua up");
    expect(t.moves):same({ "up" });
    t.getFuelLevel = function() return 0; end
    t.blocked.down = 1;
    expect(capture("/rom/programs/turtle/go.lua down 3").output):eq("Out of fuel\n");
  end);

  it("turn turns as often as asked", function()
    local t = fake_turtle();
    capture("/rom/programs/turtle/turn.lua right 2 left");
    expect(t.moves):same({ "turnRight", "turnRight", "turnLeft" });
    expect(capture("/rom/programs/turtle/turn.lua up").output)
      :eq("No such direction: up\nTry: left, right\n");
  end);

  it("craft counts what it made", function()
    local count = 5;
    fake_turtle({
      craft = function(limit)
        expect(limit):eq(2);
        count = 3;
        return true;
      end,
      getSelectedSlot = function() return 1; end,
      getItemCount = function() return count; end,
    });
    expect(capture("/rom/programs/turtle/craft.lua 2").output):eq("2 items crafted\n");
    expect(capture("/rom/programs/turtle/craft.lua some").output)
      :eq("Usage: /rom/programs/turtle/craft.lua all|<number>\n");
    fake_turtle();
    expect(capture("/rom/programs/turtle/craft.lua 1").output):eq("Requires a Crafty Turtle\n");
  end);

  it("refuel burns slot by slot up to the limit", function()
    local counts, fuel, selected = { 0, 3, 5 }, 0, nil;
    fake_turtle({
      getFuelLevel = function() return fuel; end,
      getFuelLimit = function() return 1000; end,
      getItemCount = function(slot) return counts[slot] or 0; end,
      select = function(slot) selected = slot; end,
      refuel = function(limit)
        local used = math.min(limit or counts[selected], counts[selected]);
        counts[selected] = counts[selected] - used;
        fuel = fuel + used * 10;
        return true;
      end,
    });
    expect(capture("/rom/programs/turtle/refuel.lua 4").output):eq("Fuel level is 40\n");
    expect(counts):same({ 0, 0, 4 });
    expect(capture("/rom/programs/turtle/refuel.lua all").output):eq("Fuel level is 80\n");
    expect(capture("/rom/programs/turtle/refuel.lua x").output)
      :eq("Invalid limit, expected a number or \"all\"\n");
  end);

  it("equip and unequip say what happened to the slot", function()
    -- Slot 1 holds a modem; the left side is empty, the right holds a pickaxe.
    local counts, selected, sides = { 1, 0 }, 1, { left = 0, right = 1 };
    local function swap(side)
      return function()
        counts[selected], sides[side] = sides[side], counts[selected];
        return true;
      end
    end
    fake_turtle({
      select = function(slot) selected = slot; end,
      getItemCount = function(slot) return counts[slot]; end,
      equipLeft = swap("left"),
      equipRight = swap("right"),
    });
    expect(capture("/rom/programs/turtle/equip.lua 1 left").output):eq("Item equipped\n");
    expect(capture("/rom/programs/turtle/equip.lua 1 up").output)
      :eq("Usage: /rom/programs/turtle/equip.lua <slot> <side>\n");
    expect(capture("/rom/programs/turtle/unequip.lua right").output):eq("Item unequipped\n");
    expect(counts):same({ 1, 0 });
    expect(capture("/rom/programs/turtle/equip.lua 1 right").output):eq("Item equipped\n");
    expect(capture("/rom/programs/turtle/equip.lua 2 left").output):eq("Nothing to equip\n");
    counts = { 1, 1 };
    expect(capture("/rom/programs/turtle/unequip.lua right").output):eq("No space to unequip item\n");
  end);
end);

describe("pocket programs", function()
  it("equip and unequip the back slot", function()
    stub(_G, "pocket", {
      equipBack = function() return true; end,
      unequipBack = function() return false, "Nothing to remove."; end,
    });
    expect(capture("/rom/programs/pocket/equip.lua")):same({ ok = true, output = "Item equipped\n", error = "" });
    expect(capture("/rom/programs/pocket/unequip.lua")):same({ ok = true, output = "", error = "Nothing to remove.\n" });
    stub(_G, "pocket", nil);
    expect(capture("/rom/programs/pocket/equip.lua").error):eq("Requires a Pocket Computer\n");
  end);
end);

describe("command computer programs", function()
  it("exec runs the command and prints what it said", function()
    local ran;
    stub(_G, "commands", {
      exec = function(command)
        ran = command;
        return false, { "Unknown item", "try again" };
      end,
    });
    expect(capture("/rom/programs/command/exec.lua GIVE @p stone"))
      :same({ ok = true, output = "Unknown item\ntry again\n", error = "Failed\n" });
    expect(ran):eq("give @p stone");
    expect(capture("/rom/programs/command/exec.lua").error)
      :eq("Usage: /rom/programs/command/exec.lua <command>\n");
  end);

  it("commands lists the commands, sorted", function()
    local shown;
    stub(textutils, "pagedTabulate", function(list) shown = list; end);
    stub(_G, "commands", { list = function() return { "tp", "give" }; end });
    expect(capture("/rom/programs/command/commands.lua").output):eq("Available commands:\n");
    expect(shown):same({ "give", "tp" });
    stub(_G, "commands", nil);
    expect(capture("/rom/programs/command/exec.lua x").error):eq("Requires a Command Computer.\n");
  end);
end);

describe("about and apis", function()
  it("about names the OS and the host", function()
    expect(capture("about").output):eq(os.version() .. " on " .. _HOST .. "\n");
  end);

  it("apis lists the global tables and the shell's own", function()
    local shown;
    stub(textutils, "pagedTabulate", function(list) shown = list; end);
    capture("apis");
    for _, name in ipairs({ "fs", "os", "paintutils", "shell", "package", "term" }) do
      local found = false;
      for _, v in ipairs(shown) do found = found or v == name; end
      expect(found):eq(true);
    end
    for _, v in ipairs(shown) do expect(v):ne("_G"); end
  end);
end);

describe("speaker", function()
  local DIR = "/spec-speaker";
  local function write_file(path, bytes)
    local file = fs.open(path, "wb");
    file.write(bytes);
    file.close();
  end
  -- A WAV file's header: format tag, channels, rate, bits, then an extra chunk before the
  -- samples (which the program skips).
  local function wav(tag, channels, rate, bits, samples)
    local fmt = ("<I2I2I4I4I2I2"):pack(tag, channels, rate, rate, 1, bits);
    return "RIFF" .. ("<I4"):pack(4 + 8 + #fmt + 12 + 8 + #samples) .. "WAVEfmt " .. ("<I4"):pack(#fmt) .. fmt
      .. "LIST" .. ("<I4"):pack(4) .. "INFO" .. "data" .. ("<I4"):pack(#samples) .. samples;
  end
  -- Whether the speaker on the back is still busy with audio a program gave it.
  local function busy()
    return not peripheral.call("back", "playAudio", { 0 });
  end

  before_each(function()
    periphemu.create("back", "speaker");
    fs.makeDir(DIR);
  end);
  after_each(function()
    periphemu.remove("back");
    fs.delete(DIR);
  end);

  it("shows its usage", function()
    expect(capture("speaker").output):eq("Usage:\nspeaker play <file or url> [speaker]\n"
      .. "speaker sound <sound> [volume] [pitch] [speaker]\nspeaker stop [speaker]\n");
    expect(capture("speaker play").error):eq("Usage: speaker play <file or url> [speaker]\n");
    expect(capture("speaker sound").error):eq("Usage: speaker sound <sound> [volume] [pitch] [speaker]\n");
  end);

  it("plays a DFPWM file on the first speaker, and stop stops it", function()
    write_file(DIR .. "/tune.dfpwm", ("\x55"):rep(2000));
    expect(capture("speaker play " .. DIR .. "/tune.dfpwm")):same({ ok = true, output = "Playing " .. DIR .. "/tune.dfpwm\n", error = "" });
    expect(busy()):eq(true);
    expect(capture("speaker stop")):same({ ok = true, output = "", error = "" });
    expect(busy()):eq(false);
  end);

  it("plays 8-bit PCM and DFPWM WAV files, warning of a rate it was not made for", function()
    write_file(DIR .. "/a.wav", wav(1, 1, 48000, 8, ("\x80"):rep(1000)));
    expect(capture("speaker play " .. DIR .. "/a.wav back")):same({ ok = true, output = "Playing " .. DIR .. "/a.wav\n", error = "" });
    expect(busy()):eq(true);
    capture("speaker stop back");
    write_file(DIR .. "/b.wav", wav(1, 2, 44100, 8, ("\x80"):rep(1000)));
    expect(capture("speaker play " .. DIR .. "/b.wav").output):eq(
      "Warning: Only 48 kHz mono WAV files are supported. This file may not play correctly.\nPlaying " .. DIR .. "/b.wav\n");
    capture("speaker stop back");
    local guid = "\x3A\xC1\xFA\x38\x81\x1D\x43\x61\xA4\x0D\xCE\x53\xCA\x60\x7C\xD1";
    local fmt = ("<I2I2I4I4I2I2I2I2I4"):pack(0xFFFE, 1, 48000, 6000, 1, 1, 22, 1, 4) .. guid;
    write_file(DIR .. "/c.wav", "RIFF" .. ("<I4"):pack(0) .. "WAVEfmt " .. ("<I4"):pack(#fmt) .. fmt
      .. "data" .. ("<I4"):pack(1000) .. ("\x55"):rep(1000));
    expect(capture("speaker play " .. DIR .. "/c.wav").output):eq("Playing " .. DIR .. "/c.wav\n");
    expect(busy()):eq(true);
  end);

  it("says what it cannot play", function()
    write_file(DIR .. "/a.ogg", "OggS and more");
    expect(capture("speaker play " .. DIR .. "/a.ogg").error):eq("speaker cannot play Ogg files.\n");
    write_file(DIR .. "/a.mp3", "ID3 and more");
    expect(capture("speaker play " .. DIR .. "/a.mp3").error):eq("speaker cannot play MP3 files.\n");
    write_file(DIR .. "/16.wav", wav(1, 1, 48000, 16, ("\0"):rep(8)));
    expect(capture("speaker play " .. DIR .. "/16.wav").error):eq("Could not play audio: Unsupported WAV file\n");
    write_file(DIR .. "/cut.wav", wav(1, 1, 48000, 8, ""):sub(1, -13));
    expect(capture("speaker play " .. DIR .. "/cut.wav").error):eq("Could not play audio: Invalid WAV file\n");
    expect(capture("speaker play " .. DIR .. "/none.dfpwm").error):eq("Could not play audio:\n" .. DIR .. "/none.dfpwm: No such file\n");
    expect(busy()):eq(false);
  end);

  it("names the speaker it cannot find", function()
    expect(capture("speaker stop left").error):eq('Speaker "left" does not exist\n');
    -- A modem in the speaker's place: all a pocket computer can hold there besides.
    periphemu.remove("back");
    expect(capture("speaker stop").error):eq("No speakers attached\n");
    periphemu.create("back", "modem");
    expect(capture("speaker play x back").error):eq('"back" is not a speaker\n');
    expect(capture("speaker stop").error):eq("No speakers attached\n");
  end);

  it("plays a sound, checking volume and pitch", function()
    expect(capture("speaker sound entity.cat.ambient 2 1.5").output):eq(
      'Played sound "entity.cat.ambient" on speaker "back" with volume 2 and pitch 1.5.\n');
    expect(capture("speaker sound entity.cat.ambient").error):eq('Could not play sound "entity.cat.ambient"\n');
    expect(capture("speaker sound x loud").error):eq("Volume must be a number\n");
    expect(capture("speaker sound x 4").error):eq("Volume must be between 0 and 3\n");
    expect(capture("speaker sound x 1 high").error):eq("Pitch must be a number\n");
    expect(capture("speaker sound x 1 3").error):eq("Pitch must be between 0 and 2\n");
  end);
end);
