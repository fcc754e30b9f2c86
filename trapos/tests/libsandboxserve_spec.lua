-- Specs for /apis/libsandboxserve: the daemon's router on its own, fed events by hand with a
-- recording os (no program runs here; libsandboxrequests_spec runs a real serve() beside it).

local lib = require('/apis/libsandboxserve');
local events = require('/apis/libsandboxevents');

-- A recording os: queued events are kept, timers get ids from 700001 up.
local function newOs()
  local fake = { queued = {}, timers = 0, cancelled = {} };
  fake.queueEvent = function(...) fake.queued[#fake.queued + 1] = table.pack(...); end;
  fake.startTimer = function() fake.timers = fake.timers + 1; return 700000 + fake.timers; end;
  fake.cancelTimer = function(id) fake.cancelled[#fake.cancelled + 1] = id; end;
  return fake;
end

local function answerOf(router, msgType, payload)
  local answer;
  router.forward(msgType, payload or {}, function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
  return answer;
end

describe("libsandboxserve", function()
  describe("newRouter", function()
    it("answers unknown_type when no program serves the type, naming the fix", function()
      local router = lib.newRouter({ os = newOs() });
      expect(answerOf(router, "door.open").err):same({
        code = "unknown_type", message = "this computer does not handle requests of type door.open: no program on it"
          .. " serves that type now (start the program that serves it with libsandbox.serve)",
      });
      -- A built-in name no program may serve: no program is the fix.
      expect(answerOf(router, "hello").err):same({
        code = "unknown_type", message = "this computer does not handle requests of type hello",
      });
    end);

    it("sends a request to the latest program offering its type and passes the answer back", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      router.onEvent(events.EVENT_SERVE_OFFER, "p2", { "door.open", "fs.read" });
      expect(answerOf(router, "door.open", { door = "n" })):eq(nil);
      local sent = fakeOs.queued[1];
      expect(sent[1]):eq(events.EVENT_SERVE_REQUEST);
      expect(sent[2]):eq("p2");
      expect(sent[4]):eq("door.open");
      expect(sent[5]):same({ door = "n" });
      -- a built-in type is never routed to a program
      expect(answerOf(router, "fs.read").err.code):eq("unknown_type");

      local answer;
      router.forward("door.open", {}, function(ok, result) answer = { ok = ok, payload = result }; end);
      router.onEvent(events.EVENT_SERVE_REPLY, fakeOs.queued[2][3], true, { opened = true });
      expect(answer):same({ ok = true, payload = { opened = true } });
    end);

    it("keeps a type with the program that began serving it last, then hands it to the other", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      router.onEvent(events.EVENT_SERVE_OFFER, "p2", { "door.open" });
      -- p1's heartbeat offers again: it does not take the type back.
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      answerOf(router, "door.open");
      expect(fakeOs.queued[1][2]):eq("p2");
      -- p2 stops: p1, still serving, answers at once (not unknown_type until its next offer).
      router.onEvent(events.EVENT_SERVE_WITHDRAW, "p2");
      expect(answerOf(router, "door.open")):eq(nil);
      expect(fakeOs.queued[2][2]):eq("p1");
    end);

    it("answers timeout for a handler that never answers, freeing the request, and drops a late answer", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.wait" });
      local answers = {};
      router.forward("door.wait", {}, function(ok, _, err) answers[#answers + 1] = { ok = ok, err = err }; end);
      local requestId, waitTimer = fakeOs.queued[1][3], 700000 + fakeOs.timers;
      expect(answers):same({});
      router.onEvent("timer", waitTimer);
      expect(answers):same({ { ok = false, err = { code = "timeout",
        message = "the program serving door.wait did not answer within " .. lib.SERVE_ANSWER_WAIT .. " s; its answer, if it comes, is dropped" } } });
      router.onEvent(events.EVENT_SERVE_REPLY, requestId, true, { late = true });
      expect(#answers):eq(1);
    end);

    it("cancels a request's wait once it is answered", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      router.forward("door.open", {}, function() end);
      local waitTimer = 700000 + fakeOs.timers;
      router.onEvent(events.EVENT_SERVE_REPLY, fakeOs.queued[1][3], true, {});
      expect(fakeOs.cancelled):same({ waitTimer });
    end);

    it("tells a request in flight when another program serves its type after its own stopped", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      router.onEvent(events.EVENT_SERVE_OFFER, "p2", { "door.open" });
      local answer;
      router.forward("door.open", {}, function(ok, _, err) answer = { ok = ok, err = err }; end);
      expect(fakeOs.queued[1][2]):eq("p2");
      router.onEvent(events.EVENT_SERVE_WITHDRAW, "p2");
      expect(answer):same({ ok = false, err = { code = "unknown_type",
        message = "the program serving door.open has stopped before it answered; another program serves it now: send the request again" } });
    end);

    it("forgets a program whose lease ran out and answers its requests in flight", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      local answer;
      router.forward("door.open", {}, function(ok, _, err) answer = { ok = ok, err = err }; end);
      router.onEvent("timer", 700001); -- first sweep: p1 offered since the start
      expect(answer):eq(nil);
      -- (700002 is the request's own answer wait)
      router.onEvent("timer", 700003); -- second sweep: no offer in a whole lease
      expect(answer.ok):eq(false);
      expect(answer.err.code):eq("unknown_type");
      expect(answer.err.message):eq("door.open is no longer served: the program serving it has ended");
      expect(answerOf(router, "door.open").err.code):eq("unknown_type");
    end);

    it("hands a type to no program that ended in the same lease", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      router.onEvent(events.EVENT_SERVE_OFFER, "p2", { "door.open" });
      local answer;
      router.forward("door.open", {}, function(ok, _, err) answer = { ok = ok, err = err }; end);
      router.onEvent("timer", 700001); -- first sweep: both offered since the start
      router.onEvent("timer", 700003); -- second sweep: neither offered in a whole lease
      expect(answer.err):same({ code = "unknown_type", message = "door.open is no longer served: the program serving it has ended" });
      expect(answerOf(router, "door.open").err.message):str_match("^this computer does not handle requests of type door%.open: ");
    end);

    it("forgets a program that withdraws", function()
      local router = lib.newRouter({ os = newOs() });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      router.onEvent(events.EVENT_SERVE_WITHDRAW, "p1");
      expect(answerOf(router, "door.open").err.code):eq("unknown_type");
    end);

    it("stop drops the requests in flight and its timer", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      local called = false;
      router.forward("door.open", {}, function() called = true; end);
      router.stop();
      router.onEvent(events.EVENT_SERVE_REPLY, fakeOs.queued[1][3], true, {});
      expect(called):eq(false);
      expect(fakeOs.cancelled):same({ 700002, 700001 }); -- the request's answer wait, the sweep
    end);

    it("forgets a program that ended while the daemon was stopped (sandbox stop)", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" }); -- sweep 700001
      router.stop();
      -- Stopped, the daemon hears nothing; p1 ends meanwhile. Then it runs again.
      local answer;
      router.forward("door.open", {}, function(ok, _, err) answer = { ok = ok, err = err }; end);
      expect(fakeOs.timers):eq(3); -- the request's answer wait (700002) and a sweep (700003)
      router.onEvent("timer", 700003);
      expect(answer):same({ ok = false, err = { code = "unknown_type",
        message = "door.open is no longer served: the program serving it has ended" } });
    end);

    it("keeps a program that still serves once the daemon runs again after a stop", function()
      local fakeOs = newOs();
      local router = lib.newRouter({ os = fakeOs });
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" });
      router.stop();
      router.onEvent(events.EVENT_SERVE_OFFER, "p1", { "door.open" }); -- its next heartbeat: sweep 700002
      local answer;
      router.forward("door.open", {}, function(ok, _, err) answer = { ok = ok, err = err }; end);
      router.onEvent("timer", 700002);
      expect(answer):eq(nil);
      expect(fakeOs.queued[1][2]):eq("p1");
    end);
  end);

  describe("serve", function()
    it("checks its handlers", function()
      expect.error(lib.serve, { ["fs.read"] = function() end }):str_match("built%-in");
      expect.error(lib.serve, { [""] = function() end }):str_match("non%-empty");
      expect.error(lib.serve, { ["x"] = 3 }):str_match("must be a function, not a number");
    end);

    it("names the mistake of a handlers table that holds no type, or a list", function()
      -- { ["door.open"] = openDoor } before openDoor is defined: an empty table. Resumed once,
      -- so that a serve that waits for requests instead of raising fails here, not hangs.
      local ok, err = coroutine.resume(coroutine.create(lib.serve), {});
      expect(ok):eq(false);
      expect(err):eq("bad argument #1 (no types to serve: the table is empty; a handler that is nil,"
        .. " such as a local function defined after this call, leaves its type out)");
      expect.error(lib.serve, { function() end }):eq("bad argument #1 (type names must be non-empty strings,"
        .. " not the number 1: write [\"door.open\"] = function(payload) ... end)");
    end);

    it("names a colon call, which passes the library as the handlers", function()
      local libsandbox = require('/apis/libsandbox');
      expect.error(libsandbox.serve, libsandbox, { ["door.open"] = function() end }):eq("bad argument #2 (serve"
        .. " takes one table of handlers: call libsandbox.serve({...}) with a dot, not libsandbox:serve)");
    end);
  end);
end);
