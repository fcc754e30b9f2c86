-- Specs for /apis/libsandboxsettings: the URL rules and the settings' definitions.

local lib = require('/apis/libsandboxsettings');

describe("libsandboxsettings", function()
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

  describe("defineSettings", function()
    it("defines the URL and the password with help text", function()
      local defined = {};
      lib.defineSettings({ define = function(name, options) defined[name] = options; end });
      expect(defined["sandbox.url"].type):eq("string");
      expect(defined["sandbox.url"].description):str_match("gateway");
      expect(defined["sandbox.password"].type):eq("string");
      expect(defined["sandbox.password"].default):eq("");
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
end);
