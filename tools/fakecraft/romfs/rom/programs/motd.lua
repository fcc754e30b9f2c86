-- motd: prints a message of the day: a greeting on a few dates of the year, otherwise a
-- random line of the files named by the `motd.path` setting (colon-separated; missing
-- files are skipped). The shell runs it at startup when `motd.enable` is set.

local GREETINGS = {
  ["1/1"] = "Happy new year!",
  ["4/28"] = "Ed Balls",
  ["10/31"] = "OOoooOOOoooo! Spooky!",
  ["12/24"] = "Merry X-mas!",
};

-- Printed when no file on the path holds a line, as CC's motd does.
local NO_MESSAGE = "missingno";

local function lines_of(paths)
  local lines = {};
  for path in paths:gmatch("[^:]+") do
    if fs.exists(path) and not fs.isDir(path) then
      for line in io.lines(path) do
        lines[#lines + 1] = line;
      end
    end
  end
  return lines;
end

local today = os.date("*t");
local greeting = GREETINGS[today.month .. "/" .. today.day];
if greeting then
  print(greeting);
  return;
end

local lines = lines_of(settings.get("motd.path") or "");
if #lines == 0 then
  print(NO_MESSAGE);
else
  print(lines[math.random(1, #lines)]);
end
