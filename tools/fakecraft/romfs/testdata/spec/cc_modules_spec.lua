-- Specs for cc.expect's field/range messages, cc.strings and the vector API.

local expect_mod = require("cc.expect");
local strings = require("cc.strings");

describe("cc.expect", function()
  it("says a missing field is missing", function()
    expect.error(expect_mod.field, {}, "k", "string"):eq("field 'k' missing from table");
    expect.error(expect_mod.field, { k = 1 }, "k", "string"):eq("bad field 'k' (string expected, got number)");
  end);

  it("puts NaN outside every range", function()
    expect.error(expect_mod.range, 0 / 0, 1, 2)
      :eq(("number outside of range (expected %s to be within 1 and 2)"):format(tostring(0 / 0)));
    expect.error(expect_mod.range, 0, 1):eq("number outside of range (expected 0 to be within 1 and inf)");
  end);
end);

describe("cc.strings", function()
  it("wraps, dropping spaces that do not fit", function()
    expect(strings.wrap("test string is long", 11)):same({ "test string", "is long" });
    expect(strings.wrap("test string is long", 12)):same({ "test string ", "is long" });
    expect(strings.wrap("abcdefgh", 3)):same({ "abc", "def", "gh" });
    expect.error(strings.wrap, "", 0):eq("number outside of range (expected 0 to be within 1 and inf)");
  end);

  it("pads and cuts to a width", function()
    expect(strings.ensure_width("ab", 4)):eq("ab  ");
    expect(strings.ensure_width("abcdef", 4)):eq("abcd");
  end);

  it("splits on patterns and plain text, with a limit", function()
    expect(strings.split("-a-", "%-")):same({ "", "a", "" });
    expect(strings.split("a.b.c", ".", true, 2)):same({ "a", "b.c" });
    expect.error(strings.split, "abc", ""):eq("separator is empty");
  end);
end);

describe("vector", function()
  it("does arithmetic through operators and methods", function()
    local a, b = vector.new(1, 2, 3), vector.new(6, 4, 2);
    expect(a + b):eq(vector.new(7, 6, 5));
    expect(b - a):eq(vector.new(5, 2, -1));
    expect(a * 2):eq(vector.new(2, 4, 6));
    expect(-a):eq(vector.new(-1, -2, -3));
    expect(vector.new(2, 3, 6):length()):eq(7);
    expect(a:dot(b)):eq(20);
    expect(tostring(a)):eq("1,2,3");
  end);

  it("checks that arguments are vectors", function()
    local a = vector.new();
    expect.error(a.add, nil, a):eq("bad argument #1 (vector expected, got nil)");
    expect.error(a.mul, a, nil):eq("bad argument #2 (number expected, got nil)");
  end);
end);

describe("textutils", function()
  it("slowWrite wraps first, then writes a character per sleep", function()
    local sleeps = 0;
    local real_sleep = _G.sleep;
    _G.sleep = function() sleeps = sleeps + 1; end;
    local current = term.current();
    local w = window.create(current, 1, 1, 20, 3, false);
    term.redirect(w);
    local ok, err = pcall(textutils.slowWrite, "This is a long string which one would hope wraps.");
    term.redirect(current);
    _G.sleep = real_sleep;
    assert(ok, err);
    expect((w.getLine(1))):eq("This is a long      ");
    expect((w.getLine(2))):eq("string which one    ");
    expect(sleeps):eq(51);
    expect.error(textutils.slowWrite, nil, false):eq("bad argument #2 (number expected, got boolean)");
  end);

  it("pagedPrint names its argument types as cc.expect does", function()
    expect.error(textutils.pagedPrint, nil, false):eq("bad argument #2 (number expected, got boolean)");
  end);

  it("refuses a number with a sign but no integer part", function()
    expect(textutils.unserializeJSON("-.123")):eq(nil);
    expect(textutils.unserializeJSON("-0.5")):eq(-0.5);
  end);
end);

describe("settings", function()
  it("names no function in a type error raised through pcall, as CC", function()
    settings.define("cc_modules_spec.n", { type = "number" });
    expect.error(settings.set, "cc_modules_spec.n", "x"):eq("bad argument #2 (number expected, got string)");
    settings.undefine("cc_modules_spec.n");
  end);
end);

describe("utf8", function()
  it("encodes, decodes, counts and walks UTF-8", function()
    expect(utf8.char(72, 0xE9, 0x20AC, 0x1F600)):eq("H\195\169\226\130\172\240\159\152\128");
    expect(utf8.len("H\195\169\226\130\172")):eq(3);
    expect({ utf8.len("a\255") }):same({ nil, 2 });
    expect({ utf8.codepoint("H\195\169\226\130\172", 1, -1) }):same({ 72, 0xE9, 0x20AC });
    expect(utf8.offset("a\195\169b", 3)):eq(4);
    local seen = {};
    for p, c in utf8.codes("a\195\169b") do seen[#seen + 1] = p .. ":" .. c; end
    expect(table.concat(seen, ",")):eq("1:97,2:233,4:98");
    local n = 0;
    for _ in ("h\195\169\226\130\172"):gmatch(utf8.charpattern) do n = n + 1; end
    expect(n):eq(3);
    expect.error(utf8.char, -1):eq("bad argument #1 (value out of range)");
  end);

  -- Cobalt 0.9.4's Utf8Lib, run from its source: CC has utf8 in its VM, not in the ROM.
  it("is Cobalt's library, in the VM", function()
    expect(fs.exists("rom/apis/utf8.lua")):eq(false);
    expect(debug.getinfo(utf8.char, "S").what):eq("C");
    expect(utf8.codepoint("\237\160\128")):eq(0xD800);
    expect(utf8.len("\237\160\128a")):eq(2);
    expect({ utf8.len("\192\128") }):same({ nil, 1 });
    expect(utf8.char("65", 66.9)):eq("AB");
    expect(select("#", utf8.codepoint("abc", 3, 2))):eq(0);
    expect.error(utf8.codepoint, "abc", 0):eq("bad argument #2 (out of bounds)");
    expect.error(utf8.codepoint, "abc", 1, 4):eq("bad argument #3 (out of bounds)");
    expect.error(utf8.offset, "abc", 1, 5):eq("bad argument #3 (position out of bounds)");
    expect.error(utf8.char, nil):eq("bad argument (number expected, got nil)");
    expect.error(utf8.len, nil):eq("bad argument (string expected, got nil)");
    local iter = utf8.codes("x");
    expect(utf8.codes("y")):eq(iter);
    expect(select("#", iter("abc", 3))):eq(0);
    local ok, err = pcall(function()
      for _ in utf8.codes("a\195\169\169") do end
    end);
    expect(ok):eq(false);
    expect(err):str_match(":%d+: invalid UTF%-8 code$");
  end);
end);

describe("cc.internal.event", function()
  local event = require("cc.internal.event");

  -- Queues events, runs discard_char, then returns the events still queued behind it,
  -- timers aside: its own zero timer may already have fired when a char cancels it.
  local function left_after(events)
    for _, e in ipairs(events) do os.queueEvent(table.unpack(e)); end
    event.discard_char();
    os.queueEvent("spec_end");
    local left = {};
    while true do
      local name = os.pullEvent();
      if name == "spec_end" then break; end
      if name ~= "timer" then left[#left + 1] = name; end
    end
    return left;
  end

  it("drops the char that follows a key", function()
    expect(left_after({ { "char", "q" } })):same({});
    expect(left_after({ { "char", "q" }, { "spec_other" } })):same({ "spec_other" });
  end);

  it("returns after a tick when no char comes", function()
    expect(left_after({})):same({});
  end);
end);
