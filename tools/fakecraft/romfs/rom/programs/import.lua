-- import: waits for files to be dropped on the computer (a file_transfer event) and
-- saves them in the current directory. Q gives up.

print("Drop files to transfer them to this computer");

local files;
while true do
  local event, value = os.pullEvent();
  if event == "file_transfer" then
    files = value.getFiles();
    break;
  elseif event == "key" and value == keys.q then
    return;
  end
end

if #files == 0 then
  printError("No files to transfer");
  return;
end

local ok, err = require("cc.internal.import")(files);
if not ok and err then
  printError(err);
end
