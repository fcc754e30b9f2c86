-- help [topic]: shows a help topic (default: intro); `help index` lists the topics.

local args = { ... };
local topic = args[1] or "intro";

if topic == "index" then
  print("Help topics available:");
  textutils.pagedTabulate(help.topics());
  return;
end

local file_path = help.lookup(topic);
local file = file_path and fs.open(file_path, "r");
if not file then
  printError("No help available");
  return;
end
local text = file.readAll() or "";
file.close();
if text:sub(-1) == "\n" then text = text:sub(1, -2); end
textutils.pagedPrint(text);
