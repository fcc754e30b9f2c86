-- speaker play <file or url> [speaker] | speaker sound <sound> [volume] [pitch] [speaker] |
-- speaker stop [speaker]: plays a DFPWM or WAV (8-bit PCM or DFPWM, mono, 48 kHz) file on a
-- speaker (the first one found when none is named), plays a Minecraft sound, or stops every
-- speaker (or the one named). The messages are CC: Tweaked's.

-- A DFPWM chunk of 16 KiB decodes to 128 Ki samples, the most playAudio takes at once; 8-bit
-- PCM is one sample a byte.
local DFPWM_CHUNK = 16 * 1024;
local PCM_CHUNK = 128 * 1024;
-- The subformat GUID of a WAVE_FORMAT_EXTENSIBLE file holding DFPWM.
local DFPWM_GUID = "\x3A\xC1\xFA\x38\x81\x1D\x43\x61\xA4\x0D\xCE\x53\xCA\x60\x7C\xD1";
-- What the first four bytes of a file say it is, for the formats a speaker cannot play.
local OTHER_FORMATS = { OggS = "Ogg", fLaC = "FLAC", ["<!DO"] = "HTML" };

local function usage()
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usage:");
  print(name .. " play <file or url> [speaker]");
  print(name .. " sound <sound> [volume] [pitch] [speaker]");
  print(name .. " stop [speaker]");
end

-- The speaker named, or every speaker attached; raises CC's message when there is none.
local function speakers(name)
  if name == nil then
    local found = { peripheral.find("speaker") };
    if #found == 0 then error("No speakers attached", 0); end
    return found;
  end
  local speaker = peripheral.wrap(name);
  if speaker == nil then
    error(("Speaker %q does not exist"):format(name), 0);
  elseif not peripheral.hasType(name, "speaker") then
    error(("%q is not a speaker"):format(name), 0);
  end
  return { speaker };
end

local function unsupported(format)
  printError(("speaker cannot play %s files."):format(format));
  local pretty = require("cc.pretty");
  pretty.print("Run '" .. pretty.text("help speaker", colours.lightGrey) .. "' for information on supported formats.");
end

-- Reads a WAV file's header up to its samples (handle is past "RIFF"). Returns "pcm" or
-- "dfpwm"; raises CC's message for a file it cannot play.
local function wav_header(handle)
  local function fail(why)
    handle.close();
    error("Could not play audio: " .. why, 0);
  end
  handle.read(4); -- the RIFF size
  if handle.read(8) ~= "WAVEfmt " then fail("Unsupported WAV file"); end
  local fmt = handle.read((("<I4"):unpack(handle.read(4))));
  local tag, channels, rate, _, _, bits = ("<I2I2I4I4I2I2"):unpack(fmt);
  local kind;
  if tag == 1 and bits == 8 then
    kind = "pcm";
  elseif tag == 0xFFFE and bits == 1 and fmt:sub(25) == DFPWM_GUID then
    kind = "dfpwm";
  else
    fail("Unsupported WAV file");
  end
  if channels ~= 1 or rate ~= 48000 then
    print("Warning: Only 48 kHz mono WAV files are supported. This file may not play correctly.");
  end
  while true do
    local id = handle.read(4);
    if id == nil then fail("Invalid WAV file"); end
    local size = ("<I4"):unpack(handle.read(4));
    if id == "data" then return kind; end
    handle.read(size);
  end
end

local function play(file, name)
  if file == nil then error("Usage: speaker play <file or url> [speaker]", 0); end
  local speaker = speakers(name)[1];
  local handle, err;
  if http and file:match("^https?://") then
    print("Downloading...");
    handle, err = http.get(file);
  else
    handle, err = fs.open(shell.resolve(file), "rb");
  end
  if not handle then
    printError("Could not play audio:");
    error(err, 0);
  end

  local first, kind = handle.read(4) or "", "dfpwm";
  if first == "RIFF" then
    kind, first = wav_header(handle), "";
  elseif OTHER_FORMATS[first] or first:sub(1, 3) == "ID3" then
    handle.close();
    return unsupported(OTHER_FORMATS[first] or "MP3");
  end

  print("Playing " .. file);
  local decode;
  if kind == "pcm" then
    decode = function(chunk)
      local samples = {};
      for i = 1, #chunk do samples[i] = chunk:byte(i) - 128; end
      return samples;
    end;
  else
    decode = require("cc.audio.dfpwm").make_decoder();
  end
  local size = kind == "pcm" and PCM_CHUNK or DFPWM_CHUNK;
  -- A bare DFPWM file's first four bytes are sound too.
  local chunk = first .. (handle.read(size - #first) or "");
  while chunk ~= "" do
    local samples = decode(chunk);
    while not speaker.playAudio(samples) do
      os.pullEvent("speaker_audio_empty");
    end
    chunk = handle.read(size) or "";
  end
  handle.close();
end

-- A number argument within [low, high], or nil when not given.
local function number_arg(value, what, low, high)
  if value == nil then return nil; end
  local n = tonumber(value);
  if n == nil then error(what .. " must be a number", 0); end
  if n < low or n > high then error(("%s must be between %d and %d"):format(what, low, high), 0); end
  return n;
end

local function sound(name, volume, pitch, speaker_name)
  if name == nil then error("Usage: speaker sound <sound> [volume] [pitch] [speaker]", 0); end
  volume = number_arg(volume, "Volume", 0, 3);
  pitch = number_arg(pitch, "Pitch", 0, 2);
  local speaker = speakers(speaker_name)[1];
  if not speaker.playSound(name, volume, pitch) then
    error(("Could not play sound %q"):format(name), 0);
  end
  print(("Played sound %q on speaker %q with volume %s and pitch %s."):format(
    name, peripheral.getName(speaker), volume or 1, pitch or 1));
end

local command = ...;
if command == "play" then
  play(select(2, ...));
elseif command == "sound" then
  sound(select(2, ...));
elseif command == "stop" then
  for _, speaker in ipairs(speakers((select(2, ...)))) do speaker.stop(); end
else
  usage();
end
