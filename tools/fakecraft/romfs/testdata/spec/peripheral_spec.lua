-- Specs for the peripheral API, periphemu (CraftOS-PC's, which `fakecraft test` gives its
-- computer), modems as CC's, and the redstone API. Every peripheral a spec attaches is
-- removed again, so the next spec finds the computer bare. A spec of one peripheral puts it
-- on the back, where a pocket computer wears its upgrade, so it runs on both; one of more
-- peripherals, or of other sides, is pending on a pocket computer, which has nothing beside
-- it (CC's PocketBrain attaches its upgrade on the back, and nothing else).

local SIDES = { "bottom", "top", "back", "front", "right", "left" };

-- A case of peripherals beside a computer: pending on a pocket computer.
local it_beside = pocket and pending or it;

-- The events queued so far (up to a marker), without waiting for more.
local function drain()
  os.queueEvent("spec_marker");
  local events = {};
  while true do
    local event = table.pack(os.pullEvent());
    if event[1] == "spec_marker" then return events; end
    events[#events + 1] = event;
  end
end

-- Attaches a peripheral for the length of fn; it is removed however fn ends. The
-- peripheral and peripheral_detach events are dropped.
local function with(name, kind, fn, ...)
  assert(periphemu.create(name, kind, ...));
  drain();
  local ok, err = pcall(fn);
  periphemu.remove(name);
  drain();
  if not ok then error(err, 0); end
end

describe("the peripheral API", function()
  it("sees nothing on a bare computer", function()
    expect(peripheral.getNames()):same({});
    expect(peripheral.isPresent("top")):eq(false);
    expect(peripheral.getType("top")):eq(nil);
    expect(peripheral.wrap("top")):eq(nil);
    expect(peripheral.call("top", "isOpen", 1)):eq(nil);
    expect(select("#", peripheral.find("modem"))):eq(0);
  end);

  it("checks its arguments as cc.expect does", function()
    expect.error(peripheral.isPresent, nil):eq("bad argument #1 (string expected, got nil)");
    expect.error(peripheral.getType, nil):eq("bad argument #1 (string or table expected, got nil)");
    expect.error(peripheral.getType, {}):eq("bad argument #1 (table is not a peripheral)");
    expect.error(peripheral.getName, {}):eq("bad argument #1 (table is not a peripheral)");
    expect.error(peripheral.call, "top", nil):eq("bad argument #2 (string expected, got nil)");
    expect.error(peripheral.find, "modem", false):eq("bad argument #2 (function expected, got boolean)");
  end);

  it_beside("lists, wraps and finds what periphemu attaches, sides first in CC's order", function()
    with("Left", "modem", function()
      with("monitor_3", "ender_modem", function()
        expect(peripheral.getNames()):same({ "left", "monitor_3" });
        expect(peripheral.isPresent("LEFT")):eq(true);
        expect(peripheral.getType("left")):eq("modem");
        expect(peripheral.hasType("left", "modem")):eq(true);
        expect(peripheral.hasType("left", "monitor")):eq(false);
        local modem = peripheral.wrap("left");
        expect(peripheral.getName(modem)):eq("left");
        expect(peripheral.getType(modem)):eq("modem");
        expect(type(modem.transmit)):eq("function");
        expect(peripheral.getMethods("left")):same({ "isOpen", "isWireless", "transmit", "closeAll", "close", "open" });
        local found = { peripheral.find("modem", function(name) return name ~= "left"; end) };
        expect(#found):eq(1);
        expect(peripheral.getName(found[1])):eq("monitor_3");
      end);
    end);
    expect(peripheral.getNames()):same({});
  end);

  it("queues peripheral and peripheral_detach as periphemu attaches and removes", function()
    periphemu.create("back", "modem");
    periphemu.remove("back");
    local events = drain();
    expect(events[1]):same({ "peripheral", "back", n = 2 });
    expect(events[2]):same({ "peripheral_detach", "back", n = 2 });
  end);

  it("blames a method's bad argument on the caller of peripheral.call", function()
    with("back", "modem", function()
      expect.error(function() peripheral.call("back", "isOpen", false) end)
        :str_match("^[^:]+:%d+: bad argument #1 %(number expected, got boolean%)$");
      expect.error(function() peripheral.wrap("back").open(70000) end)
        :str_match("^[^:]+:%d+: Expected number in range 0%-65535$");
      expect.error(function() peripheral.call("back", "fly") end)
        :str_match("^[^:]+:%d+: No such method fly$");
    end);
  end);

  it("places a method's error at level 2 exactly: none when pcall calls peripheral.call", function()
    -- CC raises it one level above peripheral.call (PeripheralAPI.call), a fixed level:
    -- under pcall that is pcall, C, so no position (the wrapper tail-calls peripheral.call).
    with("back", "modem", function()
      expect({ pcall(peripheral.wrap("back").open, 70000) }):same({ false, "Expected number in range 0-65535" });
      expect({ pcall(peripheral.call, "back", "isOpen", false) })
        :same({ false, "bad argument #1 (number expected, got boolean)" });
      expect({ pcall(function() return peripheral.call("back", "fly") end) }):same({ false, "No such method fly" });
    end);
  end);

  -- CC keeps a peripheral's methods in a HashMap (MethodSupplier.getSelfMethods), and
  -- getMethods lists its keys in the map's iteration order, which the names' Java hashes
  -- decide (read off Java's HashMap); peripheral.wrap's table follows that list.
  it("lists a peripheral's methods in the order CC's map of them iterates", function()
    with("back", "speaker", function()
      expect(table.concat(peripheral.getMethods("back"), " ")):eq("playAudio stop playSound playNote");
    end);
    with("back", "modem", function()
      expect(table.concat(peripheral.getMethods("back"), " ")):eq("isOpen isWireless transmit closeAll close open");
    end);
  end);
end);

describe("periphemu", function()
  it_beside("answers false and a reason, as CraftOS-PC does", function()
    expect({ periphemu.create("top", "toaster") }):same({ false, "No peripheral named toaster (one of " ..
      table.concat(periphemu.names(), ", ") .. ")" });
    with("top", "modem", function()
      expect({ periphemu.create("top", "modem") }):same({ false, "Peripheral already attached on side top" });
    end);
    expect(periphemu.remove("top")):eq(false);
  end);

  it("checks the side first, then the type", function()
    -- periphemu.create() was about argument #2.
    expect({ pcall(periphemu.create) }):same({ false, "bad argument #1 (string or number expected, got no value)" });
    expect({ pcall(periphemu.create, {}, "modem") }):same({ false, "bad argument #1 (string or number expected, got table)" });
    expect({ pcall(periphemu.create, "top") }):same({ false, "bad argument #2 (string expected, got no value)" });
  end);

  it_beside("names a numbered peripheral after its type", function()
    with(2, "modem", function() expect(peripheral.isPresent("modem_2")):eq(true); end);
    with("7", "modem", function() expect(peripheral.isPresent("modem_7")):eq(true); end);
  end);
end);

describe("a modem", function()
  it_beside("hears another modem on an open channel, with its own copy of the message", function()
    with("left", "modem", function()
      with("right", "modem", function()
        local left, right = peripheral.wrap("left"), peripheral.wrap("right");
        right.open(5);
        local shared = { 1 };
        local message = { a = shared, b = shared, f = print };
        message.self = message;
        left.transmit(5, 7, message);
        left.transmit(6, 7, "closed channel");
        local events = drain();
        expect(#events):eq(1);
        local event = events[1];
        expect({ event[1], event[2], event[3], event[4], event[6] }):same({ "modem_message", "right", 5, 7, 0 });
        local got = event[5];
        expect(got.a):same({ 1 });
        expect(got.a == got.b):eq(true);
        expect(got.self == got):eq(true);
        expect(got.f):eq(nil);
        expect(got.a == shared):eq(false);
      end);
    end);
  end);

  -- CC copies a payload through Java: its toObject puts a table's entries in a HashMap in
  -- the order pairs walks them, and the receiver's table is set in that map's order, by the
  -- keys' Java hashCodes, so pairs walks it as a table set in that order: Java 21's HashMap
  -- walks these keys as 1, 2, nSender, 3, nRecipient, sProtocol, reply, message, nMessageID
  -- (reply and message share a bucket, in the order pairs gave them).
  it_beside("hands over a table set in the order of CC's Java map", function()
    with("left", "modem", function()
      with("right", "modem", function()
        peripheral.call("right", "open", 5);
        peripheral.call("left", "transmit", 5, 5, {
          10, 20, 30, nMessageID = 1, nRecipient = 2, nSender = 3, message = "m", sProtocol = "p", reply = 4,
        });
        local got = drain()[1][5];
        local javas = {};
        javas[1] = 10; javas[2] = 20; javas.nSender = 3; javas[3] = 30; javas.nRecipient = 2;
        javas.sProtocol = "p"; javas.reply = 4; javas.message = "m"; javas.nMessageID = 1;
        local function walk(t)
          local keys = {};
          for k, v in pairs(t) do keys[#keys + 1] = tostring(k) .. "=" .. tostring(v); end
          return table.concat(keys, " ");
        end
        expect(walk(got)):eq(walk(javas));
      end);
    end);
  end);

  it("never hears itself", function()
    with("back", "modem", function()
      local modem = peripheral.wrap("back");
      modem.open(1);
      modem.transmit(1, 1, "echo?");
      expect(drain()):same({});
      modem.closeAll();
    end);
  end);

  it_beside("keeps to its own network number", function()
    with("left", "modem", function()
      with("right", "modem", function()
        peripheral.call("right", "open", 3);
        peripheral.call("left", "transmit", 3, 3, "over the air");
        expect(drain()):same({});
      end, 9);
    end);
  end);

  it("opens at most 128 channels, each between 0 and 65535", function()
    with("back", "modem", function()
      local modem = peripheral.wrap("back");
      for channel = 1, 128 do modem.open(channel); end
      expect(modem.isOpen(128)):eq(true);
      expect.error(modem.open, 129):str_match("Too many open channels$");
      modem.close(1);
      modem.open(129);
      expect(modem.isOpen(1)):eq(false);
      modem.closeAll();
      expect(modem.isOpen(129)):eq(false);
      expect.error(modem.isOpen, -1):str_match("Expected number in range 0%-65535$");
      expect.error(modem.transmit, 1, 65536, ""):str_match("Expected number in range 0%-65535$");
      expect(modem.isWireless()):eq(true);
    end);
  end);

  it("reads a channel as a Java int, as CC's getInt does", function()
    with("back", "modem", function()
      local modem = peripheral.wrap("back");
      modem.open(65535.5);
      expect(modem.isOpen(65535)):eq(true);
      modem.open(-0.5);
      expect(modem.isOpen(0)):eq(true);
      modem.open(2 ^ 32 + 1);
      expect(modem.isOpen(1)):eq(true);
      expect.error(modem.open, 2 ^ 31):eq("Expected number in range 0-65535");
      modem.closeAll();
    end);
  end);

  -- CC converts all of transmit's arguments (two Java ints) before its body checks either
  -- channel's range (ModemPeripheral.transmit's parseChannel), so a bad second argument's
  -- type is reported before a first that is out of range.
  it("reads both of transmit's channels before checking their range", function()
    with("back", "modem", function()
      local modem = peripheral.wrap("back");
      expect.error(modem.transmit, -1, "x", "hi"):eq("bad argument #2 (number expected, got string)");
      expect.error(modem.transmit, 70000):eq("bad argument #2 (number expected, got nil)");
      expect.error(modem.transmit, 70000, 1):eq("Expected number in range 0-65535");
      expect.error(modem.transmit, 1, 70000):eq("Expected number in range 0-65535");
    end);
  end);
end);

describe("the redstone API", function()
  it("lists CC's sides and checks them", function()
    expect(rs.getSides()):same(SIDES);
    expect(redstone):eq(rs);
    expect.error(rs.getInput, "up"):eq("bad argument #1 (unknown option up)");
    expect.error(rs.getInput, nil):eq("bad argument #1 (string expected, got nil)");
    expect.error(rs.setOutput, "top", nil):eq("bad argument #2 (boolean expected, got nil)");
  end);

  it("keeps outputs, analogue and bundled", function()
    rs.setOutput("Top", true);
    expect(rs.getAnalogOutput("top")):eq(15);
    rs.setAnalogueOutput("top", 3);
    expect(rs.getOutput("top")):eq(true);
    expect(rs.getAnalogueOutput("top")):eq(3);
    expect.error(rs.setAnalogOutput, "top", 16):eq("Expected number in range 0-15");
    expect.error(rs.setAnalogOutput, "top", 0 / 0):eq("bad argument #2 (number expected, got nan)");
    rs.setBundledOutput("back", colors.red + colors.blue);
    expect(rs.getBundledOutput("back")):eq(colors.red + colors.blue);
    rs.setAnalogOutput("top", 0);
    rs.setBundledOutput("back", 0);
    expect(rs.getOutput("top")):eq(false);
    expect(rs.getInput("top")):eq(false);
    expect(rs.testBundledInput("top", 0)):eq(true);
  end);

  it("reads strengths as Java ints and keeps a bundled output whole, as CC does", function()
    rs.setAnalogOutput("top", 2 ^ 32 + 3);
    expect(rs.getAnalogOutput("top")):eq(3);
    rs.setAnalogOutput("top", -0.5);
    expect(rs.getAnalogOutput("top")):eq(0);
    rs.setBundledOutput("back", 65536 + 3);
    expect(rs.getBundledOutput("back")):eq(65539);
    rs.setBundledOutput("back", -1);
    expect(rs.getBundledOutput("back")):eq(-1);
    rs.setBundledOutput("back", 0);
  end);
end);
