-- cc.audio.dfpwm: converts between DFPWM audio (1 bit per sample) and lists of amplitudes
-- (-128..127, what speaker.playAudio takes), as CC: Tweaked's module. Written for fakecraft
-- from CC's documentation and test-rom specs and GreaseMonkey's public description of
-- DFPWM1a; it shares no code with CC's ROM.
--
-- DFPWM1a models the signal as a charge that each bit pushes towards +127 (1) or -128 (0),
-- by a strength that grows while the bits repeat and shrinks when they alternate. The
-- decoder smooths a change of direction (the average of the last two charges) and runs the
-- result through a low-pass filter. Encoders and decoders keep that state from one call to
-- the next, so one stream wants one of them.

local expect = require("cc.expect").expect;

-- Fixed-point precision of the strength: it runs from MIN_STRENGTH to 2^PRECISION - 1.
local PRECISION = 10;
local MAX_STRENGTH = 2 ^ PRECISION - 1;
local MIN_STRENGTH = 2 ^ (PRECISION - 7);
local HALF = 2 ^ (PRECISION - 1);
-- The decoder's low-pass filter strength, out of 256.
local FILTER_STRENGTH = 140;

-- A predictor: feed it a bit (true for a 1), it returns the new charge, then the charge
-- before.
local function make_predictor()
  local charge, strength, previous_bit = 0, 0, false;
  return function(bit)
    local target = bit and 127 or -128;
    local before = charge;
    local next_charge = charge + math.floor((strength * (target - charge) + HALF) / 2 ^ PRECISION);
    if next_charge == charge and next_charge ~= target then
      next_charge = next_charge + (bit and 1 or -1);
    end
    charge = next_charge;

    local goal = bit == previous_bit and MAX_STRENGTH or 0;
    if strength ~= goal then
      strength = strength + (goal ~= 0 and 1 or -1);
    end
    if strength < MIN_STRENGTH then
      strength = MIN_STRENGTH;
    end
    previous_bit = bit;
    return charge, before;
  end
end

--- Makes an encoder: a function from a list of amplitudes to DFPWM bytes (eight amplitudes
--- a byte, the first in the lowest bit).
local function make_encoder()
  local predict = make_predictor();
  local charge = 0;
  return function(input)
    expect(1, input, "table");
    local out = {};
    for i = 1, #input, 8 do
      local byte = 0;
      for bit_index = 0, 7 do
        -- Past the end of the list counts as silence; amplitudes are floored, then checked.
        local amplitude = math.floor(input[i + bit_index] or 0);
        if amplitude < -128 or amplitude > 127 then
          error(("Amplitude at position %d was %d, but should be between -128 and 127")
            :format(i + bit_index, amplitude), 2);
        end
        local bit = amplitude > charge or (amplitude == charge and amplitude == 127);
        if bit then
          byte = byte + 2 ^ bit_index;
        end
        charge = predict(bit);
      end
      out[#out + 1] = string.char(byte);
    end
    return table.concat(out);
  end
end

--- Makes a decoder: a function from DFPWM bytes to a list of amplitudes.
local function make_decoder()
  local predict = make_predictor();
  local filtered = 0;
  local previous_bit = false;
  return function(input)
    expect(1, input, "string");
    local out, n = {}, 0;
    for i = 1, #input do
      local byte = input:byte(i);
      for _ = 1, 8 do
        local bit = byte % 2 == 1;
        byte = math.floor(byte / 2);
        local charge, before = predict(bit);
        -- A change of direction takes the midpoint, so the wave does not jerk.
        local value = charge;
        if bit ~= previous_bit then
          value = math.floor((charge + before + 1) / 2);
        end
        previous_bit = bit;
        filtered = filtered + math.floor((FILTER_STRENGTH * (value - filtered) + 128) / 256);
        n = n + 1;
        out[n] = filtered;
      end
    end
    return out;
  end
end

--- Decodes a whole stream at once.
local function decode(input)
  expect(1, input, "string");
  return make_decoder()(input);
end

--- Encodes a whole stream at once.
local function encode(input)
  expect(1, input, "table");
  return make_encoder()(input);
end

return {
  make_encoder = make_encoder,
  encode = encode,
  make_decoder = make_decoder,
  decode = decode,
};
