-- gps host [x y z] | locate: serves this computer's position to others (a GPS host,
-- answering every PING on the GPS channel with { x, y, z }) or finds this computer's own.
-- Without coordinates a host first finds its position from the hosts already running.

local args = { ... };

local function usage()
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usages:");
  print(name .. " host");
  print(name .. " host <x> <y> <z>");
  print(name .. " locate");
end

-- The first side with a wireless modem, as gps.locate picks it.
local function wireless_modem()
  for _, side in ipairs(rs.getSides()) do
    if peripheral.getType(side) == "modem" and peripheral.call(side, "isWireless") then
      return side;
    end
  end
  return nil;
end

local function host()
  if pocket then
    print("GPS Hosts must be stationary");
    return;
  end
  local side = wireless_modem();
  if side == nil then
    print("No wireless modems found. 1 required.");
    return;
  end
  local x, y, z;
  if #args >= 4 then
    x, y, z = tonumber(args[2]), tonumber(args[3]), tonumber(args[4]);
    if x == nil or y == nil or z == nil then
      usage();
      return;
    end
    print("Position is " .. x .. "," .. y .. "," .. z);
  else
    x, y, z = gps.locate(2, true);
    if x == nil then
      print("Run \"gps host <x> <y> <z>\" to set position manually");
      return;
    end
  end

  local modem = peripheral.wrap(side);
  print("Opening channel on modem " .. side);
  modem.open(gps.CHANNEL_GPS);
  local served = 0;
  while true do
    local _, from, channel, reply_channel, message, distance = os.pullEvent("modem_message");
    if from == side and channel == gps.CHANNEL_GPS and message == "PING" and distance then
      modem.transmit(reply_channel, gps.CHANNEL_GPS, { x, y, z });
      served = served + 1;
      if served > 1 then
        -- Count on one line: go back over the previous count.
        local _, row = term.getCursorPos();
        term.setCursorPos(1, row - 1);
      end
      print(served .. " GPS requests served");
    end
  end
end

if args[1] == "locate" then
  gps.locate(2, true);
elseif args[1] == "host" then
  host();
else
  usage();
end
