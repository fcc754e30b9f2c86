-- pastebin: shares programs through pastebin.com, as CC: Tweaked's pastebin does.
--   pastebin put <file>           uploads a file and prints its code
--   pastebin get <code> <file>    downloads a paste (refusing to overwrite) as file
--   pastebin run <code> [args]    downloads a paste and runs it with args as `...`
-- A code may also be given as the paste's URL (pastebin.com/<code>, .../raw/<code>).
--
-- Uploading needs a pastebin developer key; CC: Tweaked ships its own, fakecraft has none,
-- so `put` sends the key in the `pastebin.api_key` setting (empty by default, and then
-- pastebin.com refuses the upload and the program prints "Failed.").

local SITE = "https://pastebin.com/";
local UPLOAD_URL = SITE .. "api/api_post.php";
local KEY_SETTING = "pastebin.api_key";

local function usage()
  local name = arg and arg[0] or fs.getName(shell.getRunningProgram());
  print("Usages:");
  print(name .. " put <filename>");
  print(name .. " get <code> <filename>");
  print(name .. " run <code> <arguments>");
end

-- The paste code in a code or a pastebin URL, or nil.
local function code_of(text)
  local patterns = {
    "^([%w]+)$",
    "pastebin%.com/raw/([%w]+)",
    "pastebin%.com/([%w]+)",
  };
  for _, pattern in ipairs(patterns) do
    local code = text:match(pattern);
    if code then return code; end
  end
  return nil;
end

-- The paste's text, or nil after saying why.
local function download(text)
  local code = code_of(text);
  if not code then
    printError("Invalid pastebin code.");
    printError("The code is the ID at the end of the pastebin.com URL.");
    return nil;
  end
  write("Connecting to pastebin.com... ");
  -- A random query string, so no cache between here and pastebin answers for it.
  local url = SITE .. "raw/" .. textutils.urlEncode(code) .. "?cb=" .. ("%x"):format(math.random(0, 2 ^ 30));
  local response = http.get(url);
  if not response then
    print("Failed.");
    return nil;
  end
  local headers = response.getResponseHeaders and response.getResponseHeaders() or {};
  local kind = headers["Content-Type"] or headers["content-type"];
  if kind and not kind:find("^text/plain") then
    -- pastebin answers a page, not the paste, when it wants a captcha solved.
    response.close();
    print("Failed.");
    print("pastebin.com asks for a captcha; open " .. SITE .. code .. " in a web browser first.");
    return nil;
  end
  print("Success.");
  local body = response.readAll() or "";
  response.close();
  return body, code;
end

local function put(name)
  local path = shell.resolve(name);
  if not fs.exists(path) or fs.isDir(path) then
    print("No such file");
    return;
  end
  local file = fs.open(path, "r");
  local text = file.readAll() or "";
  file.close();

  write("Connecting to pastebin.com... ");
  local response = http.post(UPLOAD_URL,
    "api_option=paste&" ..
    "api_dev_key=" .. textutils.urlEncode(settings.get(KEY_SETTING) or "") .. "&" ..
    "api_paste_format=lua&" ..
    "api_paste_name=" .. textutils.urlEncode(fs.getName(path)) .. "&" ..
    "api_paste_code=" .. textutils.urlEncode(text));
  if not response then
    print("Failed.");
    return;
  end
  local answer = response.readAll() or "";
  response.close();
  local code = answer:match("^https?://pastebin%.com/([%w]+)$");
  if not code then
    print("Failed.");
    if answer ~= "" then printError(answer); end
    return;
  end
  print("Success.");
  print("Uploaded as " .. answer);
  print('Run "pastebin get ' .. code .. '" to download anywhere');
end

local function get(text, name)
  local path = shell.resolve(name);
  if fs.exists(path) then
    print("File already exists");
    return;
  end
  local body = download(text);
  if not body then return; end
  local file, err = fs.open(path, "w");
  if not file then
    printError("Cannot save file: " .. tostring(err));
    return;
  end
  file.write(body);
  file.close();
  print("Downloaded as " .. name);
end

local function run(text, ...)
  local body, code = download(text);
  if not body then return; end
  local fn, err = load(body, code, "t", _ENV);
  if not fn then
    printError(err);
    return;
  end
  local ok, run_err = pcall(fn, ...);
  if not ok then
    printError(run_err);
  end
end

local args = table.pack(...);
local command = args[1];
if not (command == "put" and args.n >= 2)
  and not (command == "get" and args.n >= 3)
  and not (command == "run" and args.n >= 2) then
  usage();
  return;
end

if not http then
  printError("pastebin requires the http API, but it is not enabled");
  printError("Set http.enabled to true in CC: Tweaked's server config");
  return;
end

if command == "put" then
  put(args[2]);
elseif command == "get" then
  get(args[2], args[3]);
else
  run(args[2], table.unpack(args, 3, args.n));
end
