-- wget: downloads a file, or runs it, as CC: Tweaked's wget does.
--   wget <url> [filename]   saves the body (refusing to overwrite) as filename, or as the
--                           URL's last path segment
--   wget run <url> [args]   loads the body as Lua and runs it with args as `...`
-- A failed request prints only "Failed.", as CC's does.

local function usage()
  local name = arg and arg[0] or fs.getName(shell.getRunningProgram());
  print("Usage:");
  print(name .. " <url> [filename]");
  print(name .. " run <url>");
end

local args = { ... };
local run = false;
if args[1] == "run" then
  table.remove(args, 1);
  run = true;
end
if #args < 1 then
  usage();
  return;
end
local url = table.remove(args, 1);

if not http then
  printError("wget requires the http API, but it is not enabled");
  printError("Set http.enabled to true in CC: Tweaked's server config");
  return;
end

-- The last path segment of a URL, without query, fragment or trailing slashes.
local function fileName(u)
  u = u:gsub("[#?].*", ""):gsub("/+$", "");
  return u:match("/([^/]+)$");
end

local function fetch(u)
  local ok, err = http.checkURL(u);
  if not ok then
    printError(err or "Invalid URL.");
    return nil;
  end
  write("Connecting to " .. u .. "... ");
  local response = http.get(u);
  if not response then
    print("Failed.");
    return nil;
  end
  print("Success.");
  local body = response.readAll();
  response.close();
  return body or "";
end

if run then
  local body = fetch(url);
  if not body then
    return;
  end
  -- The script runs in wget's own environment, as a program the shell started.
  local fn, err = load(body, fileName(url), "t", _ENV);
  if not fn then
    printError(err);
    return;
  end
  local ok, runErr = pcall(fn, table.unpack(args));
  if not ok then
    printError(runErr);
  end
else
  local name = args[1] or fileName(url) or url;
  local path = shell.resolve(name);
  if fs.exists(path) then
    print("File already exists");
    return;
  end
  local body = fetch(url);
  if not body then
    return;
  end
  local file, err = fs.open(path, "wb");
  if not file then
    printError("Cannot save file: " .. err);
    return;
  end
  file.write(body);
  file.close();
  print("Downloaded as " .. name);
end
