-- Specs for the speaker (periphemu's "speaker"): silent, with CC's checks, limits and
-- speaker_audio_empty timing. The speaker is on the back, where a pocket computer wears its
-- speaker upgrade, so the specs run on a computer and a pocket computer alike.

describe("a speaker", function()
  before_each(function() periphemu.create("back", "speaker"); end);
  after_each(function() periphemu.remove("back"); end);

  it("plays up to eight notes a tick", function()
    local speaker = peripheral.wrap("back");
    for _ = 1, 8 do expect(speaker.playNote("harp", 1, 12)):eq(true); end
    expect(speaker.playNote("Bell")):eq(false);
    sleep(0.05);
    expect(speaker.playNote("Bell")):eq(true);
    expect.error(speaker.playNote, "kazoo"):eq('Invalid instrument, "null"!');
    expect.error(speaker.playNote, "harp", 0 / 0):eq("bad argument #2 (number expected, got nan)");
    expect.error(speaker.playNote, nil):eq("bad argument #1 (string expected, got nil)");
  end);

  it("plays one sound a tick", function()
    local speaker = peripheral.wrap("back");
    expect(speaker.playSound("minecraft:entity.cat.ambient")):eq(true);
    expect(speaker.playSound("entity.cat.ambient")):eq(false);
    sleep(0.05);
    expect(speaker.playSound("entity.cat.ambient", 5, 2)):eq(true);
    expect.error(speaker.playSound, "Not A Sound"):eq("Malformed sound name 'Not A Sound' ");
    expect.error(speaker.playSound, "a:b:c"):eq("Malformed sound name 'a:b:c' ");
  end);

  -- CC refuses the sound of a music disc (a jukebox song of Minecraft 1.21.1) before it
  -- looks at the tick: such a call takes no sound's place.
  it("does not play a music disc's sound", function()
    local speaker = peripheral.wrap("back");
    for _, name in ipairs({ "music_disc.cat", "minecraft:music_disc.pigstep", ":music_disc.11",
      "music_disc.creator_music_box", "music_disc.precipice" }) do
      expect(speaker.playSound(name)):eq(false);
    end
    expect(speaker.playSound("other:music_disc.cat")):eq(true);
    sleep(0.05);
    expect(speaker.playSound("music_disc.unknown")):eq(true);
  end);

  it("takes an empty name or namespace, as Minecraft's resource locations do", function()
    local speaker = peripheral.wrap("back");
    -- CC plays no such sound, but the name parses (minecraft:, with an empty path).
    for _, name in ipairs({ "", ":", "x:", ":block.bell.use" }) do
      expect(speaker.playSound(name)):eq(true);
      sleep(0.05);
    end
  end);

  it("takes audio a buffer at a time, saying when it has room", function()
    local speaker = peripheral.wrap("back");
    local buffer = {};
    for i = 1, 48000 do buffer[i] = (i % 64) - 32; end
    expect.error(speaker.playAudio, {}):eq("Cannot play empty audio");
    expect.error(speaker.playAudio, { 1, 2, 3, 4, 5, 6, 7, 200 }):eq("table item #8 must be between -128 and 127");
    expect.error(speaker.playAudio, nil):eq("bad argument #1 (table expected, got nil)");
    -- Each sample is read as CC's LuaTable.getInt reads it: a finite number, then a Java int.
    expect.error(speaker.playAudio, { 1, 2, "3", 4, 5, 6, 7, 8 }):eq("table item #3 is not number (got string)");
    expect(speaker.playAudio({ 1, 2, 3, 4, 5, 6, "7" })):eq(true); -- no whole byte: nothing read
    speaker.stop();
    expect.error(speaker.playAudio, { 1, 2, 3, 4, 5, 6, 0 / 0, 8 }):eq("table item #7 is not number (got nan)");
    expect(speaker.playAudio({ -128.5, 127.9, 2 ^ 32, 0, 0, 0, 0, 0 })):eq(true);
    speaker.stop();
    expect(speaker.playAudio(buffer)):eq(true);
    expect(speaker.playAudio(buffer)):eq(false);
    local _, name = os.pullEvent("speaker_audio_empty");
    expect(name):eq("back");
    expect(speaker.playAudio(buffer)):eq(true);
    expect(speaker.playSound("block.note_block.harp")):eq(false);
    os.pullEvent("speaker_audio_empty");
    speaker.stop();
    expect(speaker.playSound("block.note_block.harp")):eq(true);
  end);
end);
