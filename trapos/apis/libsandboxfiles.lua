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
local NO_SUCH_FILE = ": No such file";

local ERR_FS_ERROR, ERR_BAD_PAYLOAD = codec.ERR_FS_ERROR, codec.ERR_BAD_PAYLOAD;

-- This file's short_src, as CC names it in front of an error.
local HERE = debug.getinfo(1, "S").short_src;

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

  -- Calls fn (a function of CC's fs API or of a file handle) from pcall; a raised error
  -- becomes its message, as CC words it. CC places a native function's error at the nearest
  -- Lua code, here the line calling pcall (`/apis/libsandboxfiles.lua:N: /x: No such
  -- file`), which is no position of the host's: it is taken off.
  local function try(fn, ...)
    local result = table.pack(pcall(fn, ...));
    if not result[1] then
      return false, tostring(codec.withoutPositionIn(result[2], HERE));
    end
    return true, table.unpack(result, 2, result.n);
  end

  local function list(payload)
    local complaint = check(payload, "path", "string") or check(payload, "absentOk", "boolean", true);
    if complaint then
      return badPayload(complaint);
    end
    local ok, names = try(fsApi.list, payload.path);
    if not ok then
      -- The host looks at what a path names by listing the directory it is in, which may not
      -- be there yet (a put that makes it): with absentOk that is an answer, not a failed
      -- request. CC's fs.list says so as "<path>: No such file".
      if payload.absentOk and names:sub(-#NO_SUCH_FILE) == NO_SUCH_FILE then
        return true, { entries = textutils.empty_json_array, absent = true };
      end
      return fsError(names);
    end
    local entries = {};
    for _, name in ipairs(names) do
      local full = fsApi.combine(payload.path, name);
      local isDir = fsApi.isDir(full);
      local size = 0;
      if not isDir then
        local sized, bytes = try(fsApi.getSize, full);
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
    local complaint = check(payload, "path", "string") or checkCount(payload, "offset") or checkCount(payload, "length")
      or check(payload, "stamp", "boolean", true);
    if complaint then
      return badPayload(complaint);
    end
    local offset = payload.offset or 0;
    local length = math.min(payload.length or MAX_READ_BYTES, MAX_READ_BYTES);
    local path = payload.path;
    local ok, handle, openErr = try(fsApi.open, path, "rb");
    if not ok or handle == nil then
      return fsError(ok and openErr or handle);
    end
    local sized, size = try(fsApi.getSize, path);
    local failure = not sized and size or nil;
    local data = "";
    if not failure and offset > 0 then
      local seeked, seekErr = try(handle.seek, "set", offset);
      failure = not seeked and seekErr or nil;
    end
    if not failure and length > 0 then
      local got, chunk = try(handle.read, length);
      if got then
        data = chunk or "";
      else
        failure = chunk;
      end
    end
    pcall(handle.close);
    if failure then
      return fsError(failure);
    end
    local answer = { data = data, size = size, eof = offset + #data >= size };
    if payload.stamp then
      -- The file's modification time: a host reading in chunks compares it from one chunk to
      -- the next, so a file replaced (or written) between two is read again, not spliced.
      local got, attributes = try(fsApi.attributes, path);
      if got and type(attributes) == "table" and type(attributes.modified) == "number" then
        answer.stamp = attributes.modified;
      end
    end
    return true, answer;
  end

  local function write(payload)
    local complaint = check(payload, "path", "string") or check(payload, "data", "string")
      or check(payload, "append", "boolean", true);
    if complaint then
      return badPayload(complaint);
    end
    local path = payload.path;
    local ok, handle, openErr = try(fsApi.open, path, payload.append and "ab" or "wb");
    if not ok or handle == nil then
      return fsError(ok and openErr or handle);
    end
    local written, writeErr = try(handle.write, payload.data);
    -- Closing flushes; CC reports a full disk on write or on close.
    local closed, closeErr = try(handle.close);
    if not written then
      return fsError(writeErr);
    elseif not closed then
      return fsError(closeErr);
    end
    local sized, size = try(fsApi.getSize, path);
    if not sized then
      return fsError(size);
    end
    return true, { size = size };
  end

  -- A request whose answer is {} and whose work is one fs call with the payload's fields,
  -- in order, as its arguments.
  local function simple(fields, fn)
    return function(payload)
      local args = {};
      for i, name in ipairs(fields) do
        local complaint = check(payload, name, "string");
        if complaint then
          return badPayload(complaint);
        end
        args[i] = payload[name];
      end
      local ok, err = try(fn, table.unpack(args, 1, #fields));
      if not ok then
        return fsError(err);
      end
      return true, {};
    end
  end

  local plainMove = simple({ "from", "to" }, fsApi.move);

  -- Whether fs.move(from, to) can succeed once a file at `to` is gone: not onto itself, not
  -- into itself, not from or to a read-only place (CC refuses those after the delete, and the
  -- file would be lost). Names compare in lowercase too: on a drive that ignores case (a
  -- server's Windows or macOS folder) /a and /A are one file.
  local function canReplace(from, to)
    local fromName, toName = fsApi.combine(from):lower(), fsApi.combine(to):lower();
    if fromName == "" or fromName == toName or toName:sub(1, #fromName + 1) == fromName .. "/" then
      return false;
    end
    local fromOk, fromReadOnly = try(fsApi.isReadOnly, from);
    local toOk, toReadOnly = try(fsApi.isReadOnly, to);
    return fromOk and toOk and not fromReadOnly and not toReadOnly;
  end

  -- fs.move; with overwrite = true an existing file at `to` is replaced. The delete and the
  -- move run in this one handler with no yield between them (CC's fs calls do not yield), so
  -- nothing on the computer sees the path empty: the host's atomic write relies on it.
  local function move(payload)
    local complaint = check(payload, "overwrite", "boolean", true);
    if complaint then
      return badPayload(complaint);
    end
    if payload.overwrite and type(payload.from) == "string" and type(payload.to) == "string" then
      local from, to = payload.from, payload.to;
      local ok, isDir = try(fsApi.isDir, to);
      if ok and isDir then
        return fsError("/" .. fsApi.combine(to, "") .. ": Cannot write to directory");
      end
      -- Only a move that can succeed may delete the old file.
      local fromOk, fromExists = try(fsApi.exists, from);
      local toOk, toExists = try(fsApi.exists, to);
      if fromOk and fromExists and toOk and toExists and canReplace(from, to) then
        local deleted, err = try(fsApi.delete, to);
        if not deleted then
          return fsError(err);
        end
      end
    end
    return plainMove(payload);
  end

  return {
    ["fs.list"] = list,
    ["fs.read"] = read,
    ["fs.write"] = write,
    ["fs.delete"] = simple({ "path" }, function(path)
      -- CC's fs.delete is silent about a missing file; the host asked to delete one. It is
      -- named as fs.exists looked at it: fs.combine keeps the * and ? that fs.exists drops.
      local ok, exists = try(fsApi.exists, path);
      if ok and not exists then
        error("/" .. fsApi.combine((path:gsub("[%*%?]", "")), "") .. ": No such file", 0);
      end
      local deleted, err = try(fsApi.delete, path);
      if not deleted then
        error(err, 0);
      end
    end),
    ["fs.move"] = move,
    ["fs.makeDir"] = simple({ "path" }, fsApi.makeDir),
  };
end

return {
  MAX_READ_BYTES = MAX_READ_BYTES,
  check = check,
  newFiles = newFiles,
};
