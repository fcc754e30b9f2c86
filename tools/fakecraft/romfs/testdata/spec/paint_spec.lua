-- Specs for /rom/programs/fun/advanced/paint.lua, driven by queued mouse and key events as
-- a player's would arrive, on a window the size of the computer's screen.

local FILE = "/paint-spec.nfp";

local function press(...)
  for _, key in ipairs({ ... }) do
    os.queueEvent("key", key, false);
    os.queueEvent("key_up", key);
  end
end

local function click(button, x, y)
  os.queueEvent("mouse_click", button, x, y);
  os.queueEvent("mouse_up", button, x, y);
end

local function read_file(path)
  local handle = fs.open(path, "r");
  local text = handle.readAll();
  handle.close();
  return text;
end

-- The menu: Ctrl opens it on Save; Right moves to Exit.
local function save() press(keys.leftCtrl, keys.enter); end
local function quit() press(keys.leftCtrl, keys.right, keys.enter); end

-- Runs paint with line's arguments on a fresh 51×19 window; returns the window.
local function run_paint(line)
  local previous = term.current();
  local win = window.create(previous, 1, 1, 51, 19, false);
  term.redirect(win);
  local ok, err = pcall(shell.run, line);
  term.redirect(previous);
  if not ok then error(err, 0); end
  return win;
end

describe("paint", function()
  before_each(function() fs.delete(FILE); end);
  after_each(function() fs.delete(FILE); end);

  it("shows its usage, and refuses a directory", function()
    local lines = {};
    stub(_G, "print", function(text) lines[#lines + 1] = text; end);
    shell.run("paint");
    shell.run("paint /rom");
    expect(lines):same({ "Usage: paint <path>", "Cannot edit a directory." });
  end);

  it("needs an advanced computer", function()
    local lines = {};
    stub(_G, "print", function(text) lines[#lines + 1] = text; end);
    stub(term, "isColour", function() return false; end);
    shell.run("paint " .. FILE);
    expect(lines):same({ "Requires an Advanced Computer" });
  end);

  it("paints with the colours picked for each button, and saves an image", function()
    click(1, 51, 15);        -- left button: red (the 15th swatch)
    click(1, 1, 1);
    os.queueEvent("mouse_drag", 1, 2, 1);
    click(2, 50, 12);        -- right button: blue
    click(2, 3, 2);
    save();
    quit();
    run_paint("paint " .. FILE);
    expect(read_file(FILE)):eq("ee\n  b");
    expect(paintutils.loadImage(FILE)):same({ { colours.red, colours.red }, { 0, 0, colours.blue } });
  end);

  it("adds the default extension to a new file without one", function()
    save();
    quit();
    run_paint("paint /paint-spec");
    expect(fs.exists(FILE)):eq(true);
  end);

  it("loads an image, shows it, scrolls, and erases with transparent", function()
    local handle = fs.open(FILE, "w");
    handle.write("4 4\n 1");
    handle.close();
    local seen;
    -- After loading: check the screen, scroll one right, erase the pixel now at 1,1 (the
    -- image's 2,1 is transparent already, so erase its 3,1, then at 2,1 on screen).
    stub(os, "pullEvent", function(...)
      local event = table.pack(os.pullEventRaw(...));
      if not seen then
        seen = { term.current().getLine(1) };
      end
      return table.unpack(event, 1, event.n);
    end);
    press(keys.right);
    click(1, 51, 17);        -- left button: transparent
    click(1, 2, 1);
    save();
    quit();
    run_paint("paint " .. FILE);
    expect(seen[1]:sub(1, 3)):eq(" \127 ");
    expect(seen[3]:sub(1, 3)):eq("4f4");
    expect(read_file(FILE)):eq("4\n 1");
  end);
end);
