-- Specs for /rom/apis/io.lua: Lua's io library over fs.

describe("io", function()
  local path = "/tmp/io_spec.txt";

  local function write_file(contents)
    local h = fs.open(path, "wb");
    h.write(contents);
    h.close();
  end

  local function read_file()
    local h = fs.open(path, "rb");
    local contents = h.readAll();
    h.close();
    return contents;
  end

  it("names its handles FILE* and tells them apart", function()
    expect(getmetatable(io.stdout).__name):eq("FILE*");
    expect(io.type(io.stdin)):eq("file");
    expect(io.type({})):eq(nil);
    local h = io.open(path, "w");
    expect(tostring(h):sub(1, 5)):eq("file ");
    h:close();
    expect(io.type(h)):eq("closed file");
    expect(tostring(h)):eq("file (closed)");
  end);

  it("refuses to close the standard streams", function()
    expect({ io.stdout:close() }):same({ nil, "attempt to close standard stream" });
  end);

  it("reads lines, counts, numbers and the rest", function()
    write_file("alo\n 12 3.5rest\nlast");
    local h = io.open(path);
    expect(h:read()):eq("alo");
    expect(h:read(1)):eq(" ");
    expect({ h:read("n", "*n") }):same({ 12, 3.5 });
    expect(h:read("L")):eq("rest\n");
    expect(h:read("a")):eq("last");
    expect(h:read("a")):eq("");
    expect(h:read(0)):eq(nil);
    expect(h:read("l")):eq(nil);
    h:close();
  end);

  it("reads several formats and stops at the first that finds nothing", function()
    write_file("0123456789\n");
    local h = io.open(path);
    expect({ h:read(1, 2, "a", "l") }):same({ "0", "12", "3456789\n", nil });
    h:close();
  end);

  it("rejects bad formats and modes", function()
    write_file("");
    local h = io.open(path);
    expect.error(h.read, h, "x"):eq("bad argument #1 (invalid format)");
    h:close();
    expect.error(io.open, path, "rw"):eq("Unsupported mode");
    expect.error(io.open, nil):eq("bad argument #1 (string expected, got nil)");
    expect({ io.open("/no/such/file") }):same({ nil, "/no/such/file: No such file" });
  end);

  it("closes the file io.lines opened when it ends", function()
    write_file("a\nb\n");
    local f = io.lines(path);
    expect(f()):eq("a");
    expect(f()):eq("b");
    expect(f()):eq(nil);
    expect.error(f):eq("file is already closed");
    expect.error(io.lines, ""):eq("/: Not a file");
  end);

  it("writes, seeks and appends", function()
    local h = io.open(path, "w");
    expect(h:write("alo alo", 1)):eq(h);
    expect(h:seek()):eq(8);
    expect(h:seek("cur", -4)):eq(4);
    h:write("joao");
    h:close();
    expect(read_file()):eq("alo joao");
    h = io.open(path, "a");
    h:write("!");
    h:close();
    expect(read_file()):eq("alo joao!");
  end);

  it("reports writes to a readable handle", function()
    write_file("x");
    local h = io.open(path, "r");
    expect({ h:write("y") }):same({ nil, "file is not writable" });
    h:close();
    expect.error(h.read, h):eq("attempt to use a closed file");
  end);

  it("redirects io.write and io.read through io.output and io.input", function()
    io.output(path);
    io.write("one\n", "two\n");
    io.close();
    expect(io.output()):eq(io.output());
    io.output(io.stdout);
    io.input(path);
    expect(io.read()):eq("one");
    expect(io.read("L")):eq("two\n");
    io.input():close();
    io.input(io.stdin);
  end);

  it("feeds load with lines", function()
    write_file("a = 10 + 34\na = 2*a\n");
    local env = {};
    load(io.lines(path, "L"), "=lines", "t", env)();
    expect(env.a):eq(88);
  end);
end);
