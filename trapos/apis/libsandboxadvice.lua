-- libsandboxadvice: turns what CC: Tweaked or the gateway said about a failed connection into
-- one line that says what to change. `sandbox health` and `sandbox status` print these; the
-- user guide's error table lists each one. And what keeps the next boot from starting the
-- daemon (bootBlocker), which the installer checks too. And the name a mistyped word meant
-- (meant): a command of sandbox's, a setting, an option of the installer's.

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;

-- The port opencode serves on by default; a sandbox.url naming it reaches the wrong server.
local OPENCODE_PORT = "4242";

local FIX_URL = "Fix it with: sandbox setup";

-- How a credential of the computer's own (sandbox link) begins; a shared password does not.
local CREDENTIAL_PREFIX = "tsc_";

-- How the host's secrets begin: an account's API token, an enrollment key. Either one in
-- sandbox.password is in the wrong place (anyone who opens the computer reads it).
local API_TOKEN_PREFIX = "tsa_";
local ENROLLMENT_KEY_PREFIX = "tsk_";

-- Whether sandbox.password begins with prefix.
local function hasPrefix(password, prefix)
  return type(password) == "string" and password:sub(1, #prefix) == prefix;
end

-- Whether sandbox.password holds a linked credential.
local function isCredential(password)
  return hasPrefix(password, CREDENTIAL_PREFIX);
end

-- What may be wrong with a refused password that the player cannot see (sandbox setup's and
-- the installer's stars hide it), as the words that follow "it" or "The password", without the
-- fix, which is the caller's to name: "space" and "begins or ends with a space: if that is not
-- part of it" (often pasted along with it; it may be part of it), or "unheld" and the ? that CC
-- types for each character it cannot hold: typed or pasted, an emoji or a CJK character is a
-- ?, and a gateway password with one (its operator was warned at start) no computer can give.
-- nil when neither. The installer says it too, from this file (SOURCE.advice): it runs before
-- the package is on the computer.
local function passwordDoubt(password)
  if type(password) ~= "string" then
    return nil;
  elseif password:find("^%s") or password:find("%s$") then
    return "space", "begins or ends with a space: if that is not part of it";
  elseif password:find("?", 1, true) then
    return "unheld", "holds a ?, which CC types for a character it cannot hold (an emoji, a CJK one): "
      .. "if the gateway's password has one, ask its operator for another";
  end
  return nil;
end

-- The host (without IPv6 brackets) and port (nil when absent) of a URL.
local function hostPort(url)
  local authority = url:match("^%a[%w+.-]*://([^/?#]*)") or url;
  local host, port = authority:match("^%[(.-)%]:?(%d*)$");
  if host == nil then
    host, port = authority:match("^([^:]*):?(%d*)$");
  end
  if port == "" then
    port = nil;
  end
  return host or authority, port;
end

-- Whether a URL with a scheme names no host: ws://, ws://:4444, or ws://??.example, whose ?
-- begins the query (a ? is what CC makes of a character it cannot hold, a host name's 日 or an
-- emoji pasted). CC reads such a URL as a host named ws.
local function namesNoHost(url)
  expect(1, url, "string");
  local authority = url:match("^%a[%w+.-]*://([^/?#]*)");
  return authority ~= nil and hostPort((authority:gsub("^.*@", ""))) == "";
end

-- What is wrong with a URL that names no host, without the fix.
local function noHost(url)
  return "sandbox.url " .. url .. " names no host"
    .. (url:find("?", 1, true) and " (a ? stands for a character CC cannot hold: give the gateway's IP address)" or "");
end

-- The highest port there is: a port is 16 bits, and 0 is no port to connect to.
local MAX_PORT = 65535;

-- What is wrong with the port a URL with a scheme names, as the words after the URL ("names
-- port 481OO, which is not a number (a port is 1 to 65535)"), and that port; nil when it names
-- a port a gateway can listen on, or none. CC reads a port of letters (an O typed for a 0) as
-- no port, and the URL as a host named ws ("Unknown host"), and cannot connect to 0 or a port
-- a digit too long ("Could not connect"): said as such, the player looked at the host, or
-- waited for a gateway said to be down. An IPv6 address without its brackets is left alone.
local function wrongPort(url)
  expect(1, url, "string");
  local authority = url:match("^%a[%w+.-]*://([^/?#]*)");
  authority = authority and authority:gsub("^.*@", "");
  local port = authority and (authority:match("^%b[]:(.+)$") or authority:match("^[^%[:]*:([^:]+)$"));
  if port == nil then
    return nil;
  end
  local number = port:find("^%d+$") and tonumber(port);
  local what;
  if not number then
    what = "which is not a number";
  elseif number < 1 or number > MAX_PORT then
    what = "which no gateway can listen on";
  else
    return nil;
  end
  return "names port " .. port .. ", " .. what .. " (a port is 1 to " .. MAX_PORT .. ")", port;
end

-- The WebSocket scheme of a URL, "wss" or "ws" (ws when it names neither): advice that names a
-- URL keeps the player's TLS.
local function wsScheme(url)
  local scheme = url:match("^(%a[%w+.-]*)://");
  if scheme ~= nil and scheme:lower() == "wss" then
    return "wss";
  end
  return "ws";
end

-- The port a URL reaches: its own, or its scheme's default.
local function portOf(url, port)
  if port ~= nil then
    return port;
  end
  return wsScheme(url) == "wss" and "443" or "80";
end

local function contains(text, needle)
  return text:find(needle, 1, true) ~= nil;
end

-- Whether why says the gateway went away: it shut down (close 1001, going away, or a hello
-- it refused as it began to: "the gateway is shutting down") or the TCP connection dropped
-- once open (CC's "Connection closed"), as when it is killed or restarts.
local function shuttingDown(why) return contains(why:lower(), "shutting down"); end
local function goingAway(why) return contains(why:lower(), "going away") or shuttingDown(why); end
local function connectionClosed(why) return contains(why, "Connection closed"); end
-- CC's "Connection closed" said with the step it closed at (closedUnanswered), for a close before
-- any answer at a URL where no gateway answered a hello since boot: the daemon's, and sandbox
-- link's own session's.
local CLOSED_UNANSWERED = "Connection closed before any answer to ";

-- The reason for a connection closed before any answer to step ("the WebSocket upgrade",
-- "hello") at a URL where no gateway has answered: another server's port, not a gateway that
-- stopped (the rule below says which).
local function closedUnanswered(step)
  expect(1, step, "string");
  return CLOSED_UNANSWERED .. step;
end

-- Starts a gateway's own reason for closing (a close code came with it) that holds words a
-- rule reads as CC's or this computer's own (gatewaysCloseReason): only the rules that read
-- the gateway's words (RULES' gateways) read it.
local GATEWAY_SAID = "the gateway closed the connection saying: ";

local function saidByGateway(why)
  return why:sub(1, #GATEWAY_SAID) == GATEWAY_SAID;
end

-- Whether why is CC's word for a connection nothing took: "Could not connect", or a refusal.
local function nothingAnswers(why)
  return contains(why, "Could not connect") or contains(why:lower(), "connection refused");
end

-- The daemon's words for a gateway silent past its promise (libsandboxdaemon's checkLiveness):
-- the seconds it was silent.
local SILENT = "^the gateway sent nothing for (%d+) s %(it promised a frame every %d+ s at most%)";

-- The daemon's words for a server that took the WebSocket and sent nothing, its hello
-- unanswered, for as long as it waits for the answer (libsandboxdaemon's checkLiveness): the
-- seconds it was silent.
local SILENT_HELLO = "^no answer to hello: the server sent nothing for (%d+) s";

-- Whether why is CC's word for a connection nothing answered in time.
local function timedOut(why)
  return contains(why, "Timed out");
end

-- CC's "Could not connect" (or a refusal) or "Timed out" said with the minute the gateway at
-- that URL last answered since boot (stoppedAnswering): the gateway that ran there stopped, or
-- is stuck, and its operator restarts or checks it. Said as "not running, or the address or
-- port is wrong" (or "check the address"), the player looked at an address that had worked
-- minutes before, and ran sandbox setup on it.
local ANSWERED_UNTIL = " (the gateway answered here until ";
local ANSWERED_UNTIL_TIME = "%(the gateway answered here until (%d%d:%d%d UTC)%)";

-- why, the reason a try to connect failed at a URL whose gateway answered a hello since boot,
-- with the minute it last answered there (at: epoch ms) when nothing answers there now, or
-- nothing in time (a gateway whose process stopped takes the connection and never answers);
-- why itself for any other reason.
local function stoppedAnswering(why, at)
  expect(1, why, "string");
  expect(2, at, "number");
  if saidByGateway(why) or not (nothingAnswers(why) or timedOut(why)) or contains(why, ANSWERED_UNTIL) then
    return why;
  end
  return why .. ANSWERED_UNTIL .. os.date("!%H:%M UTC", math.floor(at / 1000)) .. ")";
end

local function gatewayStopped(why)
  expect(1, why, "string");
  return goingAway(why) or (not saidByGateway(why) and connectionClosed(why));
end

-- CC's reason, whole, for an answer to the WebSocket upgrade over the 8 KiB it reads of one: a
-- web page (the installer's, at /trapos/install), which fails the socket before its status is
-- looked at. An open socket's frame over 128 KiB closes with the same words, which the daemon
-- says in a sentence of its own (libsandboxdaemon's whyOpenClosed), so only the bare reason is
-- an answer that was not a WebSocket's.
local OVERSIZED_ANSWER = "Message is too large";

-- Whether why is an answer to the WebSocket upgrade that is not a WebSocket's: a 404, a
-- redirect, or any other (200 OK, 401 from a server that wants a login, a page too large).
local function notAWebSocket(why)
  return why:find("%f[%d]404%f[%D]") ~= nil or contains(why, "Not Found")
    or why:find("%f[%d]30[1278]%f[%D]") ~= nil or contains(why, "Redirect") or contains(why, "Moved")
    or contains(why, "Invalid handshake response") or why == OVERSIZED_ANSWER;
end

-- The answer that was not a WebSocket's, as the advice names it: its status line, or what a
-- page too large to read was.
local function answerShown(why)
  if why == OVERSIZED_ANSWER then
    return "its answer is a page, not a WebSocket: " .. OVERSIZED_ANSWER;
  end
  return why:match("%d%d%d[%w ]*") or why;
end

-- Whether url's path is where the gateway's WebSocket is: /trapos/ws, at the root or under a
-- reverse proxy's path (/sandbox/trapos/ws), or none (the daemon reads ws://host:port as
-- ws://host:port/trapos/ws). Not with an empty segment (//trapos/ws, which the gateway
-- redirects) nor a slash after it (/trapos/ws/, which it does not serve).
local function atGatewayPath(url)
  local path = url:match("^%a[%w+.-]*://[^/?#]*([^?#]*)") or "";
  if path == "" or path == "/" then
    return true;
  end
  local prefix = path:match("^(.*)/trapos/ws$");
  return prefix == "" or (prefix ~= nil and prefix:find("//", 1, true) == nil and prefix:sub(1, 1) == "/"
    and prefix:sub(-1) ~= "/");
end

-- Each rule: does `why` match, and the advice for `url` (and sandbox.password's value). A rule
-- whose failure the daemon retries says so: retry is what it says when the seconds to the next
-- try are not known, true of every try after such a failure (a connection that never opened is
-- tried again every 5 s, libsandboxdaemon's RECONNECT_DELAY; one that broke once open, less
-- often); when they are, retryLead (default "; the daemon") goes before " retries in N s",
-- true whatever the daemon's back-off made the wait. onceBack: the gateway stopped or restarts,
-- so a command run again at once would find it down: it is run again once the gateway is back.
-- gateways: the rule reads the gateway's own words (a close frame's reason, a refusal), which
-- it reads in a close reason said as the gateway's (gatewaysCloseReason); every other rule
-- reads CC's words, or this computer's own, which a gateway's close reason only mimics.
local RULES = {
  {
    -- Before Unknown host and Could not connect, which name the host or a gateway down.
    match = function(why, url)
      return (contains(why, "Unknown host") or contains(why, "Could not connect")) and wrongPort(url) ~= nil;
    end,
    say = function(_, url)
      return "sandbox.url " .. url .. " " .. wrongPort(url) .. ". " .. FIX_URL;
    end,
  },
  {
    -- The scheme named as set: a player who gave https:// and read "not http://" looked for
    -- an http:// they never typed.
    match = function(why) return why:match("^Invalid scheme 'https?'") ~= nil; end,
    say = function(why)
      return "sandbox.url must start with ws:// (for TLS: wss:// through a reverse proxy that terminates TLS), not "
        .. why:match("^Invalid scheme '(https?)'") .. "://. " .. FIX_URL;
    end,
  },
  {
    -- Another scheme (ftp://): what is wrong is the scheme, which the player reads named, in
    -- the URL as set (a URL of another scheme gets no gateway path, normaliseUrl).
    match = function(why) return why:match("Invalid scheme '[^']*'") ~= nil; end,
    say = function(why, url)
      return "sandbox.url " .. url .. " starts with " .. why:match("Invalid scheme '([^']*)'")
        .. "://, not ws:// or wss:// (e.g. ws://192.168.1.20:4444). " .. FIX_URL;
    end,
  },
  {
    match = function(why) return contains(why, "URL malformed"); end,
    say = function(_, url)
      return "sandbox.url " .. url .. " is not a ws:// or wss:// URL (e.g. ws://192.168.1.20:4444). " .. FIX_URL;
    end,
  },
  {
    -- Domain not permitted: CC's http.rules deny the address ($private covers LAN and loopback).
    match = function(why) return contains(why, "Domain not permitted"); end,
    say = function(_, url)
      return "Domain not permitted: the server's CC: Tweaked config denies " .. hostPort(url)
        .. "; allow it in computercraft-server.toml [[http.rules]] (see the user guide)";
    end,
  },
  {
    -- The gateway's port holds opencode: its HTTP server refuses the WebSocket upgrade.
    match = function(why, url)
      local _, port = hostPort(url);
      return port == OPENCODE_PORT and contains(why, "Invalid handshake response");
    end,
    say = function(_, url)
      local host = hostPort(url);
      return "sandbox.url points at port " .. OPENCODE_PORT .. ", opencode's port; the gateway listens on 4444: use ws://"
        .. host .. ":4444. " .. FIX_URL;
    end,
  },
  {
    -- A 5xx on the upgrade: the gateway (full: 503) or a reverse proxy whose gateway is down
    -- answered; the path may well be right, and a later try may get through.
    match = function(why)
      return contains(why, "Invalid handshake response") and why:find("%f[%d]5%d%d%f[%D]") ~= nil;
    end,
    say = function(why, url)
      local host, port = hostPort(url);
      return "the server at " .. host .. ":" .. portOf(url, port) .. " could not take the connection ("
        .. (why:match("%d%d%d[%w ]*") or why) .. "): the gateway is full, or down behind a reverse proxy";
    end,
    retry = "; the daemon retries every 5 s",
  },
  {
    -- A 400 on the upgrade: CC's handshake is a good one, so something between dropped what
    -- makes it one (Upgrade, Connection: hop-by-hop headers a reverse proxy passes on only when
    -- told, nginx not by default). Only the gateway's operator can fix that.
    match = function(why)
      return contains(why, "Invalid handshake response") and why:find("%f[%d]400%f[%D]") ~= nil;
    end,
    say = function(why, url)
      local host, port = hostPort(url);
      return "the server at " .. host .. ":" .. portOf(url, port) .. " refused the WebSocket handshake ("
        .. (why:match("%d%d%d[%w ]*") or why) .. "): the reverse proxy in front of the gateway must pass "
        .. "its Upgrade and Connection headers; tell the gateway's operator";
    end,
  },
  {
    -- The same answers at the gateway's own path (a bare ws://host:port means it): no path
    -- is wrong, the server is not the gateway. Another program's port (opencode's, with its
    -- password, answers 401), or a reverse proxy that does not pass that path on. Naming the
    -- path as wrong, the advice offered the very URL the player had.
    match = function(why, url)
      return notAWebSocket(why) and atGatewayPath(url);
    end,
    say = function(why, url)
      local host, port = hostPort(url);
      return "the server at " .. host .. ":" .. portOf(url, port) .. " is not a trap-sandbox gateway ("
        .. answerShown(why) .. "): check the port (the install line's; 4444 unless the "
        .. "operator chose another) and, behind a reverse proxy, the path. " .. FIX_URL;
    end,
  },
  {
    -- A 404, a redirect or any other answer to the upgrade that is not a WebSocket's (a page too
    -- large to read from the installer's URL): the server is there but the path is not the gateway's.
    match = notAWebSocket,
    say = function(why, url)
      local host, port = hostPort(url);
      if host:find(":", 1, true) then
        host = "[" .. host .. "]"; -- an IPv6 address
      end
      local base = wsScheme(url) .. "://" .. host .. (port and (":" .. port) or "");
      return "the URL's path is wrong (" .. answerShown(why) .. "): use " .. base .. " or "
        .. base .. "/trapos/ws. " .. FIX_URL;
    end,
  },
  {
    match = goingAway,
    gateways = true,
    say = function(why)
      if shuttingDown(why) then
        return "the gateway is shutting down";
      end
      return "the gateway stopped (going away)";
    end,
    retry = "; the daemon reconnects by itself once it runs again",
    onceBack = true,
  },
  {
    match = function(why) return contains(why, "Unknown host"); end,
    say = function(_, url)
      if namesNoHost(url) then
        -- CC read ws:// (or ws://??.example) as a host named ws, whose lookup failed
        return noHost(url) .. ". " .. FIX_URL;
      end
      return "Unknown host: " .. hostPort(url) .. " does not resolve; check its spelling or use the gateway's IP address. " .. FIX_URL;
    end,
  },
  {
    match = function(why) return contains(why, "Could not create a secure connection"); end,
    say = function(_, url)
      return "TLS failed for " .. url .. ": use ws:// for a gateway without TLS, or fix the reverse proxy's certificate. " .. FIX_URL;
    end,
  },
  {
    -- Nothing answers where a gateway answered since boot (stoppedAnswering): it stopped.
    -- Before the rule below, whose "or the address or port is wrong" is not so here.
    match = function(why) return nothingAnswers(why) and why:find(ANSWERED_UNTIL_TIME) ~= nil; end,
    say = function(why, url)
      local host, port = hostPort(url);
      return "nothing answers at " .. host .. ":" .. portOf(url, port) .. ": the gateway there answered until "
        .. why:match(ANSWERED_UNTIL_TIME) .. " and stopped (its operator restarts it)";
    end,
    retry = "; the daemon reconnects by itself once it runs again",
    onceBack = true,
  },
  {
    match = nothingAnswers,
    -- Said to a player, who on a server's gateway cannot start it: "start the gateway there"
    -- was an order only its operator could follow.
    say = function(_, url)
      local host, port = hostPort(url);
      return "nothing answers at " .. host .. ":" .. portOf(url, port)
        .. ": the gateway there is not running (its operator starts it), or the address or port is wrong "
        .. "(sandbox setup)";
    end,
    retry = "; the daemon retries every 5 s",
  },
  {
    -- Close 4008 of an eviction (docs/protocol.md, Admission): crowded with sockets that had
    -- said no hello, the gateway closed this one to make room before it read the hello the
    -- daemon sent at once. "no hello in time" read as a fault of this computer's.
    match = function(why) return contains(why, "(evicted:"); end,
    gateways = true,
    say = function()
      return "the gateway is busy: it closed the connection to make room for newer ones before it read the hello";
    end,
    retry = "; the daemon retries by itself",
  },
  {
    -- The daemon's own words for an open connection the gateway fell silent on (its hello
    -- answer's livenessMs passed with no frame: libsandboxdaemon's checkLiveness). Said as
    -- they were, "...: reconnecting", a player whose gateway's host had gone to sleep read no
    -- cause and no one to tell.
    match = function(why) return why:find(SILENT) ~= nil; end,
    say = function(why, url)
      local host, port = hostPort(url);
      -- Not the promise: the status's lastError above says it, and a pocket computer's status
      -- had its URL scrolled away.
      return "the gateway at " .. host .. ":" .. portOf(url, port) .. " sent nothing for " .. why:match(SILENT)
        .. " s: it is stuck or stopped, or the network to it was cut (its operator checks it)";
    end,
    retry = "; the daemon reconnects by itself once it answers",
    onceBack = true,
  },
  {
    -- The daemon's own words for a hello left unanswered (SILENT_HELLO): a gateway answers it
    -- at once, so it is stuck, or the server at the port speaks WebSocket and is not a gateway.
    -- Said as the rule above says a silence after the answer (0.5.41 before its release: "it
    -- promised a frame every 70 s"), nothing had been promised and the port went unnamed.
    match = function(why) return why:find(SILENT_HELLO) ~= nil; end,
    say = function(why, url)
      local host, port = hostPort(url);
      return "the server at " .. host .. ":" .. portOf(url, port) .. " took the WebSocket but did not answer hello in "
        .. why:match(SILENT_HELLO) .. " s: a gateway stuck (its operator checks it), or another server: check the port";
    end,
    retry = "; the daemon retries by itself",
  },
  {
    -- No answer in time where a gateway answered since boot (stoppedAnswering): it takes the
    -- connection and never answers (its process stopped or stuck), or the way to it was cut.
    -- "check the address, and that no firewall drops the port", the rule below, sent the
    -- player to an address that had worked minutes before.
    match = function(why) return timedOut(why) and why:find(ANSWERED_UNTIL_TIME) ~= nil; end,
    say = function(why, url)
      local host, port = hostPort(url);
      return "no answer from " .. host .. ":" .. portOf(url, port) .. " (timed out): the gateway there answered until "
        .. why:match(ANSWERED_UNTIL_TIME) .. " and is stuck or stopped, or the network to it was cut (its operator checks it)";
    end,
    retry = "; the daemon reconnects by itself once it answers",
    onceBack = true,
  },
  {
    match = timedOut,
    say = function(_, url)
      local host, port = hostPort(url);
      return "no answer from " .. host .. ":" .. portOf(url, port)
        .. " (timed out): check the address, and that no firewall drops the port";
    end,
  },
  {
    -- The daemon's 4429: more of the gateway's frames waited at once than it may have in flight.
    match = function(why) return contains(why, "(4429 too many requests)"); end,
    say = function(_, url)
      local host, port = hostPort(url);
      return "the gateway at " .. host .. ":" .. portOf(url, port) .. " sent more requests at once than the protocol allows"
        .. " (4429): is sandbox.url a trap-sandbox gateway, and up to date?";
    end,
    retry = " The daemon tries again every minute",
    retryLead = " The daemon",
  },
  {
    -- Close 4009: a newer socket said hello for the same traposId (id:label). The daemon
    -- stops ("replaced: …"), so the fix ends with reconnecting. Its words are few: on a
    -- pocket computer, indented (libsandboxlayout.hangingRows), the status with the error and
    -- this fix takes 18 of its 20 rows, the command typed above it and the prompt below.
    match = function(why) return why:find("^replaced") ~= nil or why:find("%f[%w]replaced$") ~= nil; end,
    gateways = true,
    say = function(_, _, password)
      local fix = "another connection took over this computer's traposId (replaced): do two computers share one id and label? "
        .. "Relabel one: label set <name>, then sandbox reconnect";
      if isCredential(password) then
        return fix; -- already linked
      end
      return fix .. " (or link it to your account: sandbox link)";
    end,
  },
  {
    -- Closed before any answer at a URL where no gateway answered since boot (the daemon's
    -- whyUnanswered): a server that accepts and closes, the port another server's. Not
    -- "it stopped or restarted", which sent the player to wait for a gateway that was never there.
    match = function(why) return contains(why, CLOSED_UNANSWERED); end,
    say = function(why, url)
      local host, port = hostPort(url);
      local check = "check the port (the install line's; 4444 unless the operator chose another)";
      if contains(why, "answer to hello") then
        return "the server at " .. host .. ":" .. portOf(url, port) .. " took the WebSocket and closed it without "
          .. "answering hello (Connection closed): unless the gateway there is just starting, it is not a "
          .. "trap-sandbox gateway: " .. check .. " and, behind a reverse proxy, the path. " .. FIX_URL;
      end
      return "the server at " .. host .. ":" .. portOf(url, port) .. " accepted the connection and closed it without "
        .. "answering the WebSocket upgrade (Connection closed): unless the gateway there is just starting, it is "
        .. "not the gateway's port: " .. check .. ". " .. FIX_URL;
    end,
    retry = "; the daemon retries by itself",
  },
  {
    match = connectionClosed,
    say = function()
      return "the gateway closed the connection (Connection closed): it stopped or restarted";
    end,
    -- Not "every 5 s": a socket that keeps breaking once open is tried again less often.
    retry = "; the daemon retries by itself",
    onceBack = true,
  },
};

-- The rule of RULES that why matches, or nil: of a close reason said as the gateway's, only
-- a rule that reads the gateway's words.
local function ruleFor(why, url)
  local gateways = saidByGateway(why);
  if gateways then
    why = why:sub(#GATEWAY_SAID + 1);
  end
  for _, rule in ipairs(RULES) do
    if (rule.gateways or not gateways) and rule.match(why, url) then
      return rule;
    end
  end
  return nil;
end

-- reason, a gateway's own reason for closing an open connection to url (its close frame came
-- with a code and a reason), said as the gateway's where a rule would read it as CC's words
-- or this computer's own: read so, a hostile or broken gateway that closed with "Could not
-- connect (the gateway answered here until 13:37 UTC)" had the player read that nothing
-- answered there since 13:37 while it did, and one that closed with "Could not create a
-- secure connection" was advised to fix TLS. Its own words (going away, evicted) stay as
-- they are, for the rules that read them.
local function gatewaysCloseReason(reason, url)
  expect(1, reason, "string");
  expect(2, url, "string", "nil");
  local rule = ruleFor(reason, url or "the gateway");
  if rule == nil or rule.gateways then
    return reason;
  end
  return GATEWAY_SAID .. reason;
end

-- why without the words gatewaysCloseReason put before a gateway's reason, for a sentence that
-- says itself that the gateway closed the connection ("The gateway closed the link session
-- (…)" said it twice).
local function gatewaysWords(why)
  expect(1, why, "string");
  if saidByGateway(why) then
    return why:sub(#GATEWAY_SAID + 1);
  end
  return why;
end

-- said(why [, url [, password]]): what explain says of why before what to do about it (a
-- rule's words; why itself when no rule has any), for a command that knows more than explain
-- of what to do: sandbox link, whose session a stopping gateway closed while a gateway serves
-- its daemon (another replica, or the same one back), links again at once.
local function said(why, url, password)
  expect(1, why, "string");
  expect(2, url, "string", "nil");
  url = url or "the gateway";
  local rule = ruleFor(why, url);
  if rule == nil then
    return why;
  end
  return rule.say(why, url, password);
end

-- Whether why, a gateway's reason for a closed or refused connection, is that this computer's
-- credential was revoked (closed 4003, or a hello or prove refused for it, which the daemon
-- words "revoked: …" and "unauthorized: …"): the daemon's advice, and the uninstall, which then
-- names no credential to revoke, both read it so. The same words of a server that did not
-- prove itself ("the server at … gave no proof it is the gateway, and says: …") are not the
-- gateway's: read so, they sent the player to sandbox link as the gateway's word.
local function revoked(why)
  return type(why) == "string" and (why:find("^revoked: ") ~= nil or why:find("^unauthorized: ") ~= nil)
    and why:find("credential was revoked", 1, true) ~= nil;
end

-- explain(why, url [, password [, again [, retryIn]]]): the advice for a failed connection. why
-- is the daemon's reason (CC's message, or "unauthorized: ..." from the gateway); url is
-- sandbox.url; password is sandbox.password's value (a number means `set` converted the
-- digits). again is the command to run again when the connection was that command's own,
-- which the daemon's retries do not repeat (sandbox link); nil for the daemon's. retryIn is
-- the seconds to the daemon's next try when its status says (libsandbox.retrySeconds), nil
-- when it is not known.
local function explain(why, url, password, again, retryIn)
  expect(1, why, "string", "nil");
  expect(2, url, "string", "nil");
  expect(4, again, "string", "nil");
  expect(5, retryIn, "number", "nil");
  why = why or "unknown error";
  url = url or "the gateway";
  if revoked(why) then
    return "this computer's credential was revoked on the gateway; link it again with: sandbox link (or set a new credential with: sandbox setup)";
  end
  local owner = why:match("credential belongs to computer (%d+)");
  if owner ~= nil then -- a linked credential copied from another computer (its id is bound)
    return "sandbox.password is computer " .. owner .. "'s linked credential, not this computer's; "
      .. "link this computer with: sandbox link";
  end
  if why:find("^unauthorized") then
    if password == nil or password == "" then
      return "the gateway wants a password (unauthorized) and sandbox.password is not set. Set it with: sandbox setup";
    elseif hasPrefix(password, API_TOKEN_PREFIX) then
      return "sandbox.password is an API token (tsa_...), the host's, which anyone who opens this computer reads: "
        .. "ask the operator to revoke it, then link this computer with: sandbox link";
    elseif hasPrefix(password, ENROLLMENT_KEY_PREFIX) then
      return "sandbox.password is an enrollment key (tsk_...), which links a computer instead: sandbox link <the key>";
    elseif isCredential(password) then
      -- Its account was removed (with its credentials), or the gateway lost its account store
      -- (started without its data directory); an operator's revoke is answered as one. Once
      -- the store is back the credential holds again, and a link would be refused (the account
      -- holds a credential for this computer's id): the daemon, which stopped trying on
      -- unauthorized, needs a reconnect.
      return "the gateway does not know this computer's linked credential (unauthorized): was its account removed? "
        .. "Link again with: sandbox link (or ask the operator: is the gateway missing its data directory? "
        .. "Once it has it again: sandbox reconnect)";
    elseif type(password) == "number" then
      -- The daemon sends the digits, so only what `set` lost (a leading 0, digits past what a
      -- number holds) makes them wrong; which, it cannot tell.
      return "the gateway rejected sandbox.password (unauthorized); `set` stored it as the number "
        .. tostring(password) .. ": if it began with 0 or is long, set it as text with: sandbox setup";
    end
    local doubt, hidden = passwordDoubt(password);
    if doubt == "space" then
      return "the gateway rejected sandbox.password (unauthorized); it " .. hidden .. ", set it again with: sandbox setup";
    elseif doubt == "unheld" then
      return "the gateway rejected sandbox.password (unauthorized); it " .. hidden .. "; else set it again with: sandbox setup";
    end
    return "the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup";
  end
  local rule = ruleFor(why, url);
  if rule == nil then
    return why;
  elseif rule.retry == nil then
    return rule.say(why, url, password);
  elseif again ~= nil and rule.onceBack then
    return rule.say(why, url, password) .. "; run " .. again .. " again once it is back";
  elseif again ~= nil then
    return rule.say(why, url, password) .. "; then run " .. again .. " again";
  elseif retryIn ~= nil then
    return rule.say(why, url, password) .. (rule.retryLead or "; the daemon") .. " retries in " .. retryIn .. " s";
  end
  return rule.say(why, url, password) .. rule.retry;
end

-- The drive whose disk CC's boot would run the startup files of instead of this computer's
-- own (and so instead of the hook, which then starts no daemon and puts no sandbox command
-- on the path), or nil. CC's rom/startup.lua does so with shell.allow_disk_startup (on by
-- default) for the first drive, in peripheral.getNames order, whose disk has a startup
-- program (startup, startup.lua) or a startup directory.
local function diskStartupDrive()
  if not settings.get("shell.allow_disk_startup") or type(peripheral) ~= "table" or type(disk) ~= "table" then
    return nil;
  end
  for _, name in ipairs(peripheral.getNames()) do
    if disk.isPresent(name) and disk.hasData(name) then
      local startup = "/" .. fs.combine(disk.getMountPath(name), "startup");
      if fs.exists(startup) or fs.exists(startup .. ".lua") then
        return name;
      end
    end
  end
  return nil;
end

-- A drive as a player calls it: "the left drive" on a side, its name on a wired network.
local SIDES = { top = true, bottom = true, left = true, right = true, front = true, back = true };
local function driveName(name)
  expect(1, name, "string");
  return SIDES[name] and "the " .. name .. " drive" or name;
end

-- What keeps CC's next boot from starting the daemon here, or nil: why (a clause) and the
-- fix (a sentence, before the reboot). CC's rom/startup.lua runs the computer's startup files,
-- the hook among them, only with shell.allow_startup, and a disk's instead when it has some.
local function bootBlocker()
  if settings.get("shell.allow_startup") == false then
    return "shell.allow_startup is false, so the computer runs no startup file at boot",
      "Run: set shell.allow_startup true";
  end
  local drive = diskStartupDrive();
  if drive ~= nil then
    return "the disk in " .. driveName(drive) .. " has a startup file, which CC runs at boot instead of this "
      .. "computer's", "Take the disk out";
  end
  return nil;
end

-- Whether typed is name with one letter changed, added or dropped, or two neighbours swapped
-- (`stauts`, `helth`, `linkk`).
local function oneEditFrom(typed, name)
  local i = 1;
  while i <= #typed and typed:sub(i, i) == name:sub(i, i) do
    i = i + 1;
  end
  if #typed == #name then
    return typed:sub(i + 1) == name:sub(i + 1)
      or (typed:sub(i, i) == name:sub(i + 1, i + 1) and typed:sub(i + 1, i + 1) == name:sub(i, i)
        and typed:sub(i + 2) == name:sub(i + 2));
  elseif #typed + 1 == #name then
    return typed:sub(i) == name:sub(i + 1);
  elseif #typed == #name + 1 then
    return typed:sub(i + 1) == name:sub(i);
  end
  return false;
end

-- The name a mistyped word most likely meant, of names: the one it begins (`stat`, `Status`)
-- or the one a slip of one letter away (`stauts`), when only one is; nil otherwise. except is
-- a name not to guess: after `sandbox help`, help itself (`sandbox help help` only prints the
-- list `sandbox help` already does).
local function meant(word, names, except)
  local typed, found = word:lower(), nil;
  for _, name in ipairs(names) do
    if name ~= except and ((#typed >= 2 and name:sub(1, #typed) == typed) or (#typed >= 3 and oneEditFrom(typed, name))) then
      if found ~= nil then
        return nil;
      end
      found = name;
    end
  end
  return found;
end

return {
  OPENCODE_PORT = OPENCODE_PORT,
  FIX_URL = FIX_URL,
  CREDENTIAL_PREFIX = CREDENTIAL_PREFIX,
  revoked = revoked,
  explain = explain,
  said = said,
  passwordDoubt = passwordDoubt,
  namesNoHost = namesNoHost,
  wrongPort = wrongPort,
  MAX_PORT = MAX_PORT,
  noHost = noHost,
  gatewayStopped = gatewayStopped,
  closedUnanswered = closedUnanswered,
  stoppedAnswering = stoppedAnswering,
  gatewaysCloseReason = gatewaysCloseReason,
  gatewaysWords = gatewaysWords,
  diskStartupDrive = diskStartupDrive,
  driveName = driveName,
  bootBlocker = bootBlocker,
  meant = meant,
};
