-- repeat: a rednet repeater. Every rednet message heard on the repeat channel is sent on
-- again, on the repeat channel and on its recipient's channel, through every modem, so
-- messages reach computers out of each other's range (each message once: its id is
-- remembered for half a minute).

-- How long a message id is remembered.
local REMEMBER_SECONDS = 30;

local modems = {};
for _, name in ipairs(peripheral.getNames()) do
  if peripheral.getType(name) == "modem" then modems[#modems + 1] = name; end
end
if #modems == 0 then
  print("No modems found.");
  return;
elseif #modems == 1 then
  print("1 modem found.");
else
  print(#modems .. " modems found.");
end

local function each_modem(method, ...)
  for _, name in ipairs(modems) do peripheral.call(name, method, ...); end
end

local function show_count(count)
  local _, row = term.getCursorPos();
  term.setCursorPos(1, row - 1);
  term.clearLine();
  if count == 1 then print("1 message repeated."); else print(count .. " messages repeated."); end
end

print("0 messages repeated.");
each_modem("open", rednet.CHANNEL_REPEAT);

local ok, err = pcall(function()
  local seen, forget, count = {}, {}, 0;
  while true do
    local event, a, channel, reply_channel, message = os.pullEvent();
    if event == "modem_message" and channel == rednet.CHANNEL_REPEAT and type(message) == "table"
      and message.nMessageID and type(message.nRecipient) == "number" and not seen[tostring(message.nMessageID)] then
      -- Keyed by text, as rednet keys them: a number id below 2^26 would make gopher-lua
      -- fill the table's array part up to it (fakecraft's README, "Sparse integer keys").
      local id = tostring(message.nMessageID);
      seen[id] = true;
      forget[os.startTimer(REMEMBER_SECONDS)] = id;
      local recipient = message.nRecipient;
      if recipient ~= rednet.CHANNEL_BROADCAST then recipient = recipient % rednet.MAX_ID_CHANNELS; end
      for _, name in ipairs(modems) do
        peripheral.call(name, "transmit", rednet.CHANNEL_REPEAT, reply_channel, message);
        peripheral.call(name, "transmit", recipient, reply_channel, message);
      end
      count = count + 1;
      show_count(count);
    elseif event == "timer" and forget[a] then
      seen[forget[a]] = nil;
      forget[a] = nil;
    end
  end
end);
if not ok then printError(err); end
each_modem("close", rednet.CHANNEL_REPEAT);
