-- libsandboxscreen: the computer's screen for the host (docs/screen.md). CC has no read-back
-- of its terminal, so the daemon keeps its own copy: it wraps the methods of the one native
-- terminal table (term.native() is the same table for everyone), which every window and
-- every multishell tab, the tab bar included, draws through at last. The requests
-- screen.read, screen.input, screen.watch and screen.unwatch are answered from it; a watch
-- pushes screen.update to the gateway, at most one per tick and one in flight.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');
local events = require('/apis/libsandboxevents');

-- Seconds between two updates of one watch at least: one tick, CC's timer resolution.
local UPDATE_INTERVAL = 0.05;
-- The longest paste, in bytes, as CC's own paste event.
local MAX_PASTE = 512;
-- The most os events one screen.input may queue: half of CC's queue of 256, so a request
-- cannot push the computer's own events (a sleeping program's timer) out of it.
local MAX_INPUT_EVENTS = 128;
-- The most watches kept at once, of the computer's own screen and its monitors together; a new
-- one past it ends the oldest. The gateway keeps one per screen (the computer's, each monitor's),
-- but each watch costs an event and a frame on every change of its screen, so a gateway that
-- opened watch after watch would flood CC's event queue (256) and the socket.
local MAX_WATCHES = 8;
-- The most monitors the computer's own screen.read names (monitors), and the longest name it
-- names, in bytes: the rest are counted (monitorsLeftOut), so that a computer on a cable with
-- hundreds of monitors, or one named at length, still answers within a frame (128 KiB). CC
-- names a monitor by its side (6 bytes at most) or, on a cable, monitor_<n> (18 at most); 64
-- leaves room for a mod's peripheral that is a monitor named by its own type (type_<n>). A
-- monitor left out is read and watched by its name all the same.
local MAX_MONITOR_NAMES = 64;
local MAX_MONITOR_NAME = 64;
-- How many terminal calls after the computer last yielded (the daemon saw an event) go
-- through the mirror unguarded. Past them a program is drawing without yielding, which CC
-- ends with "Too long without yielding" 7 s on, raised in whatever Lua code runs then: most
-- likely the mirror's own, so each further call runs under pcall, which raises it again at
-- the program's line (see install). Below them pcall is not paid for: cheap in CC, it costs
-- a coroutine per call in fakecraft, and a screen redrawn cell by cell is some 3000 calls.
local UNGUARDED_CALLS = 10000;

local BLIT = "0123456789abcdef";
local MOUSE_BUTTONS = { [1] = true, [2] = true, [3] = true };
local SCROLL_DIRECTIONS = { [-1] = true, [1] = true };

local ERR_BAD_PAYLOAD, ERR_UNKNOWN_WATCH = codec.ERR_BAD_PAYLOAD, "unknown_watch";
-- A watched monitor's watch ends with it (its last update's ended.code), in the words of
-- MONITOR_GONE, the monitor's name in it.
local ERR_NOT_FOUND = "not_found";
local MONITOR_GONE = "the screen watch ended: monitor %s was taken off the computer (broken, "
  .. "or its modem switched off); watch it again once it is back";
-- A screen.input that comes while the one before it is still in CC's queue (typing).
local ERR_BUSY = codec.ERR_BUSY;
local STILL_TYPING = "the computer is still taking the events of the screen.input before this one; "
  .. "send the next once the last is answered";

-- The blit character of each colour (2^n).
local BLIT_OF = {};
for n = 0, 15 do
  BLIT_OF[2 ^ n] = BLIT:sub(n + 1, n + 1);
end

-- The blit character of a colour, or nil for anything else.
local function blitOf(colour)
  return BLIT_OF[colour];
end

-- #rrggbb of a palette entry given as r, g, b in [0, 1].
local function hexColour(r, g, b)
  local function byte(c)
    return math.floor(math.max(0, math.min(1, c)) * 255 + 0.5);
  end
  return string.format("#%02x%02x%02x", byte(r), byte(g), byte(b));
end

-- This file's short_src, as CC names it in front of an error raised here
-- ("/apis/libsandboxscreen.lua:12: ").
local HERE = debug.getinfo(1, "S").short_src;

-- CC's words when it stops code that ran too long without yielding, after the position of
-- the Lua code it stopped.
local TOO_LONG = "Too long without yielding";

-- Whether err is CC's abort, wherever in the code a wrapper runs (the screen service's too)
-- it was raised.
local function isAbort(err)
  return type(err) == "string" and err:sub(-#TOO_LONG) == TOO_LONG;
end

-- err as the program that called a wrapper reads it, raised again at its line: without this
-- file's position; CC's abort without any position.
local function callersError(err)
  if isAbort(err) then
    return TOO_LONG;
  end
  return codec.withoutPositionIn(err, HERE);
end

-- tostring's words for value with its metatable meta taken off, and meta put back: run
-- under pcall only (coerced).
local function wordsWithout(value, meta)
  debug.setmetatable(value, nil);
  local text = tostring(value);
  debug.setmetatable(value, meta);
  return text;
end

-- value as the terminal's write takes it (CC's getStringCoerced): tostring's words without
-- the value's __tostring, which the terminal never calls. Called by the mirror, a program's
-- __tostring that raised made a write fail that the terminal did, and one that answered put
-- its words in the mirror where the screen shows "table: ...". The metatable is taken off
-- for tostring (debug's, as __metatable may hide it) and put back, both under one pcall:
-- CC's abort may come at any instruction, and one between the two left the value (or, for a
-- number or a function, every value of its type) without its metatable for good. Caught
-- there, it is raised once per resume, so the metatable put back after it cannot be cut short.
local function coerced(value)
  if type(value) == "string" then
    return value;
  end
  local meta = debug.getmetatable(value);
  if meta == nil or rawget(meta, "__tostring") == nil then
    return tostring(value);
  end
  local ok, text = pcall(wordsWithout, value, meta);
  if not ok then
    debug.setmetatable(value, meta);
    error(text, 0);
  end
  return text;
end

-- Whether the arguments of a call are plainly ones the terminal takes, by the rules of CC's
-- TermMethods (an int is a finite number, a colour one from 1 to 0xFFFF, blit's three
-- strings have one length, write and clear take anything): such a call cannot fail. nil
-- for a method whose calls are always checked (setPaletteColour, rarely called).
local function finite(n)
  return type(n) == "number" and n - n == 0; -- nan and the infinities give nan
end
local function anything()
  return true;
end
local function plainColour(colour)
  return type(colour) == "number" and colour >= 1 and colour < 0x10000;
end
local plain = {
  write = anything,
  clear = anything,
  clearLine = anything,
  blit = function(t, f, b)
    return type(t) == "string" and type(f) == "string" and type(b) == "string" and #f == #t and #b == #t;
  end,
  scroll = finite,
  setCursorPos = function(x, y)
    return finite(x) and finite(y);
  end,
  setCursorBlink = function(on)
    return type(on) == "boolean";
  end,
  setTextColour = plainColour,
  setBackgroundColour = plainColour,
};
plain.setTextColor = plain.setTextColour;
plain.setBackgroundColor = plain.setBackgroundColour;

-- A monitor's mirror reads back from a terminal that may answer nothing: CC's
-- peripheral.call answers nil for a monitor taken off (broken, its modem switched off) while
-- a program draws on it, until the detach event reaches the daemon, which drops the mirror.
-- Without an answer the mirror keeps what it had: the program's calls raise nothing, as they
-- raise nothing without the mirror.

-- x and y as the terminal answered them, or as they were when it answered nothing.
local function answeredOr(x, y, answeredX, answeredY)
  if answeredX == nil then
    return x, y;
  end
  return answeredX, answeredY;
end

-- Palette entry i (0-15) of target as #rrggbb, or nil when it answered nothing.
local function paletteHex(target, i)
  local r, g, b = target.getPaletteColour(2 ^ i);
  return r ~= nil and hexColour(r, g, b) or nil;
end

-- The mirror of a terminal table: the same state the terminal keeps, kept in step by
-- wrappers around its methods. install() wraps, uninstall() puts the originals back.
local function newMirror(target)
  expect(1, target, "table");
  local width, height = target.getSize();
  local text, fg, bg = {}, {}, {};
  local cursorX, cursorY = target.getCursorPos();
  local blink = target.getCursorBlink and target.getCursorBlink() or false;
  local textColour = blitOf(target.getTextColour()) or "0";
  local backColour = blitOf(target.getBackgroundColour()) or "f";
  local palette = {};
  -- Versions: every change takes the next number; a row, the palette, the colours and the
  -- size remember the number of their last change (the cursor is in every update), so a
  -- watch sends what is newer than the number it last sent, and nothing is tracked per watch
  -- while the screen is drawn.
  local version = 0;
  local rowVersion = {};
  -- Whether each row is known: drawn whole since the mirror started (cleared, scrolled in,
  -- written across, or every cell of it written, in as many writes as paint's canvas takes).
  -- A row drawn before, or only in part since, may show more on the screen than the mirror
  -- holds: screen.read names such rows (unknownRows), which read as blank. A row with some
  -- of its cells written holds which, a string of "1" (written) and "0" per cell, which a
  -- scroll moves with the row; true once they all are.
  local known = {};
  local paletteVersion, sizeVersion, colourVersion = 0, 0, 0;
  local originals = nil;
  -- Whether the mirror was installed and taken off the terminal since (install: resync).
  local uninstalled = false;
  local onChange = nil;
  -- Wrapped calls since the computer last yielded (yielded() starts it again).
  local callsSinceYield = 0;

  local function changed()
    version = version + 1;
    if onChange ~= nil then
      onChange();
    end
    return version;
  end

  local function blankRow(y)
    text[y] = string.rep(" ", width);
    fg[y] = string.rep(textColour, width);
    bg[y] = string.rep(backColour, width);
    rowVersion[y] = version;
  end

  -- CC cannot tell what was on the screen before the mirror: it starts blank, each row
  -- unknown (the boot's first lines were drawn before the daemon started).
  local function reset()
    for y = 1, height do
      blankRow(y);
      known[y] = false;
    end
    for i = 0, 15 do
      palette[i + 1] = hexColour(target.getPaletteColour(2 ^ i));
    end
  end
  reset();

  -- The mirror as it starts, again, when it is installed after an uninstall (the daemon
  -- stopped by `sandbox stop`, then reconnected): what the terminal tells of itself (its size,
  -- cursor, colours, palette) read anew, and the rows blank, as what was drawn meanwhile is as
  -- unknown as what was drawn before the boot's mirror. Kept as they were, the rows showed the
  -- screen of the stop, frozen, for as long as the computer ran.
  local function resync()
    local v = changed();
    width, height = target.getSize();
    cursorX, cursorY = target.getCursorPos();
    blink = target.getCursorBlink and target.getCursorBlink() or false;
    textColour = blitOf(target.getTextColour()) or "0";
    backColour = blitOf(target.getBackgroundColour()) or "f";
    text, fg, bg, rowVersion, known = {}, {}, {}, {}, {};
    reset();
    paletteVersion, sizeVersion, colourVersion = v, v, v;
  end

  local function resize()
    local w, h = target.getSize();
    if w == nil or (w == width and h == height) then
      return;
    end
    local v = changed();
    for y = 1, h do
      local t, f, b = text[y] or "", fg[y] or "", bg[y] or "";
      if #t < w then
        t = t .. string.rep(" ", w - #t);
        f = f .. string.rep(textColour, w - #f);
        b = b .. string.rep(backColour, w - #b);
      end
      text[y], fg[y], bg[y], rowVersion[y] = t:sub(1, w), f:sub(1, w), b:sub(1, w), v;
      known[y] = known[y] == true and #t >= w;
    end
    for y = h + 1, height do
      text[y], fg[y], bg[y], rowVersion[y], known[y] = nil, nil, nil, nil, nil;
    end
    width, height, sizeVersion = w, h, v;
  end

  -- A run of n cells of blit colour c (n <= width), from a cache: a write costs no string.rep.
  local runs = {};
  local function run(c, n)
    local full = runs[c];
    if full == nil or #full ~= width then
      full = string.rep(c, width);
      runs[c] = full;
    end
    return n == width and full or full:sub(1, n);
  end

  -- Puts t at the cursor, with the blit strings f and b (nil: the current colours), clipped
  -- to the screen as the terminal does, and moves the cursor past it.
  local function put(t, f, b)
    local x, y, len, v = cursorX, cursorY, #t, changed();
    cursorX = x + len;
    if y < 1 or y > height or x > width or x + len <= 1 or len == 0 then
      return;
    end
    local from, to = 1, len; -- the part of t on the screen
    if x < 1 then
      from = 2 - x;
    end
    if x + len - 1 > width then
      to = width - x + 1;
    end
    local n = to - from + 1;
    local whole = from == 1 and to == len;
    local part = whole and t or t:sub(from, to);
    local fp = f == nil and run(textColour, n) or (whole and f or f:sub(from, to));
    local bp = b == nil and run(backColour, n) or (whole and b or b:sub(from, to));
    if n == width then
      text[y], fg[y], bg[y], known[y] = part, fp, bp, true;
    else
      local before, after = x + from - 2, x + to;
      text[y] = text[y]:sub(1, before) .. part .. text[y]:sub(after);
      fg[y] = fg[y]:sub(1, before) .. fp .. fg[y]:sub(after);
      bg[y] = bg[y]:sub(1, before) .. bp .. bg[y]:sub(after);
      if known[y] ~= true then
        local cells = known[y] or run("0", width);
        cells = cells:sub(1, before) .. run("1", n) .. cells:sub(after);
        known[y] = cells:find("0", 1, true) == nil or cells;
      end
    end
    rowVersion[y] = v;
  end

  -- What each wrapped method does to the mirror, after the original did it to the screen
  -- (and so checked its arguments). What the terminal made of a position or a colour (its
  -- whole part; the highest flag of colours.red + colours.blue, as CC takes it) is read
  -- back from it, not worked out again here. The native table holds each method under both
  -- spellings, and callers use either.
  local effects = {
    write = function(value)
      put(coerced(value));
    end,
    blit = function(t, f, b)
      put(t, f:lower(), b:lower());
    end,
    clear = function()
      changed();
      for y = 1, height do
        blankRow(y);
        known[y] = true;
      end
    end,
    clearLine = function()
      if cursorY >= 1 and cursorY <= height then
        changed();
        blankRow(cursorY);
        known[cursorY] = true;
      end
    end,
    scroll = function(n)
      n = math.floor(n);
      if n == 0 then
        return;
      end
      local v = changed();
      local oldText, oldFg, oldBg, oldKnown = text, fg, bg, known;
      text, fg, bg, known = {}, {}, {}, {};
      for y = 1, height do
        local from = y + n;
        if from >= 1 and from <= height then
          text[y], fg[y], bg[y], rowVersion[y], known[y] = oldText[from], oldFg[from], oldBg[from], v, oldKnown[from];
        else
          blankRow(y);
          known[y] = true;
        end
      end
    end,
    setCursorPos = function()
      cursorX, cursorY = answeredOr(cursorX, cursorY, target.getCursorPos());
      changed();
    end,
    setCursorBlink = function(on)
      blink = on == true;
      changed();
    end,
    setTextColour = function()
      local c = blitOf(target.getTextColour()) or textColour;
      if c ~= textColour then
        textColour = c;
        colourVersion = changed();
      end
    end,
    setBackgroundColour = function()
      local c = blitOf(target.getBackgroundColour()) or backColour;
      if c ~= backColour then
        backColour = c;
        colourVersion = changed();
      end
    end,
    setPaletteColour = function()
      local any = false;
      for i = 0, 15 do
        local hex = paletteHex(target, i) or palette[i + 1];
        if palette[i + 1] ~= hex then
          palette[i + 1], any = hex, true;
        end
      end
      if any then
        paletteVersion = changed();
      end
    end,
  };
  effects.setTextColor = effects.setTextColour;
  effects.setBackgroundColor = effects.setBackgroundColour;
  effects.setPaletteColor = effects.setPaletteColour;

  -- The mirror made whole again after CC's abort was raised in a guarded call, which may
  -- have cut its effect short, or kept it from starting after the terminal had done the
  -- call: a row still left half made once the effect was done again (install) is blanked,
  -- the cursor, blink, colours and palette are read back from the terminal, and every row
  -- counts as changed, so a watch sends the screen whole.
  local function repair()
    local v = changed();
    cursorX, cursorY = answeredOr(cursorX, cursorY, target.getCursorPos());
    blink = target.getCursorBlink and target.getCursorBlink() or false;
    textColour = blitOf(target.getTextColour()) or textColour;
    backColour = blitOf(target.getBackgroundColour()) or backColour;
    for i = 0, 15 do
      palette[i + 1] = paletteHex(target, i) or palette[i + 1];
    end
    paletteVersion = v;
    for y = 1, height do
      local t, f, b = text[y], fg[y], bg[y];
      if type(t) ~= "string" or type(f) ~= "string" or type(b) ~= "string"
          or #t ~= width or #f ~= width or #b ~= width then
        blankRow(y);
        known[y] = false;
      end
      rowVersion[y] = v;
    end
    colourVersion = v;
  end

  -- Whether the terminal has done the guarded call under way, set between the two: CC's
  -- abort may come before the terminal's call (nothing to do again: the screen did not
  -- change either) or after it, in the effect (repair does it again).
  local terminalDid = false;
  local function originalThenEffect(original, effect, ...)
    original(...);
    terminalDid = true;
    effect(...);
  end

  -- A wrapper must not be where a program's mistake is reported (term.blit with strings of
  -- different lengths): CC places a Java function's error at the nearest Lua code, which
  -- would be the wrapper, naming a file the program never called. So a call whose
  -- arguments are not plainly good (plain, above) goes through pcall, and its error is
  -- raised again at the wrapper's caller with the terminal's own message: the program's
  -- line, also through the term API, whose forwarding tail call left no frame of its own.
  -- A call that failed changed nothing, so it has no effect on the mirror either. So does
  -- every call past UNGUARDED_CALLS since the computer last yielded: CC's "Too long without
  -- yielding" raised in the mirror's code is the program's, raised again at its line, and
  -- the effect it cut short is done again, from the rows and the cursor as the call found
  -- them (write, blit, clear and clearLine put the same strings in the same rows again;
  -- scroll makes new tables of rows from those it found), then repaired. Plainly good calls
  -- before them, nearly all, skip pcall.
  local function install()
    if originals ~= nil then
      return;
    end
    if uninstalled then
      resync();
    end
    originals, callsSinceYield = {}, 0;
    for name, effect in pairs(effects) do
      local original, isPlain = target[name], plain[name];
      if type(original) == "function" then
        originals[name] = original;
        target[name] = function(...)
          callsSinceYield = callsSinceYield + 1;
          if callsSinceYield <= UNGUARDED_CALLS and isPlain ~= nil and isPlain(...) then
            original(...);
            effect(...);
            return;
          end
          local rows, rowsFg, rowsBg, rowsKnown, x, y = text, fg, bg, known, cursorX, cursorY;
          terminalDid = false;
          local ok, err = pcall(originalThenEffect, original, effect, ...);
          if not ok then
            if isAbort(err) then
              if terminalDid then
                text, fg, bg, known, cursorX, cursorY = rows, rowsFg, rowsBg, rowsKnown, x, y;
                pcall(effect, ...);
              end
              repair();
            end
            error(callersError(err), 2);
          end
        end;
      end
    end
  end

  local function uninstall()
    if originals == nil then
      return;
    end
    for name, original in pairs(originals) do
      target[name] = original;
    end
    originals = nil;
    uninstalled = true;
  end

  local function rowOf(y)
    return { text = text[y], fg = fg[y], bg = bg[y] };
  end

  -- The whole screen (screen.read's answer).
  -- The rows not known (drawn whole since the mirror started), as screen.read and every
  -- screen.update name them; nil when every row is known: an empty table is no JSON array.
  local function unknownRows()
    local unknown = {};
    for y = 1, height do
      if known[y] ~= true then
        unknown[#unknown + 1] = y;
      end
    end
    return #unknown > 0 and unknown or nil;
  end

  local function read()
    resize();
    local rows = {};
    for y = 1, height do
      rows[y] = rowOf(y);
    end
    return {
      width = width,
      height = height,
      colour = target.isColour(),
      cursor = { x = cursorX, y = cursorY, blink = blink },
      fg = 2 ^ tonumber(textColour, 16),
      bg = 2 ^ tonumber(backColour, 16),
      rows = rows,
      palette = { table.unpack(palette) },
      unknownRows = unknownRows(),
    };
  end

  -- What changed since version since (nil: everything), as screen.update's fields, or nil
  -- when nothing did. Returns it with the version it is current to.
  local function changesSince(since)
    resize();
    if since ~= nil and since >= version then
      return nil, version;
    end
    local whole = since == nil or sizeVersion > since;
    local rows = {};
    for y = 1, height do
      if whole or rowVersion[y] > since then
        rows[tostring(y)] = rowOf(y);
      end
    end
    local frame = {
      width = width,
      height = height,
      colour = target.isColour(),
      cursor = { x = cursorX, y = cursorY, blink = blink },
      rows = rows,
      -- In every update, as the cursor: a row turns known (or unknown) only as the screen
      -- changes, and left out it says none are (an older client's updates name none).
      unknownRows = unknownRows(),
    };
    if whole or paletteVersion > since then
      frame.palette = { table.unpack(palette) };
    end
    -- The colours the next write uses, as screen.read's fg and bg: in the whole frame, then
    -- when they changed (the gateway keeps the last ones it got).
    if whole or colourVersion > since then
      frame.fg, frame.bg = 2 ^ tonumber(textColour, 16), 2 ^ tonumber(backColour, 16);
    end
    return frame, version;
  end

  return {
    install = install,
    uninstall = uninstall,
    read = read,
    changesSince = changesSince,
    size = function() resize(); return width, height; end,
    -- Counts as a change with no cell changed (a monitor's text scale set to what keeps its
    -- size): a watch sends an update, which carries the new scale.
    touch = function() changed(); end,
    setOnChange = function(fn) onChange = fn; end,
    -- The computer yielded (the daemon got an event): its next calls go unguarded again.
    yielded = function() callsSinceYield = 0; end,
  };
end

-- The term methods a monitor answers that the mirror reads or wraps (CC's TermMethods, which
-- a monitor shares with the terminal, under both spellings): a monitor's stand-in terminal
-- (newMonitors) has each, calling the monitor.
local MONITOR_TERM_METHODS = {
  "write", "blit", "clear", "clearLine", "scroll", "setCursorPos", "setCursorBlink",
  "setTextColour", "setTextColor", "setBackgroundColour", "setBackgroundColor",
  "setPaletteColour", "setPaletteColor", "getSize", "getCursorPos", "getCursorBlink",
  "getTextColour", "getTextColor", "getBackgroundColour", "getBackgroundColor",
  "getPaletteColour", "getPaletteColor", "isColour", "isColor",
};

-- The monitors' mirrors. CC has no read-back of a monitor either, and every way a program
-- draws on one (peripheral.call, a peripheral.wrap table, `monitor top edit`'s term.redirect
-- to a wrap, a wired modem's remote monitor by its name, monitor_0, or through the modem's
-- own callRemote) reaches it through the peripheral API's call: a wrap's methods look
-- peripheral.call up at each call. So install() wraps that one function, and a monitor's
-- mirror is a newMirror of a stand-in terminal whose methods call the monitor, installed at
-- the first call to that monitor since the daemon started (or since it was attached): what is
-- drawn from then on is kept. The cost for a peripheral nobody mirrors is a table look-up per
-- call, two for a wired modem's callRemote (and, once per attach, whether it is a monitor, a
-- wired modem, or a monitor that modem reaches); a monitor's drawing costs what the
-- terminal's does. peripheralApi is the global peripheral API table (nil: no monitors).
--
-- A monitor attached and drawn on by code that does not yield meanwhile (a lua.exec job that
-- makes one and draws on it) is mirrored from its first call too, though the daemon gets the
-- attach's peripheral event only after that code yields: a mirror started for a name the
-- daemon had not seen attached is the new monitor's, and its attach event keeps it (where
-- another attach event drops what was mirrored under the name: another monitor's). Nothing
-- is kept of a name with nothing attached, so a monitor attached there is one from its first
-- call.
--
-- CC's own peripheral.call reaches a remote monitor_0 through the modem's callRemote too,
-- but on the native peripheral table the ROM's API keeps, not through the global function
-- wrapped here: each drawing call passes the wrap once, whichever way the program made it.
-- The six sides, the names CC reads in any case.
local SIDE_NAMES = { top = true, bottom = true, left = true, right = true, front = true, back = true };

local function newMonitors(peripheralApi)
  local mirrors = {};      -- name -> {mirror, term} of a monitor drawn on since it was attached
  -- name -> a peripheral seen that is no monitor (until a peripheral event for it): true, or
  -- for a wired modem (CC's peripheral_hub), whose callRemote reaches the cable's peripherals
  -- by their names, a table: remote name -> whether it is a monitor that modem reaches.
  local notMonitor = {};
  local originalCall = nil; -- peripheral.call as it was before install, while installed
  local onChange = nil;
  -- The names the daemon knows attached (each a key): peripheral.getNames's at install, then
  -- those of the peripheral events it got. A mirror started under a name not in it was
  -- started ahead of the attach event the daemon has yet to get (aheadOfAttach).
  local attached = {};

  local function call(name, method, ...)
    return (originalCall or peripheralApi.call)(name, method, ...);
  end

  -- true for a monitor attached under name, false for another peripheral, nil for nothing
  -- attached (both CC's hasType and getType answer nothing then).
  local function monitorThere(name)
    if peripheralApi == nil or type(name) ~= "string" then
      return nil;
    end
    local answer;
    if peripheralApi.hasType ~= nil then
      answer = peripheralApi.hasType(name, "monitor");
    else
      answer = peripheralApi.getType(name);
      answer = answer ~= nil and answer == "monitor" or nil;
    end
    if answer == nil then
      return nil;
    end
    return answer == true;
  end

  local function isMonitor(name)
    return monitorThere(name) == true;
  end

  -- Whether name is a wired modem, whose callRemote may draw on a monitor on its cable. CC
  -- before hasType (1.99) had no hasTypeRemote either: none is taken for one there.
  local function isHub(name)
    return peripheralApi.hasType ~= nil and peripheralApi.hasType(name, "peripheral_hub") == true;
  end

  -- The name a monitor's mirror is kept under: a side's in lower case, as CC reads a side
  -- in any case (peripheral.wrap("Top") is the monitor on top), so that what a program drew
  -- through "Top" is read by "top"; any other name as it is. A name that is no string stays.
  local function key(name)
    if type(name) == "string" and SIDE_NAMES[string.lower(name)] then
      return string.lower(name);
    end
    return name;
  end

  -- The mirror of monitor name, started now if it has none.
  local function mirrorOf(name)
    local kept = mirrors[name];
    if kept == nil then
      local stand = {};
      for _, method in ipairs(MONITOR_TERM_METHODS) do
        stand[method] = function(...) return call(name, method, ...); end;
      end
      kept = { mirror = newMirror(stand), term = stand, aheadOfAttach = not attached[name] };
      kept.mirror.setOnChange(function()
        if onChange ~= nil then
          onChange();
        end
      end);
      kept.mirror.install();
      mirrors[name] = kept;
    end
    return kept;
  end

  -- The program's call original(...), of method on the monitor whose mirror is kept, with
  -- method's arguments from the call's at-th on: a drawing method goes through the mirror's
  -- wrapper, as a tail call, so a program's mistake (blit's strings of different lengths) is
  -- still raised at the program's line.
  local function mirroredOn(kept, method, at, original, ...)
    local drawn = kept.term[method];
    if drawn ~= nil then
      return drawn(select(at, ...));
    elseif method == "setTextScale" then
      -- The monitor is another size at once, and what the program draws next is drawn at
      -- it: the mirror resizes now, as the monitor did (keeping the top left), and its
      -- next effects work on the new rows. A wrong scale raises what it raises unwrapped, at
      -- the program's line, as the mirror's wrapper raises a wrong drawing call's.
      local ok, err = pcall(original, ...);
      if not ok then
        error(callersError(err), 2);
      end
      kept.mirror.size();
      kept.mirror.touch(); -- a watch's next update carries the scale, even at the same size
      return;
    end
    return original(...);
  end

  -- peripheral.call while installed: a monitor's drawing goes through its mirror, and so does
  -- a wired modem's callRemote aimed at a monitor that modem reaches: the monitor's one
  -- mirror, whether the program names it (monitor_0) or asks the modem for it. original is
  -- the function the install found there.
  local function mirroredCall(original, name, method, ...)
    if type(name) ~= "string" then
      return original(name, method, ...);
    end
    local as = key(name);
    local other = notMonitor[as];
    if other == true then
      return original(name, method, ...);
    elseif other ~= nil then
      if method ~= "callRemote" then
        return original(name, method, ...);
      end
      local remote, remoteMethod = ...;
      local reached = other[remote];
      if reached == nil and type(remote) == "string" then
        -- CC's modem answers nothing for a name not on its cable: false, kept only for a
        -- peripheral the modem reaches, as a monitor's true is, until a peripheral event for
        -- the name; a monitor put on the cable under a name that had nothing is mirrored from
        -- its first call, before the daemon gets its event.
        local answer = original(name, "hasTypeRemote", remote, "monitor");
        reached = answer == true;
        if answer ~= nil then
          other[remote] = reached;
        end
      end
      if not reached then
        return original(name, method, ...);
      end
      return mirroredOn(mirrorOf(remote), remoteMethod, 5, original, name, method, ...);
    end
    local kept = mirrors[as];
    if kept == nil then
      local monitor = monitorThere(as);
      if monitor == nil then
        return original(name, method, ...); -- nothing there: CC's error, and nothing kept
      elseif not monitor then
        notMonitor[as] = isHub(as) and {} or true;
        return mirroredCall(original, name, method, ...);
      end
      kept = mirrorOf(as);
    end
    return mirroredOn(kept, method, 3, original, name, method, ...);
  end

  -- Each install puts a wrap of its own in peripheral.call, which mirrors only while it is
  -- the one installed. A program may keep the wrap in a local, or wrap it in its own
  -- function, while the daemon runs: after `sandbox stop` the wrap it kept calls what it
  -- wrapped, unmirrored (else it called a nil), and a reconnect that finds the program's
  -- function in peripheral.call wraps that, whose call of the old wrap goes on to the
  -- function underneath (else the two called each other for ever).
  local installed = nil;
  local function install()
    if originalCall ~= nil or peripheralApi == nil or type(peripheralApi.call) ~= "function" then
      return;
    end
    local original = peripheralApi.call;
    local wrap;
    wrap = function(name, method, ...)
      if installed ~= wrap then
        return original(name, method, ...);
      end
      return mirroredCall(original, name, method, ...);
    end;
    originalCall, installed = original, wrap;
    peripheralApi.call = wrap;
    attached = {};
    if type(peripheralApi.getNames) == "function" then
      for _, name in ipairs(peripheralApi.getNames()) do
        attached[key(name)] = true;
      end
    end
  end

  -- Puts peripheral.call back (unless a program replaced it since) and forgets the mirrors:
  -- what is drawn until the next install is unseen.
  local function uninstall()
    if originalCall == nil then
      return;
    end
    if peripheralApi.call == installed then
      peripheralApi.call = originalCall;
    end
    originalCall, installed, mirrors, notMonitor, attached = nil, nil, {}, {}, {};
  end

  -- The names of the monitors attached now, in peripheral.getNames's order: the first
  -- MAX_MONITOR_NAMES of MAX_MONITOR_NAME bytes at most, and how many others there are.
  local function names()
    local found, leftOut = {}, 0;
    if peripheralApi ~= nil then
      for _, name in ipairs(peripheralApi.getNames()) do
        if isMonitor(name) then
          if #found < MAX_MONITOR_NAMES and #name <= MAX_MONITOR_NAME then
            found[#found + 1] = name;
          else
            leftOut = leftOut + 1;
          end
        end
      end
    end
    return found, leftOut;
  end

  -- The mirror kept for monitor name now, or nil: none since it was attached (or detached).
  -- Unlike get, it starts none, so a watch can tell its monitor's mirror from a new one's.
  local function current(name)
    local kept = type(name) == "string" and mirrors[key(name)] or nil;
    return kept and kept.mirror;
  end

  -- The mirror of monitor name, or nil and why not.
  local function get(name)
    if isMonitor(name) then
      return mirrorOf(key(name)).mirror;
    end
    local found, leftOut = names();
    if #found == 0 and leftOut == 0 then
      return nil, string.format("no monitor named %q: this computer has no monitor", name);
    end
    if #found == 0 then
      return nil, string.format("no monitor named %q: this computer's monitors (%d) have names longer than %d bytes, not named here",
        name, leftOut, MAX_MONITOR_NAME);
    end
    local more = leftOut > 0 and string.format(" and %d more, not named here", leftOut) or "";
    return nil, string.format("no monitor named %q: this computer's monitors are %s%s", name, table.concat(found, ", "), more);
  end

  -- A peripheral attached (isAttach) or detached under name: what was mirrored there is
  -- another's, unless it is the one attached, drawn on before the daemon got this event.
  local function changed(name, isAttach)
    if type(name) == "string" then
      local k = key(name);
      local kept = mirrors[k];
      if isAttach and kept ~= nil and kept.aheadOfAttach then
        kept.aheadOfAttach = false;
      else
        mirrors[k] = nil;
      end
      notMonitor[k], attached[k] = nil, isAttach or nil;
      -- A peripheral on a cable is attached and detached under its network name.
      for _, other in pairs(notMonitor) do
        if other ~= true then
          other[name] = nil;
        end
      end
    end
  end

  -- Monitor name changed size without a setTextScale of this computer's (a player built it
  -- larger, or another computer set its scale): its mirror follows, keeping the top left.
  local function resized(name)
    local kept = type(name) == "string" and mirrors[key(name)] or nil;
    if kept ~= nil then
      kept.mirror.size();
      kept.mirror.touch(); -- another computer may have set its scale: a watch sends it
    end
  end

  local function yielded()
    for _, kept in pairs(mirrors) do
      kept.mirror.yielded();
    end
  end

  return {
    install = install,
    uninstall = uninstall,
    names = names,
    get = get,
    current = current,
    changed = changed,
    resized = resized,
    yielded = yielded,
    -- nil for a monitor taken off (peripheral.call answers nothing then).
    textScale = function(name) return call(name, "getTextScale"); end,
    setOnChange = function(fn) onChange = fn; end,
  };
end


local function badPayload(message)
  return false, nil, { code = ERR_BAD_PAYLOAD, message = message };
end

-- A whole number in [lo, hi], or nil.
local function within(value, lo, hi)
  return type(value) == "number" and value == math.floor(value) and value >= lo and value <= hi;
end

-- What a screen.input event's type and a key event's name may be, for the refusals.
local INPUT_TYPES = "one of key, key_up, char, paste, click, mouse_click, drag, mouse_up, scroll, terminate";
local KEY_NAMES = "CC's key name, as keys.getName gives it: enter, leftCtrl, a";

-- A value that is not what it should be, for a refusal: "the number 28", "true", "an object".
local function aValue(value)
  local kind = type(value);
  if kind == "number" then
    return "the number " .. tostring(value);
  elseif kind == "boolean" then
    return tostring(value);
  elseif kind == "table" then
    return "an object or array";
  end
  return "a " .. kind;
end

-- The refusal of a mouse event on a basic computer: CC fires mouse_click, mouse_drag, mouse_up
-- and mouse_scroll on advanced computers only (its terminal takes the mouse when it is colour),
-- so a program on a basic one never has to deal with one, and the host cannot make it.
local NO_MOUSE = "mouse events reach advanced computers only: this one is a basic computer";

-- The refusal of a request that would queue more than MAX_INPUT_EVENTS os events.
local TOO_MANY_EVENTS = "screen.input queues " .. MAX_INPUT_EVENTS .. " events at most per request; send the rest in another";

-- The os events for one input event, appended to out; or nil and why not. i is the event's
-- place in the list counted from 0, as the gateway names a payload's fields (payload.events[0]).
-- takesMouse: the computer is an advanced one (its terminal is colour), which CC gives the mouse.
local function inputEvents(event, i, keysApi, width, height, takesMouse, out)
  local where = "events[" .. i .. "]";
  if type(event) ~= "table" then
    return nil, where .. " is not an object";
  end
  local kind = event.type;
  if kind == nil or kind == "" then
    -- Named as a missing field, not as the type "nil".
    return nil, where .. " needs its type: " .. INPUT_TYPES;
  elseif kind == "key" or kind == "key_up" then
    local name = event.name;
    if name == nil or name == "" then
      return nil, where .. ": a " .. kind .. " event needs its name, " .. KEY_NAMES;
    elseif type(name) ~= "string" then
      return nil, where .. ".name must be a string, not " .. aValue(name) .. ": " .. KEY_NAMES;
    end
    local code = keysApi[name];
    if type(code) ~= "number" then
      return nil, where .. ": unknown key name " .. string.format("%q", name) .. " (" .. KEY_NAMES .. ")";
    end
    if kind == "key" then
      if event.held ~= nil and type(event.held) ~= "boolean" then
        return nil, where .. ".held must be a boolean";
      end
      out[#out + 1] = { "key", code, event.held == true };
    else
      out[#out + 1] = { "key_up", code };
    end
  elseif kind == "char" then
    if event.text == nil then
      return nil, where .. ": a char event needs its text, the bytes it types (\\n types Enter)";
    elseif type(event.text) ~= "string" then
      return nil, where .. ".text must be a string, not " .. aValue(event.text);
    end
    local enter = keysApi.enter;
    for j = 1, #event.text do
      -- Refused at the first byte past the limit: a frame holds a text of 128 KiB, and its
      -- whole list of events (a table each) would be built only to be refused.
      if #out > MAX_INPUT_EVENTS then
        return nil, TOO_MANY_EVENTS;
      end
      local b = event.text:byte(j);
      if b == 10 then
        out[#out + 1] = { "key", enter, false };
        out[#out + 1] = { "key_up", enter };
      elseif b >= 0x20 then
        out[#out + 1] = { "char", string.char(b) };
      else
        return nil, where .. ".text has the control byte " .. b .. " at " .. j
          .. " (only \\n, as Enter, and bytes from 32 are typed; send other keys by name)";
      end
    end
  elseif kind == "paste" then
    local t = event.text;
    if t == nil then
      return nil, where .. ": a paste event needs its text, one line of bytes from 32";
    elseif type(t) ~= "string" then
      return nil, where .. ".text must be a string, not " .. aValue(t);
    elseif #t > MAX_PASTE then
      return nil, where .. ": a paste holds " .. MAX_PASTE .. " bytes at most, as CC's (got " .. #t .. ")";
    elseif t:find("[%z\1-\31]") then
      return nil, where .. ": a paste is one line of bytes from 32 (as CC's paste); type \\n with a char event";
    end
    out[#out + 1] = { "paste", t };
  elseif kind == "click" or kind == "mouse_click" or kind == "drag" or kind == "mouse_up" then
    if not takesMouse then
      return nil, where .. ": " .. NO_MOUSE;
    elseif not MOUSE_BUTTONS[event.button] then
      return nil, where .. ".button must be 1, 2 or 3";
    elseif not within(event.x, 1, width) or not within(event.y, 1, height) then
      return nil, where .. ": x, y must be a cell of the " .. width .. "x" .. height .. " screen";
    end
    -- click is a press and its release at once; mouse_click, drag and mouse_up are a held
    -- button's press, the pointer moved onto a cell with it held (paint draws along it), and
    -- its release where the pointer let go, each CC's event of that name.
    if kind == "click" or kind == "mouse_click" then
      out[#out + 1] = { "mouse_click", event.button, event.x, event.y };
    end
    if kind == "drag" then
      out[#out + 1] = { "mouse_drag", event.button, event.x, event.y };
    end
    if kind == "click" or kind == "mouse_up" then
      out[#out + 1] = { "mouse_up", event.button, event.x, event.y };
    end
  elseif kind == "scroll" then
    if not takesMouse then
      return nil, where .. ": " .. NO_MOUSE;
    elseif not SCROLL_DIRECTIONS[event.direction] then
      return nil, where .. ".direction must be -1 (up) or 1 (down)";
    elseif not within(event.x, 1, width) or not within(event.y, 1, height) then
      return nil, where .. ": x, y must be a cell of the " .. width .. "x" .. height .. " screen";
    end
    out[#out + 1] = { "mouse_scroll", event.direction, event.x, event.y };
  elseif kind == "terminate" then
    out[#out + 1] = { "terminate" };
  else
    if type(kind) ~= "string" then
      return nil, where .. ".type must be a string, not " .. aValue(kind) .. ": " .. INPUT_TYPES;
    end
    return nil, where .. ": unknown input type " .. string.format("%q", kind) .. " (" .. INPUT_TYPES .. ")";
  end
  if #out > MAX_INPUT_EVENTS then
    return nil, TOO_MANY_EVENTS;
  end
  return true;
end

-- The screen requests. deps: term (the native terminal), os (queueEvent, startTimer,
-- cancelTimer), keys, withdrawn() (nil while the owner allows viewing, else why not: the
-- watches then end, each with a last update saying so), and peripheral (the peripheral API,
-- whose monitors screen.read reads with payload.monitor; nil: none).
local function newScreen(deps)
  expect(1, deps, "table");
  field(deps, "term", "table");
  field(deps, "os", "table");
  field(deps, "keys", "table");
  field(deps, "withdrawn", "function");
  field(deps, "peripheral", "table", "nil");
  local osApi, keysApi = deps.os, deps.keys;
  local mirror = newMirror(deps.term);
  local monitors = newMonitors(deps.peripheral);

  -- watchId -> {seq, sent (version), inflight (messageId), started, mirror, monitor?,
  -- textScale?}: mirror is the terminal's, or for a watch of a monitor (monitor its name as
  -- screen.watch gave it) that monitor's mirror, with the text scale last sent.
  local watches = {};
  local watchCount = 0;    -- how many watches were started, to find the oldest
  local byMessage = {};    -- messageId of an update in flight -> watchId
  local flushTimer = nil;  -- one timer for all watches: at most one update per tick
  -- The screen.input whose events are in CC's queue, {token, seen}: until its marker
  -- (EVENT_INPUT_TYPED) comes back behind them, or a queue's worth of events (EVENT_QUEUE_LIMIT) went by without it
  -- (a full queue dropped it). Each input's events are at most MAX_INPUT_EVENTS, half the
  -- queue; a gateway that sent several at once, each queued as it was read, filled the queue,
  -- and the events past it were lost: a sleeping program's timer, the gateway's next frames.
  local typing = nil;
  local typedInputs = 0;

  local function schedule()
    if flushTimer == nil and next(watches) ~= nil then
      flushTimer = osApi.startTimer(UPDATE_INTERVAL);
    end
  end
  -- Cost while nobody watches: one comparison per drawing call, on a monitor too.
  local function onChange()
    if flushTimer == nil and next(watches) ~= nil then
      schedule();
    end
  end
  mirror.setOnChange(onChange);
  monitors.setOnChange(onChange);

  local function endWatch(watchId)
    local watch = watches[watchId];
    if watch ~= nil and watch.inflight ~= nil then
      byMessage[watch.inflight] = nil;
    end
    watches[watchId] = nil;
  end

  local function endAll()
    watches, byMessage = {}, {};
  end

  -- Ends every watch as the daemon closes its socket: they were that session's, and its
  -- gateway's viewers are gone with it. Ended at the new session's start (EVENT_CONNECTED)
  -- instead, a watch that had sent no update yet could not be told from one the new socket's
  -- gateway started, whose screen.watch comes in CC's queue ahead of EVENT_CONNECTED: such a
  -- watch of the last session was kept, pushing updates to a gateway that never started it.
  local function socketClosed()
    endAll();
  end

  -- Sends each idle watch what changed since its last update.
  local function flush()
    flushTimer = nil;
    local why = next(watches) ~= nil and deps.withdrawn() or nil;
    if why ~= nil then
      -- The owner withdrew the screen: stop pushing it, and say so in a last update (no
      -- screen in it), so the host's viewers end with the reason instead of a still screen,
      -- and the gateway's next watch starts afresh.
      for watchId, watch in pairs(watches) do
        osApi.queueEvent(events.EVENT_SEND, codec.newUuid(), codec.TYPE_SCREEN_UPDATE, {
          watchId = watchId, seq = watch.seq + 1, monitor = watch.monitor,
          ended = { code = codec.ERR_FORBIDDEN, message = "the screen watch ended: " .. why },
        });
      end
      endAll();
      return;
    end
    for watchId, watch in pairs(watches) do
      if watch.monitor ~= nil and monitors.current(watch.monitor) ~= watch.mirror then
        -- The monitor was taken off (broken, its modem switched off), or another attached
        -- under its name since, which is not the screen watched: the watch ends, saying so,
        -- rather than go still or show another monitor as this one. An update in flight is
        -- answered meanwhile; its answer finds no watch.
        endWatch(watchId);
        osApi.queueEvent(events.EVENT_SEND, codec.newUuid(), codec.TYPE_SCREEN_UPDATE, {
          watchId = watchId, seq = watch.seq + 1, monitor = watch.monitor,
          ended = { code = ERR_NOT_FOUND, message = string.format(MONITOR_GONE, watch.monitor) },
        });
      elseif watch.inflight == nil then
        local frame, current = watch.mirror.changesSince(watch.sent);
        local scale = watch.monitor ~= nil and monitors.textScale(watch.monitor) or nil;
        if frame ~= nil then
          watch.seq = watch.seq + 1;
          frame.watchId, frame.seq = watchId, watch.seq;
          if watch.monitor ~= nil then
            frame.monitor = watch.monitor;
            if scale ~= nil and scale ~= watch.textScale then
              frame.textScale, watch.textScale = scale, scale;
            end
          end
          watch.sent = current;
          watch.inflight = codec.newUuid();
          byMessage[watch.inflight] = watchId;
          osApi.queueEvent(events.EVENT_SEND, watch.inflight, codec.TYPE_SCREEN_UPDATE, frame);
        end
      end
      -- A watch with an update in flight gets its changes when the answer comes (onReply).
    end
  end

  local function onReply(messageId, ok)
    local watchId = byMessage[messageId];
    if watchId == nil then
      return;
    end
    byMessage[messageId] = nil;
    local watch = watches[watchId];
    if watch == nil then
      return;
    end
    watch.inflight = nil;
    if ok ~= true then
      -- unknown_watch (the host went away), not_connected (the socket closed), or any
      -- other failure: the host resyncs with a new watch.
      watches[watchId] = nil;
      return;
    end
    schedule();
  end

  -- payload.monitor names a monitor to read instead of the computer's own screen: its
  -- answer has the same fields, with monitor and textScale. The computer's own names the
  -- monitors attached (monitors), which an older client's answer leaves out, and counts
  -- those past its bound (monitorsLeftOut, client 0.5.32 on; left out when there are none).
  local function read(payload)
    local name = payload.monitor;
    if name == nil then
      local screen = mirror.read();
      local names, leftOut = monitors.names();
      screen.monitors = #names > 0 and names or textutils.empty_json_array;
      screen.monitorsLeftOut = leftOut > 0 and leftOut or nil;
      return true, screen;
    elseif type(name) ~= "string" then
      return badPayload("monitor must be a string, a monitor's name as peripheral.getNames gives it (top, monitor_0), not " .. aValue(name));
    end
    local monitorMirror, why = monitors.get(name);
    if monitorMirror == nil then
      return badPayload(why);
    end
    local screen = monitorMirror.read();
    screen.monitor, screen.textScale = name, monitors.textScale(name);
    return true, screen;
  end

  local function input(payload)
    if payload.monitor ~= nil then
      -- A monitor has no keyboard: a player touches an advanced one, which no host does.
      return badPayload("screen.input is for the computer's own screen: a monitor takes no keys "
        .. "(read it with screen.read {monitor}, watch it with screen.watch {monitor})");
    end
    if type(payload.events) ~= "table" then
      return badPayload("screen.input needs events, a list of input events");
    end
    local width, height = mirror.size();
    local takesMouse = deps.term.isColour();
    local queued = {};
    for i, event in ipairs(payload.events) do
      local ok, why = inputEvents(event, i - 1, keysApi, width, height, takesMouse, queued);
      if not ok then
        return badPayload(why .. "; nothing was queued");
      end
    end
    if typing ~= nil then
      return false, nil, { code = ERR_BUSY, message = STILL_TYPING };
    end
    for _, args in ipairs(queued) do
      osApi.queueEvent(table.unpack(args));
    end
    typedInputs = typedInputs + 1;
    typing = { token = typedInputs, seen = 0 };
    osApi.queueEvent(events.EVENT_INPUT_TYPED, typedInputs);
    return true, { queued = #queued };
  end

  -- payload.monitor names a monitor to watch instead of the computer's own screen: its
  -- updates carry monitor, and textScale in the first and when it changed.
  local function watch(payload)
    local name, watched = payload.monitor, mirror;
    if name ~= nil then
      if type(name) ~= "string" then
        return badPayload("monitor must be a string, a monitor's name as peripheral.getNames gives it (top, monitor_0), not " .. aValue(name));
      end
      local why;
      watched, why = monitors.get(name);
      if watched == nil then
        return badPayload(why);
      end
    end
    local kept, oldestId = 0, nil;
    for id, w in pairs(watches) do
      kept = kept + 1;
      if oldestId == nil or w.started < watches[oldestId].started then
        oldestId = id;
      end
    end
    if kept >= MAX_WATCHES then
      endWatch(oldestId);
    end
    local watchId = codec.newUuid();
    watchCount = watchCount + 1;
    watches[watchId] = { seq = 0, sent = nil, inflight = nil, started = watchCount, mirror = watched, monitor = name };
    schedule();
    return true, { watchId = watchId };
  end

  local function unwatch(payload)
    if type(payload.watchId) ~= "string" then
      return badPayload("screen.unwatch needs watchId, the id screen.watch gave");
    end
    endWatch(payload.watchId);
    return true, {};
  end

  local handlers = {
    [codec.TYPE_SCREEN_READ] = read,
    [codec.TYPE_SCREEN_INPUT] = input,
    [codec.TYPE_SCREEN_WATCH] = watch,
    [codec.TYPE_SCREEN_UNWATCH] = unwatch,
  };

  local function onEvent(event, ...)
    mirror.yielded();
    monitors.yielded();
    if event == "peripheral" or event == "peripheral_detach" then
      monitors.changed((...), event == "peripheral");
      schedule(); -- a watched monitor may be gone: flush ends its watch
    elseif event == "monitor_resize" then
      monitors.resized((...));
    end
    if typing ~= nil then
      if event == events.EVENT_INPUT_TYPED and (...) == typing.token then
        typing = nil;
      else
        typing.seen = typing.seen + 1;
        if typing.seen >= events.EVENT_QUEUE_LIMIT then
          typing = nil;
        end
      end
    end
    if event == "timer" and flushTimer ~= nil and (...) == flushTimer then
      flush();
    elseif event == events.EVENT_REPLY then
      onReply(...);
    elseif event == "setting_changed" then
      schedule(); -- the owner may have withdrawn the screen: flush looks, even on a still screen
    end
  end

  local function stop()
    endAll();
    if flushTimer ~= nil then
      osApi.cancelTimer(flushTimer);
      flushTimer = nil;
    end
    mirror.uninstall();
    monitors.uninstall();
  end

  return {
    handlers = handlers,
    start = function()
      mirror.install();
      monitors.install();
    end,
    stop = stop,
    onEvent = onEvent,
    socketClosed = socketClosed,
    watching = function() return next(watches) ~= nil; end,
    mirror = mirror,
    monitors = monitors,
  };
end

return {
  UPDATE_INTERVAL = UPDATE_INTERVAL,
  MAX_PASTE = MAX_PASTE,
  MAX_INPUT_EVENTS = MAX_INPUT_EVENTS,
  MAX_WATCHES = MAX_WATCHES,
  MAX_MONITOR_NAMES = MAX_MONITOR_NAMES,
  MAX_MONITOR_NAME = MAX_MONITOR_NAME,
  UNGUARDED_CALLS = UNGUARDED_CALLS,
  ERR_UNKNOWN_WATCH = ERR_UNKNOWN_WATCH,
  newMirror = newMirror,
  newScreen = newScreen,
};
