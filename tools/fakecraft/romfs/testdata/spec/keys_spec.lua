-- Specs for /rom/apis/keys.lua: CC's key codes (GLFW's) by name, and names by code.

describe("keys", function()
  it("names the keys fakecraft's terminal sends", function()
    expect(keys.a):eq(65);
    expect(keys.z):eq(90);
    expect(keys.zero):eq(48);
    expect(keys.space):eq(32);
    expect(keys.enter):eq(257);
    expect(keys["return"]):eq(257);
    expect(keys.backspace):eq(259);
    expect(keys.tab):eq(258);
    expect(keys.left):eq(263);
    expect(keys.leftCtrl):eq(341);
    expect(keys.f1):eq(290);
    expect(keys.f12):eq(301);
    expect(keys.numPad0):eq(320);
    expect(keys.scollLock):eq(keys.scrollLock);
  end);

  it("gives the name of a code", function()
    expect(keys.getName(65)):eq("a");
    expect(keys.getName(257)):eq("enter");
    expect(keys.getName(345)):eq("rightCtrl");
    expect(keys.getName(1000)):eq(nil);
  end);

  it("checks its argument", function()
    expect.error(keys.getName, "a"):eq("bad argument #1 (number expected, got string)");
  end);
end);
