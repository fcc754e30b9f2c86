-- Specs for /apis/libsandboxadvice: every misconfiguration a player can make, as CC: Tweaked
-- (or the gateway) reports it, becomes one line that names the fix. Each case is a row of the
-- user guide's error table.

local advice = require('/apis/libsandboxadvice');

local URL = "ws://192.168.1.20:4444/trapos/ws";

describe("libsandboxadvice explain", function()
  it("turns http:// into ws:// (and https:// into wss:// behind a TLS proxy)", function()
    local want = "sandbox.url must start with ws:// (for TLS: wss:// through a reverse proxy that terminates TLS), not http://. Fix it with: sandbox setup";
    expect(advice.explain("Invalid scheme 'http'", "http://192.168.1.20:4444")):eq(want);
    expect(advice.explain("Invalid scheme 'https'", "https://mc.example.org")):eq(want:gsub("not http://", "not https://"));
  end);

  it("says the path is wrong on a 404", function()
    expect(advice.explain("Invalid handshake response getStatus: 404 Not Found", "ws://192.168.1.20:4444/ws"))
      :eq("the URL's path is wrong (404 Not Found): use ws://192.168.1.20:4444 or ws://192.168.1.20:4444/trapos/ws. Fix it with: sandbox setup");
  end);

  it("says the path is wrong on a 307 redirect", function()
    expect(advice.explain("Invalid handshake response getStatus: 307 Temporary Redirect", "ws://192.168.1.20:4444//trapos/ws"))
      :eq("the URL's path is wrong (307 Temporary Redirect): use ws://192.168.1.20:4444 or ws://192.168.1.20:4444/trapos/ws. Fix it with: sandbox setup");
  end);

  it("says the path is wrong on any other answer that is not a WebSocket's (the installer's 200)", function()
    expect(advice.explain("Invalid handshake response getStatus: 200 OK", "ws://192.168.1.20:4444/trapos/install"))
      :eq("the URL's path is wrong (200 OK): use ws://192.168.1.20:4444 or ws://192.168.1.20:4444/trapos/ws. Fix it with: sandbox setup");
    expect(advice.explain("Invalid handshake response getStatus: 401 Unauthorized", "ws://192.168.1.20:4444/x"))
      :eq("the URL's path is wrong (401 Unauthorized): use ws://192.168.1.20:4444 or ws://192.168.1.20:4444/trapos/ws. Fix it with: sandbox setup");
  end);

  it("says the path is wrong when the answer was a page too large for CC to read (the installer's)", function()
    -- CC reads at most 8 KiB of an answer to the upgrade: the installer's page, ~100 KB, fails
    -- the socket with "Message is too large" before its 200 OK is looked at.
    expect(advice.explain("Message is too large", "ws://192.168.1.20:4444/trapos/install"))
      :eq("the URL's path is wrong (its answer is a page, not a WebSocket: Message is too large): use ws://192.168.1.20:4444 "
        .. "or ws://192.168.1.20:4444/trapos/ws. Fix it with: sandbox setup");
    expect(advice.explain("Message is too large", "ws://192.168.1.20:80"))
      :str_match("^the server at 192.168.1.20:80 is not a trap%-sandbox gateway %(its answer is a page, not a WebSocket: Message is too large%): check the port");
    -- an open socket's frame over 128 KiB: the daemon's own sentence, which names no path
    local frame = "the gateway sent a frame over the 128 KiB CC takes (Message is too large), and CC dropped the connection: "
      .. "is sandbox.url a trap-sandbox gateway, and up to date?";
    expect(advice.explain(frame, URL)):eq(frame);
  end);

  it("says a server answering at the gateway's own path is not the gateway, not that the path is wrong", function()
    -- opencode on another port than 4242, with its password: the URL the path advice offered
    -- was the one the player had
    local want = "the server at 127.0.0.1:4096 is not a trap-sandbox gateway (401 Unauthorized): check the port "
      .. "(the install line's; 4444 unless the operator chose another) and, behind a reverse proxy, the path. "
      .. "Fix it with: sandbox setup";
    for _, url in ipairs({ "ws://127.0.0.1:4096/trapos/ws", "ws://127.0.0.1:4096", "ws://127.0.0.1:4096/" }) do
      expect(advice.explain("Invalid handshake response getStatus: 401 Unauthorized", url)):eq(want);
    end
    -- a reverse proxy that does not pass the path on, under a prefix of its own too
    expect(advice.explain("Invalid handshake response getStatus: 404 Not Found", "wss://mc.example.org/sandbox/trapos/ws"))
      :eq("the server at mc.example.org:443 is not a trap-sandbox gateway (404 Not Found): check the port "
        .. "(the install line's; 4444 unless the operator chose another) and, behind a reverse proxy, the path. "
        .. "Fix it with: sandbox setup");
    -- a path the gateway does not serve as it stands is still the wrong path
    for _, url in ipairs({ "ws://127.0.0.1:4096//trapos/ws", "ws://127.0.0.1:4096/trapos/ws/", "ws://127.0.0.1:4096/a//trapos/ws" }) do
      expect(advice.explain("Invalid handshake response getStatus: 404 Not Found", url))
        :str_match("^the URL's path is wrong %(404 Not Found%)");
    end
    -- opencode's own port keeps its own advice
    expect(advice.explain("Invalid handshake response getStatus: 401 Unauthorized", "ws://192.168.1.20:4242/trapos/ws"))
      :str_match("^sandbox.url points at port 4242, opencode's port");
  end);

  it("keeps the URL's TLS and IPv6 brackets in the URLs it suggests", function()
    expect(advice.explain("Invalid handshake response getStatus: 404 Not Found", "wss://mc.example.org/ws"))
      :eq("the URL's path is wrong (404 Not Found): use wss://mc.example.org or wss://mc.example.org/trapos/ws. Fix it with: sandbox setup");
    expect(advice.explain("Invalid handshake response getStatus: 404 Not Found", "ws://[fd00::20]:4444/ws"))
      :eq("the URL's path is wrong (404 Not Found): use ws://[fd00::20]:4444 or ws://[fd00::20]:4444/trapos/ws. Fix it with: sandbox setup");
  end);

  it("names a wss URL's default port as 443, not 80", function()
    expect(advice.explain("Could not connect", "wss://mc.example.org/trapos/ws"))
      :eq("nothing answers at mc.example.org:443: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries every 5 s");
    expect(advice.explain("Timed out", "wss://mc.example.org/trapos/ws"))
      :str_match("^no answer from mc.example.org:443 ");
    expect(advice.explain("Could not connect", "ws://mc.example.org/trapos/ws"))
      :str_match("^nothing answers at mc.example.org:80:");
  end);

  it("says a 400 is a reverse proxy that dropped the upgrade's headers, for the operator to fix", function()
    expect(advice.explain("Invalid handshake response getStatus: 400 Bad Request", "wss://mc.example.org/trapos/ws"))
      :eq("the server at mc.example.org:443 refused the WebSocket handshake (400 Bad Request): the reverse proxy in front of the gateway must pass its Upgrade and Connection headers; tell the gateway's operator");
  end);

  it("says a 5xx is the gateway full or down behind a proxy, and retried", function()
    expect(advice.explain("Invalid handshake response getStatus: 502 Bad Gateway", "wss://mc.example.org/trapos/ws"))
      :eq("the server at mc.example.org:443 could not take the connection (502 Bad Gateway): the gateway is full, or down behind a reverse proxy; the daemon retries every 5 s");
    expect(advice.explain("Invalid handshake response getStatus: 503 Service Unavailable", URL))
      :eq("the server at 192.168.1.20:4444 could not take the connection (503 Service Unavailable): the gateway is full, or down behind a reverse proxy; the daemon retries every 5 s");
    expect(advice.explain("Invalid handshake response getStatus: 502 Bad Gateway", URL, nil, "sandbox link"))
      :eq("the server at 192.168.1.20:4444 could not take the connection (502 Bad Gateway): the gateway is full, or down behind a reverse proxy; then run sandbox link again");
  end);

  it("says a going-away gateway stopped and will be reconnected to", function()
    expect(advice.explain("lost the connection: going away", URL))
      :eq("the gateway stopped (going away); the daemon reconnects by itself once it runs again");
    -- a command's own connection: run again at once, it would find the gateway down
    expect(advice.explain("going away", URL, nil, "sandbox link"))
      :eq("the gateway stopped (going away); run sandbox link again once it is back");
    -- a hello the gateway refused as it began to stop: its words alone named no fix
    expect(advice.explain("the gateway is shutting down", URL, nil, "sandbox link"))
      :eq("the gateway is shutting down; run sandbox link again once it is back");
    expect(advice.explain("the gateway is shutting down; reconnect (to another replica, or to this one once it is back)", URL))
      :eq("the gateway is shutting down; the daemon reconnects by itself once it runs again");
  end);

  it("tells the reasons of a gateway that stopped from the others", function()
    for _, why in ipairs({ "going away", "lost the connection: Going Away", "Connection closed", "the gateway is shutting down" }) do
      expect(advice.gatewayStopped(why)):eq(true);
    end
    for _, why in ipairs({ "link expired", "internal error", "Could not connect", "no hello in time" }) do
      expect(advice.gatewayStopped(why)):eq(false);
    end
  end);

  it("says a gateway that evicted the socket before its hello is busy, not that no hello came", function()
    local why = "no hello in time (evicted: the gateway needed room)";
    local busy = "the gateway is busy: it closed the connection to make room for newer ones before it read the hello";
    expect(advice.explain(why, URL)):eq(busy .. "; the daemon retries by itself");
    expect(advice.explain(why, URL, nil, nil, 5)):eq(busy .. "; the daemon retries in 5 s");
    -- a hello that never came within the timeout keeps its own words
    expect(advice.explain("no hello in time", URL)):eq("no hello in time");
  end);

  it("names opencode's port when sandbox.url points at it", function()
    expect(advice.explain("Invalid handshake response getStatus: 404 Not Found", "ws://192.168.1.20:4242"))
      :eq("sandbox.url points at port 4242, opencode's port; the gateway listens on 4444: use ws://192.168.1.20:4444. Fix it with: sandbox setup");
  end);

  it("explains an unknown host", function()
    expect(advice.explain("Unknown host", "ws://gatewy.lan:4444"))
      :eq("Unknown host: gatewy.lan does not resolve; check its spelling or use the gateway's IP address. Fix it with: sandbox setup");
  end);

  it("says a URL names no host rather than that an empty name does not resolve", function()
    -- CC reads such a URL as a host named ws; "Unknown host:  does not resolve" named none
    expect(advice.explain("Unknown host", "ws:///trapos/ws"))
      :eq("sandbox.url ws:///trapos/ws names no host. Fix it with: sandbox setup");
    expect(advice.explain("Unknown host", "ws://:4444/trapos/ws"))
      :eq("sandbox.url ws://:4444/trapos/ws names no host. Fix it with: sandbox setup");
    -- a host name of characters past CC's (pasted), each a ?, which begins the URL's query
    expect(advice.explain("Unknown host", "ws://??.example:4444"))
      :eq("sandbox.url ws://??.example:4444 names no host (a ? stands for a character CC cannot hold: "
        .. "give the gateway's IP address). Fix it with: sandbox setup");
    for _, url in ipairs({ "ws://gatewy.lan:4444", "ws://[fd00::2]:4444", "ws://k\252che:4444" }) do
      expect(advice.namesNoHost(url)):eq(false);
    end
  end);

  it("names a port no gateway can listen on rather than the host or the gateway", function()
    -- CC reads ws://127.0.0.1:481OO (an O typed for a 0) as a host named ws: "Unknown host:
    -- 127.0.0.1:481OO does not resolve; check its spelling" sent the player to the host,
    -- which was right; a port past 65535 it cannot connect to, which read as a gateway down
    expect(advice.explain("Unknown host", "ws://127.0.0.1:481OO"))
      :eq("sandbox.url ws://127.0.0.1:481OO names port 481OO, which is not a number (a port is 1 to 65535). "
        .. "Fix it with: sandbox setup");
    expect(advice.explain("Unknown host", "ws://[fd00::2]:44l4/trapos/ws", nil, nil, 38))
      :eq("sandbox.url ws://[fd00::2]:44l4/trapos/ws names port 44l4, which is not a number (a port is 1 to 65535). "
        .. "Fix it with: sandbox setup");
    expect(advice.explain("Could not connect", "ws://127.0.0.1:99999/trapos/ws"))
      :eq("sandbox.url ws://127.0.0.1:99999/trapos/ws names port 99999, which no gateway can listen on "
        .. "(a port is 1 to 65535). Fix it with: sandbox setup");
    for _, url in ipairs({ "ws://127.0.0.1:65535", "ws://127.0.0.1:1", "ws://gw.lan", "ws://gw.lan:", "ws://[fd00::2]:4444" }) do
      expect(advice.wrongPort(url)):eq(nil);
    end
  end);

  it("explains a refused connection", function()
    local want = "nothing answers at 192.168.1.20:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries every 5 s";
    expect(advice.explain("Could not connect", URL)):eq(want);
    expect(advice.explain("Connection refused", URL)):eq(want);
  end);

  it("says a gateway that answered since boot stopped, when nothing answers there now", function()
    -- "the gateway there is not running (its operator starts it), or the address or port is
    -- wrong (sandbox setup)" sent the player to check an address that had worked minutes before
    local at = 1796668830000; -- 2026-12-07 18:40:30 UTC
    local stopped = advice.stoppedAnswering("Could not connect", at);
    expect(stopped):eq("Could not connect (the gateway answered here until 18:40 UTC)");
    expect(advice.stoppedAnswering("Connection refused", at)):eq("Connection refused (the gateway answered here until 18:40 UTC)");
    expect(advice.stoppedAnswering(stopped, at + 3600000)):eq(stopped); -- said once
    -- another reason is its own rule's
    expect(advice.stoppedAnswering("Connection closed", at)):eq("Connection closed");
    local said = "nothing answers at 192.168.1.20:4444: the gateway there answered until 18:40 UTC and stopped (its operator restarts it)";
    expect(advice.explain(stopped, URL)):eq(said .. "; the daemon reconnects by itself once it runs again");
    expect(advice.explain(stopped, URL, nil, nil, 38)):eq(said .. "; the daemon retries in 38 s");
    expect(advice.explain(stopped, URL, nil, "sandbox link")):eq(said .. "; run sandbox link again once it is back");
    expect(advice.said(stopped, URL)):eq(said);
  end);

  it("explains Domain not permitted with the host the rules must allow", function()
    expect(advice.explain("Domain not permitted", URL))
      :eq("Domain not permitted: the server's CC: Tweaked config denies 192.168.1.20; allow it in computercraft-server.toml [[http.rules]] (see the user guide)");
  end);

  it("explains a TLS failure", function()
    expect(advice.explain("Could not create a secure connection", "wss://192.168.1.20:4444"))
      :eq("TLS failed for wss://192.168.1.20:4444: use ws:// for a gateway without TLS, or fix the reverse proxy's certificate. Fix it with: sandbox setup");
  end);

  it("says a gateway that answered since boot is stuck or cut off, when nothing answers there in time", function()
    -- a gateway whose process stopped takes the connection and never answers: "check the
    -- address, and that no firewall drops the port" sent the player to an address that had
    -- worked minutes before
    local at = 1796668830000; -- 2026-12-07 18:40:30 UTC
    local stuck = advice.stoppedAnswering("Timed out", at);
    expect(stuck):eq("Timed out (the gateway answered here until 18:40 UTC)");
    expect(advice.stoppedAnswering(stuck, at + 3600000)):eq(stuck); -- said once
    local said = "no answer from 192.168.1.20:4444 (timed out): the gateway there answered until 18:40 UTC and is "
      .. "stuck or stopped, or the network to it was cut (its operator checks it)";
    expect(advice.explain(stuck, URL)):eq(said .. "; the daemon reconnects by itself once it answers");
    expect(advice.explain(stuck, URL, nil, nil, 38)):eq(said .. "; the daemon retries in 38 s");
    expect(advice.explain(stuck, URL, nil, "sandbox link")):eq(said .. "; run sandbox link again once it is back");
  end);

  it("says a gateway that fell silent on an open connection is stuck or cut off", function()
    -- the daemon's "...: reconnecting" alone named no cause and no one to tell
    local silent = "the gateway sent nothing for 71 s (it promised a frame every 70 s at most): reconnecting";
    local said = "the gateway at 192.168.1.20:4444 sent nothing for 71 s: it is stuck or stopped, or the network "
      .. "to it was cut (its operator checks it)";
    expect(advice.explain(silent, URL)):eq(said .. "; the daemon reconnects by itself once it answers");
    expect(advice.explain(silent, URL, nil, nil, 5)):eq(said .. "; the daemon retries in 5 s");
    -- a gateway's close reason in the daemon's words is the gateway's, not the daemon's finding
    expect(advice.explain("the gateway closed the connection saying: " .. silent, URL))
      :eq("the gateway closed the connection saying: " .. silent);
  end);

  it("says a server that took the WebSocket and left hello unanswered is a gateway stuck, or another server", function()
    -- said as a gateway's broken promise of a frame, the port went unnamed
    local silent = "no answer to hello: the server sent nothing for 70 s: reconnecting";
    local said = "the server at 192.168.1.20:4444 took the WebSocket but did not answer hello in 70 s: a gateway "
      .. "stuck (its operator checks it), or another server: check the port";
    expect(advice.explain(silent, URL)):eq(said .. "; the daemon retries by itself");
    expect(advice.explain(silent, URL, nil, nil, 5)):eq(said .. "; the daemon retries in 5 s");
    expect(advice.explain(silent, URL, nil, "sandbox link")):eq(said .. "; then run sandbox link again");
    expect(advice.gatewaysCloseReason(silent, URL)):eq("the gateway closed the connection saying: " .. silent);
  end);

  it("explains a time-out", function()
    expect(advice.explain("Timed out", URL))
      :eq("no answer from 192.168.1.20:4444 (timed out): check the address, and that no firewall drops the port");
  end);

  it("explains a dropped connection", function()
    expect(advice.explain("lost the connection: Connection closed", URL))
      :eq("the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries by itself");
    -- a command's own connection is not the daemon's: the command is run again
    expect(advice.explain("Connection closed", URL, nil, "sandbox link"))
      :eq("the gateway closed the connection (Connection closed): it stopped or restarted; run sandbox link again once it is back");
  end);

  it("tells a server that closed before answering from a gateway that stopped", function()
    -- sandbox.url at a port where another server accepts and closes: "it stopped or restarted"
    -- sent the player to wait for a gateway that was never there
    expect(advice.explain("Connection closed before any answer to the WebSocket upgrade", URL))
      :eq("the server at 192.168.1.20:4444 accepted the connection and closed it without answering the WebSocket "
        .. "upgrade (Connection closed): unless the gateway there is just starting, it is not the gateway's port: "
        .. "check the port (the install line's; 4444 unless the operator chose another). Fix it with: sandbox setup; "
        .. "the daemon retries by itself");
    expect(advice.explain("Connection closed before any answer to hello", URL, nil, nil, 38))
      :eq("the server at 192.168.1.20:4444 took the WebSocket and closed it without answering hello (Connection "
        .. "closed): unless the gateway there is just starting, it is not a trap-sandbox gateway: check the port "
        .. "(the install line's; 4444 unless the operator chose another) and, behind a reverse proxy, the path. "
        .. "Fix it with: sandbox setup; the daemon retries in 38 s");
  end);

  it("explains a socket replaced by another computer with the same traposId", function()
    expect(advice.explain("lost the connection: replaced", URL))
      :eq("another connection took over this computer's traposId (replaced): do two computers share one id and label? "
        .. "Relabel one: label set <name>, then sandbox reconnect (or link it to your account: sandbox link)");
    -- a linked computer is linked already
    expect(advice.explain("replaced: another computer said hello with this computer's id", URL, "tsc_x_y"))
      :eq("another connection took over this computer's traposId (replaced): do two computers share one id and label? "
        .. "Relabel one: label set <name>, then sandbox reconnect");
  end);

  it("explains a gateway the daemon dropped for flooding it", function()
    expect(advice.explain("closed the connection (4429 too many requests): the gateway had 33 frames waiting here at once, "
      .. "more than the 32 it may have in flight (docs/protocol.md); reconnecting in 60 s", URL))
      :eq("the gateway at 192.168.1.20:4444 sent more requests at once than the protocol allows (4429): is sandbox.url a "
        .. "trap-sandbox gateway, and up to date? The daemon tries again every minute");
  end);

  it("names the seconds to the daemon's next try when its status says them, whatever its back-off made the wait", function()
    local FLOOD = "closed the connection (4429 too many requests): the gateway had 33 frames waiting here at once, "
      .. "more than the 32 it may have in flight (docs/protocol.md); reconnecting in 60 s";
    for _, case in ipairs({
      { "Could not connect", "nothing answers at 192.168.1.20:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries in 38 s" },
      { "Invalid handshake response getStatus: 503 Service Unavailable", "the server at 192.168.1.20:4444 could not take the connection (503 Service Unavailable): the gateway is full, or down behind a reverse proxy; the daemon retries in 38 s" },
      { "lost the connection: going away", "the gateway stopped (going away); the daemon retries in 38 s" },
      { "lost the connection: Connection closed", "the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries in 38 s" },
      { FLOOD, "the gateway at 192.168.1.20:4444 sent more requests at once than the protocol allows (4429): is sandbox.url a "
        .. "trap-sandbox gateway, and up to date? The daemon retries in 38 s" },
    }) do
      expect(advice.explain(case[1], URL, nil, nil, 38)):eq(case[2]);
    end
    -- a command's own connection is not the daemon's: its time is not the command's
    expect(advice.explain("Connection closed", URL, nil, "sandbox link", 38))
      :eq("the gateway closed the connection (Connection closed): it stopped or restarted; run sandbox link again once it is back");
    -- a failure the daemon does not retry has no time to name
    expect(advice.explain("Unknown host", "ws://gatewy.lan:4444", nil, nil, 38))
      :eq("Unknown host: gatewy.lan does not resolve; check its spelling or use the gateway's IP address. Fix it with: sandbox setup");
  end);

  it("names another scheme in the URL as set, and the fix", function()
    expect(advice.explain("Invalid scheme 'ftp'", "ftp://10.0.0.9"))
      :eq("sandbox.url ftp://10.0.0.9 starts with ftp://, not ws:// or wss:// (e.g. ws://192.168.1.20:4444). Fix it with: sandbox setup");
  end);

  it("explains a malformed URL", function()
    expect(advice.explain("URL malformed", "ws://"))
      :eq("sandbox.url ws:// is not a ws:// or wss:// URL (e.g. ws://192.168.1.20:4444). Fix it with: sandbox setup");
  end);

  it("sends a rejected password to sandbox setup", function()
    expect(advice.explain("unauthorized: wrong secret", URL, "secret"))
      :eq("the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup");
  end);

  it("sends a host's secret set as the password to sandbox link", function()
    -- The gateway's own message names the token to revoke; the fix line must not send the
    -- player back to sandbox setup with it.
    expect(advice.explain("unauthorized: wrong secret: it is an API token (tsa_...), for the host's API", URL, "tsa_abc_def"))
      :eq("sandbox.password is an API token (tsa_...), the host's, which anyone who opens this computer reads: "
        .. "ask the operator to revoke it, then link this computer with: sandbox link");
    expect(advice.explain("unauthorized: wrong secret", URL, "tsk_abc_def"))
      :eq("sandbox.password is an enrollment key (tsk_...), which links a computer instead: sandbox link <the key>");
  end);

  it("names the fix after replaced: a label of its own, or a credential", function()
    expect(advice.explain("replaced: another computer said hello with this computer's id", URL))
      :eq("another connection took over this computer's traposId (replaced): do two computers share one id and label? "
        .. "Relabel one: label set <name>, then sandbox reconnect (or link it to your account: sandbox link)");
    -- a linked computer is linked already
    expect(advice.explain("replaced: another computer said hello with this computer's id", URL, "tsc_x_y"))
      :eq("another connection took over this computer's traposId (replaced): do two computers share one id and label? "
        .. "Relabel one: label set <name>, then sandbox reconnect");
  end);

  it("sends a revoked credential to a new one, whether closed 4003 or refused at hello", function()
    local fix = "this computer's credential was revoked on the gateway; link it again with: sandbox link (or set a new credential with: sandbox setup)";
    expect(advice.explain("revoked: this computer's credential was revoked", URL)):eq(fix);
    expect(advice.explain("unauthorized: this computer's credential was revoked (set a new one with: sandbox setup)", URL, "tsc_x_y"))
      :eq(fix);
  end);

  it("reads a revoked credential in a gateway's reason, whether closed 4003 or refused at hello", function()
    expect(advice.revoked("revoked: this computer's credential was revoked")):eq(true);
    expect(advice.revoked("unauthorized: this computer's credential was revoked (set a new one with: sandbox setup)")):eq(true);
    expect(advice.revoked("unauthorized: wrong password")):eq(false);
    expect(advice.revoked(nil)):eq(false);
  end);

  -- The gateway proves its refusal of a revoked credential (0.5.36); the same words from a
  -- server that did not prove itself are its own, and say their remedy themselves: no fix line
  -- calls them the gateway's and sends the player to sandbox link.
  it("takes no unproven server's words of a revoked credential for the gateway's", function()
    local unproven = "the server at " .. URL .. " gave no proof it is the gateway, and says: this computer's credential was revoked"
      .. " (link it again with: sandbox link, or set a new credential with: sandbox setup)";
    expect(advice.revoked(unproven)):eq(false);
    expect(advice.explain(unproven, URL, "tsc_x_y")):eq(unproven);
  end);

  it("sends a credential copied from another computer to sandbox link", function()
    expect(advice.explain("unauthorized: the credential belongs to computer 7, not to 9 (link this computer with: sandbox link)",
      URL, "tsc_x_y"))
      :eq("sandbox.password is computer 7's linked credential, not this computer's; link this computer with: sandbox link");
  end);

  it("says `set` stored a numeric password as a number, without claiming that is the cause", function()
    expect(advice.explain("unauthorized: wrong secret", URL, 123))
      :eq("the gateway rejected sandbox.password (unauthorized); `set` stored it as the number 123: "
        .. "if it began with 0 or is long, set it as text with: sandbox setup");
  end);

  it("says a rejected password begins or ends with a space, without claiming that is the cause", function()
    local fix = "the gateway rejected sandbox.password (unauthorized); it begins or ends with a space: "
      .. "if that is not part of it, set it again with: sandbox setup";
    expect(advice.explain("unauthorized: wrong secret", URL, "choose-a-long-secret ")):eq(fix);
    expect(advice.explain("unauthorized: wrong secret", URL, "\tchoose-a-long-secret")):eq(fix);
    expect(advice.explain("unauthorized: wrong secret", URL, "two words"))
      :eq("the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup");
  end);

  it("says when no password is set", function()
    local fix = "the gateway wants a password (unauthorized) and sandbox.password is not set. Set it with: sandbox setup";
    expect(advice.explain("unauthorized: wrong secret", URL, nil)):eq(fix);
    expect(advice.explain("unauthorized: wrong secret", URL, "")):eq(fix);
  end);

  it("names a ? in a refused password, what CC types for a character it cannot hold", function()
    expect(advice.explain("unauthorized: wrong secret", URL, "??-secret-of-the-house"))
      :eq("the gateway rejected sandbox.password (unauthorized); it holds a ?, which CC types for a character it "
        .. "cannot hold (an emoji, a CJK one): if the gateway's password has one, ask its operator for another; "
        .. "else set it again with: sandbox setup");
    -- Latin-1 letters are CC's own: no hint
    expect(advice.explain("unauthorized: wrong secret", URL, "k\252che-secret"))
      :eq("the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup");
  end);

  -- After the operator started the gateway with its data directory again, the credential
  -- holds, and a new link is refused (the account has a credential for this computer's id):
  -- the daemon, which gave up on unauthorized, needs only sandbox reconnect.
  it("sends a linked credential the gateway does not accept to its operator or sandbox link", function()
    expect(advice.explain("unauthorized: wrong secret (check the computer's sandbox.password against SANDBOX_PASSWORD)", URL, "tsc_x_y"))
      :eq("the gateway does not know this computer's linked credential (unauthorized): was its account removed? "
        .. "Link again with: sandbox link (or ask the operator: is the gateway missing its data directory? "
        .. "Once it has it again: sandbox reconnect)");
  end);

  it("keeps an IPv6 host's brackets off and finds its port", function()
    expect(advice.explain("Could not connect", "ws://[fd00::2]:4444/trapos/ws"))
      :str_match("^nothing answers at fd00::2:4444:");
  end);

  it("passes an error it has no advice for on unchanged", function()
    expect(advice.explain("hello failed: internal: boom", URL)):eq("hello failed: internal: boom");
    expect(advice.explain(nil, nil)):eq("unknown error");
  end);
end);

describe("libsandboxadvice gatewaysCloseReason", function()
  local SAID = "the gateway closed the connection saying: ";

  it("says a close reason in the words of any of CC's failures as the gateway's, with no advice read into it", function()
    -- A hostile gateway that closed with "Could not create a secure connection" had the player
    -- told to fix TLS, with "Domain not permitted" to change the server's config, with "Timed
    -- out" to look for a firewall: each is CC's word for a failure that did not happen.
    for _, words in ipairs({
      "Could not connect", "Connection refused", "Could not create a secure connection", "Unknown host",
      "Domain not permitted", "Timed out", "Connection closed", "URL malformed", "Invalid scheme 'ftp'",
      "Invalid handshake response getStatus: 404 Not Found", "Invalid handshake response getStatus: 503 Service Unavailable",
      "Message is too large",
    }) do
      local said = advice.gatewaysCloseReason(words, URL);
      expect(said):eq(SAID .. words);
      expect(advice.explain(said, URL)):eq(said);
      expect(advice.explain(said, "ws://192.168.1.20:99999")):eq(said); -- not read as a wrong port
      expect(advice.said(said, URL)):eq(said);
      expect(advice.gatewayStopped(said)):eq(false);
      expect(advice.stoppedAnswering(said, 1796668830000)):eq(said);
    end
  end);

  it("says a close reason in this computer's own words as the gateway's", function()
    -- The daemon's words for a gateway that flooded it, and for a server that closed unanswered.
    for _, words in ipairs({ "closed the connection (4429 too many requests): the gateway had 17",
      advice.closedUnanswered("hello") }) do
      local said = advice.gatewaysCloseReason(words, URL);
      expect(said):eq(SAID .. words);
      expect(advice.explain(said, URL)):eq(said);
    end
  end);

  it("keeps the gateway's own words as they are, for the advice that reads them", function()
    expect(advice.gatewaysCloseReason("going away", URL)):eq("going away");
    expect(advice.explain("going away", URL)):str_match("^the gateway stopped %(going away%)");
    local evicted = "no hello in time (evicted: the gateway needed room)";
    expect(advice.gatewaysCloseReason(evicted, URL)):eq(evicted);
    expect(advice.explain(evicted, URL)):str_match("^the gateway is busy:");
    expect(advice.gatewaysCloseReason("replaced", URL)):eq("replaced");
    -- And words no advice reads
    expect(advice.gatewaysCloseReason("unresponsive", URL)):eq("unresponsive");
    expect(advice.gatewaysCloseReason("unauthorized", nil)):eq("unauthorized");
  end);

  it("reads the gateway's own words in a reason it said with CC's", function()
    local said = advice.gatewaysCloseReason("going away (Connection closed)", URL);
    expect(said):eq("going away (Connection closed)"); -- its first rule is the gateway's
    expect(advice.gatewayStopped(said)):eq(true);
  end);
end);

describe("libsandboxadvice bootBlocker", function()
  -- CC's settings answer a defined setting's default when it is unset: these are CC's.
  local function withSettings(values)
    stub(settings, "get", function(name)
      return values[name];
    end);
  end

  it("says nothing when the boot runs the computer's startup files", function()
    withSettings({ ["shell.allow_startup"] = true, ["shell.allow_disk_startup"] = false });
    expect(advice.bootBlocker()):eq(nil);
  end);

  it("names shell.allow_startup off, and its fix", function()
    withSettings({ ["shell.allow_startup"] = false, ["shell.allow_disk_startup"] = true });
    expect({ advice.bootBlocker() }):same({ "shell.allow_startup is false, so the computer runs no startup file at boot",
      "Run: set shell.allow_startup true" });
  end);

  it("names the drive whose disk has a startup file, as a player calls it", function()
    withSettings({ ["shell.allow_startup"] = true, ["shell.allow_disk_startup"] = true });
    stub(peripheral, "getNames", function() return { "top", "drive_0" }; end);
    stub(disk, "isPresent", function(name) return name == "drive_0"; end);
    stub(disk, "hasData", function(name) return name == "drive_0"; end);
    stub(disk, "getMountPath", function() return "disk2"; end);
    local exists = fs.exists;
    stub(fs, "exists", function(path) return path == "/disk2/startup.lua" or exists(path); end);
    expect({ advice.bootBlocker() }):same({ "the disk in drive_0 has a startup file, which CC runs at boot instead of "
      .. "this computer's", "Take the disk out" });
    expect(advice.driveName("left")):eq("the left drive");
  end);
end);
