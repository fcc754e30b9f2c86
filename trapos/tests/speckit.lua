-- What the specs share, so no spec keeps its own copy: a stub of CC's settings API, the
-- reader of the fixtures (tests/fixtures/*.json) that the Go tests read too, and the width of
-- the screen the specs run on (51 columns, or a pocket computer's 26: fakecraft test --pocket).

local codec = require('/apis/libsandboxcodec');
local layout = require('/apis/libsandboxlayout');

-- settings(values): CC's settings API over a plain table. get answers the default for a
-- setting without a value, as CC's does; set changes the table; define does nothing.
local function settings(values)
  return {
    define = function() end,
    get = function(name, default)
      if values[name] == nil then
        return default;
      end
      return values[name];
    end,
    set = function(name, value)
      values[name] = value;
    end,
  };
end

-- decodeJson(text, what, options): the decoded JSON text (options go to unserializeJSON);
-- the spec fails, naming what, when it is not JSON.
local function decodeJson(text, what, options)
  local value, err = textutils.unserializeJSON(text, options);
  if value == nil then
    fail(what .. " is not JSON: " .. tostring(err));
  end
  return value;
end

-- readJson(path, options): the decoded JSON file; the spec fails when it cannot be read.
local function readJson(path, options)
  local handle = fs.open(path, "rb");
  if handle == nil then
    fail("cannot open " .. path);
  end
  local text = handle.readAll();
  handle.close();
  return decodeJson(text, path, options);
end

-- daemonTypes(): the request types the daemon answers itself, as a set: the reserved ones
-- but the gateway's own (hello, prove, bye, probe_gateway, screen.update).
local function daemonTypes()
  local types = {};
  for msgType in pairs(codec.RESERVED_TYPES) do
    if msgType ~= codec.TYPE_HELLO and msgType ~= codec.TYPE_PROVE and msgType ~= codec.TYPE_BYE and msgType ~= codec.TYPE_PROBE_GATEWAY
      and msgType ~= codec.TYPE_SCREEN_UPDATE then
      types[msgType] = true;
    end
  end
  return types;
end

-- bytes(value): a decoded value with every string (keys too) turned from its wire form (one
-- code point U+0000-U+00FF per byte) into the bytes it stands for. The fixtures' strings are
-- wire strings. The empty-array sentinel stays itself, so [] and {} remain apart.
local function bytes(value)
  if type(value) == "string" then
    local converted = codec.fromWire(value);
    if converted == nil then
      fail("not a wire string: " .. value);
    end
    return converted;
  elseif type(value) == "table" and value ~= textutils.empty_json_array then
    local out = {};
    for k, v in pairs(value) do
      out[bytes(k)] = bytes(v);
    end
    return out;
  end
  return value;
end

-- fitted(text, width): text as a player reads it on a screen width columns wide (this
-- computer's by default): laid out by the client's one rule, libsandboxlayout.fitLongWords (a
-- URL longer than a row breaks before its separators, a command to type starts a row rather
-- than end one). A spec of what the client prints expects fitted(words) rather than the
-- words with the line breaks of a 51-column screen written in, so that it holds on a pocket
-- computer too; how the rule itself lays text out is libsandbox_spec.lua's.
local function fitted(text, width)
  return layout.fitLongWords(text, width or (term.getSize()));
end

-- hanging(text, width): a line of sandbox status (or health, or link's account) as a player
-- reads it on a screen width columns wide (this computer's by default): its rows as
-- libsandboxlayout.hangingRows lays them out, each row after the first indented.
local function hanging(text, width)
  return table.concat(layout.hangingRows(text, width or (term.getSize())), "\n");
end

-- narrow(): whether the specs run on a screen narrower than a computer's 51 columns (a pocket
-- computer's 26), where the client lays some of its output out in a layout of its own (help,
-- status, the approve line).
local function narrow()
  return (term.getSize()) < 51;
end

return {
  settings = settings,
  fitted = fitted,
  hanging = hanging,
  narrow = narrow,
  decodeJson = decodeJson,
  readJson = readJson,
  daemonTypes = daemonTypes,
  bytes = bytes,
};
