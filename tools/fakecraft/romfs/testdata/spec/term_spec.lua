-- Specs for /rom/apis/term.lua, the term API over the native terminal.

describe("the term API", function()
  it("is the ROM's apis/term.lua, loaded as CC's is", function()
    expect(fs.exists("/rom/apis/term.lua")):eq(true);
    expect(type(term.native())):eq("table");
    expect(term.native().redirect):eq(nil);
  end);

  -- Where a native function's error is placed (line 14 of the ROM's term.lua) is checked in
  -- Go (computer's TestTermErrorsAtTheROMsForwardingCall): a TrapOS daemon another spec file
  -- starts on this computer wraps the native term's methods, which moves those errors.

  it("words redirect's errors as CC's", function()
    local here = debug.getinfo(1, "S").short_src;
    local line = debug.getinfo(1, "l").currentline;
    expect({ pcall(function() term.redirect() end) })
      :same({ false, here .. ":" .. (line + 1) .. ": bad argument #1 to 'redirect' (table expected, got nil)" });
    expect.error(term.redirect, term):eq("term is not a recommended redirect target, try term.current() instead");
    expect.error(term.redirect, _G.term):eq("term is not a recommended redirect target, try term.current() instead");
  end);

  it("gives a redirect target the methods it lacks, which raise when called", function()
    local target = { write = function() end };
    local previous = term.redirect(target);
    local ok, err = pcall(function() term.setCursorPos(1, 1) end);
    term.redirect(previous);
    expect(ok):eq(false);
    expect(err):str_match("Redirect object is missing method setCursorPos%.$");
    expect(type(target.clear)):eq("function");
  end);

  -- CC's TermAPI.nativePaletteColour, which its term.lua moves off the native term: Java,
  -- so an error is placed at the calling line even from a tail call, and its components
  -- are Java floats (Colour: n / 255f).
  it("has nativePaletteColour as CC's, a native function moved to the API", function()
    expect(term.native().nativePaletteColour):eq(nil);
    expect(term.nativePaletteColor):eq(term.nativePaletteColour);
    local r, g, b = term.nativePaletteColour(colours.white);
    expect({ r, g, b }):same({ 0.9411764740943909, 0.9411764740943909, 0.9411764740943909 });
    expect({ term.nativePaletteColour(colours.black) }):same({ 0.06666667014360428, 0.06666667014360428, 0.06666667014360428 });
    local here = debug.getinfo(1, "S").short_src;
    local line = debug.getinfo(1, "l").currentline;
    expect({ pcall(function() return term.nativePaletteColour("x") end) })
      :same({ false, here .. ":" .. (line + 1) .. ": bad argument #1 (number expected, got string)" });
    expect({ pcall(function() return term.nativePaletteColour(0) end) })
      :same({ false, here .. ":" .. (line + 3) .. ": Colour out of range" });
  end);
end);
