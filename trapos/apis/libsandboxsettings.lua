-- libsandboxsettings: the settings a computer's owner sets for trap-sandbox, and the rules
-- for reading them (the gateway URL's normal form).

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;

-- Path a bare "ws://host:port" URL is completed with (the gateway's WebSocket endpoint).
local DEFAULT_PATH = "/trapos/ws";

-- Settings read by the daemon and the command.
local SETTING_URL = "sandbox.url";
local SETTING_PASSWORD = "sandbox.password";

-- Completes a bare "ws://host:port" (or with a trailing "/") with the gateway path; an
-- explicit path is kept. A URL without a scheme gets ws://, as CC's websocket does.
-- Returns nil for nil or blank input.
local function normaliseUrl(url)
  expect(1, url, "string", "nil");
  if url == nil then
    return nil;
  end
  url = url:match("^%s*(.-)%s*$");
  if url == "" then
    return nil;
  end
  if not url:find("://", 1, true) then
    url = "ws://" .. url;
  end
  local prefix, rest = url:match("^(%a[%w+.-]*://[^/?#]*)(.*)$");
  if prefix == nil then
    return url;
  end
  if rest == "" or rest == "/" then
    return prefix .. DEFAULT_PATH;
  end
  return url;
end

-- The host of a URL (for messages), or the URL itself when it has none.
local function urlHost(url)
  expect(1, url, "string");
  return url:match("^%a[%w+.-]*://([^/?#:]+)") or url;
end

-- Defines the sandbox settings (so `set` type-checks them and shows their description).
local function defineSettings(settingsApi)
  expect(1, settingsApi, "table", "nil");
  settingsApi = settingsApi or settings;
  settingsApi.define(SETTING_URL, {
    description = "WebSocket URL of the trap-sandbox gateway, e.g. ws://127.0.0.1:4444",
    type = "string",
  });
  settingsApi.define(SETTING_PASSWORD, {
    description = "Shared secret sent to the trap-sandbox gateway in the hello handshake",
    type = "string",
    default = "",
  });
end

return {
  DEFAULT_PATH = DEFAULT_PATH,
  SETTING_URL = SETTING_URL,
  SETTING_PASSWORD = SETTING_PASSWORD,
  normaliseUrl = normaliseUrl,
  urlHost = urlHost,
  defineSettings = defineSettings,
};
