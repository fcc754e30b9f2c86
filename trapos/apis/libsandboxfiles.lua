-- libsandboxfiles: the fs.* requests a computer answers for the host (docs/capabilities.md).
-- Each handler takes the request's payload and returns ok, payload, error. A failing fs call
-- answers fs_error with CC's own message; a bad field answers bad_payload. The permission
-- check (sandbox.allow_files) is the caller's (libsandboxrequests).

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');

-- The most bytes one fs.read answers. serializeJSON may write a byte as six ("\u00XX"), so
-- 16 KiB of data is at most 96 KiB on the wire: the frame stays under 128 KiB with room for
-- the path and the envelope.
local MAX_READ_BYTES = 16 * 1024;

local ERR_FS_ERROR, ERR_BAD_PAYLOAD = codec.ERR_FS_ERROR, codec.ERR_BAD_PAYLOAD;

local function fsError(message)
  return false, nil, { code = ERR_FS_ERROR, message = tostring(message) };
end

local function badPayload(message)
  return false, nil, { code = ERR_BAD_PAYLOAD, message = message };
end

-- Checks payload[name] is of kind (or absent when optional). Returns nil or the complaint.
local function check(payload, name, kind, optional)
  local value = payload[name];
  if value == nil and optional then
    return nil;
  end
  if type(value) ~= kind then
    return "payload." .. name .. " must be a " .. kind .. (optional and " when given" or "") .. ", got " .. type(value);
  end
  return nil;
end

local function checkCount(payload, name)
  local value = payload[name];
  if value ~= nil and (type(value) ~= "number" or value < 0 or value ~= math.floor(value)) then
    return "payload." .. name .. " must be a whole number >= 0 when given";
  end
  return nil;
end

-- deps: fs (CC's fs API).
local function newFiles(deps)
  expect(1, deps, "table");
  field(deps, "fs", "table");
  local fsApi = deps.fs;

  -- Runs an fs call; a raised error becomes its message (CC's fs errors carry no position).
  local function try(fn)
    local result = table.pack(pcall(fn));
    if not result[1] then
      return false, tostring(result[2]);
    end
    return true, table.unpack(result, 2, result.n);
  end

  local function list(payload)
    local complaint = check(payload, "path", "string");
    if complaint then
      return badPayload(complaint);
    end
    local ok, names = try(function() return fsApi.list(payload.path); end);
    if not ok then
      return fsError(names);
    end
    local entries = {};
    for _, name in ipairs(names) do
      local full = fsApi.combine(payload.path, name);
      local isDir = fsApi.isDir(full);
      local size = 0;
      if not isDir then
        local sized, bytes = try(function() return fsApi.getSize(full); end);
        size = sized and bytes or 0;
      end
      entries[#entries + 1] = { name = name, isDir = isDir, size = size };
    end
    if #entries == 0 then
      entries = textutils.empty_json_array;
    end
    return true, { entries = entries };
  end

  local function read(payload)
    local complaint = check(payload, "path", "string") or checkCount(payload, "offset") or checkCount(payload, "length");
    if complaint then
      return badPayload(complaint);
    end
    local offset = payload.offset or 0;
    local length = math.min(payload.length or MAX_READ_BYTES, MAX_READ_BYTES);
    local path = payload.path;
    local ok, handle, openErr = try(function() return fsApi.open(path, "rb"); end);
    if not ok or handle == nil then
      return fsError(ok and openErr or handle);
    end
    local readOk, data, size = try(function()
      local bytes = fsApi.getSize(path);
      if offset > 0 then
        handle.seek("set", offset);
      end
      local chunk = "";
      if length > 0 then
        chunk = handle.read(length) or "";
      end
      return chunk, bytes;
    end);
    pcall(function() handle.close(); end);
    if not readOk then
      return fsError(data);
    end
    return true, { data = data, size = size, eof = offset + #data >= size };
  end

  local function write(payload)
    local complaint = check(payload, "path", "string") or check(payload, "data", "string")
      or check(payload, "append", "boolean", true);
    if complaint then
      return badPayload(complaint);
    end
    local path = payload.path;
    local ok, handle, openErr = try(function() return fsApi.open(path, payload.append and "ab" or "wb"); end);
    if not ok or handle == nil then
      return fsError(ok and openErr or handle);
    end
    local written, writeErr = try(function() handle.write(payload.data); end);
    -- Closing flushes; CC reports a full disk on write or on close.
    local closed, closeErr = try(function() handle.close(); end);
    if not written then
      return fsError(writeErr);
    elseif not closed then
      return fsError(closeErr);
    end
    local sized, size = try(function() return fsApi.getSize(path); end);
    if not sized then
      return fsError(size);
    end
    return true, { size = size };
  end

  -- A request whose answer is {} and whose work is one fs call on the payload's fields.
  local function simple(fields, call)
    return function(payload)
      for _, name in ipairs(fields) do
        local complaint = check(payload, name, "string");
        if complaint then
          return badPayload(complaint);
        end
      end
      local ok, err = try(function() call(payload); end);
      if not ok then
        return fsError(err);
      end
      return true, {};
    end
  end

  return {
    ["fs.list"] = list,
    ["fs.read"] = read,
    ["fs.write"] = write,
    ["fs.delete"] = simple({ "path" }, function(p)
      -- CC's fs.delete is silent about a missing file; the host asked to delete one.
      if not fsApi.exists(p.path) then
        error("/" .. fsApi.combine(p.path, "") .. ": No such file", 0);
      end
      fsApi.delete(p.path);
    end),
    ["fs.move"] = simple({ "from", "to" }, function(p) fsApi.move(p.from, p.to); end),
    ["fs.makeDir"] = simple({ "path" }, function(p) fsApi.makeDir(p.path); end),
  };
end

return {
  MAX_READ_BYTES = MAX_READ_BYTES,
  newFiles = newFiles,
};
