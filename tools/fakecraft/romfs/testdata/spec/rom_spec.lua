-- Specs for the layout of fakecraft's /rom: at its top exactly what CC: Tweaked's ROM holds,
-- so code that lists or searches it (fs.find, shell completion) sees what it would in the
-- game; fakecraft's launcher lives outside it.

describe("the ROM", function()
  it("holds CC's top-level entries and nothing else", function()
    expect(fs.list("/rom")):same({
      "apis", "autorun", "help", "modules", "motd.txt", "programs", "startup.lua",
    });
    expect(fs.isDir("/rom/fakecraft")):eq(false);
  end);

  it("holds only CC's modules in modules/main", function()
    expect(fs.list("/rom/modules/main")):same({ ".ignoreme", "cc" });
  end);

  it("keeps the command computers' places, as fs.find sees them", function()
    expect(fs.find("rom/*/command")):same({
      "rom/apis/command", "rom/modules/command", "rom/programs/command",
    });
  end);

  it("has the files CC's own specs search for", function()
    expect(fs.find("rom/*/lua*")):same({ "rom/help/lua.txt", "rom/programs/lua.lua" });
    expect(fs.find("rom/programs/mo??.lua")):same({ "rom/programs/motd.lua", "rom/programs/move.lua" });
    expect(fs.find("rom/motd.txt")):same({ "rom/motd.txt" });
  end);

  it("refuses the command API on an ordinary computer", function()
    local ok, err = pcall(dofile, "/rom/apis/command/commands.lua");
    expect(ok):eq(false);
    expect(err):str_match("Cannot load command API on normal computer");
    expect(commands):eq(nil);
  end);

  it("has a help topic for every program it ships", function()
    local missing = {};
    local function walk(dir)
      for _, name in ipairs(fs.list(dir)) do
        local path = fs.combine(dir, name);
        if fs.isDir(path) then
          walk(path);
        elseif name:sub(-4) == ".lua" and not help.lookup(name:sub(1, -5)) then
          missing[#missing + 1] = path;
        end
      end
    end
    walk("/rom/programs");
    expect(missing):same({});
  end);

  it("has CC's changelog and turtle help topics, completed without their extension", function()
    expect(help.completeTopic("changel")):same({ "og" });
    expect(help.completeTopic("turt")):same({ "le" });
  end);

  it("leaves fakecraft's launcher outside /rom", function()
    expect(fs.exists("/.fakecraft/boot.lua")):eq(true);
    expect(fs.isReadOnly("/.fakecraft")):eq(true);
    expect(shell.getRunningProgram()):eq(".fakecraft/spec.lua");
  end);
end);
