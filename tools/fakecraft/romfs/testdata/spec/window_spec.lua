-- Specs for /rom/apis/window.lua.

describe("window", function()
  local function mk(w, h)
    return window.create(term.current(), 1, 1, w or 10, h or 3, false);
  end

  it("keeps text and colours per cell", function()
    local w = mk(6, 2);
    w.write("ab");
    w.setTextColour(colours.red);
    w.setBackgroundColour(colours.blue);
    w.write("cd");
    expect({ w.getLine(1) }):same({ "abcd  ", "00ee00", "ffbbff" });
    expect({ w.getCursorPos() }):same({ 5, 1 });
    w.blit("xy", "12", "34");
    expect({ w.getLine(1) }):same({ "abcdxy", "00ee12", "ffbb34" });
  end);

  it("clips writes to the window and scrolls", function()
    local w = mk(4, 2);
    w.setCursorPos(3, 1);
    w.write("long");
    expect((w.getLine(1))):eq("  lo");
    w.scroll(1);
    expect((w.getLine(1))):eq("    ");
    expect.error(w.getLine, 3):eq("Line is out of range.");
  end);

  it("takes the highest flag of a combined colour", function()
    local w = mk();
    w.setTextColour(colours.combine(colours.red, colours.green));
    expect(w.getTextColour()):eq(colours.red);
    expect.error(w.setTextColour, -5):eq("Colour out of range");
    expect.error(w.setTextColour, nil):eq("bad argument #1 (number expected, got nil)");
  end);

  it("draws into its parent when visible", function()
    local parent = mk(8, 2);
    local child = window.create(parent, 3, 2, 4, 1);
    child.write("hi");
    expect((parent.getLine(2))):eq("  hi    ");
    expect({ parent.getCursorPos() }):same({ 5, 2 });
    child.reposition(1, 1, 2, 1);
    child.redraw();
    expect((parent.getLine(1))):eq("hi      ");
  end);

  it("validates its arguments", function()
    expect.error(window.create, nil):eq("bad argument #1 (table expected, got nil)");
    expect.error(window.create, term, 1, 1, 1, 1)
      :eq("term is not a recommended window parent, try term.current() instead");
    local w = mk();
    expect.error(w.blit, "", "", "a"):eq("Arguments must be the same length");
    expect.error(w.reposition, 1, 1, nil, 1):eq("bad argument #3 (number expected, got nil)");
  end);

  it("raises a bad argument through term at the program's line, as CC's does past term's forwarding tail call", function()
    local w = mk();
    local function wrong() term.setCursorPos("x", 1); end
    local previous = term.redirect(w);
    local ok, err = pcall(wrong);
    term.redirect(previous);
    expect(ok):eq(false);
    expect(err):eq(debug.getinfo(1, "S").short_src .. ":" .. debug.getinfo(wrong, "S").linedefined
      .. ": bad argument #1 (number expected, got string)");
  end);

  it("writes any value as its text, nil included, as CC's term and window do", function()
    local w = mk(12, 1);
    w.write(nil);
    w.write();
    w.write(setmetatable({}, { __tostring = function() return "T" end }));
    w.write(1.5);
    expect((w.getLine(1))):eq("nilnilT1.5  ");
    -- The native term coerces as CC's Java does: no __tostring, nothing missing refused.
    local native = term.native();
    local x, y = native.getCursorPos();
    native.setCursorPos(1, y);
    native.write();
    native.write(nil);
    expect((native.getCursorPos())):eq(7);
    native.write(setmetatable({}, { __tostring = function() return "T" end }));
    expect(native.getCursorPos() > 8):eq(true);
    native.setCursorPos(x, y);
  end);

  it("stops term.redirect(term)", function()
    expect.error(term.redirect, term):eq("term is not a recommended redirect target, try term.current() instead");
  end);
end);
