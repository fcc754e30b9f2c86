-- libsandboxrequests: what a computer answers when the gateway asks (gateway_request).
-- The built-in types (docs/capabilities.md), each behind the owner's permission; any other
-- type goes to the TrapOS program serving it (libsandboxserve's router). The daemon hands
-- every request to serve() and every event to onEvent(); answers come back through the
-- request's done(ok, payload, error), at once or later (lua.exec, served types).

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');
local config = require('/apis/libsandboxsettings');
local files = require('/apis/libsandboxfiles');
local exec = require('/apis/libsandboxexec');
local protected = require('/apis/libsandboxprotected');
local screenLib = require('/apis/libsandboxscreen');
local version = require('/apis/libsandboxversion');
local serveLib = require('/apis/libsandboxserve');

local ERR_FORBIDDEN = codec.ERR_FORBIDDEN;

-- The permission each built-in type needs: nil (always answered), a file level, exec, or a
-- screen level (screen.unwatch only stops what a view started).
local NEEDS_EXEC = "exec";
local NEEDS_SCREEN = { [config.SCREEN_VIEW] = "screen " .. config.SCREEN_VIEW, [config.SCREEN_CONTROL] = "screen " .. config.SCREEN_CONTROL };
local NEEDS = {
  [codec.TYPE_SCREEN_READ] = NEEDS_SCREEN[config.SCREEN_VIEW],
  [codec.TYPE_SCREEN_WATCH] = NEEDS_SCREEN[config.SCREEN_VIEW],
  [codec.TYPE_SCREEN_INPUT] = NEEDS_SCREEN[config.SCREEN_CONTROL],
  [codec.TYPE_FS_LIST] = config.FILES_READ,
  [codec.TYPE_FS_READ] = config.FILES_READ,
  [codec.TYPE_FS_WRITE] = config.FILES_WRITE,
  [codec.TYPE_FS_DELETE] = config.FILES_WRITE,
  [codec.TYPE_FS_MOVE] = config.FILES_WRITE,
  [codec.TYPE_FS_MAKE_DIR] = config.FILES_WRITE,
  [codec.TYPE_LUA_EXEC] = NEEDS_EXEC,
  [codec.TYPE_SHELL_RUN] = NEEDS_EXEC,
};

-- Why the owner's settings do not allow msgType with payload now, or nil: the one check every
-- request from the host goes through (serve), and that the agent's changes are put to before
-- the player is asked about them (libsandboxai). Settings are read at every call. Writing
-- files does not reach what only exec may change (libsandboxprotected).
local function refusal(settingsApi, fsApi, msgType, payload)
  expect(1, settingsApi, "table");
  expect(2, fsApi, "table");
  expect(3, msgType, "string");
  expect(4, payload, "table");
  local need = NEEDS[msgType];
  if need == nil then
    return nil;
  elseif need == NEEDS_SCREEN[config.SCREEN_VIEW] or need == NEEDS_SCREEN[config.SCREEN_CONTROL] then
    local level = need == NEEDS_SCREEN[config.SCREEN_VIEW] and config.SCREEN_VIEW or config.SCREEN_CONTROL;
    if config.screenAllow(settingsApi, level) then
      return nil;
    end
    return msgType .. " needs " .. config.SETTING_ALLOW_SCREEN .. " " .. level .. " (it is "
      .. config.screenShown(settingsApi) .. "); the owner can allow it with: set "
      .. config.SETTING_ALLOW_SCREEN .. " " .. level;
  elseif need == NEEDS_EXEC then
    if config.execAllowed(settingsApi) then
      return nil;
    end
    -- Worded as the files and screen refusals are (the setting needed, what it is, the line),
    -- so the three read alike wherever they are shown; a hand-edited value that is not a
    -- boolean ("true") is named, as the levels' are.
    return msgType .. " needs " .. config.SETTING_ALLOW_EXEC .. " true (it is "
      .. config.execShown(settingsApi) .. "); the owner can allow it with: set "
      .. config.SETTING_ALLOW_EXEC .. " true";
  elseif config.filesAllow(settingsApi, need) then
    if need == config.FILES_WRITE and not config.execAllowed(settingsApi) then
      return protected.refusal(fsApi, msgType, payload);
    end
    return nil;
  end
  return msgType .. " needs " .. config.SETTING_ALLOW_FILES .. " " .. need .. " (it is "
    .. config.filesShown(settingsApi) .. "); the owner can allow it with: set "
    .. config.SETTING_ALLOW_FILES .. " " .. need;
end

-- What the owner allows now, {files, exec, screen}, as the one refusal check reads it (a
-- hand-edited value it takes as none or false is none or false here): computer.info's
-- allowed, and what ai.ask tells the agent (libsandboxai), so a caller plans by it instead of
-- learning it from a refusal. Read at every call.
local function allowed(settingsApi)
  expect(1, settingsApi, "table");
  return {
    files = (config.filesAllowed(settingsApi)),
    exec = config.execAllowed(settingsApi),
    screen = (config.screenAllowed(settingsApi)),
  };
end

-- deps: settings, os, fs, term, env (what lua.exec chunks see), and optionally shell,
-- peripheral, pocket (CC's pocket API, there on a pocket computer only), host (_HOST), keys
-- and traposId() (the session's id). start() mirrors
-- term.native() until stop().
local function newRequests(deps)
  expect(1, deps, "table");
  field(deps, "settings", "table");
  field(deps, "os", "table");
  field(deps, "fs", "table");
  field(deps, "term", "table");
  field(deps, "env", "table");
  field(deps, "shell", "table", "nil");
  field(deps, "peripheral", "table", "nil");
  field(deps, "pocket", "table", "nil");
  field(deps, "host", "string", "nil");
  field(deps, "traposId", "function");
  local settingsApi, osApi, fsApi = deps.settings, deps.os, deps.fs;
  local fileHandlers = files.newFiles({ fs = fsApi });
  local runner = exec.newRunner({
    term = deps.term, os = osApi, env = deps.env, shell = deps.shell,
    withdrawn = function()
      if config.execAllowed(settingsApi) then
        return nil;
      end
      return "the owner withdrew " .. config.SETTING_ALLOW_EXEC .. " (it is now " .. config.execShown(settingsApi)
        .. "); the owner can allow it again with: set " .. config.SETTING_ALLOW_EXEC .. " true";
    end,
  });
  local screen = screenLib.newScreen({
    term = deps.term.native(), os = osApi, keys = deps.keys or keys, peripheral = deps.peripheral,
    withdrawn = function()
      if config.screenAllow(settingsApi, config.SCREEN_VIEW) then
        return nil;
      end
      return "the owner withdrew " .. config.SETTING_ALLOW_SCREEN .. " (it is now " .. config.screenShown(settingsApi)
        .. "); the owner can allow it again with: set " .. config.SETTING_ALLOW_SCREEN .. " " .. config.SCREEN_VIEW;
    end,
  });

  local router = serveLib.newRouter({ os = osApi });

  -- payload.path, when given, is where freeSpace is measured: CC's fs.getFreeSpace(path) is
  -- the free space of the drive that path is on (a disk in a drive has its own), and the
  -- answer's freeSpacePath says it was; without it, the root drive's. A host's write to a
  -- disk that ran out of space quoted the root drive's room (client 0.5.23).
  local function info(payload)
    local measured = payload.path;
    local width, height = deps.term.native().getSize();
    local freeOk, free = pcall(function() return fsApi.getFreeSpace(measured or "/"); end);
    local peripherals = {};
    if deps.peripheral ~= nil then
      for _, name in ipairs(deps.peripheral.getNames()) do
        peripherals[#peripherals + 1] = { name = name, types = { deps.peripheral.getType(name) } };
      end
    end
    if #peripherals == 0 then
      peripherals = textutils.empty_json_array;
    end
    return {
      traposId = deps.traposId(),
      id = osApi.getComputerID(),
      label = osApi.getComputerLabel(),
      host = deps.host,
      clientVersion = version.VERSION,
      uptime = osApi.clock(),
      day = osApi.day(),
      time = osApi.time(),
      freeSpace = freeOk and free or codec.jsonSafe(nil),
      freeSpacePath = measured,
      colour = deps.term.isColour(),
      peripherals = peripherals,
      pocket = deps.pocket ~= nil,
      screenWidth = width,
      screenHeight = height,
      allowed = allowed(settingsApi),
    };
  end

  -- Answers one gateway request through done(ok, payload, error).
  local function serve(msgType, payload, done)
    expect(1, msgType, "string");
    expect(2, payload, "table");
    expect(3, done, "function");
    local why = refusal(settingsApi, fsApi, msgType, payload);
    if why ~= nil then
      return done(false, nil, { code = ERR_FORBIDDEN, message = why });
    end
    if msgType == codec.TYPE_PING then
      return done(true, { traposId = deps.traposId() });
    elseif msgType == codec.TYPE_COMPUTER_INFO then
      local complaint = files.check(payload, "path", "string", true);
      if complaint ~= nil then
        return done(false, nil, { code = codec.ERR_BAD_PAYLOAD, message = complaint });
      end
      return done(true, info(payload));
    elseif fileHandlers[msgType] ~= nil then
      return done(fileHandlers[msgType](payload));
    elseif screen.handlers[msgType] ~= nil then
      return done(screen.handlers[msgType](payload));
    elseif msgType == codec.TYPE_LUA_EXEC then
      return runner.exec(payload, done);
    elseif msgType == codec.TYPE_SHELL_RUN then
      return runner.run(payload, done);
    end
    return router.forward(msgType, payload, done);
  end

  local function onEvent(event, ...)
    router.onEvent(event, ...);
    runner.onEvent(event, ...);
    screen.onEvent(event, ...);
  end

  -- Drops running jobs and forwarded requests without answering (the daemon is stopping).
  local function stop()
    screen.stop();
    runner.stop();
    router.stop();
  end

  return {
    serve = serve,
    onEvent = onEvent,
    start = screen.start,
    stop = stop,
    -- The daemon closed its socket: what the gateway started on it ends (the screen's watches).
    socketClosed = screen.socketClosed,
    refusal = function(msgType, payload) return refusal(settingsApi, fsApi, msgType, payload); end,
  };
end

return {
  newRequests = newRequests,
  refusal = refusal,
  allowed = allowed,
};
