-- Specs for /apis/libsandboxsettings: the URL rules and the settings' definitions.

local lib = require('/apis/libsandboxsettings');

describe("libsandboxsettings", function()
  describe("repairScheme", function()
    it("gives a scheme's lost slash or colon back and leaves any other URL as it is", function()
      expect(lib.repairScheme("ws:/127.0.0.1:4444")):eq("ws://127.0.0.1:4444");
      expect(lib.repairScheme("ws:127.0.0.1:4444")):eq("ws://127.0.0.1:4444");
      expect(lib.repairScheme("wss//gw.example.org/x")):eq("wss://gw.example.org/x");
      for _, url in ipairs({ "ws://127.0.0.1:4444", "127.0.0.1:4444", "ws:4444", "localhost//trapos/ws", "ws:///x" }) do
        expect(lib.repairScheme(url)):eq(url);
      end
    end);
  end);

  describe("normaliseUrl", function()
    it("completes a bare host:port with the gateway path", function()
      expect(lib.normaliseUrl("ws://127.0.0.1:4444")):eq("ws://127.0.0.1:4444/trapos/ws");
      expect(lib.normaliseUrl("ws://127.0.0.1:4444/")):eq("ws://127.0.0.1:4444/trapos/ws");
      expect(lib.normaliseUrl("wss://gw.example.org")):eq("wss://gw.example.org/trapos/ws");
    end);

    it("keeps an explicit path", function()
      expect(lib.normaliseUrl("ws://host:4444/trapos/ws")):eq("ws://host:4444/trapos/ws");
      expect(lib.normaliseUrl("ws://host:4444/other")):eq("ws://host:4444/other");
    end);

    it("adds ws:// like CC does and trims blanks", function()
      expect(lib.normaliseUrl("host:4444")):eq("ws://host:4444/trapos/ws");
      expect(lib.normaliseUrl("  ws://host:4444  ")):eq("ws://host:4444/trapos/ws");
    end);

    it("gives a scheme that lost a slash of its // both back, not the host's name", function()
      -- CC would put ws:// in front (ws://ws:/127.0.0.1:4444) and look the host "ws" up
      expect(lib.normaliseUrl("ws:/127.0.0.1:4444")):eq("ws://127.0.0.1:4444/trapos/ws");
      expect(lib.normaliseUrl("ws:127.0.0.1:4444")):eq("ws://127.0.0.1:4444/trapos/ws");
      expect(lib.normaliseUrl("WSS:/gw.example.org/sandbox/trapos/ws")):eq("WSS://gw.example.org/sandbox/trapos/ws");
      -- an http URL keeps its scheme, which the daemon then refuses by name (not ws://)
      expect(lib.normaliseUrl("http:/127.0.0.1:4444")):eq("http://127.0.0.1:4444");
      -- a host:port is no scheme, and three slashes are not a missing one
      expect(lib.normaliseUrl("localhost:4444")):eq("ws://localhost:4444/trapos/ws");
      -- a host that bears a scheme's name, with its port (a compose service "ws"): no scheme
      -- lost its slashes there, and reading one made the port the host (ws://4444)
      expect(lib.normaliseUrl("ws:4444")):eq("ws://ws:4444/trapos/ws");
      expect(lib.normaliseUrl("wss:4444/trapos/ws")):eq("ws://wss:4444/trapos/ws");
      expect(lib.normaliseUrl("http:8080/")):eq("ws://http:8080/trapos/ws");
      expect(lib.normaliseUrl("ws:///x")):eq("ws:///x");
      -- any scheme: ftp:/host is ftp's (refused by name), not a host named ftp
      expect(lib.normaliseUrl("ftp:/10.0.0.9:4444")):eq("ftp://10.0.0.9:4444");
      expect(lib.normaliseUrl("ftp:10.0.0.9")):eq("ftp://10.0.0.9");
      expect(lib.normaliseUrl("ftp:21")):eq("ws://ftp:21/trapos/ws");
    end);

    it("completes only a ws:// or wss:// URL with the gateway's path, so another is refused as set", function()
      -- completed, ftp://10.0.0.9 was refused as ftp://10.0.0.9/trapos/ws, never typed
      expect(lib.normaliseUrl("ftp://10.0.0.9")):eq("ftp://10.0.0.9");
      expect(lib.normaliseUrl("ftp://10.0.0.9/")):eq("ftp://10.0.0.9/");
      expect(lib.normaliseUrl("https://mc.example.org")):eq("https://mc.example.org");
      expect(lib.normaliseUrl("WS://10.0.0.9:4444")):eq("WS://10.0.0.9:4444/trapos/ws");
      expect(lib.normaliseUrl("wss://mc.example.org/")):eq("wss://mc.example.org/trapos/ws");
    end);

    it("gives a scheme that lost the colon of its :// back, not the host's name", function()
      -- CC would put ws:// in front (ws://ws//127.0.0.1:4444) and look the host "ws" up
      expect(lib.normaliseUrl("ws//127.0.0.1:4444")):eq("ws://127.0.0.1:4444/trapos/ws");
      expect(lib.normaliseUrl("WSS//gw.example.org/sandbox/trapos/ws")):eq("WSS://gw.example.org/sandbox/trapos/ws");
      -- http's too, which the daemon and setup then refuse by name
      expect(lib.normaliseUrl("http//10.0.0.9:4444/trapos/install")):eq("http://10.0.0.9:4444/trapos/install");
      -- a host, then a path with an empty segment: no scheme lost anything
      expect(lib.normaliseUrl("localhost//trapos/ws")):eq("ws://localhost//trapos/ws");
    end);

    it("reads a value that is not text as set stores it: digits as the URL, anything else as none", function()
      expect(lib.normaliseUrl(4444)):eq("ws://4444/trapos/ws");
      expect(lib.normaliseUrl(true)):eq(nil);
      expect(lib.normaliseUrl({})):eq(nil);
    end);

    it("returns nil for nothing", function()
      expect(lib.normaliseUrl(nil)):eq(nil);
      expect(lib.normaliseUrl("")):eq(nil);
      expect(lib.normaliseUrl("   ")):eq(nil);
    end);

    it("extracts the host", function()
      expect(lib.urlHost("ws://127.0.0.1:4444/trapos/ws")):eq("127.0.0.1");
      expect(lib.urlHost("wss://gw.example.org/x")):eq("gw.example.org");
    end);
  end);

  describe("urlSet and password", function()
    -- The one place the daemon's hello, sandbox setup and its defaults read the two as text.
    local function holding(name, value)
      return { get = function(asked) if asked == name then return value; end end };
    end

    it("read text as it is and digits that set stored as a number as text", function()
      expect(lib.password(holding("sandbox.password", "pw 1"))):eq("pw 1");
      expect(lib.password(holding("sandbox.password", 1234))):eq("1234");
      expect(lib.urlSet(holding("sandbox.url", "ws://10.0.0.9:4444"))):eq("ws://10.0.0.9:4444");
      expect(lib.urlSet(holding("sandbox.url", 4444))):eq("4444");
    end);

    it("read a value of another type, or none, as not set", function()
      for _, value in ipairs({ true, {}, false }) do
        expect(lib.password(holding("sandbox.password", value))):eq("");
        expect(lib.urlSet(holding("sandbox.url", value))):eq(nil);
      end
      expect(lib.password(holding("sandbox.password", nil))):eq("");
      expect(lib.urlSet(holding("sandbox.url", nil))):eq(nil);
    end);

    -- What the guards of a client not whole (a library missing) name: the gateway's own line
    -- from sandbox.url, where they said wget run .../trapos/install on every computer.
    it("installLine is the gateway's install line from sandbox.url, or the generic one", function()
      local generic = "wget run .../trapos/install, as its operator gives it out";
      for _, case in ipairs({
        { "ws://10.0.0.9:4444", "wget run http://10.0.0.9:4444/trapos/install" },
        { "10.0.0.9:4444", "wget run http://10.0.0.9:4444/trapos/install" },
        { "ws:/10.0.0.9:4444/trapos/ws", "wget run http://10.0.0.9:4444/trapos/install" },
        { "WSS://mc.example.org/sandbox/trapos/ws", "wget run https://mc.example.org/sandbox/trapos/install" },
        { 4444, "wget run http://4444/trapos/install" },
        -- none, or one that names no gateway's WebSocket: where to get the line
        { nil, generic }, { "  ", generic }, { true, generic }, { "ftp://10.0.0.9", generic },
        { "http://10.0.0.9:4444/trapos/install", generic }, { "ws://10.0.0.9:4444/other", generic },
      }) do
        expect(lib.installLine(holding("sandbox.url", case[1]))):eq(case[2]);
      end
    end);
  end);

  describe("defineSettings", function()
    it("defines the URL and the password with help text", function()
      local defined = {};
      lib.defineSettings({ define = function(name, options) defined[name] = options; end });
      expect(defined["sandbox.url"].type):eq("string");
      expect(defined["sandbox.url"].description):str_match("gateway");
      expect(defined["sandbox.password"].type):eq("string");
      expect(defined["sandbox.password"].default):eq("");
      -- CC's `set sandbox.password` prints the value in full above it: a linked computer's is
      -- its own credential, and either is a secret the player keeps off watched screens.
      expect(defined["sandbox.password"].description):eq("The trap-sandbox gateway's password, or this computer's own"
        .. " credential (sandbox link); set shows it to anyone at the screen");
    end);

    it("defines sandbox.ai_confirm as a boolean that defaults to asking", function()
      local defined = {};
      lib.defineSettings({ define = function(name, options) defined[name] = options; end });
      expect(defined["sandbox.ai_confirm"].type):eq("boolean");
      expect(defined["sandbox.ai_confirm"].default):eq(true);
      expect(defined["sandbox.ai_confirm"].description):str_match("agent");
    end);
  end);

  describe("aiConfirm", function()
    local function with(value)
      return { get = function(name) if name == "sandbox.ai_confirm" then return value; end end };
    end

    it("asks unless the owner set false", function()
      expect(lib.aiConfirm(with(nil))):eq(true);
      expect(lib.aiConfirm(with(true))):eq(true);
      expect(lib.aiConfirm(with("false"))):eq(true);
      expect(lib.aiConfirm(with(false))):eq(false);
    end);

    it("is shown naming a value that is not a boolean", function()
      expect(lib.aiConfirmShown(with(nil))):eq("true");
      expect(lib.aiConfirmShown(with(false))):eq("false");
      expect(lib.aiConfirmShown(with("false"))):eq('true, as "false" is not the boolean false');
    end);
  end);

  describe("execShown", function()
    local function with(value)
      return { get = function(name) if name == "sandbox.allow_exec" then return value; end end };
    end

    it("shows the boolean, naming a value that is not one", function()
      expect(lib.execShown(with(nil))):eq("false");
      expect(lib.execShown(with(true))):eq("true");
      expect(lib.execShown(with("true"))):eq('false, as "true" is not the boolean true');
      expect(lib.execShown(with(1))):eq('false, as "1" is not the boolean true');
    end);
  end);

  -- On the computer's real drive, with CC's real settings.save.
  describe("save", function()
    local DIR = "/spec-settings";
    local PATH = DIR .. "/s";
    local FILLER = DIR .. "/filler";
    local OLD = "{\n  [ \"sandbox.url\" ] = \"ws://old:4444\",\n}";

    local function writeFile(path, data)
      local handle = fs.open(path, "wb");
      handle.write(data);
      handle.close();
    end

    local function readFile(path)
      local handle = fs.open(path, "rb");
      local data = handle.readAll();
      handle.close();
      return data;
    end

    -- A drive with an old settings file at PATH, left with `free` bytes free, and a setting
    -- of `size` bytes to save; undone after the case.
    local function fullDrive(free, size)
      if fs.exists(DIR) then
        fs.delete(DIR);
      end
      fs.makeDir(DIR);
      writeFile(PATH, OLD);
      writeFile(FILLER, string.rep("x", fs.getFreeSpace("/") - free));
      settings.set("spec.big", string.rep("y", size));
    end

    local function undo()
      settings.unset("spec.big");
      fs.delete(DIR);
    end

    it("writes the settings as settings.save does, leaving nothing beside them", function()
      fullDrive(100000, 10);
      local saved = lib.save(nil, nil, PATH);
      local written = readFile(PATH);
      local names = fs.list(DIR);
      undo();
      expect(saved):eq(true);
      expect(textutils.unserialize(written)["spec.big"]):eq(string.rep("y", 10));
      table.sort(names);
      expect(names):same({ "filler", "s" });
    end);

    it("keeps the old file when the drive fills up mid-write", function()
      fullDrive(600, 2000);
      local saved = lib.save(nil, nil, PATH);
      local kept, names = readFile(PATH), fs.list(DIR);
      undo();
      expect(saved):eq(false);
      expect(kept):eq(OLD);
      table.sort(names);
      expect(names):same({ "filler", "s" });
    end);

    it("refuses, keeping the old file, when the drive has no room for a second file", function()
      fullDrive(100, 10);
      local saved = lib.save(nil, nil, PATH);
      local kept = readFile(PATH);
      undo();
      expect(saved):eq(false);
      expect(kept):eq(OLD);
    end);
  end);

  describe("savedValue", function()
    local PATH = "/spec-saved-settings";

    local function read(text, name)
      if text ~= nil then
        local handle = fs.open(PATH, "w");
        handle.write(text);
        handle.close();
      end
      local value = lib.savedValue(name, nil, PATH);
      if fs.exists(PATH) then
        fs.delete(PATH);
      end
      return value;
    end

    it("reads a setting as the file holds it, what the computer has after a reboot", function()
      local text = "{\n  [ \"sandbox.password\" ] = \"tsc_a_b\",\n  [ \"sandbox.allow_exec\" ] = false,\n}";
      expect(read(text, "sandbox.password")):eq("tsc_a_b");
      expect(read(text, "sandbox.allow_exec")):eq(false);
      expect(read(text, "sandbox.url")):eq(nil);
    end);

    it("is nil without the file, or with one that is not settings", function()
      expect(read(nil, "sandbox.password")):eq(nil);
      expect(read("not { settings", "sandbox.password")):eq(nil);
      expect(read("", "sandbox.password")):eq(nil);
    end);
  end);
end);
