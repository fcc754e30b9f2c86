-- Specs for the ROM's media modules: cc.image.nft (coloured text images) and cc.audio.dfpwm
-- (the speaker's 1-bit audio codec). The DFPWM vectors were checked against CC's own module.

describe("cc.image.nft", function()
  local nft = require("cc.image.nft");

  it("parses lines of text, each starting white on black", function()
    expect(nft.parse("")):same({});
    expect(nft.parse("ab\n\30e\31bcd\n")):same({
      { text = "ab", foreground = "00", background = "ff" },
      { text = "cd", foreground = "bb", background = "ee" },
    });
    expect(nft.parse("\n\n")):same({
      { text = "", foreground = "", background = "" },
      { text = "", foreground = "", background = "" },
    });
  end);

  it("changes colours within a line", function()
    expect(nft.parse("a\30bb\31ec")):same({ { text = "abc", foreground = "00e", background = "fbb" } });
  end);

  it("loads files, and says why it cannot", function()
    local handle = fs.open("/nft_spec.nft", "w");
    handle.write("\31ehi");
    handle.close();
    expect(nft.load("/nft_spec.nft")):same({ { text = "hi", foreground = "ee", background = "ff" } });
    fs.delete("/nft_spec.nft");
    expect({ nft.load("/nft_spec.nft") }):same({ nil, "/nft_spec.nft: No such file" });
  end);

  it("draws on the terminal or a given redirect", function()
    local win = window.create(term.current(), 1, 1, 4, 2, false);
    nft.draw(nft.parse("\30eab\n\31bc"), 2, 1, win);
    expect({ win.getLine(1) }):same({ " ab ", "0000", "feef" });
    expect({ win.getLine(2) }):same({ " c  ", "0b00", "ffff" });
    expect.error(nft.draw, {}, 1, 1, false):eq("bad argument #4 (table expected, got boolean)");
    expect.error(nft.parse, nil):eq("bad argument #1 (string expected, got nil)");
  end);
end);

describe("cc.audio.dfpwm", function()
  local dfpwm = require("cc.audio.dfpwm");

  it("encodes amplitudes, eight a byte, the first in the lowest bit", function()
    local wave = { 32, 61, 84, 97, 99, 90, 72, 45, 14, -20, -51, -76, -93, -100, -96, -82,
      -58, -28, 5, 37, 65, 86, 98, 98 };
    expect({ dfpwm.encode(wave):byte(1, -1) }):same({ 255, 1, 252 });
  end);

  it("decodes bytes to smoothed amplitudes", function()
    expect(dfpwm.decode("\255\0\170\85")):same({
      1, 2, 3, 4, 5, 6, 7, 9, 9, 7, 5, 3, 1, -1, -3, -5,
      -7, -7, -7, -7, -7, -7, -7, -7, -5, -5, -5, -5, -5, -4, -4, -4,
    });
  end);

  it("keeps an encoder's state from one call to the next", function()
    local encoder = dfpwm.make_encoder();
    expect({ (encoder({ 1, 2, 3, 4 }) .. encoder({ 5, 6, 7, 8 })):byte(1, -1) }):same({ 15, 15 });
    expect(dfpwm.encode({ 1, 2, 3, 4, 5, 6, 7, 8 })):eq("\127");
  end);

  it("refuses amplitudes out of range, after flooring them", function()
    expect.error(dfpwm.encode, { 0, 128 })
      :eq("Amplitude at position 2 was 128, but should be between -128 and 127");
    expect(dfpwm.encode({ 127.9 })):eq("\169");
    expect.error(dfpwm.decode, {}):eq("bad argument #1 (string expected, got table)");
  end);
end);
