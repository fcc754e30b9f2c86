-- Specs for /rom/apis/colors.lua and /rom/apis/colours.lua.

describe("colors", function()
  it("has the sixteen colour flags", function()
    local names = {
      "white", "orange", "magenta", "lightBlue", "yellow", "lime", "pink", "gray",
      "lightGray", "cyan", "purple", "blue", "brown", "green", "red", "black",
    };
    for i, name in ipairs(names) do
      expect(colors[name]):eq(2 ^ (i - 1));
    end
  end);

  it("combines, subtracts and tests sets", function()
    local set = colors.combine(colors.red, colors.blue, colors.red);
    expect(set):eq(colors.red + colors.blue);
    expect(colors.subtract(set, colors.red, colors.green)):eq(colors.blue);
    expect(colors.test(set, colors.blue)):eq(true);
    expect(colors.test(set, colors.white)):eq(false);
    expect(colors.combine()):eq(0);
  end);

  it("checks argument types", function()
    expect.error(colors.combine, 1, "x"):eq("bad argument #2 (number expected, got string)");
    expect.error(colors.test, nil, 1):eq("bad argument #1 (number expected, got nil)");
  end);

  it("packs and unpacks RGB", function()
    expect(colors.packRGB(1, 0.5, 0)):eq(0xFF7F00);
    local r, g, b = colors.unpackRGB(0xFF7F00);
    expect(r):eq(1);
    expect(g):eq(0x7F / 255);
    expect(b):eq(0);
    expect(colors.rgb8(0, 0, 1)):eq(0xFF);
  end);

  it("converts to and from blit characters", function()
    expect(colors.toBlit(colors.white)):eq("0");
    expect(colors.toBlit(colors.red)):eq("e");
    expect(colors.toBlit(colors.black)):eq("f");
    expect.error(colors.toBlit, -120):eq("Colour out of range");
    expect.error(colors.toBlit, 0x10000):eq("Colour out of range");
    expect(colors.fromBlit("a")):eq(colors.purple);
    expect(colors.fromBlit("z")):eq(nil);
    expect(colors.fromBlit("ab")):eq(nil);
  end);
end);

describe("colours", function()
  it("spells grey the British way", function()
    expect(colours.grey):eq(colors.gray);
    expect(colours.lightGrey):eq(colors.lightGray);
    expect(colours.gray):eq(nil);
    expect(colours.lightGray):eq(nil);
    expect(colours.red):eq(colors.red);
    expect(colours.combine):eq(colors.combine);
  end);
end);
