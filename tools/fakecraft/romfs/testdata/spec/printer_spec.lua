-- Specs for the printer (periphemu's "printer"): pages of 25x21, ink and paper, CC's
-- errors.

describe("a printer", function()
  before_each(function() periphemu.create("left", "printer", "ignored.pdf"); end);
  after_each(function() periphemu.remove("left"); end);

  it("prints a page at a time, each taking paper and ink", function()
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
end);
