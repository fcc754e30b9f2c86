-- Specs for /rom/programs/import.lua and cc.internal.import: files dropped on the
-- computer (a file_transfer event) are saved in the shell's directory.

local DIR = "import-spec";

-- A TransferredFiles object over Lua strings; each file hands its contents over in
-- chunks of at most `chunk` bytes, as a binary read handle's read(n) does.
local function transfer(files, chunk)
  local handles = {};
  for _, file in ipairs(files) do
    local pos = 1;
    handles[#handles + 1] = {
      getName = function() return file[1]; end,
      read = function(n)
        if pos > #file[2] then return nil; end
        local size = math.min(n or 1, chunk or math.huge);
        local part = file[2]:sub(pos, pos + size - 1);
        pos = pos + #part;
        return part;
      end,
      close = function() end,
    };
  end
  return { getFiles = function() return handles; end };
end

-- Runs `import` in a hidden window, handing it each event in turn; returns the window's
-- text and whether the program ended.
local function run_import(events)
  local win = window.create(term.current(), 1, 1, 40, 10, false);
  local previous = term.redirect(win);
  local co = coroutine.create(shell.run);
  local ok, err = coroutine.resume(co, "import");
  for _, event in ipairs(events) do
    if not ok or coroutine.status(co) == "dead" then break; end
    ok, err = coroutine.resume(co, table.unpack(event));
  end
  term.redirect(previous);
  if not ok then error(err, 0); end
  local lines = {};
  for i = 1, 10 do
    local line = win.getLine(i):gsub(" +$", "");
    if line ~= "" then lines[#lines + 1] = line; end
  end
  return lines, coroutine.status(co) == "dead";
end

local function read_file(path)
  local handle = fs.open(path, "rb");
  local contents = handle.readAll();
  handle.close();
  return contents;
end

local function write_file(path, contents)
  local handle = fs.open(path, "wb");
  handle.write(contents);
  handle.close();
end

describe("import", function()
  local old_dir;
  before_each(function()
    fs.delete(DIR);
    fs.makeDir(DIR);
    old_dir = shell.dir();
    shell.setDir(DIR);
  end);
  after_each(function()
    shell.setDir(old_dir);
    fs.delete(DIR);
  end);

  it("saves every dropped file in the current directory, bytes unchanged", function()
    local big = ("\0\255ab"):rep(5000); -- 20000 bytes: several chunks
    local lines, ended = run_import({
      { "file_transfer", transfer({ { "a.txt", "first" }, { "b.bin", big } }, 8192) },
    });
    expect(ended):eq(true);
    expect(lines):same({ "Drop files to transfer them to this", "computer", "Transferring a.txt", "Transferring b.bin" });
    expect(read_file(DIR .. "/a.txt")):eq("first");
    expect(read_file(DIR .. "/b.bin")):eq(big);
  end);

  it("asks before overwriting, and keeps the file on no", function()
    write_file(DIR .. "/a.txt", "old");
    local lines, ended = run_import({
      { "file_transfer", transfer({ { "a.txt", "new" } }) },
      { "paste", "no" },
      { "key", keys.enter, false },
    });
    expect(ended):eq(true);
    expect(lines[3]):eq("The following files will be overwritten:");
    expect(lines[4]):eq("a.txt");
    expect(lines[5]):eq("Overwrite? (yes/no) no");
    expect(read_file(DIR .. "/a.txt")):eq("old");
  end);

  it("overwrites on yes (or just Enter)", function()
    write_file(DIR .. "/a.txt", "old");
    local _, ended = run_import({
      { "file_transfer", transfer({ { "a.txt", "new" } }) },
      { "key", keys.enter, false },
    });
    expect(ended):eq(true);
    expect(read_file(DIR .. "/a.txt")):eq("new");
  end);

  it("refuses a name that is a directory here", function()
    fs.makeDir(DIR .. "/sub");
    local lines = run_import({ { "file_transfer", transfer({ { "sub", "x" } }) } });
    expect(lines[#lines]):eq("sub is already a directory.");
    expect(fs.isDir(DIR .. "/sub")):eq(true);
  end);

  it("says when no files came, and Q gives up waiting", function()
    local lines = run_import({ { "file_transfer", transfer({}) } });
    expect(lines[#lines]):eq("No files to transfer");
    local _, ended = run_import({ { "char", "q" }, { "key", keys.q, false } });
    expect(ended):eq(true);
  end);
end);
