-- Specs for /apis/libsandboxscreen: the mirror of the terminal equals what the terminal
-- shows (an invisible window stands in for the native terminal, since a window can be read
-- back with getLine and the native one cannot), for term, window and multishell drawing;
-- screen.input queues only its fixed list; a watch has one update in flight.

local lib = require('/apis/libsandboxscreen');
local codec = require('/apis/libsandboxcodec');
local events = require('/apis/libsandboxevents');

local W, H = term.native().getSize();

-- A terminal that can be read back, drawn nowhere.
local function newReference()
  return window.create(term.native(), 1, 1, W, H, false);
end

-- Expects the mirror to show exactly what ref holds.
local function expectMirrored(mirror, ref)
  local screen = mirror.read();
  expect(screen.width):eq(W);
  expect(screen.height):eq(H);
  for y = 1, H do
    local t, f, b = ref.getLine(y);
    expect({ y = y, text = screen.rows[y].text, fg = screen.rows[y].fg, bg = screen.rows[y].bg })
      :same({ y = y, text = t, fg = f, bg = b });
  end
  local x, y = ref.getCursorPos();
  expect(screen.cursor):same({ x = x, y = y, blink = ref.getCursorBlink() });
  expect(screen.fg):eq(ref.getTextColour());
  expect(screen.bg):eq(ref.getBackgroundColour());
  for i = 0, 15 do
    local r, g, b = ref.getPaletteColour(2 ^ i);
    expect(screen.palette[i + 1]):eq(string.format("#%02x%02x%02x",
      math.floor(r * 255 + 0.5), math.floor(g * 255 + 0.5), math.floor(b * 255 + 0.5)));
  end
end

-- Runs fn with term redirected to target, and always redirects back.
local function drawingOn(target, fn)
  local previous = term.redirect(target);
  local ok, err = pcall(fn);
  term.redirect(previous);
  if not ok then
    error(err, 0);
  end
end

-- A mirror installed on ref after draw (nil: nothing) and then a loop that has not yielded
-- since: past lib.UNGUARDED_CALLS calls, each further call is guarded.
local function guardedMirror(ref, draw)
  local mirror = lib.newMirror(ref);
  mirror.install();
  drawingOn(ref, function()
    if draw ~= nil then
      draw();
    end
    for i = 1, lib.UNGUARDED_CALLS do
      term.setCursorPos(i % W + 1, 1);
    end
  end);
  return mirror;
end

-- Ends the computer's resume (a round of a case that runs guardedMirror's UNGUARDED_CALLS
-- calls more than once): CC's limit on a resume is wall time, which -race on a loaded machine
-- stretches. The mirror's count of calls since a yield is its own, reset by its daemon only.
local function endResume()
  os.queueEvent("screen_spec_resume");
  os.pullEvent("screen_spec_resume");
end

-- Makes ref's method name raise CC's abort once armed (the returned function arms it), after
-- the terminal did the call ("after") or before ("before").
local function abortIn(ref, name, when)
  local original, armed = ref[name], false;
  ref[name] = function(...)
    if when == "after" then
      original(...);
    end
    if armed then
      armed = false;
      error("Too long without yielding", 0);
    end
    if when == "before" then
      return original(...);
    end
  end;
  return function() armed = true; end;
end

-- allowed(), when given, says whether the owner allows viewing.
local function newScreen(target, osApi, allowed)
  return lib.newScreen({
    term = target, os = osApi or os, keys = keys,
    withdrawn = function()
      if allowed == nil or allowed() then
        return nil;
      end
      return "the owner withdrew it";
    end,
  });
end

-- An os that records what is queued and started instead of doing it.
local function newFakeOs()
  local fake = { queued = {}, timers = 0 };
  fake.queueEvent = function(...) fake.queued[#fake.queued + 1] = table.pack(...); end;
  fake.startTimer = function() fake.timers = fake.timers + 1; return fake.timers; end;
  fake.cancelTimer = function() end;
  return fake;
end

local function queuedOf(fake, name)
  local found = {};
  for _, args in ipairs(fake.queued) do
    if args[1] == name then
      found[#found + 1] = args;
    end
  end
  return found;
end

describe("libsandboxscreen", function()
  describe("the mirror", function()
    it("follows drawing through term, off-screen writes, scrolling and the palette", function()
      local ref = newReference();
      ref.write("before the mirror"); -- the mirror starts blank, like the screen at boot
      ref.clear();
      local mirror = lib.newMirror(ref);
      mirror.install();
      drawingOn(ref, function()
        term.setCursorPos(1, 1);
        print("hello");
        term.setTextColour(colours.red);
        term.setBackgroundColour(colours.blue);
        write("coloured text that wraps past the end of the row, well past it");
        term.setCursorPos(-3, 4);
        term.write("clipped left");
        term.setCursorPos(W - 2, 5);
        term.write("clipped right");
        term.setCursorPos(3, 0);
        term.write("above");
        term.setCursorPos(3, H + 1);
        term.write("below");
        term.setCursorPos(2, 6);
        term.blit("blit", "0123", "fedc");
        term.setCursorPos(1, 7);
        term.write(42);
        term.setCursorPos(4, 7);
        term.clearLine();
        term.setCursorPos(1, 8);
        term.write("line 8");
        term.scroll(2);
        term.scroll(-1);
        term.setPaletteColour(colours.red, 0x123456);
        term.setPaletteColor(colours.blue, 0.5, 0.25, 1);
        term.setCursorBlink(true);
        for i = 1, H + 3 do print("scrolled " .. i); end
        term.setTextColor(colours.lime);
        term.setBackgroundColor(colours.grey);
      end);
      expectMirrored(mirror, ref);
      drawingOn(ref, function()
        term.clear();
        term.setCursorPos(5, 5);
      end);
      expectMirrored(mirror, ref);
      mirror.uninstall();
    end);

    it("starts again from the terminal, its rows blank, when installed after an uninstall", function()
      -- sandbox stop takes the mirror off; sandbox reconnect puts it back
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      drawingOn(ref, function()
        term.clear();
        term.setCursorPos(1, 1);
        print("> sandbox stop");
      end);
      mirror.uninstall();
      -- drawn while no mirror was installed: unknown to it, as what the boot drew before it
      drawingOn(ref, function()
        term.setBackgroundColour(colours.blue);
        term.setTextColour(colours.yellow);
        term.clear();
        term.setPaletteColour(colours.green, 0x123456);
        term.setCursorPos(4, 6);
        term.setCursorBlink(true);
      end);
      mirror.install();
      local screen = mirror.read();
      for y = 1, H do
        expect({ y = y, text = screen.rows[y].text, bg = screen.rows[y].bg })
          :same({ y = y, text = string.rep(" ", W), bg = string.rep("b", W) });
      end
      -- what the terminal tells of itself is read anew; then the mirror follows it as before
      drawingOn(ref, function()
        term.setCursorPos(1, 1);
        term.clear();
        print("> sandbox reconnect");
      end);
      expectMirrored(mirror, ref);
      mirror.uninstall();
      expect(screen.cursor):same({ x = 4, y = 6, blink = true });
      expect(screen.fg):eq(colours.yellow);
      expect(screen.bg):eq(colours.blue);
      expect(screen.palette[14]):eq("#123456"); -- green, 2^13
    end);

    it("takes colours and positions as the terminal took them: a colour's highest flag, a position's whole part", function()
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      drawingOn(ref, function()
        term.setTextColour(colours.orange + colours.white); -- orange
        term.setBackgroundColour(colours.red + colours.blue); -- red
        term.setCursorPos(2.7, 3.2);
        term.write("x");
        term.setPaletteColour(colours.green + colours.cyan, 0x123456); -- green
      end);
      expect(ref.getTextColour()):eq(colours.orange);
      expect(ref.getBackgroundColour()):eq(colours.red);
      expectMirrored(mirror, ref);
      mirror.uninstall();
    end);

    it("keeps bytes 0x80-0xFF as they are", function()
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      local all = {};
      for b = 0x80, 0xFF do all[#all + 1] = string.char(b); end
      local bytes = table.concat(all);
      -- a row of W bytes after another (3 rows at 51 columns, 5 at a pocket computer's 26),
      -- written and blitted in turn
      local count = math.ceil(#bytes / W);
      drawingOn(ref, function()
        for y = 1, count do
          local part = bytes:sub((y - 1) * W + 1, y * W);
          term.setCursorPos(1, y);
          if y % 2 == 0 then
            term.blit(part, string.rep("e", #part), string.rep("1", #part));
          else
            term.write(part);
          end
        end
      end);
      expectMirrored(mirror, ref);
      local rows = mirror.read().rows;
      local shown = {};
      for y = 1, count do
        shown[y] = rows[y].text;
      end
      expect(table.concat(shown):sub(1, #bytes)):eq(bytes);
      -- and the frame crosses the wire as the same bytes
      local frame = codec.decodeFrame(codec.encodeFrame({
        event = "computer_request", traposSenderId = "7:spec", messageId = "m", type = "screen.update",
        payload = { rows = { ["1"] = rows[1] } },
      }));
      expect(frame.payload.rows["1"].text):eq(bytes:sub(1, W));
      mirror.uninstall();
    end);

    it("follows windows drawn on it, moved and hidden", function()
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      local win = window.create(ref, 5, 3, 20, 8);
      win.setBackgroundColour(colours.green);
      win.clear();
      drawingOn(win, function()
        print("in a window");
        term.setTextColour(colours.orange);
        write("that wraps inside its own twenty columns");
      end);
      local other = window.create(ref, 10, 6, 15, 4, false);
      other.setBackgroundColour(colours.purple);
      other.clear();
      other.write("hidden first");
      other.setVisible(true);
      win.reposition(2, 10, 25, 5);
      win.redraw();
      win.setCursorPos(3, 2);
      win.restoreCursor();
      expectMirrored(mirror, ref);
      mirror.uninstall();
    end);

    it("sees every multishell tab and the tab bar", function()
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      local dir = "/tmp-screen-spec";
      local tab2 = fs.combine(dir, "tab2.lua");
      local tab1 = fs.combine(dir, "tab1.lua");
      local file = fs.open(tab2, "w");
      file.write([[
        term.setBackgroundColour(colours.cyan);
        term.clear();
        term.setCursorPos(2, 2);
        term.setTextColour(colours.yellow);
        print("drawn in tab two");
        os.queueEvent("screen_spec_drawn");
        os.pullEvent("screen_spec_done");
      ]]);
      file.close();
      file = fs.open(tab1, "w");
      file.write([[
        print("tab one");
        local id = multishell.launch({}, "]] .. tab2 .. [[");
        multishell.setTitle(id, "two");
        multishell.setFocus(id);
        os.pullEvent("screen_spec_done");
      ]]);
      file.close();
      local checked = false;
      drawingOn(ref, function()
        -- Both tabs end on screen_spec_done, and so multishell and shell.run with them: a
        -- shell.run cut off by waitForAny would leave multishell on the shell's stack of
        -- running programs, for the specs after this one (shell.getRunningProgram).
        parallel.waitForAll(function()
          shell.run("/rom/programs/advanced/multishell.lua", tab1);
        end, function()
          os.pullEvent("screen_spec_drawn");
          expect(select(1, ref.getLine(1))):str_match("two");
          expectMirrored(mirror, ref);
          checked = true;
          os.queueEvent("screen_spec_done");
        end);
      end);
      fs.delete(dir);
      mirror.uninstall();
      expect(checked):eq(true);
    end);

    it("puts the terminal's own methods back when it stops", function()
      local ref = newReference();
      local write = ref.write;
      local screen = newScreen(ref);
      screen.start();
      expect(ref.write ~= write):eq(true);
      screen.stop();
      expect(ref.write == write):eq(true);
    end);

    -- A copy of the native terminal's functions: CC's are Java, whose errors CC places at the
    -- nearest Lua code, so a wrapper around them is where they would be reported.
    local function nativeCopy()
      local copy = {};
      for name, fn in pairs(term.native()) do
        copy[name] = fn;
      end
      return copy;
    end

    -- The error calling fn(t) raises (fn must call t's method itself, not in a tail call).
    local function errorOf(fn, t)
      local ok, err = pcall(fn, t);
      expect(ok):eq(false);
      return err;
    end

    it("leaves a program's wrong call to the terminal its own error, at its own line", function()
      local here = debug.getinfo(1, "S").short_src;
      local wrongCalls = {
        function(t) t.setCursorPos("x", 1); end,
        function(t) t.setCursorPos(1, 0 / 0); end,
        function(t) t.blit("ab", "0", "ff"); end,
        function(t) t.blit("ab", 12, "ff"); end,
        function(t) t.setTextColour(0); end,
        function(t) t.setTextColor(0.5); end,
        function(t) t.setBackgroundColour(0x10000); end,
        function(t) t.setBackgroundColor(); end,
        function(t) t.setCursorBlink("on"); end,
        function(t) t.scroll("up"); end,
        function(t) t.setPaletteColour(0, 0xFF0000); end,
        function(t) t.setPaletteColor(colours.red, "red"); end,
      };
      local bare, mirrored = nativeCopy(), nativeCopy();
      local mirror = lib.newMirror(mirrored);
      mirror.install();
      local _, before = mirror.changesSince(nil);
      for i, wrongCall in ipairs(wrongCalls) do
        local line = debug.getinfo(wrongCall, "S").linedefined;
        local want = errorOf(wrongCall, bare);
        expect({ i = i, at = want:sub(1, #here + #tostring(line) + 3) }):same({ i = i, at = here .. ":" .. line .. ": " });
        expect({ i = i, err = errorOf(wrongCall, mirrored) }):same({ i = i, err = want });
      end
      -- through the term API, whose forwarding reaches the wrapper by a tail call
      local function viaTerm() term.blit("ab", "0", "ff"); end
      local err;
      drawingOn(mirrored, function() err = errorOf(viaTerm, nil); end);
      expect(err):eq(here .. ":" .. debug.getinfo(viaTerm, "S").linedefined .. ": Arguments must be the same length");
      -- a call that failed drew nothing, so the mirror did not change
      expect(mirror.changesSince(before)):eq(nil);
      mirror.uninstall();
    end);

    -- CC's write takes a value as tostring words it without calling the value's __tostring
    -- (IArguments.getStringCoerced); the mirror called it: a program's __tostring that raised
    -- made the write fail with the mirror alone, and one that answered put its words in the
    -- mirror where the screen shows "table: ...".
    it("writes a value as the terminal's write takes it, never calling its __tostring", function()
      local native = nativeCopy();
      local mirror = lib.newMirror(native);
      mirror.install();
      for _, tostringOf in ipairs({ function() error("boom"); end, function() return "shown"; end }) do
        local value = {};
        local raw = tostring(value);
        local meta = { __tostring = tostringOf };
        setmetatable(value, meta);
        native.setCursorPos(1, 1);
        local ok, err = pcall(native.write, value);
        expect({ ok, err }):same({ true, nil });
        expect(mirror.read().rows[1].text:sub(1, #raw + 1)):eq(raw .. " ");
        expect(getmetatable(value) == meta):eq(true);
      end
      mirror.uninstall();
    end);

    -- CC cannot read its terminal back, so what was drawn before the mirror (the boot's
    -- first lines, or while the daemon was stopped) read as blank rows on the host, the agent
    -- told nothing of it. screen.read names each row not drawn whole since the mirror started.
    it("names the rows it has not seen drawn whole since it started", function()
      local function rows(from, to)
        local list = {};
        for y = from, to do
          list[#list + 1] = y;
        end
        return list;
      end
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      expect(mirror.read().unknownRows):same(rows(1, H));
      drawingOn(ref, function()
        term.setCursorPos(3, 2);
        term.write("part of a row");
        term.scroll(1);
      end);
      expect(mirror.read().unknownRows):same(rows(1, H - 1)); -- scrolled in: blank and known
      drawingOn(ref, function()
        term.setCursorPos(1, 3);
        term.write(string.rep("x", W)); -- written across
        term.setCursorPos(1, 4);
        term.clearLine();
      end);
      local unknown = rows(1, H - 1);
      table.remove(unknown, 4);
      table.remove(unknown, 3);
      expect(mirror.read().unknownRows):same(unknown);
      drawingOn(ref, function() term.clear(); end);
      expect(mirror.read().unknownRows):eq(nil);
      expectMirrored(mirror, ref);
      -- taken off and put back: what was drawn meanwhile is not known
      mirror.uninstall();
      mirror.install();
      expect(mirror.read().unknownRows):same(rows(1, H));
      mirror.uninstall();
    end);

    -- paint draws its canvas a cell at a time, each row's cells in writes of their own: the
    -- rows stayed unknown though every cell of them was drawn, and the web console said the
    -- computer might show more there than it did.
    it("knows a row once every cell of it is written, one write at a time too", function()
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      drawingOn(ref, function()
        for x = W, 1, -1 do -- row 5, every cell, in its own colour
          term.setCursorPos(x, 5);
          term.setBackgroundColour(2 ^ (x % 16));
          term.write(" ");
        end
        for x = 1, W - 1 do -- row 8, all but its last cell
          term.setCursorPos(x, 8);
          term.write("a");
        end
        term.setCursorPos(W - 3, 9); -- row 9: its first cells, then the rest past the edge
        term.write("abcdefg");
        term.setCursorPos(-2, 9);
        term.write(string.rep("b", W));
      end);
      local function allBut(...)
        local list, but = {}, {};
        for _, y in ipairs({ ... }) do
          but[y] = true;
        end
        for y = 1, H do
          if not but[y] then
            list[#list + 1] = y;
          end
        end
        return list;
      end
      expect(mirror.read().unknownRows):same(allBut(5, 9));
      drawingOn(ref, function()
        term.scroll(1); -- row 8's cells written so far go up with it, to row 7
        term.setCursorPos(W, 7);
        term.write("z");
      end);
      expect(mirror.read().unknownRows):same(allBut(4, 7, 8, H));
      expectMirrored(mirror, ref);
      mirror.uninstall();
    end);

    -- A watch's updates carry the rows not seen drawn whole, as screen.read does: in each
    -- update, whole or not, since a row becomes known (or unknown again) as it changes; left out
    -- when there are none. Without them the web console and trap-sandbox screen showed the
    -- boot's first lines as blank rows, unsaid.
    it("names in a watch's updates the rows it has not seen drawn whole", function()
      local ref = newReference();
      local mirror = lib.newMirror(ref);
      mirror.install();
      local whole, since = mirror.changesSince(nil);
      expect(whole.unknownRows):same(mirror.read().unknownRows);
      expect(#whole.unknownRows):eq(H);
      drawingOn(ref, function()
        term.setCursorPos(1, 2);
        term.write(string.rep("x", W)); -- row 2 written across: known
      end);
      local changes;
      changes, since = mirror.changesSince(since);
      expect(changes.rows["2"] ~= nil):eq(true);
      expect(changes.unknownRows):same(mirror.read().unknownRows);
      expect(#changes.unknownRows):eq(H - 1);
      expect(changes.unknownRows[2]):eq(3);
      drawingOn(ref, function() term.clear(); end);
      changes, since = mirror.changesSince(since);
      expect(changes.unknownRows):eq(nil);
      expect(mirror.changesSince(since)):eq(nil);
      mirror.uninstall();
    end);

    -- The mirror takes a __tostring value's metatable off to word it as the terminal does and
    -- puts it back; CC's abort between the two left the value without its metatable for good.
    -- tostring, which runs between them, raises it there; then a count hook raises it (as CC
    -- does, at the running instruction) at each instruction of a write in turn, until a write
    -- runs whole.
    it("puts a written value's metatable back whatever instruction CC's abort stops", function()
      local library = debug.getinfo(lib.newMirror, "S").short_src;
      local value, meta = {}, { __tostring = function() return "shown"; end };
      setmetatable(value, meta);
      local realTostring, armed = _G.tostring, false;
      _G.tostring = function(v) -- luacheck: ignore 122
        if armed and rawequal(v, value) and debug.getmetatable(v) == nil then
          armed = false;
          error(library .. ":95: Too long without yielding", 0);
        end
        return realTostring(v);
      end;
      for _, guarded in ipairs({ false, true }) do
        local native = nativeCopy();
        local mirror = guarded and guardedMirror(native) or lib.newMirror(native);
        mirror.install();
        armed = true;
        local ok, err = pcall(native.write, value);
        expect({ guarded, armed, ok, (tostring(err):gsub("^.*: ", "")) })
          :same({ guarded, false, false, "Too long without yielding" });
        expect({ guarded, getmetatable(value) == meta }):same({ guarded, true });
        mirror.uninstall();
      end
      _G.tostring = realTostring; -- luacheck: ignore 122

      local ran = false;
      for n = 1, 1000 do
        local native = nativeCopy();
        local mirror = lib.newMirror(native);
        mirror.install();
        local fired = false;
        pcall(function()
          debug.sethook(function()
            debug.sethook();
            fired = true;
            error("Too long without yielding", 2);
          end, "", n);
          native.write(value);
          debug.sethook();
        end);
        debug.sethook();
        mirror.uninstall();
        expect({ n = n, restored = getmetatable(value) == meta }):same({ n = n, restored = true });
        if not fired then
          ran = true;
          break;
        end
      end
      expect(ran):eq(true);
    end);

    -- CC raises "Too long without yielding" in whatever Lua code runs when a program has not
    -- yielded for 7 s: a player's drawing loop spends most of its time in the mirror's own code,
    -- which the player saw blamed ("...s/libsandboxscreen.lua:119: Too long without yielding",
    -- then the library's line) for their loop. A window stands in for the terminal, whose
    -- getCursorPos, which the mirror reads back after a setCursorPos, raises it as CC would
    -- there, positioned in the mirror.
    it("leaves a program's loop that ran too long without yielding the error at its own line, the mirror kept whole", function()
      local here = debug.getinfo(1, "S").short_src;
      local library = debug.getinfo(lib.newMirror, "S").short_src;
      local ref = newReference();
      local getCursorPos, abort = ref.getCursorPos, false;
      ref.getCursorPos = function()
        if abort then
          abort = false;
          error(library .. ":119: Too long without yielding", 0);
        end
        return getCursorPos();
      end;
      local mirror = guardedMirror(ref, function()
        term.clear();
        term.setCursorPos(1, 1);
        term.write("frame");
      end);
      local _, before = mirror.changesSince(nil);
      local function loopLine() ref.setCursorPos(3, 4); end
      abort = true;
      local ok, err = pcall(loopLine);
      expect(ok):eq(false);
      expect(err):eq(here .. ":" .. debug.getinfo(loopLine, "S").linedefined .. ": Too long without yielding");
      -- the setCursorPos was done on the screen, its effect on the mirror cut short: the mirror
      -- is made whole again, and a watch gets every row anew
      expectMirrored(mirror, ref);
      local changes = mirror.changesSince(before);
      for y = 1, H do
        expect({ y = y, sent = changes.rows[tostring(y)] ~= nil }):same({ y = y, sent = true });
      end
      mirror.uninstall();
    end);

    -- CC checks for its abort at each Lua instruction, so one can come right after the
    -- terminal did the call, before the mirror's effect began: the window's method raises it
    -- once it has done the call. What the mirror takes from the call (the blink) or reads back
    -- in the effect (the cursor, the palette) stayed as before the call, on the host's view
    -- until the program set it again.
    it("reads the cursor, the blink and the palette back when CC's abort came between the terminal's call and the mirror's", function()
      for _, call in ipairs({ { "setCursorPos", 5, 6 }, { "setCursorBlink", true },
          { "setPaletteColour", colours.red, 0x123456 }, { "setPaletteColor", colours.blue, 0.5, 0.25, 1 } }) do
        local ref = newReference();
        local arm = abortIn(ref, call[1], "after");
        local mirror = guardedMirror(ref);
        arm();
        local ok, err = pcall(ref[call[1]], table.unpack(call, 2));
        expect({ call[1], ok, err }):same({ call[1], false, "Too long without yielding" });
        expectMirrored(mirror, ref);
        mirror.uninstall();
        endResume();
      end
    end);

    -- An abort before the terminal did the call left the screen as it was: nothing is done
    -- again in the mirror, which showed a text the screen never got.
    it("does not do again a call that CC's abort stopped before the terminal did it", function()
      local ref = newReference();
      local arm = abortIn(ref, "write", "before");
      local mirror = guardedMirror(ref);
      arm();
      local ok, err = pcall(ref.write, "never on the screen");
      expect({ ok, err }):same({ false, "Too long without yielding" });
      expectMirrored(mirror, ref);
      mirror.uninstall();
    end);

    -- An abort cut scroll's effect short after it had started the rows anew: the rows not yet
    -- moved were nil in the mirror, every later write to them failed in the mirror's code, and
    -- the computer turned off when the shell printed that error there; blanked, they showed a
    -- band of blank rows on the host's view (a program's print loop stopped) where the screen
    -- had them moved. string.rep, which scroll's blank rows are made with, raises it here:
    -- scroll(1) once the moved rows are in, scroll(-1) at its first row, before the others.
    it("keeps the mirror whole when CC's abort cuts a scroll short", function()
      local library = debug.getinfo(lib.newMirror, "S").short_src;
      for _, n in ipairs({ 1, -1 }) do
        local ref = newReference();
        local mirror = guardedMirror(ref, function()
          term.clear();
          for y = 1, H do
            term.setCursorPos(1, y);
            term.write("row " .. y);
          end
        end);
        local rep, abort = string.rep, true;
        string.rep = function(...) -- luacheck: ignore 122
          if abort and debug.getinfo(2, "S").short_src == library then -- the mirror's, not the window's
            abort = false;
            error(library .. ":147: Too long without yielding", 0);
          end
          return rep(...);
        end;
        local ok, err = pcall(ref.scroll, n);
        string.rep = rep; -- luacheck: ignore 122
        expect({ n, ok, err }):same({ n, false, "Too long without yielding" });
        expectMirrored(mirror, ref);
        drawingOn(ref, function()
          term.setCursorPos(1, H);
          term.write("written after");
        end);
        expectMirrored(mirror, ref);
        mirror.uninstall();
        endResume();
      end
    end);
  end);

  describe("screen.input", function()
    local function input(evs)
      local fake = newFakeOs();
      local screen = newScreen(newReference(), fake);
      local ok, payload, err = screen.handlers["screen.input"]({ events = evs });
      return fake, ok, payload, err;
    end

    it("queues keys by name, text as chars with \\n as Enter, paste, clicks, drags, scroll and terminate", function()
      local fake, ok, payload = input({
        { type = "key", name = "leftCtrl" },
        { type = "key", name = "a", held = true },
        { type = "key_up", name = "leftCtrl" },
        { type = "char", text = "1+\255\n" },
        { type = "paste", text = "pasted" },
        { type = "click", button = 2, x = 3, y = 4 },
        { type = "drag", button = 2, x = 4, y = 4 },
        { type = "scroll", direction = -1, x = 1, y = H },
        { type = "terminate" },
      });
      expect(ok):eq(true);
      local got = {};
      for _, args in ipairs(fake.queued) do
        if args[1] ~= events.EVENT_INPUT_TYPED then
          got[#got + 1] = { table.unpack(args, 1, args.n) };
        end
      end
      expect(got):same({
        { "key", keys.leftCtrl, false },
        { "key", keys.a, true },
        { "key_up", keys.leftCtrl },
        { "char", "1" }, { "char", "+" }, { "char", "\255" },
        { "key", keys.enter, false }, { "key_up", keys.enter },
        { "paste", "pasted" },
        { "mouse_click", 2, 3, 4 }, { "mouse_up", 2, 3, 4 },
        { "mouse_drag", 2, 4, 4 },
        { "mouse_scroll", -1, 1, H },
        { "terminate" },
      });
      expect(payload.queued):eq(#got);
    end);

    it("queues a held button's press, its drags and its release apart, each CC's event", function()
      -- A drag as a player makes it: the press, the moves with the button held, and the release
      -- where the pointer let go (a paint program ends its stroke on mouse_up), not at the press.
      local fake, ok, payload = input({
        { type = "mouse_click", button = 1, x = 3, y = 2 },
        { type = "drag", button = 1, x = 4, y = 2 },
        { type = "drag", button = 1, x = 5, y = 3 },
        { type = "mouse_up", button = 1, x = 5, y = 3 },
      });
      expect(ok):eq(true);
      local got = {};
      for _, args in ipairs(fake.queued) do
        if args[1] ~= events.EVENT_INPUT_TYPED then
          got[#got + 1] = { table.unpack(args, 1, args.n) };
        end
      end
      expect(got):same({
        { "mouse_click", 1, 3, 2 },
        { "mouse_drag", 1, 4, 2 },
        { "mouse_drag", 1, 5, 3 },
        { "mouse_up", 1, 5, 3 },
      });
      expect(payload.queued):eq(4);
    end);

    it("takes a screen.input only once the events of the one before it left CC's queue", function()
      -- Each input is at most 128 events, half of CC's queue; several sent at once, each queued
      -- as the daemon read it, filled it, and the events past it were lost (a sleeping
      -- program's timer, the gateway's next frames). A marker behind each input's events says
      -- when they left; an input sooner is answered busy, queueing nothing.
      local fake = newFakeOs();
      local screen = newScreen(newReference(), fake);
      local one = { events = { { type = "char", text = "ab" } } };
      expect(select(1, screen.handlers["screen.input"](one))):eq(true);
      expect(#fake.queued):eq(3);
      local marker = fake.queued[3];
      expect(marker[1]):eq(events.EVENT_INPUT_TYPED);
      local ok, _, err = screen.handlers["screen.input"](one);
      expect({ ok, err.code }):same({ false, "busy" });
      expect(err.message):str_match("still taking the events of the screen%.input before this one");
      expect(#fake.queued):eq(3);

      screen.onEvent("char", "a"); -- its own events go by, then its marker
      screen.onEvent("char", "b");
      screen.onEvent(events.EVENT_INPUT_TYPED, marker[2] + 1); -- another's marker is not its
      expect(select(1, screen.handlers["screen.input"](one))):eq(false);
      screen.onEvent(table.unpack(marker, 1, marker.n));
      expect(select(1, screen.handlers["screen.input"](one))):eq(true);
      expect(#fake.queued):eq(6);

      -- A marker a full queue dropped: a queue's worth of events later, it cannot be in it.
      for _ = 1, events.EVENT_QUEUE_LIMIT - 1 do
        screen.onEvent("timer", 99);
      end
      expect(select(1, screen.handlers["screen.input"](one))):eq(false);
      screen.onEvent("timer", 99);
      expect(select(1, screen.handlers["screen.input"](one))):eq(true);
    end);

    it("refuses a mouse event on a basic computer, naming why, and queues nothing", function()
      -- CC gives the mouse to advanced computers only: a program on a basic one never gets a
      -- mouse_click, mouse_drag, mouse_up or mouse_scroll, so the host cannot make one either.
      local basic = newReference();
      basic.isColour = function() return false; end;
      basic.isColor = basic.isColour;
      for _, ev in ipairs({
        { type = "click", button = 1, x = 1, y = 1 },
        { type = "mouse_click", button = 1, x = 1, y = 1 },
        { type = "drag", button = 1, x = 1, y = 1 },
        { type = "mouse_up", button = 1, x = 1, y = 1 },
        { type = "scroll", direction = 1, x = 1, y = 1 },
      }) do
        local fake = newFakeOs();
        local screen = newScreen(basic, fake);
        local ok, _, err = screen.handlers["screen.input"]({ events = { { type = "char", text = "a" }, ev } });
        expect({ ev.type, ok, err.code, err.message }):same({ ev.type, false, "bad_payload",
          "events[1]: mouse events reach advanced computers only: this one is a basic computer; nothing was queued" });
        expect(#fake.queued):eq(0);
      end
      -- Its keys go as ever.
      local fake = newFakeOs();
      local ok, payload = newScreen(basic, fake).handlers["screen.input"]({ events = { { type = "char", text = "a" } } });
      expect({ ok, payload.queued }):same({ true, 1 });
    end);

    it("drops the whole request when one event is outside the list, naming it", function()
      local cases = {
        { { type = "websocket_message", url = "ws://x" }, "unknown input type \"websocket_message\"" },
        { { type = "timer" }, "unknown input type \"timer\"" },
        { { type = "key", name = "getName" }, "unknown key name \"getName\"" },
        { { type = "key", name = "noSuchKey" }, "unknown key name" },
        -- a missing field is named as missing, never as the name or type "nil"
        { { type = "key" }, "events[1]: a key event needs its name, CC's key name, as keys.getName gives it: enter, leftCtrl, a" },
        { { type = "key_up", name = "" }, "events[1]: a key_up event needs its name, CC's key name" },
        { { type = "key", name = 28 }, "events[1].name must be a string, not the number 28: CC's key name, as keys.getName gives it: enter, leftCtrl, a" },
        { { type = "key", name = { "enter" } }, "events[1].name must be a string, not an object or array: CC's key name" },
        { { type = "char" }, "events[1]: a char event needs its text, the bytes it types (\\n types Enter)" },
        { { type = "char", text = 5 }, "events[1].text must be a string, not the number 5" },
        { { type = "paste" }, "events[1]: a paste event needs its text, one line of bytes from 32" },
        { { type = "paste", text = true }, "events[1].text must be a string, not true" },
        { { text = "a" }, "events[1] needs its type: one of key, key_up, char, paste, click, mouse_click, drag, mouse_up, scroll, terminate" },
        { { type = "drag", x = 1, y = 1 }, "events[1].button must be 1, 2 or 3" },
        { { type = "drag", button = 1, x = 1, y = H + 1 }, "events[1]: x, y must be a cell of the" },
        { { type = "mouse_click", x = 1, y = 1 }, "events[1].button must be 1, 2 or 3" },
        { { type = "mouse_click", button = 1, x = 0, y = 1 }, "events[1]: x, y must be a cell of the" },
        { { type = "mouse_up", button = 4, x = 1, y = 1 }, "events[1].button must be 1, 2 or 3" },
        { { type = "mouse_up", button = 1, x = W + 1, y = 1 }, "events[1]: x, y must be a cell of the" },
        { { type = 3 }, "events[1].type must be a string, not the number 3: one of key" },
        { { type = "click", x = 1, y = 1 }, "events[1].button must be 1, 2 or 3" },
        { { type = "click", button = 1 }, "events[1]: x, y must be a cell of the" },
        { { type = "scroll", x = 1, y = 1 }, "events[1].direction must be -1 (up) or 1 (down)" },
        { { type = "scroll", direction = 1, x = 1 }, "events[1]: x, y must be a cell of the" },
        { { type = "char", text = "a\tb" }, "control byte 9" },
        { { type = "paste", text = "two\nlines" }, "one line" },
        { { type = "paste", text = string.rep("x", lib.MAX_PASTE + 1) }, "512 bytes at most" },
        { { type = "click", button = 4, x = 1, y = 1 }, "button must be 1, 2 or 3" },
        { { type = "click", button = 1, x = W + 1, y = 1 }, "must be a cell" },
        { { type = "scroll", direction = 2, x = 1, y = 1 }, "direction must be -1" },
        { { type = "char", text = string.rep("x", lib.MAX_INPUT_EVENTS + 1) }, "128 events at most" },
        { "key", "not an object" },
      };
      for _, case in ipairs(cases) do
        local fake, ok, _, err = input({ { type = "char", text = "ok" }, case[1] });
        expect(ok):eq(false);
        expect(err.code):eq("bad_payload");
        expect(err.message):str_match(case[2]:gsub("[%-%.%+%[%]%(%)%$%^%%%?%*]", "%%%0"));
        -- the second event, counted from 0 as the gateway names payload.events[0]
        if not case[2]:find("events at most", 1, true) then
          expect(err.message:sub(1, 9)):eq("events[1]");
        end
        expect(#fake.queued):eq(0);
      end
      local _, ok, _, err = input(nil);
      expect(ok):eq(false);
      expect(err.code):eq("bad_payload");
    end);

    it("refuses a char text past the limit at the limit, not after building its events", function()
      -- A frame holds a text of 128 KiB: each byte was a table in a list built whole before
      -- the limit refused it. The control byte at its end is never reached now.
      local _, ok, _, err = input({ { type = "char", text = string.rep("x", 120 * 1024) .. "\t" } });
      expect(ok):eq(false);
      expect(err.code):eq("bad_payload");
      expect(err.message):str_match("128 events at most");
    end);
  end);

  describe("screen.watch", function()
    -- A watched screen over ref with a fake os; returns the screen, the os and the watchId.
    local function watched(ref, allowed)
      local fake = newFakeOs();
      local screen = newScreen(ref, fake, allowed);
      screen.start();
      local ok, payload = screen.handlers["screen.watch"]({});
      expect(ok):eq(true);
      return screen, fake, payload.watchId;
    end

    local function fire(screen, fake)
      screen.onEvent("timer", fake.timers);
    end

    local function sends(fake)
      return queuedOf(fake, events.EVENT_SEND);
    end

    it("sends a whole frame first, then changed rows, one update in flight", function()
      local ref = newReference();
      local screen, fake, watchId = watched(ref);
      fire(screen, fake);
      local first = sends(fake)[1];
      expect(first[3]):eq("screen.update");
      local frame = first[4];
      expect(frame.watchId):eq(watchId);
      expect(frame.seq):eq(1);
      expect(frame.width):eq(W);
      expect(#frame.palette):eq(16);
      local n = 0;
      for _ in pairs(frame.rows) do n = n + 1; end
      expect(n):eq(H);

      -- drawing while the first update is in flight sends nothing more
      ref.setCursorPos(1, 3);
      ref.write("row three");
      fire(screen, fake);
      ref.setCursorPos(1, 5);
      ref.write("row five");
      fire(screen, fake);
      expect(#sends(fake)):eq(1);

      -- the answer lets the next update go, with what changed meanwhile, merged
      screen.onEvent(events.EVENT_REPLY, first[2], true, {});
      fire(screen, fake);
      expect(#sends(fake)):eq(2);
      local second = sends(fake)[2][4];
      expect(second.seq):eq(2);
      expect(second.palette):eq(nil);
      local keysSent = {};
      for y in pairs(second.rows) do keysSent[#keysSent + 1] = y; end
      table.sort(keysSent);
      expect(keysSent):same({ "3", "5" });
      expect(second.rows["5"].text:sub(1, 8)):eq("row five");
      expect(second.cursor):same({ x = 9, y = 5, blink = false });
      screen.stop();
    end);

    it("carries the colours the next write uses: in the whole frame, then when they change", function()
      local ref = newReference();
      ref.setTextColour(colours.white);
      ref.setBackgroundColour(colours.black);
      local screen, fake = watched(ref);
      fire(screen, fake);
      local first = sends(fake)[1];
      expect({ first[4].fg, first[4].bg }):same({ colours.white, colours.black });

      -- a colour change alone is an update: the host's frame shows it as screen.read does
      screen.onEvent(events.EVENT_REPLY, first[2], true, {});
      ref.setTextColour(colours.yellow);
      ref.setBackgroundColour(colours.blue);
      fire(screen, fake);
      local second = sends(fake)[2];
      expect(second[4].seq):eq(2);
      expect({ second[4].fg, second[4].bg }):same({ colours.yellow, colours.blue });
      expect(next(second[4].rows)):eq(nil);

      -- drawing in the same colours leaves them out
      screen.onEvent(events.EVENT_REPLY, second[2], true, {});
      ref.write("same colours");
      fire(screen, fake);
      local third = sends(fake)[3][4];
      expect({ third.fg, third.bg }):same({});
      expect(third.rows["1"].fg:sub(1, 1)):eq("4");
      screen.stop();
    end);

    it("costs no timer and no send while nobody watches", function()
      local ref = newReference();
      local fake = newFakeOs();
      local screen = newScreen(ref, fake);
      screen.start();
      for i = 1, 50 do ref.write("x" .. i); end
      expect(fake.timers):eq(0);
      expect(#fake.queued):eq(0);
      screen.stop();
    end);

    it("keeps at most MAX_WATCHES watches, a new one ending the oldest", function()
      local ref = newReference();
      local screen, fake, firstId = watched(ref);
      local max = 8; -- MAX_WATCHES
      local ids = { firstId };
      for i = 2, max + 5 do
        local ok, payload = screen.handlers["screen.watch"]({});
        expect(ok):eq(true);
        ids[i] = payload.watchId;
      end
      fire(screen, fake);
      local sent = {};
      for _, args in ipairs(sends(fake)) do
        sent[#sent + 1] = args[4].watchId;
      end
      local newest = { table.unpack(ids, #ids - max + 1) };
      table.sort(sent);
      table.sort(newest);
      expect(sent):same(newest);
      expect(lib.MAX_WATCHES):eq(max);
      screen.stop();
    end);

    it("keeps a watch the new session started before its EVENT_CONNECTED came", function()
      -- The gateway's screen.watch came right behind the hello's answer, in CC's queue ahead
      -- of the EVENT_CONNECTED that answer queued: the watch is the new session's, and its
      -- first update goes (the gateway's viewer got no screen, and showed the last session's).
      local ref = newReference();
      local screen, fake, watchId = watched(ref);
      screen.onEvent(events.EVENT_CONNECTED, "7:spec");
      fire(screen, fake);
      expect(#sends(fake)):eq(1);
      expect(sends(fake)[1][4].watchId):eq(watchId);
      expect(sends(fake)[1][4].seq):eq(1);
      screen.stop();
    end);

    it("ends with its socket a watch that sent no update yet", function()
      -- Started just before the socket closed, its first update waited for the flush timer:
      -- kept across the new session, it pushed updates to a gateway that never started it.
      local ref = newReference();
      local screen, fake = watched(ref);
      screen.socketClosed();
      screen.onEvent(events.EVENT_CONNECTED, "7:spec");
      fire(screen, fake);
      expect(#sends(fake)):eq(0);
      expect(screen.watching()):eq(false);
      screen.stop();
    end);

    it("stops on unknown_watch, on unwatch, when the socket closes and when the owner withdraws view", function()
      local ref = newReference();
      local screen, fake = watched(ref);
      fire(screen, fake);
      screen.onEvent(events.EVENT_REPLY, sends(fake)[1][2], false, nil, { code = "unknown_watch", message = "gone" });
      ref.write("more");
      fire(screen, fake);
      expect(#sends(fake)):eq(1);

      local watchId;
      screen, fake, watchId = watched(ref);
      expect(select(1, screen.handlers["screen.unwatch"]({ watchId = watchId }))):eq(true);
      fire(screen, fake);
      expect(#sends(fake)):eq(0);
      expect(select(1, screen.handlers["screen.unwatch"]({}))):eq(false);

      screen, fake = watched(ref);
      fire(screen, fake);
      screen.onEvent(events.EVENT_REPLY, sends(fake)[1][2], true, {});
      screen.socketClosed();
      screen.onEvent(events.EVENT_CONNECTED, "7:spec");
      ref.write("after the new session");
      fire(screen, fake);
      expect(#sends(fake)):eq(1);

      local allowed = true;
      screen, fake, watchId = watched(ref, function() return allowed; end);
      fire(screen, fake);
      screen.onEvent(events.EVENT_REPLY, sends(fake)[1][2], true, {});
      allowed = false;
      screen.onEvent("setting_changed", "sandbox.allow_screen", "none", "view"); -- the screen itself stays still
      fire(screen, fake);
      -- A last update says why, with no screen in it; then nothing.
      expect(#sends(fake)):eq(2);
      expect(sends(fake)[2][3]):eq("screen.update");
      expect(sends(fake)[2][4]):same({ watchId = watchId, seq = 2,
        ended = { code = "forbidden", message = "the screen watch ended: the owner withdrew it" } });
      expect(screen.watching()):eq(false);
      ref.write("again");
      fire(screen, fake);
      expect(#sends(fake)):eq(2);
      screen.stop();
    end);
  end);

  -- A pocket computer has nothing beside it but its upgrade (fakecraft's monitor_spec), so
  -- these cases are pending there.
  local itBeside = pocket and pending or it;

  describe("a monitor", function()
    -- Queues a marker and takes every event up to it: the peripheral events of an attach.
    local function drain()
      os.queueEvent("spec_marker");
      repeat
        local event = os.pullEvent();
      until event == "spec_marker";
    end

    -- A screen whose monitors are the global peripheral API's (a wrap's methods look
    -- peripheral.call up there), started after attach(): fn(screen), then the screen is
    -- stopped and detach() takes off what attach put on, whatever fn did.
    local function withPeripherals(attach, detach, fn)
      attach();
      drain();
      local fake = newFakeOs();
      local screen = lib.newScreen({
        term = newReference(), os = fake, keys = keys, peripheral = peripheral,
        withdrawn = function() return nil; end,
      });
      local bare = peripheral.call;
      screen.start();
      local ok, err = pcall(fn, screen, fake);
      screen.stop();
      detach();
      drain();
      expect(peripheral.call):eq(bare);
      if not ok then
        error(err, 0);
      end
    end

    -- withPeripherals with a 2x1 advanced monitor on top.
    local function withMonitor(fn)
      withPeripherals(function() periphemu.create("top", "monitor", 2, 1); end,
        function() periphemu.remove("top"); end, fn);
    end

    -- withPeripherals with a wired modem on back whose cable has a 2x1 advanced monitor,
    -- monitor_0 (fakecraft's periphemu.createRemote: CC's modem on a monitor, switched on).
    local CABLE = "libsandboxscreen_spec";
    local function withCableMonitor(fn)
      withPeripherals(function()
        periphemu.create("back", "wired_modem", CABLE);
        periphemu.createRemote(CABLE, "monitor_0", "monitor", 2, 1);
      end, function()
        periphemu.removeRemote(CABLE, "monitor_0");
        periphemu.removeRemote(CABLE, "monitor_1");
        periphemu.remove("back");
      end, fn);
    end

    -- Expects a monitor's screen.read answer to show exactly what ref holds.
    local function expectShows(answer, ref)
      local w, h = ref.getSize();
      expect({ answer.width, answer.height }):same({ w, h });
      for y = 1, h do
        local t, f, b = ref.getLine(y);
        expect({ y = y, text = answer.rows[y].text, fg = answer.rows[y].fg, bg = answer.rows[y].bg })
          :same({ y = y, text = t, fg = f, bg = b });
      end
      local x, y = ref.getCursorPos();
      expect(answer.cursor):same({ x = x, y = y, blink = ref.getCursorBlink() });
    end

    local function readMonitor(screen, name)
      local ok, answer, err = screen.handlers["screen.read"]({ monitor = name });
      expect({ ok = ok, err = err }):same({ ok = true });
      return answer;
    end

    itBeside("reads what is drawn through a wrap, peripheral.call and a term.redirect to it, at its text scale", function()
      withMonitor(function(screen)
        local monitor = peripheral.wrap("top");
        monitor.setTextScale(0.5);
        local w, h = monitor.getSize();
        local ref = window.create(term.native(), 1, 1, w, h, false);
        -- Drawn on the monitor and on ref alike, through each way a program reaches one.
        local function draw(t, call)
          t.setBackgroundColour(colours.blue);
          t.clear();
          t.setCursorPos(2, 1);
          t.setTextColour(colours.yellow);
          t.write("wrapped");
          call("setCursorPos", 1, 2);
          call("blit", "blit", "0123", "fedc");
          call("setTextColor", colours.red);
          call("setCursorPos", w - 2, 3);
          call("write", "clipped");
          call("setCursorBlink", true);
          drawingOn(t, function()
            term.setCursorPos(1, 4);
            print("printed through a redirect, wrapping");
            term.scroll(1);
          end);
        end
        draw(monitor, function(method, ...) return peripheral.call("top", method, ...); end);
        draw(ref, function(method, ...) return ref[method](...); end);
        local answer = readMonitor(screen, "top");
        expectShows(answer, ref);
        expect({ answer.monitor, answer.textScale, answer.colour }):same({ "top", 0.5, true });
        expect(answer.unknownRows):eq(nil);
        expect(answer.fg):eq(colours.red);
        expect(answer.bg):eq(colours.blue);

        -- A text scale that makes the monitor smaller keeps the top left, as CC's.
        monitor.setTextScale(1);
        local sw, sh = monitor.getSize();
        local small = readMonitor(screen, "top");
        expect({ small.width, small.height, small.textScale }):same({ sw, sh, 1 });
        expect(sw < w):eq(true);
        for y = 1, sh do
          expect(small.rows[y].text):eq(answer.rows[y].text:sub(1, sw));
        end
        -- The palette.
        monitor.setPaletteColour(colours.white, 0x102030);
        expect(readMonitor(screen, "top").palette[1]):eq("#102030");
        -- The computer's own screen is left as it was.
        local _, own = screen.handlers["screen.read"]({});
        expect(own.rows[1].text):eq(string.rep(" ", W));
      end);
    end);

    itBeside("keeps one mirror of a side's monitor whatever the case of the side's name, as CC reads sides", function()
      -- CC reads a side in any case: a program drawing through peripheral.wrap("Top") drew on
      -- the monitor on top, and a read of "top" answered it blank, all its rows unknown (and
      -- a read of "Top" what "top" drew the same way).
      withMonitor(function(screen)
        peripheral.wrap("Top").clear();
        peripheral.wrap("Top").write("upper");
        peripheral.call("top", "write", " lower");
        for _, name in ipairs({ "top", "Top", "TOP" }) do
          local answer = readMonitor(screen, name);
          expect({ name = name, text = answer.rows[1].text:sub(1, 11), unknownRows = answer.unknownRows })
            :same({ name = name, text = "upper lower" });
        end
      end);
    end);

    itBeside("names the attached monitors in the computer's own screen.read, and refuses a name that is no monitor", function()
      withMonitor(function(screen)
        local _, own = screen.handlers["screen.read"]({});
        expect(own.monitors):same({ "top" });
        expect(own.monitor):eq(nil);
        local ok, _, err = screen.handlers["screen.read"]({ monitor = "left" });
        expect({ ok = ok, err = err }):same({ ok = false, err = {
          code = codec.ERR_BAD_PAYLOAD, message = 'no monitor named "left": this computer\'s monitors are top' } });
        ok, _, err = screen.handlers["screen.read"]({ monitor = 5 });
        expect({ ok = ok, err = err }):same({ ok = false, err = {
          code = codec.ERR_BAD_PAYLOAD,
          message = "monitor must be a string, a monitor's name as peripheral.getNames gives it (top, monitor_0), not the number 5" } });
        ok, _, err = screen.handlers["screen.input"]({ monitor = "top", events = {} });
        expect({ ok = ok, err = err }):same({ ok = false, err = {
          code = codec.ERR_BAD_PAYLOAD,
          message = "screen.input is for the computer's own screen: a monitor takes no keys "
            .. "(read it with screen.read {monitor}, watch it with screen.watch {monitor})" } });
        ok, _, err = screen.handlers["screen.watch"]({ monitor = "left" });
        expect({ ok = ok, err = err }):same({ ok = false, err = {
          code = codec.ERR_BAD_PAYLOAD, message = 'no monitor named "left": this computer\'s monitors are top' } });
        ok, _, err = screen.handlers["screen.watch"]({ monitor = false });
        expect({ ok = ok, err = err }):same({ ok = false, err = {
          code = codec.ERR_BAD_PAYLOAD,
          message = "monitor must be a string, a monitor's name as peripheral.getNames gives it (top, monitor_0), not false" } });
      end);
      periphemu.create("left", "modem");
      local screen = lib.newScreen({
        term = newReference(), os = newFakeOs(), keys = keys, peripheral = peripheral,
        withdrawn = function() return nil; end,
      });
      local _, own = screen.handlers["screen.read"]({});
      local ok, _, err = screen.handlers["screen.read"]({ monitor = "left" });
      periphemu.remove("left");
      expect(own.monitors):eq(textutils.empty_json_array);
      expect({ ok = ok, err = err }):same({ ok = false, err = {
        code = codec.ERR_BAD_PAYLOAD, message = 'no monitor named "left": this computer has no monitor' } });
    end);

    itBeside("names at most MAX_MONITOR_NAMES monitors, none with a name past MAX_MONITOR_NAME, and counts the rest", function()
      -- A computer on a cable with hundreds of monitors, or one named at length, answered its
      -- screen.read with every name, past the frame's 128 KiB.
      withMonitor(function(screen)
        local made = {};
        for i = 1, lib.MAX_MONITOR_NAMES + 6 do
          made[#made + 1] = "monitor_" .. i;
        end
        local long = "monitor_" .. string.rep("x", lib.MAX_MONITOR_NAME - 7);
        made[#made + 1] = long;
        for _, name in ipairs(made) do
          expect(periphemu.create(name, "monitor")):eq(true);
        end
        local ok, pcallErr = pcall(function()
          local _, own = screen.handlers["screen.read"]({});
          expect({ #own.monitors, own.monitorsLeftOut }):same({ lib.MAX_MONITOR_NAMES, 8 });
          for _, name in ipairs(own.monitors) do
            expect(#name <= lib.MAX_MONITOR_NAME and name ~= long):eq(true);
          end
          -- One left out is read by its name all the same.
          peripheral.call(long, "write", "far");
          expect(readMonitor(screen, long).rows[1].text:sub(1, 3)):eq("far");
          local refused, _, err = screen.handlers["screen.read"]({ monitor = "nosuch" });
          expect(refused):eq(false);
          expect(err.message:sub(-27)):eq(" and 8 more, not named here");
          expect(#err.message < 64 * (lib.MAX_MONITOR_NAME + 2) + 100):eq(true);
        end);
        for _, name in ipairs(made) do
          periphemu.remove(name);
        end
        if not ok then
          error(pcallErr, 0);
        end
        -- A computer whose monitors all have long names says how many it has.
        periphemu.remove("top");
        periphemu.create(long, "monitor");
        local _, own = screen.handlers["screen.read"]({});
        local _, _, err = screen.handlers["screen.read"]({ monitor = "nosuch" });
        periphemu.remove(long);
        periphemu.create("top", "monitor", 2, 1);
        expect({ own.monitors, own.monitorsLeftOut }):same({ textutils.empty_json_array, 1 });
        expect(err.message):eq('no monitor named "nosuch": this computer\'s monitors (1) have names longer than '
          .. lib.MAX_MONITOR_NAME .. " bytes, not named here");
      end);
    end);

    itBeside("leaves a program's wrong call to a monitor the error it has without the mirror", function()
      withMonitor(function(screen)
        local wrongCalls = {
          function() peripheral.wrap("top").blit("ab", "0", "ff"); end,
          function() peripheral.call("top", "setCursorPos", "x", 1); end,
          function() peripheral.wrap("top").setTextScale(6); end,
          function() drawingOn(peripheral.wrap("top"), function() term.setTextColour(0); end); end,
        };
        local function errors()
          local errs = {};
          for i, wrongCall in ipairs(wrongCalls) do
            local ok, err = pcall(wrongCall);
            errs[i] = { ok = ok, err = err };
          end
          return errs;
        end
        local mirrored = errors();
        screen.stop();
        local bare = errors();
        screen.start();
        expect(mirrored):same(bare);
        local library = debug.getinfo(lib.newMirror, "S").short_src;
        for i = 1, #wrongCalls do
          expect({ i = i, ok = bare[i].ok }):same({ i = i, ok = false });
          expect({ i = i, at = bare[i].err:find(library, 1, true) }):same({ i = i });
        end
      end);
    end);

    itBeside("leaves the peripheral.call a program kept or wrapped while mirrored working after sandbox stop and a reconnect", function()
      withMonitor(function(screen)
        local kept = peripheral.call; -- a program's local of it, or the function its own wrap calls
        local function programsWrap(...)
          local results = table.pack(kept(...)); -- no tail call: a loop overflows the stack
          return table.unpack(results, 1, results.n);
        end
        screen.stop();
        local bare = peripheral.call;
        local w, h = bare("top", "getSize");
        local afterStop = { { pcall(kept, "back", "getSize") }, { pcall(kept, "top", "getSize") } };
        peripheral.call = programsWrap; -- luacheck: ignore 122 (a program's own wrap of it)
        screen.start();
        local results = { pcall(peripheral.call, "back", "getSize") };
        peripheral.wrap("top").write("ok");
        local answer = readMonitor(screen, "top");
        screen.stop();
        expect(peripheral.call):eq(programsWrap);
        peripheral.call = bare; -- luacheck: ignore 122
        screen.start();
        expect({ afterStop = afterStop, afterReconnect = results, drawn = answer.rows[1].text:sub(1, 2) })
          :same({ afterStop = { { true }, { true, w, h } }, afterReconnect = { true }, drawn = "ok" });
      end);
    end);

    itBeside("leaves a program drawing on a monitor taken off under it what it has without the mirror", function()
      withMonitor(function(screen)
        local monitor = peripheral.wrap("top");
        monitor.write("a");
        -- Broken by a player while the program draws, before either has seen the detach:
        -- CC's peripheral.call answers nothing for a name no longer attached.
        periphemu.remove("top");
        local function draw()
          return { pcall(function()
            monitor.setCursorPos(1, 1);
            monitor.write("x");
            monitor.setTextColour(colours.red);
            monitor.setPaletteColour(colours.white, 0x102030);
            monitor.blit("a", "0", "f");
            monitor.scroll(1);
            return monitor.getCursorPos();
          end) };
        end
        local mirrored = draw();
        screen.stop();
        local bare = draw();
        screen.start();
        periphemu.create("top", "monitor");
        expect(mirrored):same(bare);
      end);
    end);

    itBeside("reads what is drawn on a cable's monitor through the modem's callRemote as through its name, each call once", function()
      -- A program asking the wired modem for its cable's monitor (peripheral.wrap("back")
      -- .callRemote("monitor_0", ...)) drew past the mirror: a read answered stale rows. CC's
      -- own peripheral.call("monitor_0", ...) goes through callRemote too, on the native
      -- table: a mirror that saw both counted each of its calls twice (a write's cursor).
      withCableMonitor(function(screen)
        local modem = peripheral.wrap("back");
        modem.callRemote("monitor_0", "setTextScale", 0.5); -- the first call: the mirror starts here
        local w, h = peripheral.call("monitor_0", "getSize");
        local ref = window.create(term.native(), 1, 1, w, h, false);
        local routes = {
          function(method, ...) return modem.callRemote("monitor_0", method, ...); end,
          function(method, ...) return peripheral.call("back", "callRemote", "monitor_0", method, ...); end,
          function(method, ...) return peripheral.call("monitor_0", method, ...); end,
          function(method, ...) return peripheral.wrap("monitor_0")[method](...); end,
        };
        local calls = {
          { "setBackgroundColour", colours.blue }, { "clear" }, { "setCursorPos", 2, 1 },
          { "setTextColour", colours.yellow }, { "write", "remote" }, { "write", "ly" },
          { "setCursorPos", 1, 2 }, { "blit", "blit", "0123", "fedc" }, { "write", 42 },
          { "setCursorPos", w - 2, 3 }, { "setTextColor", colours.red }, { "write", "clipped" },
          { "clearLine" }, { "setCursorPos", 1, 4 }, { "write", "scrolled" }, { "scroll", 1 },
          { "setCursorBlink", true },
        };
        for i, c in ipairs(calls) do
          routes[i % #routes + 1](table.unpack(c));
          ref[c[1]](table.unpack(c, 2));
        end
        local answer = readMonitor(screen, "monitor_0");
        expectShows(answer, ref);
        expect({ answer.monitor, answer.textScale, answer.unknownRows }):same({ "monitor_0", 0.5 });
        expect(answer.fg):eq(colours.red);

        -- A text scale set through callRemote resizes it, keeping the top left.
        modem.callRemote("monitor_0", "setTextScale", 1);
        local sw, sh = peripheral.call("monitor_0", "getSize");
        local small = readMonitor(screen, "monitor_0");
        expect({ small.width, small.height, small.textScale }):same({ sw, sh, 1 });
        expect(small.rows[1].text):eq(answer.rows[1].text:sub(1, sw));
      end);
    end);

    itBeside("leaves callRemote's other calls what they do without the mirror, and mirrors a monitor joining the cable", function()
      withCableMonitor(function(screen)
        local modem = peripheral.wrap("back");
        local function results()
          local out = {};
          for i, call in ipairs({
            function() return modem.callRemote("monitor_0", "blit", "ab", "0", "ff"); end,
            function() return peripheral.call("back", "callRemote", "monitor_0", "setCursorPos", "x", 1); end,
            function() return modem.callRemote("monitor_0", "setTextScale", 0); end,
            function() return modem.callRemote("monitor_0", "nosuch"); end,
            function() return modem.callRemote("monitor_0"); end,
            function() return modem.callRemote(5, "write", "x"); end,
            function() return modem.callRemote("monitor_1", "write", "x"); end,
            function() return modem.callRemote("monitor_0", "getSize"); end,
            function() return modem.getNamesRemote(); end,
            function() return modem.isOpen(1); end,
          }) do
            out[i] = { i = i, pcall(call) };
          end
          return out;
        end
        local mirrored = results();
        screen.stop();
        local bare = results();
        screen.start();
        expect(mirrored):same(bare);
        local library = debug.getinfo(lib.newMirror, "S").short_src;
        for i = 1, 7 do
          expect({ i = i, ok = bare[i][1], here = bare[i][2]:find(library, 1, true) }):same({ i = i, ok = false });
        end

        -- monitor_1 was no monitor the modem reached when the program first asked for it;
        -- once it is on the cable (its peripheral event), what is drawn through it is read.
        expect(pcall(modem.callRemote, "monitor_1", "write", "x")):eq(false);
        periphemu.createRemote(CABLE, "monitor_1", "monitor");
        screen.onEvent("peripheral", "monitor_1");
        modem.callRemote("monitor_1", "clear");
        modem.callRemote("monitor_1", "write", "joined");
        local answer = readMonitor(screen, "monitor_1");
        expect({ answer.rows[1].text:sub(1, 6), answer.unknownRows }):same({ "joined" });
      end);
    end);

    -- The screen.update requests queued on fake so far, their payloads.
    local function updatesOf(fake)
      local found = {};
      for _, args in ipairs(queuedOf(fake, events.EVENT_SEND)) do
        if args[3] == "screen.update" then
          found[#found + 1] = { messageId = args[2], payload = args[4] };
        end
      end
      return found;
    end

    -- Fires the screen's flush timer (the fake os numbers its timers from 1).
    local function flush(screen, fake)
      screen.onEvent("timer", fake.timers);
    end

    itBeside("watches a monitor: its name in every update, its text scale first and when it changes", function()
      withMonitor(function(screen, fake)
        local monitor = peripheral.wrap("top");
        monitor.setTextScale(1);
        monitor.clear();
        monitor.write("hi");
        local ok, answer = screen.handlers["screen.watch"]({ monitor = "top" });
        expect(ok):eq(true);
        flush(screen, fake);
        local first = updatesOf(fake)[1];
        local w, h = monitor.getSize();
        expect({ first.payload.watchId, first.payload.seq, first.payload.monitor, first.payload.textScale,
          first.payload.width, first.payload.height, first.payload.rows["1"].text:sub(1, 2) })
          :same({ answer.watchId, 1, "top", 1, w, h, "hi" });
        expect(#first.payload.palette):eq(16);

        -- Drawn on the monitor: only the row that changed, the scale left out.
        screen.onEvent(events.EVENT_REPLY, first.messageId, true, {});
        monitor.setCursorPos(1, 2);
        monitor.write("yo");
        flush(screen, fake);
        local second = updatesOf(fake)[2].payload;
        expect({ second.seq, second.monitor, second.textScale, second.rows["2"].text:sub(1, 2), second.rows["1"] })
          :same({ 2, "top", nil, "yo", nil });

        -- A new scale is an update of the monitor's new size, with the scale.
        screen.onEvent(events.EVENT_REPLY, updatesOf(fake)[2].messageId, true, {});
        monitor.setTextScale(0.5);
        flush(screen, fake);
        local third = updatesOf(fake)[3].payload;
        local w2, h2 = monitor.getSize();
        expect({ third.seq, third.textScale, third.width, third.height }):same({ 3, 0.5, w2, h2 });

        -- The computer's own screen is watched apart: its updates name no monitor.
        local _, own = screen.handlers["screen.watch"]({});
        flush(screen, fake);
        for _, update in ipairs(updatesOf(fake)) do
          if update.payload.watchId == own.watchId then
            expect(update.payload.monitor):eq(nil);
            expect(update.payload.textScale):eq(nil);
          end
        end
      end);
    end);

    itBeside("ends a monitor's watch with a last update when the monitor is taken off", function()
      withMonitor(function(screen, fake)
        local _, answer = screen.handlers["screen.watch"]({ monitor = "top" });
        local _, own = screen.handlers["screen.watch"]({});
        flush(screen, fake);
        expect(#updatesOf(fake)):eq(2);
        periphemu.remove("top");
        screen.onEvent("peripheral_detach", "top");
        flush(screen, fake);
        local updates = updatesOf(fake);
        expect(#updates):eq(3);
        expect(updates[3].payload):same({ watchId = answer.watchId, seq = 2, monitor = "top", ended = {
          code = "not_found",
          message = "the screen watch ended: monitor top was taken off the computer (broken, or its modem "
            .. "switched off); watch it again once it is back" } });
        -- The computer's own screen's watch goes on; a monitor attached again is not the one watched.
        periphemu.create("top", "monitor");
        screen.onEvent("peripheral", "top");
        peripheral.call("top", "write", "new");
        flush(screen, fake);
        expect(#updatesOf(fake)):eq(3);
        expect(screen.watching()):eq(true);
        expect(select(1, screen.handlers["screen.unwatch"]({ watchId = own.watchId }))):eq(true);
        expect(screen.watching()):eq(false);
      end);
    end);

    itBeside("mirrors a monitor attached and drawn on before the daemon gets its attach event", function()
      -- A lua.exec job that attached a monitor and drew on it without yielding: the daemon got
      -- the attach's peripheral event after the drawing, and it dropped the mirror the first
      -- call had started, so a read answered the monitor blank, every row unknown.
      withMonitor(function(screen)
        -- A call to left before anything is there, which CC answers with nothing.
        expect(peripheral.call("left", "getSize")):eq(nil);
        periphemu.create("left", "monitor", 2, 1);
        periphemu.create("right", "monitor", 2, 1);
        for _, side in ipairs({ "left", "right" }) do
          local monitor = peripheral.wrap(side);
          monitor.clear();
          monitor.write("drawn on " .. side);
        end
        -- Read before the events (a watch's flush may come first) and after them alike.
        expect(readMonitor(screen, "left").rows[1].text:sub(1, 13)):eq("drawn on left");
        screen.onEvent("peripheral", "left");
        screen.onEvent("peripheral", "right");
        for _, side in ipairs({ "left", "right" }) do
          local answer = readMonitor(screen, side);
          expect({ side, answer.rows[1].text:sub(1, 9 + #side), answer.unknownRows })
            :same({ side, "drawn on " .. side });
        end
        -- Its next attach is another monitor's, drawn on before or not.
        periphemu.remove("right");
        periphemu.create("right", "monitor", 2, 1);
        screen.onEvent("peripheral_detach", "right");
        screen.onEvent("peripheral", "right");
        local answer = readMonitor(screen, "right");
        expect({ answer.rows[1].text, #answer.unknownRows }):same({ string.rep(" ", answer.width), answer.height });
        periphemu.remove("left");
        periphemu.remove("right");
      end);
    end);

    itBeside("starts afresh when another monitor is attached under its name", function()
      withMonitor(function(screen)
        local monitor = peripheral.wrap("top");
        monitor.clear();
        monitor.write("old");
        expect(readMonitor(screen, "top").rows[1].text:sub(1, 3)):eq("old");
        periphemu.remove("top");
        periphemu.create("top", "monitor");
        screen.onEvent("peripheral", "top");
        local answer = readMonitor(screen, "top");
        expect(answer.rows[1].text):eq(string.rep(" ", answer.width));
        expect(#answer.unknownRows):eq(answer.height);
      end);
    end);
  end);
end);
