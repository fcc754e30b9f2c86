-- cc.internal.import: saves the files of a file_transfer event (dropped on the computer)
-- into the shell's current directory. Used by the import program and by the shell's
-- prompt; internal, as in CC: Tweaked.
--
-- Called with the list of TransferredFile handles (event[2].getFiles()). Returns true
-- when every file was written, nil when the user declined to overwrite, or nil and a
-- message. Files that exist already are named first and written only after a "yes".

local completion = require("cc.completion");

-- How much of a transferred file is read at a time, so a big file is never held whole.
local CHUNK_SIZE = 8192;

-- Asks whether to overwrite; true for yes (or just Enter), false for no.
local function confirm_overwrite()
  while true do
    io.write("Overwrite? (yes/no) ");
    local answer = read(nil, nil, function(text)
      return completion.choice(text, { "yes", "no" });
    end);
    if not answer then
      return false;
    end
    answer = answer:lower();
    if answer == "" or answer == "yes" or answer == "y" then
      return true;
    elseif answer == "no" or answer == "n" then
      return false;
    end
  end
end

-- Copies one transferred file to path, chunk by chunk.
local function save(file, path)
  local handle, err = fs.open(path, "wb");
  if not handle then
    return nil, err;
  end
  while true do
    local chunk = file.read(CHUNK_SIZE);
    if not chunk then
      break;
    end
    local ok, write_err = pcall(handle.write, chunk);
    if not ok then
      handle.close();
      write_err = tostring(write_err):gsub("^pcall: ", "");
      return nil, "Failed to write file (" .. write_err .. "). File may be corrupted";
    end
  end
  handle.close();
  return true;
end

return function(files)
  local existing = {};
  for _, file in pairs(files) do
    local name = file.getName();
    local path = shell.resolve(name);
    if fs.isDir(path) then
      return nil, name .. " is already a directory.";
    elseif fs.exists(path) then
      existing[#existing + 1] = name;
    end
  end

  if #existing > 0 then
    table.sort(existing);
    printError("The following files will be overwritten:");
    textutils.pagedTabulate(colours.cyan, existing);
    if not confirm_overwrite() then
      return nil;
    end
  end

  for _, file in pairs(files) do
    local name = file.getName();
    print("Transferring " .. name);
    local ok, err = save(file, shell.resolve(name));
    if not ok then
      return nil, err;
    end
  end
  return true;
end
