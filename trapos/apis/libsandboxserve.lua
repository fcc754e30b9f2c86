-- libsandboxserve: request types a TrapOS program serves to the gateway's host, both sides.
-- A program calls serve(handlers) (libsandbox.serve) and offers its types to the daemon with os
-- events every heartbeat; the daemon's router (newRouter, used by libsandboxrequests) sends
-- each gateway request of such a type to the program that began serving it last, passes the
-- answer back, and forgets a program whose lease ran out, answering its requests in flight
-- with unknown_type.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');
local events = require('/apis/libsandboxevents');

-- Seconds between a serving program's offers, and after which a program that has not
-- offered again counts as ended (its types then answer unknown_type).
local SERVE_HEARTBEAT = 1;
local SERVE_LEASE = 2.5;
-- Seconds the daemon waits for a program's answer to a request it forwarded: the host's longest
-- wait (60 s). A handler still waiting then (for an event that never comes) is answered
-- timeout, so that it does not hold one of the computer's MAX_GATEWAY_REQUESTS for good;
-- should it answer later, that answer is dropped.
local SERVE_ANSWER_WAIT = 60;

local ERR_UNKNOWN_TYPE = codec.ERR_UNKNOWN_TYPE;
local ERR_TIMEOUT = codec.ERR_TIMEOUT;
local EVENT_SERVE_OFFER, EVENT_SERVE_WITHDRAW = events.EVENT_SERVE_OFFER, events.EVENT_SERVE_WITHDRAW;
local EVENT_SERVE_REQUEST, EVENT_SERVE_REPLY = events.EVENT_SERVE_REQUEST, events.EVENT_SERVE_REPLY;

-- Puts shutdown and reboot in the global os table (rawset: luacheck holds os's fields
-- read-only, as they are for a program that only calls them).
local function setPowerCalls(shutdown, reboot)
  rawset(os, "shutdown", shutdown);
  rawset(os, "reboot", reboot);
end

-- Serves request types the gateway's host may send this computer, until terminated:
-- handlers (read once, when serve is called) maps one or more type names (not built-in ones,
-- see codec.RESERVED_TYPES) each to a function
-- (payload, type) returning the answer's payload table, or nil and an error (a message, or
-- {code, message}). A handler that raises answers `internal` with its message; the serving
-- goes on. Each request runs in a coroutine of its own, resumed with the events it pulls as
-- parallel would: a handler may sleep or wait for an event while the program keeps offering
-- its types and answers other requests (a handler's filtered pull, sleep's, would otherwise
-- eat the heartbeat timer and the requests that come meanwhile). A terminate is the serving's
-- own: it withdraws the types and raises Terminated; its handlers never see it. While this
-- runs, the daemon routes the types here; once it ends (returns, crashes or is terminated)
-- they answer unknown_type within SERVE_LEASE seconds.
local function serve(handlers, ...)
  expect(1, handlers, "table");
  if select("#", ...) > 0 then
    -- libsandbox:serve{...} passes the library as the handlers, which names its own fields.
    error("bad argument #2 (serve takes one table of handlers: call libsandbox.serve({...}) with a dot,"
      .. " not libsandbox:serve)", 2);
  end
  -- The table as it is now: a type the program later removes from it is still offered, and
  -- would otherwise get requests nothing answers.
  local types, byType = {}, {};
  for name, handler in pairs(handlers) do
    if type(name) ~= "string" or name == "" then
      local found = name == "" and "an empty string" or type(name) == "number" and "the number " .. tostring(name)
        or "a " .. type(name);
      error("bad argument #1 (type names must be non-empty strings, not " .. found
        .. ": write [\"door.open\"] = function(payload) ... end)", 2);
    elseif codec.RESERVED_TYPES[name] then
      error("bad argument #1 (" .. name .. " is a built-in type and cannot be served)", 2);
    elseif type(handler) ~= "function" then
      error("bad argument #1 (the handler of " .. name .. " must be a function, not a " .. type(handler) .. ")", 2);
    end
    types[#types + 1] = name;
    byType[name] = handler;
  end
  if #types == 0 then
    -- { ["door.open"] = openDoor } with openDoor not yet defined is this empty table: serving
    -- it would wait for requests that never come.
    error("bad argument #1 (no types to serve: the table is empty; a handler that is nil, such as a"
      .. " local function defined after this call, leaves its type out)", 2);
  end
  local providerId = codec.newUuid();
  local heartbeat;
  local running = {}; -- requestId -> {co, type, filter, started}: handlers waiting for an event
  -- Offering again after each request renews the lease at once.
  local function offer()
    if heartbeat ~= nil then
      os.cancelTimer(heartbeat);
    end
    os.queueEvent(EVENT_SERVE_OFFER, providerId, types);
    heartbeat = os.startTimer(SERVE_HEARTBEAT);
  end
  -- result: what coroutine.resume returned when the handler ended, packed.
  local function answer(requestId, msgType, result)
    if not result[1] then
      local raised, message = result[2];
      if type(raised) == "string" or type(raised) == "number" then
        message = tostring(raised);
      elseif type(raised) == "table" and type(raised.message) == "string" then
        message = raised.message;
      else
        -- Not "table: 5f2a1c": what the program's author must change.
        message = "the handler of " .. msgType .. " raised a " .. type(raised)
          .. ", not a message: raise error(\"what failed\") or return nil, {code, message}";
      end
      os.queueEvent(EVENT_SERVE_REPLY, requestId, false, nil, { code = codec.ERR_INTERNAL, message = message });
    elseif type(result[2]) == "table" or (result[2] == nil and result[3] == nil) then
      os.queueEvent(EVENT_SERVE_REPLY, requestId, true, result[2] or {}, nil);
    elseif result[2] ~= nil and result[2] ~= false then
      -- Not "door.open failed": the host's caller learns what the program's author must change.
      os.queueEvent(EVENT_SERVE_REPLY, requestId, false, nil, { code = codec.ERR_INTERNAL,
        message = "the handler of " .. msgType .. " returned a " .. type(result[2])
          .. ", not a table (the answer's payload) or nil and an error" });
    else
      os.queueEvent(EVENT_SERVE_REPLY, requestId, false, nil,
        codec.normaliseError(result[3], msgType .. " failed"));
    end
  end
  -- A handler's os.shutdown or os.reboot, held until its answer is in the daemon's hands: CC
  -- stops the computer at the next yield of its code, and the answer goes to the daemon as an
  -- event, which it would read only after that. powerTimer comes once the answer queued
  -- before it has been read.
  local powerOff, powerTimer;
  -- Resumes a handler with one event, its os.shutdown and os.reboot held meanwhile (swapped
  -- in the global os table, which the handler's code reads them from, and put back before
  -- anything else runs).
  local function step(job, ...)
    local shutdown, reboot = os.shutdown, os.reboot;
    setPowerCalls(
      function() job.powerOff = job.powerOff or { call = "os.shutdown()", run = shutdown }; end,
      function() job.powerOff = job.powerOff or { call = "os.reboot()", run = reboot }; end);
    local result = table.pack(coroutine.resume(job.co, ...));
    setPowerCalls(shutdown, reboot);
    return result;
  end
  -- Runs a handler until it ends (then answers) or waits for an event (then keeps its filter).
  -- One that turned the computer off is answered as this step ends, ended or not (it is not
  -- resumed again: the computer stops), and the computer turns off once the answer is read.
  local function resume(requestId, job, ...)
    local result = step(job, ...);
    if coroutine.status(job.co) == "dead" then
      running[requestId] = nil;
      answer(requestId, job.type, result);
      offer();
    elseif job.powerOff ~= nil then
      running[requestId] = nil;
      os.queueEvent(EVENT_SERVE_REPLY, requestId, false, nil, { code = codec.ERR_INTERNAL,
        message = "the handler of " .. job.type .. " called " .. job.powerOff.call
          .. " before it returned: the computer stopped it there" });
    elseif result[1] then
      job.filter = result[2];
    end
    if job.powerOff ~= nil and powerOff == nil then
      powerOff, powerTimer = job.powerOff.run, os.startTimer(0);
    end
  end
  offer();
  while true do
    local event = table.pack(os.pullEventRaw());
    if event[1] == "timer" and event[2] == powerTimer then
      local run = powerOff;
      powerOff, powerTimer = nil, nil;
      run();
    end
    if event[1] == "terminate" then
      os.cancelTimer(heartbeat);
      os.queueEvent(EVENT_SERVE_WITHDRAW, providerId);
      if powerOff ~= nil then
        -- A handler's call, held for its answer, is still made: the computer goes as asked.
        powerOff();
      end
      error("Terminated", 0);
    end
    if event[1] == "timer" and event[2] == heartbeat then
      heartbeat = nil;
      offer();
      -- A handler waiting past SERVE_ANSWER_WAIT has been answered timeout by the daemon,
      -- which drops what it would answer now: let it go, so that a host that keeps asking
      -- cannot pile up handlers (each resumed by every event it waits for).
      local now = os.clock();
      for requestId, job in pairs(running) do
        if now - job.started > SERVE_ANSWER_WAIT then
          running[requestId] = nil;
        end
      end
    end
    local waiting = {};
    for requestId, job in pairs(running) do
      if job.filter == nil or job.filter == event[1] then
        waiting[#waiting + 1] = requestId;
      end
    end
    for _, requestId in ipairs(waiting) do
      local job = running[requestId];
      if job ~= nil then
        resume(requestId, job, table.unpack(event, 1, event.n));
      end
    end
    if event[1] == EVENT_SERVE_REQUEST and event[2] == providerId and byType[event[4]] ~= nil
      and running[event[3]] == nil then
      local requestId, msgType, handler = event[3], event[4], byType[event[4]];
      local job = { type = msgType, started = os.clock(),
        co = coroutine.create(function(payload) return handler(payload, msgType); end) };
      running[requestId] = job;
      resume(requestId, job, codec.normalisePayload(event[5]));
    end
  end
end

-- The daemon's side. deps: os (queueEvent, startTimer, cancelTimer).
local function newRouter(deps)
  expect(1, deps, "table");
  field(deps, "os", "table");
  local osApi = deps.os;

  local providers = {};  -- providerId -> {types = {type = true}, seen = bool, order = n}
  -- type -> providerId: the program that began serving it last (its heartbeats do not take
  -- it back from a newer one), and once that one ends the newest of the others.
  local served = {};
  local offered = 0;     -- programs seen so far, for their order
  local forwarded = {};  -- requestId -> {providerId, type, done, timer}
  local sweepTimer = nil;

  local function expire(providerId, why)
    local provider = providers[providerId];
    if provider == nil then
      return;
    end
    providers[providerId] = nil;
    for msgType in pairs(provider.types) do
      if served[msgType] == providerId then
        local heir = nil;
        for otherId, other in pairs(providers) do
          if other.types[msgType] and not other.ended and (heir == nil or other.order > providers[heir].order) then
            heir = otherId;
          end
        end
        served[msgType] = heir;
      end
    end
    for requestId, pending in pairs(forwarded) do
      if pending.providerId == providerId then
        forwarded[requestId] = nil;
        osApi.cancelTimer(pending.timer);
        local message = pending.type .. " is no longer served: " .. why;
        if served[pending.type] ~= nil then
          message = "the program serving " .. pending.type .. " " .. (why:gsub("^the program serving it ", ""))
            .. " before it answered; another program serves it now: send the request again";
        end
        pending.done(false, nil, { code = ERR_UNKNOWN_TYPE, message = message });
      end
    end
  end

  local function startSweep()
    if sweepTimer == nil and next(providers) ~= nil then
      sweepTimer = osApi.startTimer(SERVE_LEASE);
    end
  end

  -- Every lease, a program that has not offered since the last sweep has ended.
  local function sweep()
    sweepTimer = nil;
    local ended = {};
    for providerId, provider in pairs(providers) do
      if provider.seen then
        provider.seen = false;
      else
        provider.ended = true; -- before any is expired: none is heir to another
        ended[#ended + 1] = providerId;
      end
    end
    -- Newest first, so that what each request is told does not depend on pairs' order.
    table.sort(ended, function(a, b) return providers[a].order > providers[b].order; end);
    for _, providerId in ipairs(ended) do
      expire(providerId, "the program serving it has ended");
    end
    startSweep();
  end

  local function onOffer(providerId, types)
    if type(providerId) ~= "string" or type(types) ~= "table" then
      return;
    end
    local provider = providers[providerId];
    if provider == nil then
      offered = offered + 1;
      provider = { types = {}, order = offered };
    end
    provider.seen = true;
    for _, msgType in ipairs(types) do
      if type(msgType) == "string" and not codec.RESERVED_TYPES[msgType]
        and (not provider.types[msgType] or served[msgType] == nil) then
        provider.types[msgType] = true;
        served[msgType] = providerId;
      end
    end
    providers[providerId] = provider;
    startSweep();
  end

  local function onReply(requestId, ok, payload, err)
    local pending = forwarded[requestId];
    if pending == nil then
      return;
    end
    forwarded[requestId] = nil;
    osApi.cancelTimer(pending.timer);
    if ok == true then
      -- What the handler returned, as lua.exec's returns: NaN (which serializeJSON writes as a
      -- bare nan the gateway drops) and a cycle (which would overflow the copy) included. An
      -- array is not an object: say so rather than answer {}.
      local safe = codec.jsonSafe(payload);
      if type(safe) == "table" and safe[1] ~= nil then
        pending.done(false, nil, { code = codec.ERR_INTERNAL, message = "the handler of " .. pending.type
          .. " returned an array; the answer's payload is an object: put the list in a field, e.g. return { items = list }" });
      else
        pending.done(true, codec.normalisePayload(safe));
      end
    else
      pending.done(false, nil, codec.normaliseError(err, "the program serving " .. pending.type .. " failed"));
    end
  end

  -- Sends a request to the program serving msgType; done(ok, payload, error) gets its answer,
  -- or unknown_type when no program serves it (now, or once the program ends).
  local function forward(msgType, payload, done)
    expect(1, msgType, "string");
    expect(2, payload, "table");
    expect(3, done, "function");
    local providerId = served[msgType];
    if providerId == nil then
      local message = "this computer does not handle requests of type " .. msgType;
      if not codec.RESERVED_TYPES[msgType] then
        -- A program's type, most likely: its program is not running (or not yet offering).
        message = message .. ": no program on it serves that type now (start the program that serves it with libsandbox.serve)";
      end
      return done(false, nil, { code = ERR_UNKNOWN_TYPE, message = message });
    end
    local requestId = codec.newUuid();
    forwarded[requestId] = { providerId = providerId, type = msgType, done = done,
      timer = osApi.startTimer(SERVE_ANSWER_WAIT) };
    osApi.queueEvent(EVENT_SERVE_REQUEST, providerId, requestId, msgType, payload);
    -- After a stop no sweep runs until a program offers again: one that ended meanwhile
    -- would be sent every request until SERVE_ANSWER_WAIT.
    startSweep();
  end

  local function onEvent(event, ...)
    if event == EVENT_SERVE_OFFER then
      onOffer(...);
    elseif event == EVENT_SERVE_WITHDRAW then
      expire((...), "the program serving it has stopped");
    elseif event == EVENT_SERVE_REPLY then
      onReply(...);
    elseif event == "timer" and sweepTimer ~= nil and (...) == sweepTimer then
      sweep();
    elseif event == "timer" then
      local timer = ...;
      for requestId, pending in pairs(forwarded) do
        if pending.timer == timer then
          forwarded[requestId] = nil;
          pending.done(false, nil, { code = ERR_TIMEOUT, message = "the program serving " .. pending.type
            .. " did not answer within " .. SERVE_ANSWER_WAIT .. " s; its answer, if it comes, is dropped" });
          break;
        end
      end
    end
  end

  -- Drops forwarded requests without answering (the daemon is stopping). The programs stay
  -- known but unseen: the stopped daemon hears none of their offers or withdrawals, so one
  -- that ended meanwhile is forgotten by the first sweep once the daemon runs again, and one
  -- still serving offers again within a heartbeat.
  local function stop()
    for _, pending in pairs(forwarded) do
      osApi.cancelTimer(pending.timer);
    end
    forwarded = {};
    if sweepTimer ~= nil then
      osApi.cancelTimer(sweepTimer);
      sweepTimer = nil;
    end
    for _, provider in pairs(providers) do
      provider.seen = false;
    end
  end

  return {
    forward = forward,
    onEvent = onEvent,
    stop = stop,
  };
end

return {
  SERVE_HEARTBEAT = SERVE_HEARTBEAT,
  SERVE_LEASE = SERVE_LEASE,
  SERVE_ANSWER_WAIT = SERVE_ANSWER_WAIT,
  serve = serve,
  newRouter = newRouter,
};
