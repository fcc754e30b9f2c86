-- libsandboxcodec: the trap-sandbox wire format as the computer speaks it.
-- Frames (encode/decode), message ids, traposIds, payload and error normalisation, the byte
-- rule for strings, JSON-safe values, and the protocol's error codes and limits. Pure
-- functions over textutils; no events, no socket.

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;

-- Request types (docs/capabilities.md). The computer's daemon answers the TYPE_* ones itself;
-- RESERVED_TYPES (those plus the gateway's) cannot be served by a program.
local TYPE_HELLO = "hello";
local TYPE_BYE = "bye"; -- the computer's word that it closes its socket, and why
local TYPE_PROVE = "prove"; -- asks the gateway to prove itself before the hello (libsandboxproof)
local TYPE_PROBE_GATEWAY = "probe_gateway";
local TYPE_PING = "ping";
local TYPE_COMPUTER_INFO = "computer.info";
local TYPE_FS_LIST = "fs.list";
local TYPE_FS_READ = "fs.read";
local TYPE_FS_WRITE = "fs.write";
local TYPE_FS_DELETE = "fs.delete";
local TYPE_FS_MOVE = "fs.move";
local TYPE_FS_MAKE_DIR = "fs.makeDir";
local TYPE_LUA_EXEC = "lua.exec";
local TYPE_SHELL_RUN = "shell.run";
local TYPE_SCREEN_READ = "screen.read";
local TYPE_SCREEN_INPUT = "screen.input";
local TYPE_SCREEN_WATCH = "screen.watch";
local TYPE_SCREEN_UNWATCH = "screen.unwatch";
local TYPE_SCREEN_UPDATE = "screen.update"; -- the computer's, answered by the gateway
local RESERVED_TYPES = {};
for _, name in ipairs({
  TYPE_HELLO, TYPE_PROVE, TYPE_BYE, TYPE_PROBE_GATEWAY, TYPE_PING, TYPE_COMPUTER_INFO, TYPE_FS_LIST, TYPE_FS_READ,
  TYPE_FS_WRITE, TYPE_FS_DELETE, TYPE_FS_MOVE, TYPE_FS_MAKE_DIR, TYPE_LUA_EXEC, TYPE_SHELL_RUN,
  TYPE_SCREEN_READ, TYPE_SCREEN_INPUT, TYPE_SCREEN_WATCH, TYPE_SCREEN_UNWATCH, TYPE_SCREEN_UPDATE,
}) do
  RESERVED_TYPES[name] = true;
end

-- CC: Tweaked refuses to send a websocket message over max_websocket_message (128 KiB).
local MAX_MESSAGE_BYTES = 128 * 1024;
-- The deepest nesting of arrays and objects a decoded frame may have. unserializeJSON
-- recurses once per level, so a frame nested thousands deep overflows its stack; a deeper
-- payload is cut out before decoding and refused with bad_payload, a frame deeper elsewhere
-- is malformed (docs/protocol.md).
local MAX_JSON_DEPTH = 100;
-- The most gateway_requests a gateway may leave unanswered on one socket (the gateway's
-- MaxGatewayRequestsInFlight, docs/protocol.md). The daemon answers a request past it at
-- once with internal, and drops a gateway that has more frames waiting at once than it may
-- have in flight, as CLOSE_TOO_MANY_REQUESTS.
local MAX_GATEWAY_REQUESTS = 32;
-- The most computer_requests one socket may have unanswered (the gateway's own limit, which
-- answers the next internal). The daemon holds its programs to it too: each request still open
-- lets the gateway have one more frame in flight, so a gateway that answered none would let
-- that allowance grow without end (and the daemon's list of them with it).
local MAX_COMPUTER_REQUESTS = 16;
-- Why the daemon dropped such a gateway (docs/protocol.md's close codes). CC's close() can
-- send no code, so the gateway sees 1006; the daemon keeps the code in its lastError.
local CLOSE_TOO_MANY_REQUESTS = 4429;

-- Error codes of the protocol (error.code of a failed response).
local ERR_UNAUTHORIZED = "unauthorized";
local ERR_NOT_AUTHENTICATED = "not_authenticated";
local ERR_UNKNOWN_TYPE = "unknown_type";
local ERR_NOT_CONNECTED = "not_connected";
local ERR_INTERNAL = "internal";
local ERR_TIMEOUT = "timeout";
-- Codes added by the request vocabulary (docs/capabilities.md).
local ERR_FORBIDDEN = "forbidden";     -- the owner's settings do not allow the request
local ERR_FS_ERROR = "fs_error";       -- a file-system call failed; the message is CC's
local ERR_BAD_PAYLOAD = "bad_payload"; -- a payload field is missing or of the wrong type
local ERR_BUSY = "busy";               -- the receiver takes no more now: ask again shortly

-- Frame events on the wire.
local FRAME_COMPUTER_REQUEST = "computer_request";
local FRAME_COMPUTER_RESPONSE = "computer_response";
local FRAME_GATEWAY_REQUEST = "gateway_request";
local FRAME_GATEWAY_RESPONSE = "gateway_response";

local HEX = "0123456789abcdef";
local VARIANT = "89ab";

-- The most bytes of the gateway's text the daemon keeps where a person reads it (`sandbox
-- status`, its log file): a broken or hostile gateway may send 128 KiB, or many lines.
local MAX_SHOWN_BYTES = 256;
-- An account's name as the gateway makes them (its account.validName: a lower-case letter or
-- digit, then up to 62 of those, ".", "_" and "-"; "local" for the shared password). A name
-- the gateway gives in any other shape is not shown as an account: words of its choosing
-- ("mallory Link this computer to alice") read as the sandbox's own question or line.
local ACCOUNT_NAME = "^[a-z0-9][a-z0-9._-]*$";
local MAX_ACCOUNT_NAME_BYTES = 63;

-- The byte rule (docs/protocol.md). serializeJSON writes every byte >= 0x7F as its own
-- \u00XX, so the gateway reads code point U+00XX; but unserialiseJSON turns \u00XX (and the
-- gateway's raw UTF-8) into the two UTF-8 bytes of that code point, C2 or C3 then one more.
-- fromWire maps each such pair back to its single byte.
local LEAD_C2, LEAD_C3 = 0xC2, 0xC3;
-- Bytes handled per string.byte / string.char call (bounded by the Lua stack).
local BYTE_SLICE = 4096;

local FRAME_EVENTS = {
  [FRAME_COMPUTER_REQUEST] = "request",
  [FRAME_COMPUTER_RESPONSE] = "response",
  [FRAME_GATEWAY_REQUEST] = "request",
  [FRAME_GATEWAY_RESPONSE] = "response",
};

local function traposId(computerId, label)
  expect(1, computerId, "number");
  expect(2, label, "string", "nil");
  return tostring(computerId) .. ":" .. (label or "");
end

local function localTraposId()
  return traposId(os.getComputerID(), os.getComputerLabel());
end

-- A random (version 4) UUID: lowercase 8-4-4-4-12 hex, version nibble 4, variant 10xx.
local function newUuid()
  local out = {};
  for i = 1, 32 do
    local digit;
    if i == 13 then
      digit = "4";
    elseif i == 17 then
      local v = math.random(1, 4);
      digit = VARIANT:sub(v, v);
    else
      local h = math.random(1, 16);
      digit = HEX:sub(h, h);
    end
    out[#out + 1] = digit;
    if i == 8 or i == 12 or i == 16 or i == 20 then
      out[#out + 1] = "-";
    end
  end
  return table.concat(out);
end

-- What normalisePayload raises for a payload that holds a table inside itself (a copy of it
-- would never end: Lua's stack overflows).
local CYCLE = "the payload holds a table inside itself, which JSON cannot carry";

local function deepCopy(value, onPath)
  -- The sentinels stay themselves: a copy would serialise as {} instead of null or [].
  if type(value) ~= "table" or value == textutils.json_null or value == textutils.empty_json_array then
    return value;
  end
  onPath = onPath or {};
  if onPath[value] then
    error(CYCLE, 0);
  end
  onPath[value] = true;
  local copy = {};
  for k, v in pairs(value) do
    copy[k] = deepCopy(v, onPath);
  end
  onPath[value] = nil;
  return copy;
end

-- A string as it arrived in a decoded frame, back to the bytes it stands for: each code point
-- U+0000-U+00FF is one byte. Returns nil when the string holds a higher code point (or bytes
-- that are not UTF-8), which no byte can stand for.
local function fromWire(text)
  if not text:find("[\128-\255]") then
    return text;
  end
  local out, n = {}, 0;
  local pending = nil; -- a lead byte waiting for its continuation
  for first = 1, #text, BYTE_SLICE do
    local bytes = { text:byte(first, first + BYTE_SLICE - 1) };
    for i = 1, #bytes do
      local b = bytes[i];
      if pending ~= nil then
        if b < 0x80 or b > 0xBF then
          return nil;
        end
        n = n + 1;
        out[n] = (pending - 0xC0) * 64 + (b - 0x80);
        pending = nil;
      elseif b < 0x80 then
        n = n + 1;
        out[n] = b;
      elseif b == LEAD_C2 or b == LEAD_C3 then
        pending = b;
      else
        return nil; -- a code point above U+00FF, or not UTF-8 at all
      end
    end
  end
  if pending ~= nil then
    return nil;
  end
  local parts = {};
  for first = 1, n, BYTE_SLICE do
    parts[#parts + 1] = string.char(table.unpack(out, first, math.min(first + BYTE_SLICE - 1, n)));
  end
  return table.concat(parts);
end

-- The text the gateway reads for a string of bytes, as UTF-8: each byte is the code point
-- U+00XX, as serializeJSON writes it (fromWire's reverse). What the gateway computes from
-- a string the computer sent (a proof's key from the password) is computed from this.
local function toWire(bytes)
  return (bytes:gsub("[\128-\255]", function(c)
    local b = c:byte();
    if b < 0xC0 then
      return string.char(LEAD_C2, b);
    end
    return string.char(LEAD_C3, b - 0x40);
  end));
end

-- A decoded value with every string (keys too) put through fromWire. Returns the value, and
-- false when some string could not be converted (it is then left as it arrived).
local function valueFromWire(value)
  if type(value) == "string" then
    local bytes = fromWire(value);
    if bytes == nil then
      return value, false;
    end
    return bytes, true;
  elseif type(value) ~= "table" then
    return value, true;
  end
  local out, allOk = {}, true;
  for k, v in pairs(value) do
    local key, keyOk = valueFromWire(k);
    local item, itemOk = valueFromWire(v);
    out[key] = item;
    allOk = allOk and keyOk and itemOk;
  end
  return out, allOk;
end

-- Any Lua value as one serializeJSON always writes as valid JSON, lossless where JSON can be:
-- nil is null; NaN and the infinities are the strings "nan", "inf", "-inf"; a table whose keys
-- are all positive integers is an array (holes are null) unless it is sparse, any other table
-- an object with tostring'd keys; a table met again inside itself is the string "<cycle>" (a
-- table repeated elsewhere is copied); functions, threads and userdata are tostring(value).
local function jsonSafe(value, onPath)
  local kind = type(value);
  if value == nil then
    return textutils.json_null;
  elseif kind == "number" then
    if value ~= value then
      return "nan";
    elseif value == math.huge then
      return "inf";
    elseif value == -math.huge then
      return "-inf";
    end
    return value;
  elseif kind == "string" or kind == "boolean" then
    return value;
  elseif kind ~= "table" then
    return tostring(value);
  end
  onPath = onPath or {};
  if onPath[value] then
    return "<cycle>";
  end
  onPath[value] = true;
  local count, maxIndex, arrayLike = 0, 0, true;
  for k in pairs(value) do
    count = count + 1;
    if type(k) == "number" and k >= 1 and k == math.floor(k) then
      maxIndex = math.max(maxIndex, k);
    else
      arrayLike = false;
    end
  end
  local out = {};
  if count > 0 and arrayLike and maxIndex <= 2 * count then
    for i = 1, maxIndex do
      out[i] = jsonSafe(value[i], onPath);
    end
  else
    for k, v in pairs(value) do
      out[tostring(k)] = jsonSafe(v, onPath);
    end
  end
  onPath[value] = nil;
  return out;
end

-- Any payload as a fresh, writable object table. unserialiseJSON gives the immutable
-- textutils.empty_json_array for "[]", so a decoded payload is always copied; a missing,
-- null, non-table or array payload becomes {} (the same rule the gateway applies). Raises CYCLE
-- for a payload that holds a table inside itself.
local function normalisePayload(payload)
  if type(payload) ~= "table" or next(payload) == nil or payload[1] ~= nil then
    return {};
  end
  return deepCopy(payload);
end

-- An error object as {code=string, message=string}, whatever arrived.
local function normaliseError(err, fallbackMessage)
  local code, message;
  if type(err) == "table" then
    code, message = err.code, err.message;
  elseif type(err) == "string" then
    message = err;
  end
  if type(code) ~= "string" or code == "" then
    code = ERR_INTERNAL;
  end
  if type(message) ~= "string" then
    message = fallbackMessage or ("the request failed (" .. code .. ")");
  end
  return { code = code, message = message };
end

-- err without the "<source>:<line>: " CC put in front of it when the nearest Lua code, as
-- CC's Cobalt places an error a native function (fs.open, a handle's read, term.blit) raises,
-- is in source (a short_src): called from pcall(native, ...), the error names the line that
-- called pcall, in the library, not the program or the host's request. Any other error, or
-- a value that is not a string, is returned as it is.
local function withoutPositionIn(err, source)
  if type(err) ~= "string" or err:sub(1, #source + 1) ~= source .. ":" then
    return err;
  end
  return err:match("^%d+: (.*)$", #source + 2) or err;
end

-- value when it is an account's name in the gateway's shape (ACCOUNT_NAME), else nil.
local function accountName(value)
  if type(value) ~= "string" or #value > MAX_ACCOUNT_NAME_BYTES or not value:find(ACCOUNT_NAME) then
    return nil;
  end
  return value;
end

-- text as one line of at most maxBytes (MAX_SHOWN_BYTES by default) to show a person: each run
-- of control characters (newlines, tabs, escapes) is one space, and a longer text is cut,
-- saying how long it was: "...(cut, N bytes)".
local function oneLine(text, maxBytes)
  expect(1, text, "string");
  expect(2, maxBytes, "number", "nil");
  maxBytes = maxBytes or MAX_SHOWN_BYTES;
  local line = text:gsub("[%z\1-\31\127]+", " ");
  if #line <= maxBytes then
    return line;
  end
  return line:sub(1, maxBytes) .. "...(cut, " .. #text .. " bytes)";
end

-- Where text nests deeper than MAX_JSON_DEPTH, found without decoding it: nil when it does
-- not; else the spans ({first, last}) of the top-level "payload" values that do, to be cut
-- out, or false when something else does. Strings are skipped whole (an escaped quote is one
-- preceded by an odd number of backslashes), and a run of brackets is taken at once, so a
-- frame of 128 KiB of brackets costs a few string.find calls, not one per level.
local function tooDeep(text)
  local depth, pos, key = 0, 1, nil;
  local spanStart, spanDeep = nil, false;
  local spans, outside = {}, false;
  while true do
    local at = text:find('[%[%]{}"]', pos);
    if at == nil then
      break;
    end
    local char = text:sub(at, at);
    if char == '"' then
      local close, escapes;
      pos = at + 1;
      repeat
        close = text:find('"', pos, true);
        if close == nil then
          return nil; -- unterminated: the decoder says so
        end
        escapes = 0;
        while text:byte(close - 1 - escapes) == 92 do
          escapes = escapes + 1;
        end
        pos = close + 1;
      until escapes % 2 == 0
      if depth == 1 and text:find("^[ \t\r\n]*:", pos) then
        key = text:sub(at + 1, close - 1);
      end
    elseif char == "[" or char == "{" then
      pos = text:find("[^%[{]", at) or #text + 1;
      if depth == 1 then
        spanStart, spanDeep = key == "payload" and at or nil, false;
      end
      depth = depth + (pos - at);
      if depth > MAX_JSON_DEPTH then
        if spanStart ~= nil then
          spanDeep = true;
        else
          outside = true;
        end
      end
    else
      pos = text:find("[^%]}]", at) or #text + 1;
      local before = depth;
      depth = depth - (pos - at);
      if before > 1 and depth <= 1 and spanStart ~= nil then
        -- The closer that brought the depth back to 1 ends the payload.
        if spanDeep then
          spans[#spans + 1] = { spanStart, at + before - 2 };
        end
        spanStart = nil;
      end
    end
  end
  if outside then
    return false;
  elseif #spans == 0 then
    return nil;
  end
  return spans;
end

-- Whether value's strings (keys too) hold more than limit bytes in all: its JSON is at least
-- that long. Found without building the JSON, which serializeJSON escapes a byte at a time, up
-- to six bytes each (a lua.exec returning 16 MiB became 96 MiB of text only to be refused).
local function holdsMoreThan(value, limit)
  local total, seen = 0, {};
  local function walk(v)
    if type(v) == "string" then
      total = total + #v;
    elseif type(v) == "table" and not seen[v] then
      seen[v] = true;
      for k, item in pairs(v) do
        walk(k);
        walk(item);
        if total > limit then
          return;
        end
      end
    end
  end
  walk(value);
  return total > limit;
end

-- Encodes a frame table as JSON. Requests always carry a payload object ({} when empty);
-- successful responses carry one, failed ones carry error. Returns the string, or nil and
-- an error message (unserialisable value, or over MAX_MESSAGE_BYTES).
local function encodeFrame(frame)
  expect(1, frame, "table");
  local kind = FRAME_EVENTS[frame.event];
  if kind == nil then
    return nil, "unknown frame event " .. tostring(frame.event);
  end
  local wire = {
    event = frame.event,
    messageId = frame.messageId,
    type = frame.type,
    traposSenderId = frame.traposSenderId,
    traposReceiverId = frame.traposReceiverId,
  };
  local copied, copyErr = pcall(function()
    if kind == "request" then
      wire.payload = normalisePayload(frame.payload);
    else
      wire.ok = frame.ok == true;
      if wire.ok then
        wire.payload = normalisePayload(frame.payload);
      else
        wire.error = normaliseError(frame.error);
      end
    end
  end);
  if not copied then
    return nil, "cannot encode frame: " .. tostring(copyErr);
  end
  if holdsMoreThan(wire, MAX_MESSAGE_BYTES) then
    return nil, "Message is too large (its strings alone hold over " .. MAX_MESSAGE_BYTES
      .. " bytes, the limit)";
  end
  -- Native functions are pcall'd through a closure throughout: fakecraft loses their error
  -- when they are passed to pcall directly.
  local ok, encoded = pcall(function() return textutils.serializeJSON(wire); end);
  if not ok then
    return nil, "cannot encode frame: " .. tostring(encoded);
  end
  if #encoded > MAX_MESSAGE_BYTES then
    -- Its size as JSON, which the caller did not see: a byte past ASCII takes up to six.
    return nil, "Message is too large (" .. #encoded .. " bytes once encoded, the limit is " .. MAX_MESSAGE_BYTES .. ")";
  end
  return encoded;
end

-- Decodes one JSON frame. Returns a fresh frame table (payload always a writable object whose
-- strings follow the byte rule, error normalised on failed responses; payloadError says why
-- a payload string is not bytes), or nil and why it is malformed.
local function decodeFrame(text)
  if type(text) ~= "string" then
    return nil, "frame is not a string";
  end
  local deep = tooDeep(text);
  if deep == false then
    return nil, "frame nested deeper than " .. MAX_JSON_DEPTH .. " levels";
  elseif deep ~= nil then
    local parts, from = {}, 1;
    for _, span in ipairs(deep) do
      parts[#parts + 1] = text:sub(from, span[1] - 1);
      parts[#parts + 1] = "{}";
      from = span[2] + 1;
    end
    parts[#parts + 1] = text:sub(from);
    text = table.concat(parts);
  end
  local decoded, err = textutils.unserializeJSON(text);
  if type(decoded) ~= "table" then
    return nil, err or "frame is not a JSON object";
  end
  local kind = FRAME_EVENTS[decoded.event];
  if kind == nil then
    return nil, "unknown frame event " .. tostring(decoded.event);
  end
  if type(decoded.messageId) ~= "string" or decoded.messageId == "" then
    return nil, "frame has no messageId";
  end
  if type(decoded.type) ~= "string" or decoded.type == "" then
    return nil, "frame has no type";
  end
  local payload, bytesOk = valueFromWire(normalisePayload(decoded.payload));
  local frame = {
    event = decoded.event,
    messageId = decoded.messageId,
    -- A type is CC's bytes as a payload string is: the host's küche.open is a program's
    -- "k\252che.open". One with a higher code point stays as it came; no handler has it.
    type = fromWire(decoded.type) or decoded.type,
    payload = payload,
  };
  if not bytesOk then
    -- Only a request can be refused for it; a response keeps such strings as UTF-8.
    frame.payloadError = "the payload holds a character above U+00FF; strings carry bytes as code points U+0000-U+00FF";
  end
  if type(decoded.traposSenderId) == "string" then
    frame.traposSenderId = decoded.traposSenderId;
  end
  if type(decoded.traposReceiverId) == "string" then
    frame.traposReceiverId = decoded.traposReceiverId;
  end
  if kind == "response" then
    -- A missing ok counts as false (docs/protocol.md); one of another type is malformed.
    if decoded.ok ~= nil and type(decoded.ok) ~= "boolean" then
      return nil, "response ok is not a boolean";
    end
    frame.ok = decoded.ok == true;
    if not frame.ok then
      frame.error = normaliseError(decoded.error, "the gateway reported a failure without a message");
      -- The gateway writes its messages by the byte rule, as a payload's strings: a label in
      -- one ("computer 5:k\252che") is back to its bytes here, where it showed as the two
      -- bytes of UTF-8 ("5:kÃ¼che"). A higher code point (no gateway sends one) stays as it came.
      frame.error.message = fromWire(frame.error.message) or frame.error.message;
      -- The gateway's proof of its refusal of a prove (a revoked credential's, gateway 0.5.36
      -- on: docs/protocol.md), which libsandboxproof checks; nothing else is kept of an error.
      if type(decoded.error) == "table" and type(decoded.error.proof) == "string" then
        frame.error.proof = decoded.error.proof;
      end
    end
  end
  if deep ~= nil then
    -- The payload was cut out: a request is refused for it, a response fails with it.
    frame.payloadError = "the payload is nested deeper than " .. MAX_JSON_DEPTH .. " levels, the most this computer decodes";
    if kind == "response" then
      frame.ok, frame.payload = false, {};
      frame.error = { code = ERR_BAD_PAYLOAD, message = frame.payloadError };
    end
  end
  return frame;
end

return {
  TYPE_HELLO = TYPE_HELLO,
  TYPE_BYE = TYPE_BYE,
  TYPE_PROVE = TYPE_PROVE,
  TYPE_PROBE_GATEWAY = TYPE_PROBE_GATEWAY,
  TYPE_PING = TYPE_PING,
  TYPE_COMPUTER_INFO = TYPE_COMPUTER_INFO,
  TYPE_FS_LIST = TYPE_FS_LIST,
  TYPE_FS_READ = TYPE_FS_READ,
  TYPE_FS_WRITE = TYPE_FS_WRITE,
  TYPE_FS_DELETE = TYPE_FS_DELETE,
  TYPE_FS_MOVE = TYPE_FS_MOVE,
  TYPE_FS_MAKE_DIR = TYPE_FS_MAKE_DIR,
  TYPE_LUA_EXEC = TYPE_LUA_EXEC,
  TYPE_SHELL_RUN = TYPE_SHELL_RUN,
  TYPE_SCREEN_READ = TYPE_SCREEN_READ,
  TYPE_SCREEN_INPUT = TYPE_SCREEN_INPUT,
  TYPE_SCREEN_WATCH = TYPE_SCREEN_WATCH,
  TYPE_SCREEN_UNWATCH = TYPE_SCREEN_UNWATCH,
  TYPE_SCREEN_UPDATE = TYPE_SCREEN_UPDATE,
  RESERVED_TYPES = RESERVED_TYPES,
  MAX_MESSAGE_BYTES = MAX_MESSAGE_BYTES,
  MAX_SHOWN_BYTES = MAX_SHOWN_BYTES,
  MAX_JSON_DEPTH = MAX_JSON_DEPTH,
  MAX_GATEWAY_REQUESTS = MAX_GATEWAY_REQUESTS,
  MAX_COMPUTER_REQUESTS = MAX_COMPUTER_REQUESTS,
  CYCLE = CYCLE,
  CLOSE_TOO_MANY_REQUESTS = CLOSE_TOO_MANY_REQUESTS,
  ERR_UNAUTHORIZED = ERR_UNAUTHORIZED,
  ERR_NOT_AUTHENTICATED = ERR_NOT_AUTHENTICATED,
  ERR_UNKNOWN_TYPE = ERR_UNKNOWN_TYPE,
  ERR_NOT_CONNECTED = ERR_NOT_CONNECTED,
  ERR_INTERNAL = ERR_INTERNAL,
  ERR_TIMEOUT = ERR_TIMEOUT,
  ERR_FORBIDDEN = ERR_FORBIDDEN,
  ERR_FS_ERROR = ERR_FS_ERROR,
  ERR_BAD_PAYLOAD = ERR_BAD_PAYLOAD,
  ERR_BUSY = ERR_BUSY,
  ERRORS = {
    ERR_UNAUTHORIZED, ERR_NOT_AUTHENTICATED, ERR_UNKNOWN_TYPE,
    ERR_NOT_CONNECTED, ERR_INTERNAL, ERR_TIMEOUT,
    ERR_FORBIDDEN, ERR_FS_ERROR, ERR_BAD_PAYLOAD,
  },
  FRAME_COMPUTER_REQUEST = FRAME_COMPUTER_REQUEST,
  FRAME_COMPUTER_RESPONSE = FRAME_COMPUTER_RESPONSE,
  FRAME_GATEWAY_REQUEST = FRAME_GATEWAY_REQUEST,
  FRAME_GATEWAY_RESPONSE = FRAME_GATEWAY_RESPONSE,
  traposId = traposId,
  localTraposId = localTraposId,
  newUuid = newUuid,
  fromWire = fromWire,
  toWire = toWire,
  jsonSafe = jsonSafe,
  oneLine = oneLine,
  accountName = accountName,
  withoutPositionIn = withoutPositionIn,
  normalisePayload = normalisePayload,
  normaliseError = normaliseError,
  encodeFrame = encodeFrame,
  decodeFrame = decodeFrame,
};
