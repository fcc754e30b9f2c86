-- Specs for the printer (periphemu's "printer"): pages of 25x21, ink and paper, CC's
-- errors. A pocket computer has nothing beside it (CC's PocketBrain attaches its upgrade on
-- the back, and nothing else), so on one these cases are pending.

local it_beside = pocket and pending or it;

describe("a printer", function()
  before_each(function() periphemu.create("left", "printer", "ignored.pdf"); end);
  after_each(function() periphemu.remove("left"); end);

  it_beside("prints a page at a time, each taking paper and ink", function()
    local printer = peripheral.wrap("left");
    expect(peripheral.getType("left")):eq("printer");
    expect(printer.getInkLevel()):eq(64);
    expect(printer.getPaperLevel()):eq(384);
    expect.error(printer.write, "x"):eq("Page not started");
    expect.error(printer.endPage):eq("Page not started");
    expect.error(printer.getPageSize):eq("Page not started");
    expect(printer.newPage()):eq(true);
    expect({ printer.getPageSize() }):same({ 25, 21 });
    printer.setPageTitle("Report");
    printer.write("Total: ");
    printer.write(42);
    expect({ printer.getCursorPos() }):same({ 10, 1 });
    printer.setCursorPos(2 ^ 32 + 3, 2.9); -- Java ints, as CC's getInt reads them: 3, 2
    printer.write(nil);
    expect({ printer.getCursorPos() }):same({ 6, 2 });
    expect(printer.endPage()):eq(true);
    expect(printer.getInkLevel()):eq(63);
    expect(printer.getPaperLevel()):eq(383);
    expect.error(printer.setCursorPos, 1, 0 / 0):eq("bad argument #2 (number expected, got nan)");
  end);

  -- CC runs newPage and endPage on the server's main thread (@LuaFunction(mainThread =
  -- true)): each answers on the next tick, its caller waiting for the task's task_complete,
  -- so an event the caller is sent meanwhile is not its own (a print server's rednet
  -- message arriving while it prints is lost to it).
  it_beside("answers newPage and endPage on the next tick", function()
    local printer = peripheral.wrap("left");
    for _, call in ipairs({ printer.newPage, printer.endPage }) do
      os.queueEvent("printer_spec_before");
      local started = os.clock();
      expect(call()):eq(true);
      expect(math.floor((os.clock() - started) / 0.05 + 0.5)):eq(1); -- one tick
      os.queueEvent("printer_spec_after");
      expect(os.pullEvent()):eq("printer_spec_after");
    end
    expect(printer.getPaperLevel()):eq(383);
  end);
end);
