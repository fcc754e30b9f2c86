-- Specs for /rom/apis/paintutils.lua: what each drawing function leaves on a window, cell by
-- cell (text, text colour, background as blit strings).

describe("paintutils", function()
  -- Runs fn with the terminal redirected to a fresh w×h window; returns its rows.
  local function drawn(w, h, fn)
    local previous = term.current();
    local win = window.create(previous, 1, 1, w, h, false);
    term.redirect(win);
    local ok, err = pcall(fn);
    term.redirect(previous);
    if not ok then
      error(err, 0);
    end
    local rows = {};
    for y = 1, h do
      rows[y] = { win.getLine(y) };
    end
    return rows;
  end

  it("draws a pixel on the background colour, keeping the text colour", function()
    expect(drawn(3, 1, function()
      term.setTextColour(colours.blue);
      paintutils.drawPixel(2, 1, colours.red);
      expect(term.getBackgroundColour()):eq(colours.red);
    end)):same({ { "   ", "0b0", "fef" } });
  end);

  it("draws lines on CC's cells, in the current background colour when given none", function()
    expect(drawn(5, 3, function()
      term.setBackgroundColour(colours.lime);
      paintutils.drawLine(5, 1, 1, 3);
    end)):same({
      { "     ", "00000", "ffff5" },
      { "     ", "00000", "ff55f" },
      { "     ", "00000", "55fff" },
    });
    expect(drawn(2, 4, function()
      paintutils.drawLine(1.7, 1.2, 2, 4, colours.red);
    end)):same({
      { "  ", "00", "ef" },
      { "  ", "00", "ef" },
      { "  ", "00", "fe" },
      { "  ", "00", "fe" },
    });
  end);

  it("draws a box's outline, leaving what is inside", function()
    expect(drawn(4, 3, function()
      term.setCursorPos(2, 2);
      term.write("ab");
      paintutils.drawBox(4, 3, 1, 1, colours.red);
    end)):same({
      { "    ", "eeee", "eeee" },
      { " ab ", "e00e", "effe" },
      { "    ", "eeee", "eeee" },
    });
  end);

  it("fills a box, and draws a one-cell box as a pixel", function()
    expect(drawn(3, 2, function()
      term.setBackgroundColour(colours.green);
      paintutils.drawFilledBox(1, 1, 2, 2);
      paintutils.drawBox(3, 2, 3, 2, colours.blue);
    end)):same({
      { "   ", "dd0", "ddf" },
      { "   ", "dd0", "ddb" },
    });
  end);

  it("parses images from blit digits, anything else transparent", function()
    expect(paintutils.parseImage("0e\n x\n")):same({ { 1, colours.red }, { 0, 0 }, {} });
    expect(paintutils.parseImage("")):same({ {} });
  end);

  it("draws images, leaving the screen where a pixel is transparent", function()
    expect(drawn(3, 2, function()
      term.setBackgroundColour(colours.green);
      term.clear();
      paintutils.drawImage(paintutils.parseImage("e.b\n4"), 1, 1);
    end)):same({
      { "   ", "000", "edb" },
      { "   ", "000", "4dd" },
    });
  end);

  it("loads images from files, and nil for none", function()
    local path = "/paintutils_spec.nfp";
    local handle = fs.open(path, "w");
    handle.write("1\n2");
    handle.close();
    expect(paintutils.loadImage(path)):same({ { colours.orange }, { colours.magenta } });
    fs.delete(path);
    expect(paintutils.loadImage(path)):eq(nil);
  end);

  it("checks its arguments as cc.expect does", function()
    expect.error(paintutils.parseImage, nil):eq("bad argument #1 (string expected, got nil)");
    expect.error(paintutils.drawPixel, 1, 1, false):eq("bad argument #3 (number expected, got boolean)");
    expect.error(paintutils.drawLine, 1, 1, 1, nil):eq("bad argument #4 (number expected, got nil)");
    expect.error(paintutils.drawBox, 1, 1, 1, 1, false):eq("bad argument #5 (number expected, got boolean)");
    expect.error(paintutils.drawImage, {}, 1, nil):eq("bad argument #3 (number expected, got nil)");
  end);
end);
