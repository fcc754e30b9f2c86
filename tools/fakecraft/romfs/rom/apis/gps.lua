-- gps: where is this computer? Asks the GPS hosts in range (computers running
-- `gps host x y z`) over a wireless modem and works the position out from their answers:
-- each host says where it is, and the modem says how far away it is. Three hosts give
-- two candidate points (one if this computer is in their plane); a fourth picks one.
-- Loaded with os.loadAPI.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

CHANNEL_GPS = 65534;

-- Positions are rounded to this, so hosts' distances that are a hair off still agree.
local PRECISION = 0.01;
-- Hosts closer together than this count as one (the newer answer wins).
local SAME_HOST = 1;
-- Default wait for answers, in seconds.
local DEFAULT_TIMEOUT = 2;

-- The two points (or one) at distance r1, r2, r3 from the positions p1, p2, p3, or nil
-- when the three are in a line.
local function intersect(f1, f2, f3)
  local p1, p2, p3 = f1.position, f2.position, f3.position;
  local to2, to3 = p2 - p1, p3 - p1;
  if math.abs(to2:normalize():dot(to3:normalize())) > 0.999 then return nil; end
  -- A frame at p1: ex towards p2, ey in the plane towards p3, ez out of it.
  local d = to2:length();
  local ex = to2:normalize();
  local i = ex:dot(to3);
  local ey = (to3 - ex * i):normalize();
  local j = ey:dot(to3);
  local ez = ex:cross(ey);
  local r1, r2, r3 = f1.distance, f2.distance, f3.distance;
  local x = (r1 * r1 - r2 * r2 + d * d) / (2 * d);
  local y = (r1 * r1 - r3 * r3 - x * x + (x - i) * (x - i) + j * j) / (2 * j);
  local in_plane = p1 + ex * x + ey * y;
  local z2 = r1 * r1 - x * x - y * y;
  if z2 <= 0 then return in_plane:round(PRECISION); end
  local z = math.sqrt(z2);
  local above, below = (in_plane + ez * z):round(PRECISION), (in_plane - ez * z):round(PRECISION);
  if above == below then return above; end
  return above, below;
end

-- Of two candidates, the one that fits another host's answer better (both when neither
-- does).
local function choose(a, b, fix)
  local miss_a = math.abs((a - fix.position):length() - fix.distance);
  local miss_b = math.abs((b - fix.position):length() - fix.distance);
  if math.abs(miss_a - miss_b) < PRECISION then return a, b; end
  if miss_a < miss_b then return a:round(PRECISION); end
  return b:round(PRECISION);
end

-- The first side with a wireless modem.
local function wireless_modem()
  for _, side in ipairs(rs.getSides()) do
    if peripheral.getType(side) == "modem" and peripheral.call(side, "isWireless") then
      return side;
    end
  end
  return nil;
end

-- A host's answer as a fix { position, distance }, or nil when it is not one.
local function as_fix(message, distance)
  if type(message) ~= "table" or #message ~= 3 then return nil; end
  local x, y, z = tonumber(message[1]), tonumber(message[2]), tonumber(message[3]);
  if not (x and y and z) then return nil; end
  return { position = vector.new(x, y, z), distance = distance };
end

--- This computer's position x, y, z, or nil when it cannot be worked out within timeout
-- seconds (default 2). debug prints what it hears.
function locate(timeout, debug)
  expect(1, timeout, "number", "nil");
  expect(2, debug, "boolean", "nil");
  local say = debug and print or function() end;
  if commands then return commands.getBlockPosition(); end

  local side = wireless_modem();
  if side == nil then
    say("No wireless modem attached");
    return nil;
  end
  say("Finding position...");
  local modem = peripheral.wrap(side);
  local opened = false;
  if not modem.isOpen(CHANNEL_GPS) then
    modem.open(CHANNEL_GPS);
    opened = true;
  end
  modem.transmit(CHANNEL_GPS, CHANNEL_GPS, "PING");

  local fixes, first, second = {}, nil, nil;
  local timer = os.startTimer(timeout or DEFAULT_TIMEOUT);
  while true do
    local event, a, b, c, d, e = os.pullEvent();
    if event == "timer" and a == timer then break; end
    local fix = event == "modem_message" and a == side and b == CHANNEL_GPS and c == CHANNEL_GPS and e
      and as_fix(d, e);
    if fix then
      say(fix.distance .. " metres from " .. tostring(fix.position));
      if fix.distance == 0 then
        first, second = fix.position, nil;
      else
        -- A host heard again (or one next to it) replaces its answer; past three, the
        -- newest takes the third place and only narrows the candidates down.
        local at = math.min(3, #fixes + 1);
        for i, old in ipairs(fixes) do
          if (old.position - fix.position):length() < SAME_HOST then at = i; break; end
        end
        fixes[at] = fix;
        if #fixes >= 3 then
          if first == nil then
            first, second = intersect(fixes[1], fixes[2], fixes[3]);
          elseif second ~= nil then
            first, second = choose(first, second, fixes[3]);
          end
        end
      end
      if first ~= nil and second == nil then break; end
    end
  end
  if opened then modem.close(CHANNEL_GPS); end

  if first ~= nil and second ~= nil then
    say("Ambiguous position");
    say("Could be " .. first.x .. "," .. first.y .. "," .. first.z .. " or " .. second.x .. "," .. second.y .. "," .. second.z);
    return nil;
  elseif first ~= nil then
    say("Position is " .. first.x .. "," .. first.y .. "," .. first.z);
    return first.x, first.y, first.z;
  end
  say("Could not determine position");
  return nil;
end
