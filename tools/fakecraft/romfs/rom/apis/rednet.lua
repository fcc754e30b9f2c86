-- rednet: messages between computers by id, over modems, with CC's wire format so a
-- fakecraft computer and a computer in the game understand each other.
--
-- A message travels as a modem transmission on the recipient's id channel (id % 65500, or
-- the broadcast channel) and again on the repeat channel (for `repeat` servers), wrapped
-- in a table { nMessageID, nRecipient, nSender, message, sProtocol }. The bios runs
-- rednet.run beside the shell: it turns such transmissions into rednet_message events
-- (once per message id) and answers lookups for the protocols this computer hosts.
-- Loaded with os.loadAPI.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

CHANNEL_BROADCAST = 65535;
CHANNEL_REPEAT = 65533;
MAX_ID_CHANNELS = 65500;

-- How long a message id is remembered (so a copy arriving through a repeater is dropped),
-- and how often the memory is swept.
local REMEMBER_SECONDS = 9.5;
local SWEEP_SECONDS = 10;
-- How long lookup waits for answers.
local LOOKUP_SECONDS = 2;
-- The protocol of lookups and their answers.
local DNS_PROTOCOL = "dns";

-- Message ids seen or sent, each with the os.clock() after which it is forgotten. They are
-- kept by the id's text, never the number: an id is random up to 2^31, and gopher-lua keeps
-- an integer key below 2^26 in a table's array part, filling every slot before it first, in
-- Go that no abort interrupts (a hang of minutes under -race, gigabytes of nils).
local received_messages = {};

local function message_key(message_id)
  return tostring(message_id);
end
-- The sweep's timer, nil while nothing is remembered, and the os.clock() it is due at.
local prune_received_timer, prune_due;
-- Hostname by protocol, for the protocols this computer hosts.
local hostnames = {};

local function channel_of(id)
  return (id or os.getComputerID()) % MAX_ID_CHANNELS;
end

local function start_sweep()
  prune_received_timer, prune_due = os.startTimer(SWEEP_SECONDS), os.clock() + SWEEP_SECONDS;
end

local function remember(message_id)
  received_messages[message_key(message_id)] = os.clock() + REMEMBER_SECONDS;
  if not prune_received_timer then start_sweep(); end
end

local function check_modem(name)
  if peripheral.getType(name) ~= "modem" then
    error("No such modem: " .. name, 3);
  end
end

--- Opens a modem for rednet: its channel for this computer's id and the broadcast one.
function open(modem)
  expect(1, modem, "string");
  check_modem(modem);
  peripheral.call(modem, "open", channel_of());
  peripheral.call(modem, "open", CHANNEL_BROADCAST);
end

--- Closes a modem for rednet, or every modem when none is named.
function close(modem)
  expect(1, modem, "string", "nil");
  if modem == nil then
    for _, name in ipairs(peripheral.getNames()) do
      if isOpen(name) then close(name); end
    end
    return;
  end
  check_modem(modem);
  peripheral.call(modem, "close", channel_of());
  peripheral.call(modem, "close", CHANNEL_BROADCAST);
end

--- Whether a modem (or, with none named, any modem) is open for rednet.
function isOpen(modem)
  expect(1, modem, "string", "nil");
  if modem == nil then
    for _, name in ipairs(peripheral.getNames()) do
      if isOpen(name) then return true; end
    end
    return false;
  end
  if peripheral.getType(modem) ~= "modem" then return false; end
  return peripheral.call(modem, "isOpen", channel_of()) and peripheral.call(modem, "isOpen", CHANNEL_BROADCAST);
end

--- Sends a message to a computer (or CHANNEL_BROADCAST) on every open modem; a message to
-- this computer is queued at once. Returns whether it went anywhere.
function send(recipient, message, protocol)
  expect(1, recipient, "number");
  expect(3, protocol, "string", "nil");
  local message_id = math.random(1, 2147483647);
  remember(message_id);
  local me = os.getComputerID();
  if recipient == me then
    os.queueEvent("rednet_message", me, message, protocol);
    return true;
  end
  local wrapped = {
    nMessageID = message_id, nRecipient = recipient, nSender = me,
    message = message, sProtocol = protocol,
  };
  local channel = recipient;
  if recipient ~= CHANNEL_BROADCAST then channel = channel_of(recipient); end
  local sent = false;
  for _, name in ipairs(peripheral.getNames()) do
    if isOpen(name) then
      peripheral.call(name, "transmit", channel, channel_of(), wrapped);
      peripheral.call(name, "transmit", CHANNEL_REPEAT, channel_of(), wrapped);
      sent = true;
    end
  end
  return sent;
end

--- Sends a message to every computer listening.
function broadcast(message, protocol)
  expect(2, protocol, "string", "nil");
  send(CHANNEL_BROADCAST, message, protocol);
end

--- Waits for a message (of a protocol, when given), at most timeout seconds: the sender's
-- id, the message and its protocol, or nil when the time ran out.
function receive(protocol_filter, timeout)
  if type(protocol_filter) == "number" and timeout == nil then
    protocol_filter, timeout = nil, protocol_filter;
  end
  expect(1, protocol_filter, "string", "nil");
  expect(2, timeout, "number", "nil");
  local timer, filter = nil, "rednet_message";
  if timeout then timer, filter = os.startTimer(timeout), nil; end
  while true do
    local event, a, b, c = os.pullEvent(filter);
    if event == "rednet_message" and (protocol_filter == nil or c == protocol_filter) then
      return a, b, c;
    elseif event == "timer" and a == timer then
      return nil;
    end
  end
end

--- Answers lookups for a protocol under a hostname ("localhost" is reserved, and a name
-- another computer already hosts for the protocol is refused).
function host(protocol, hostname)
  expect(1, protocol, "string");
  expect(2, hostname, "string");
  if hostname == "localhost" then error("Reserved hostname", 2); end
  if hostnames[protocol] == hostname then return; end
  if lookup(protocol, hostname) ~= nil then error("Hostname in use", 2); end
  hostnames[protocol] = hostname;
end

--- Stops answering lookups for a protocol.
function unhost(protocol)
  expect(1, protocol, "string");
  hostnames[protocol] = nil;
end

--- The ids of the computers hosting a protocol, or the one hosting it under hostname (nil
-- when none answers within two seconds). This computer's own hosting counts.
function lookup(protocol, hostname)
  expect(1, protocol, "string");
  expect(2, hostname, "string", "nil");
  local found = {};
  local mine = hostnames[protocol];
  if mine then
    if hostname == nil then
      found[1] = os.getComputerID();
    elseif hostname == "localhost" or hostname == mine then
      return os.getComputerID();
    end
  end
  if not isOpen() then
    if hostname == nil then return table.unpack(found); end
    return nil;
  end
  broadcast({ sType = "lookup", sProtocol = protocol, sHostname = hostname }, DNS_PROTOCOL);
  local timer = os.startTimer(LOOKUP_SECONDS);
  while true do
    local event, sender, message, message_protocol = os.pullEvent();
    if event == "timer" and sender == timer then break; end
    if event == "rednet_message" and message_protocol == DNS_PROTOCOL and type(message) == "table"
      and message.sType == "lookup response" and message.sProtocol == protocol then
      if hostname == nil then
        found[#found + 1] = sender;
      elseif message.sHostname == hostname then
        return sender;
      end
    end
  end
  if hostname == nil then return table.unpack(found); end
  return nil;
end

-- Whether a modem message is a rednet message for this computer: a numeric id (not NaN),
-- a numeric sender if any, and this computer as recipient unless it was broadcast.
local function for_me(channel, message)
  if type(message) ~= "table" then return false; end
  local message_id, sender = message.nMessageID, message.nSender;
  if type(message_id) ~= "number" or message_id ~= message_id then return false; end
  if sender ~= nil and (type(sender) ~= "number" or sender ~= sender) then return false; end
  return channel == CHANNEL_BROADCAST
    or (message.nRecipient ~= nil and message.nRecipient == os.getComputerID());
end

-- Forgets the message ids whose time is up, and sweeps again while any remain.
local function sweep()
  prune_received_timer = nil;
  local now, left = os.clock(), false;
  for key, deadline in pairs(received_messages) do
    if deadline <= now then received_messages[key] = nil; else left = true; end
  end
  if left then start_sweep(); end
end

local running = false;

--- The rednet daemon (the bios runs it): turns modem messages into rednet_message events
-- and answers lookups. It runs forever; only one may run.
function run()
  if running then error("rednet is already running", 2); end
  running = true;
  while true do
    local event, a, b, c, d = os.pullEventRaw();
    -- Sweep when it is due, whichever event comes first: the sweep's own timer may queue
    -- after another timer of the same tick.
    if prune_received_timer and os.clock() >= prune_due then sweep(); end
    if event == "modem_message" then
      local modem, channel, reply_channel, message = a, b, c, d;
      if (channel == channel_of() or channel == CHANNEL_BROADCAST) and for_me(channel, message)
        and not received_messages[message_key(message.nMessageID)] and isOpen(modem) then
        remember(message.nMessageID);
        os.queueEvent("rednet_message", message.nSender or reply_channel, message.message, message.sProtocol);
      end
    elseif event == "rednet_message" then
      local sender, message, protocol = a, b, c;
      if protocol == DNS_PROTOCOL and type(message) == "table" and message.sType == "lookup" then
        local name = hostnames[message.sProtocol];
        if name ~= nil and (message.sHostname == nil or message.sHostname == name) then
          send(sender, { sType = "lookup response", sHostname = name, sProtocol = message.sProtocol }, DNS_PROTOCOL);
        end
      end
    end
  end
end
