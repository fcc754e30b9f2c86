-- Specs for /apis/libsandboxevents: the os events between programs and the daemon.

local lib = require('/apis/libsandboxevents');

describe("libsandboxevents", function()
  it("names the os events of the contract", function()
    expect(lib.EVENT_SEND):eq("trapos_sandbox_send");
    expect(lib.EVENT_REPLY):eq("trapos_sandbox_reply");
    expect(lib.EVENT_CONNECTED):eq("trapos_sandbox_connected");
    expect(lib.EVENT_RECONNECT):eq("trapos_sandbox_reconnect");
    expect(lib.EVENT_RETRY_NOW):eq("trapos_sandbox_retry_now");
    expect(lib.EVENT_STATUS_REQUEST):eq("trapos_sandbox_status_request");
    expect(lib.EVENT_STATUS):eq("trapos_sandbox_status");
  end);

  it("gives every event its own name", function()
    local seen = {};
    for name, value in pairs(lib) do
      if seen[value] then
        fail(name .. " repeats " .. value);
      end
      seen[value] = true;
    end
  end);
end);
