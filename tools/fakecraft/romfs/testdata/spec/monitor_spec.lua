-- Specs for monitors (periphemu's "monitor" and "basic_monitor", sized in blocks as in
-- CC) and the monitor program. A pocket computer has nothing beside it (CC's PocketBrain
-- attaches its upgrade on the back, and nothing else), so on one these cases are pending.

local it_beside = pocket and pending or it;

local function drain()
  os.queueEvent("spec_marker");
  local events = {};
  while true do
    local event = table.pack(os.pullEvent());
    if event[1] == "spec_marker" then return events; end
    events[#events + 1] = { table.unpack(event, 1, event.n) };
  end
end

describe("a monitor", function()
  after_each(function()
    periphemu.remove("top");
    drain();
  end);

  it_beside("is as many characters as its blocks hold at its text scale", function()
    periphemu.create("top", "monitor");
    drain();
    local monitor = peripheral.wrap("top");
    expect(peripheral.getType("top")):eq("monitor");
    expect({ monitor.getSize() }):same({ 7, 5 });
    expect(monitor.getTextScale()):eq(1);
    expect(monitor.isColour()):eq(true);
    expect(monitor.isColor()):eq(true);
    monitor.setTextScale(0.5);
    expect({ monitor.getSize() }):same({ 15, 10 });
    expect({ os.pullEvent("monitor_resize") }):same({ "monitor_resize", "top" });
    monitor.setTextScale(0.7);
    expect(monitor.getTextScale()):eq(0.5);
    expect(drain()):same({});
    expect.error(monitor.setTextScale, 0.4):eq("Expected number in range 0.5-5");
    expect.error(monitor.setTextScale, 5.5):eq("Expected number in range 0.5-5");
    expect.error(monitor.setTextScale, 0 / 0):eq("bad argument #1 (number expected, got nan)");
  end);

  -- CC resizes a monitor's screen as setTextScale returns, and queues monitor_resize on
  -- the monitor's next tick (MonitorBlockEntity.blockTick polls ServerMonitor's resized
  -- flag): once, however often the size changed within the tick.
  it_beside("announces a new size on the next tick, once", function()
    periphemu.create("top", "monitor");
    drain();
    local monitor = peripheral.wrap("top");
    monitor.setTextScale(0.5);
    expect({ monitor.getSize() }):same({ 15, 10 });
    monitor.setTextScale(2);
    expect({ monitor.getSize() }):same({ 4, 2 });
    expect(drain()):same({});
    expect({ os.pullEvent("monitor_resize") }):same({ "monitor_resize", "top" });
    expect(drain()):same({});
  end);

  it_beside("is sized in blocks, up to 8x6", function()
    periphemu.create("top", "monitor", 8, 6);
    expect({ peripheral.call("top", "getSize") }):same({ 82, 40 });
    periphemu.remove("top");
    local ok, err = periphemu.create("top", "monitor", 9, 1);
    expect(ok):eq(false);
    expect(err):str_match("1x1 to 8x6 blocks");
  end);

  it_beside("draws what a program writes, as a terminal", function()
    periphemu.create("top", "basic_monitor", 2, 1);
    local monitor = peripheral.wrap("top");
    expect(monitor.isColour()):eq(false);
    local old = term.redirect(monitor);
    term.clear();
    term.setCursorPos(1, 1);
    write("hello on the monitor");
    local x, y = term.getCursorPos();
    term.redirect(old);
    expect({ monitor.getSize() }):same({ 18, 5 });
    -- write wraps at the monitor's width, a word at a time.
    expect({ x, y }):same({ 8, 2 });
  end);
end);

describe("the monitor program", function()
  after_each(function()
    periphemu.remove("left");
    drain();
  end);

  it_beside("runs a program on the monitor and sets the text scale", function()
    periphemu.create("left", "monitor", 3, 2);
    local out = {};
    stub(_G, "print", function(...) out[#out + 1] = table.concat({ ... }, " "); return 1; end);
    shell.run("monitor scale left 2");
    expect(peripheral.call("left", "getTextScale")):eq(2);
    shell.run("monitor left hello");
    expect(out[1]):eq("Running hello on monitor left");
    out = {};
    shell.run("monitor right hello");
    shell.run("monitor left nothing-here");
    expect(out):same({ "No monitor named right", "No such program: nothing-here" });
  end);
end);
