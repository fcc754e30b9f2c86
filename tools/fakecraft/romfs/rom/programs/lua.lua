-- lua: an interactive Lua prompt. Each line is run as an expression when it is one
-- (its values are printed with cc.pretty, in colour, as CC's prompt prints them; the
-- settings lua.function_args and lua.function_source say how functions show) and as a
-- statement otherwise; globals set at the prompt stay for later lines, and a line starting
-- with `local` gets CC's warning that its locals are gone by the next one (setting
-- lua.warn_against_use_of_local). A line that does not compile is explained by
-- cc.internal.syntax (what is wrong and where, under the line). Up/down recall earlier
-- lines; exit() leaves.

local args = { ... };
if #args > 0 then
  print("This is an interactive Lua prompt.");
  print("To run a lua program, just type its name.");
  return;
end

local pretty = require("cc.pretty");
local exception = require("cc.internal.exception");

local running = true;
local history = {};
local env = setmetatable({
  exit = setmetatable({}, {
    __tostring = function() return "Call exit() to exit."; end,
    __call = function() running = false; end,
  }),
}, { __index = _ENV });

if term.isColour() then term.setTextColour(colours.yellow); end
print("Interactive Lua prompt.");
print("Call exit() to exit.");
term.setTextColour(colours.white);

local function complete(line)
  if not settings.get("lua.autocomplete") or not textutils.complete then return nil; end
  local start = line:find("[a-zA-Z0-9_%.:]+$");
  if not start then return nil; end
  return textutils.complete(line:sub(start), env);
end

local chunk = 0;
while running do
  write("lua> ");
  local input = read(nil, history, complete);
  if input:match("%S") and history[#history] ~= input then
    history[#history + 1] = input;
  end
  if settings.get("lua.warn_against_use_of_local") and input:match("^%s*local%s+") then
    if term.isColour() then term.setTextColour(colours.yellow); end
    print("To access local variables in later inputs, remove the local keyword.");
    term.setTextColour(colours.white);
  end
  chunk = chunk + 1;
  local name = "=lua[" .. chunk .. "]";
  local fn, err = load("return " .. input, name, "t", env);
  -- The text the chunk was compiled from, for the line and mark under a runtime error.
  local source = { contents = input, offset = #"return " };
  if not fn then
    fn, err = load(input, name, "t", env);
    source = input;
  end
  if not fn then
    -- Explain the syntax error in words where CC's parser can; else load's message.
    if require("cc.internal.syntax").parse_repl(input) then
      printError(err);
    end
  else
    local results = table.pack(exception.try(fn));
    if not results[1] then
      printError(tostring(results[2]));
      exception.report(results[2], results[3], { [name] = source });
    else
      for i = 2, results.n do
        local value = results[i];
        local ok, doc = pcall(pretty.pretty, value, {
          function_args = settings.get("lua.function_args"),
          function_source = settings.get("lua.function_source"),
        });
        if ok then
          pretty.print(doc);
        else
          print(tostring(value));
        end
      end
    end
  end
end
