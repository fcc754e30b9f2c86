-- Specs for /rom/programs/advanced/multishell.lua (tabs and the multishell API) and the
-- bg and fg programs. multishell runs in a coroutine drawing into a hidden 30x8 window,
-- its first tab running the fixture prog_tab.

local HERE = fs.getDir((debug.getinfo(1, "S").source:gsub("^[@=]", "")));
local TAB = "/" .. fs.combine(HERE, "fixtures/prog_tab.lua");

local WIDTH, HEIGHT = 30, 8;

-- Starts multishell with its first tab running `prog_tab first`. Returns a handle: send
-- hands it an event, line(n) reads the screen, api is the multishell API.
local function start()
  _G.MS_SPEC = {};
  local win = window.create(term.current(), 1, 1, WIDTH, HEIGHT, false);
  local co = coroutine.create(function(...)
    os.run({}, "/rom/programs/advanced/multishell.lua", ...);
  end);
  local ms = { win = win, co = co };
  function ms.send(...)
    local previous = term.redirect(win);
    local ok, err = coroutine.resume(co, ...);
    term.redirect(previous);
    if not ok then error(err, 0); end
  end
  function ms.line(n)
    return (win.getLine(n):gsub(" +$", ""));
  end
  -- Runs fn (an API call) with the screen redirected as when a program makes it.
  function ms.call(fn, ...)
    local previous = term.redirect(win);
    local result = table.pack(fn(...));
    term.redirect(previous);
    return table.unpack(result, 1, result.n);
  end
  ms.send(TAB, "first");
  ms.api = _G.MS_SPEC.first.multishell;
  return ms;
end

describe("multishell", function()
  after_each(function()
    _G.MS_SPEC = nil;
  end);

  it("runs its first tab's shell with its arguments, giving it the multishell API", function()
    local ms = start();
    local first = _G.MS_SPEC.first;
    expect(type(first.multishell)):eq("table");
    expect(first.current):eq(1);
    expect(ms.api.getCount()):eq(1);
    expect(ms.api.getFocus()):eq(1);
    expect(ms.api.getTitle(1)):eq("prog_tab");
    expect(ms.api.getTitle(2)):eq(nil);
    expect(coroutine.status(ms.co)):eq("suspended");
  end);

  it("checks its arguments with CC's messages", function()
    local ms = start();
    expect.error(ms.api.setFocus, nil):eq("bad argument #1 (number expected, got nil)");
    expect.error(ms.api.getTitle, nil):eq("bad argument #1 (number expected, got nil)");
    expect.error(ms.api.setTitle, nil):eq("bad argument #1 (number expected, got nil)");
    expect.error(ms.api.setTitle, 1, nil):eq("bad argument #2 (string expected, got nil)");
    expect.error(ms.api.launch, nil):eq("bad argument #1 (table expected, got nil)");
    expect.error(ms.api.launch, {}, nil):eq("bad argument #2 (string expected, got nil)");
  end);

  it("shows no tab bar for one tab, and one once a second tab opens in the background", function()
    local ms = start();
    expect(ms.line(1)):eq("");
    local id = ms.call(_G.MS_SPEC.first.shell.openTab, TAB, "second");
    expect(id):eq(2);
    expect(ms.api.getCount()):eq(2);
    expect(ms.api.getFocus()):eq(1);
    expect(_G.MS_SPEC.second.current):eq(2);
    expect(ms.line(1)):eq(" prog_tab  prog_tab");
    expect({ ms.win.getCursorPos() }):same({ 1, 2 });
  end);

  it("gives its shells openTab and switchTab", function()
    local ms = start();
    local tab_shell = _G.MS_SPEC.first.shell;
    expect(ms.call(tab_shell.openTab, TAB .. " second")):eq(2);
    expect(ms.api.getTitle(2)):eq("prog_tab");
    expect.error(tab_shell.switchTab, nil):eq("bad argument #1 (number expected, got nil)");
    ms.call(tab_shell.switchTab, 2);
    expect(ms.api.getFocus()):eq(2);
  end);

  it("renames a tab and switches the tab on show", function()
    local ms = start();
    ms.call(ms.api.launch, {}, TAB, "second");
    ms.call(ms.api.setTitle, 2, "two");
    expect(ms.line(1)):eq(" prog_tab  two");
    expect(ms.call(ms.api.setFocus, 2)):eq(true);
    expect(ms.api.getFocus()):eq(2);
    expect(ms.call(ms.api.setFocus, 3)):eq(false);
    expect(ms.api.getFocus()):eq(2);
  end);

  it("gives typed input to the tab on show and other events to every tab", function()
    local ms = start();
    ms.call(ms.api.launch, {}, TAB, "second");
    ms.send("char", "a");
    ms.send("spec_ping");
    ms.call(ms.api.setFocus, 2);
    ms.send("key", 30, false);
    -- The bar's arrival resized the windows: after the next event, every tab hears it.
    expect(_G.MS_SPEC.first.events):same({ "char", "term_resize", "spec_ping" });
    expect(_G.MS_SPEC.second.events):same({ "term_resize", "spec_ping", "key" });
  end);

  it("switches tabs when a title on the bar is clicked", function()
    local ms = start();
    ms.call(ms.api.launch, {}, TAB, "second");
    ms.send("mouse_click", 1, 13, 1);
    expect(ms.api.getFocus()):eq(2);
    ms.send("mouse_click", 1, 2, 1);
    expect(ms.api.getFocus()):eq(1);
    -- Below the bar, a click reaches the tab on show, one row up.
    ms.send("mouse_click", 1, 2, 3);
    expect(_G.MS_SPEC.first.events):same({ "term_resize", "mouse_click" });
  end);

  it("keeps an unseen tab's last words until a key is pressed in it", function()
    local ms = start();
    ms.call(ms.api.launch, {}, TAB, "second");
    ms.send("ms_spec_end", "second");
    expect(ms.api.getCount()):eq(2);
    ms.call(ms.api.setFocus, 2);
    local shown = {};
    for i = 2, HEIGHT do shown[#shown + 1] = ms.line(i); end
    expect(table.concat(shown, "\n")):str_match("Press any key to continue");
    ms.send("char", "x");
    expect(ms.api.getCount()):eq(1);
    expect(ms.api.getFocus()):eq(1);
    expect(ms.line(1)):eq("");
  end);

  it("shows the tab before a closed one and ends with its last tab", function()
    local ms = start();
    ms.call(ms.api.launch, {}, TAB, "second");
    ms.call(ms.api.setFocus, 2);
    ms.call(ms.api.launch, {}, TAB, "third");
    ms.call(ms.api.setFocus, 3);
    ms.send("ms_spec_end", "third");
    expect(ms.api.getCount()):eq(2);
    expect(ms.api.getFocus()):eq(2);
    ms.send("ms_spec_end", "first");
    expect(ms.api.getFocus()):eq(1);
    expect(ms.api.getTitle(1)):eq("prog_tab.lua"); -- launched directly: its file name
    expect(coroutine.status(ms.co)):eq("suspended");
    ms.send("ms_spec_end", "second");
    expect(coroutine.status(ms.co)):eq("dead");
  end);
end);

describe("bg and fg", function()
  -- Runs a command line with printError captured.
  local function run(line)
    local errors = {};
    stub(_G, "printError", function(...) errors[#errors + 1] = table.concat({ ... }, "\t"); end);
    local ok = shell.run(line);
    return ok, errors;
  end

  it("need multishell", function()
    expect(shell.openTab):eq(nil);
    local _, errors = run("/rom/programs/advanced/bg.lua");
    expect(errors):same({ "Requires multishell" });
    _, errors = run("/rom/programs/advanced/fg.lua");
    expect(errors):same({ "Requires multishell" });
  end);

  it("bg opens a tab in the background, fg switches to it", function()
    local opened = stub(shell, "openTab", function() return 7; end);
    local switched = stub(shell, "switchTab");
    run("/rom/programs/advanced/bg.lua");
    expect(opened):called_with("shell");
    expect(switched):called(0);
    run("/rom/programs/advanced/fg.lua lua -e x");
    expect(opened):called_with("lua", "-e", "x");
    expect(switched):called_with(7);
  end);
end);
