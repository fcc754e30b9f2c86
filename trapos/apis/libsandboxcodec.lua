-- libsandboxcodec: the trap-sandbox wire format as the computer speaks it.
-- Frames (encode/decode), message ids, traposIds, payload and error normalisation, and the
-- protocol's error codes and limits. Pure functions over textutils; no events, no socket.

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;

-- CC: Tweaked refuses to send a websocket message over max_websocket_message (128 KiB).
local MAX_MESSAGE_BYTES = 128 * 1024;

-- Error codes of the protocol (error.code of a failed response).
local ERR_UNAUTHORIZED = "unauthorized";
local ERR_NOT_AUTHENTICATED = "not_authenticated";
local ERR_UNKNOWN_TYPE = "unknown_type";
local ERR_NOT_CONNECTED = "not_connected";
local ERR_INTERNAL = "internal";
local ERR_TIMEOUT = "timeout";

-- Frame events on the wire.
local FRAME_COMPUTER_REQUEST = "computer_request";
local FRAME_COMPUTER_RESPONSE = "computer_response";
local FRAME_GATEWAY_REQUEST = "gateway_request";
local FRAME_GATEWAY_RESPONSE = "gateway_response";

local HEX = "0123456789abcdef";
local VARIANT = "89ab";

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

local function deepCopy(value)
  if type(value) ~= "table" then
    return value;
  end
  local copy = {};
  for k, v in pairs(value) do
    copy[k] = deepCopy(v);
  end
  return copy;
end

-- Any payload as a fresh, writable object table. unserialiseJSON gives the immutable
-- textutils.empty_json_array for "[]", so a decoded payload is always copied; a missing,
-- null, non-table or array payload becomes {} (the same rule the gateway applies).
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
  -- Native functions are pcall'd through a closure throughout: fakecraft loses their error
  -- when they are passed to pcall directly.
  local ok, encoded = pcall(function() return textutils.serializeJSON(wire); end);
  if not ok then
    return nil, "cannot encode frame: " .. tostring(encoded);
  end
  if #encoded > MAX_MESSAGE_BYTES then
    return nil, "Message is too large (" .. #encoded .. " bytes, the limit is " .. MAX_MESSAGE_BYTES .. ")";
  end
  return encoded;
end

-- Decodes one JSON frame. Returns a fresh frame table (payload always a writable object,
-- error normalised on failed responses), or nil and why it is malformed.
local function decodeFrame(text)
  if type(text) ~= "string" then
    return nil, "frame is not a string";
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
  local frame = {
    event = decoded.event,
    messageId = decoded.messageId,
    type = decoded.type,
    payload = normalisePayload(decoded.payload),
  };
  if type(decoded.traposSenderId) == "string" then
    frame.traposSenderId = decoded.traposSenderId;
  end
  if type(decoded.traposReceiverId) == "string" then
    frame.traposReceiverId = decoded.traposReceiverId;
  end
  if kind == "response" then
    if type(decoded.ok) ~= "boolean" then
      return nil, "response has no ok";
    end
    frame.ok = decoded.ok;
    if not frame.ok then
      frame.error = normaliseError(decoded.error, "the gateway reported a failure without a message");
    end
  end
  return frame;
end

return {
  MAX_MESSAGE_BYTES = MAX_MESSAGE_BYTES,
  ERR_UNAUTHORIZED = ERR_UNAUTHORIZED,
  ERR_NOT_AUTHENTICATED = ERR_NOT_AUTHENTICATED,
  ERR_UNKNOWN_TYPE = ERR_UNKNOWN_TYPE,
  ERR_NOT_CONNECTED = ERR_NOT_CONNECTED,
  ERR_INTERNAL = ERR_INTERNAL,
  ERR_TIMEOUT = ERR_TIMEOUT,
  ERRORS = {
    ERR_UNAUTHORIZED, ERR_NOT_AUTHENTICATED, ERR_UNKNOWN_TYPE,
    ERR_NOT_CONNECTED, ERR_INTERNAL, ERR_TIMEOUT,
  },
  FRAME_COMPUTER_REQUEST = FRAME_COMPUTER_REQUEST,
  FRAME_COMPUTER_RESPONSE = FRAME_COMPUTER_RESPONSE,
  FRAME_GATEWAY_REQUEST = FRAME_GATEWAY_REQUEST,
  FRAME_GATEWAY_RESPONSE = FRAME_GATEWAY_RESPONSE,
  traposId = traposId,
  localTraposId = localTraposId,
  newUuid = newUuid,
  normalisePayload = normalisePayload,
  normaliseError = normaliseError,
  encodeFrame = encodeFrame,
  decodeFrame = decodeFrame,
};
