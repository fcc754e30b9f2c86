-- luacheck's configuration for the in-game Lua (trapos/) and the installer
-- (tools/trap-sandbox/internal/installer/*.lua); `.ci/run` runs it and wants no warning.
-- CC: Tweaked runs Lua 5.1 with parts of 5.2/5.3 (table.pack/unpack, utf8, load with an
-- environment), so the standard library is luacheck's union of them ("max") plus CC's globals.

stds.cc = {
  read_globals = {
    -- CC: Tweaked's APIs (docs: https://tweaked.cc).
    "colours", "colors", "commands", "disk", "fs", "gps", "help", "http", "io", "keys",
    "multishell", "paintutils", "parallel", "peripheral", "pocket", "rednet", "redstone", "rs",
    "settings", "shell", "term", "textutils", "turtle", "vector", "window",
    -- The bios's globals.
    "_HOST", "_CC_DEFAULT_SETTINGS", "printError", "read", "sleep", "write",
    os = {
      fields = {
        "pullEvent", "pullEventRaw", "queueEvent", "startTimer", "cancelTimer", "setAlarm",
        "cancelAlarm", "getComputerID", "computerID", "getComputerLabel", "computerLabel",
        "setComputerLabel", "clock", "time", "day", "epoch", "date", "shutdown", "reboot",
        "run", "loadAPI", "unloadAPI", "version", "sleep", "getenv", "remove", "rename",
        "tmpname", "execute", "exit", "difftime", "setlocale",
      },
    },
  },
}

-- fakecraft's spec runner (tools/fakecraft/romfs/launcher/spec.lua) gives specs these.
stds.spec = {
  read_globals = {
    "describe", "it", "expect", "stub", "fail", "pending", "before_each", "after_each",
    -- CraftOS-PC's API on every fakecraft computer: specs attach peripherals (a monitor) with it.
    "periphemu",
  },
}

std = "max+cc";
-- The house style keeps long argument checks and messages on one line.
max_line_length = false;

files["trapos/tests"] = { std = "max+cc+spec" };
-- The installer's template gets SOURCE (where it was served from) from the gateway.
files["tools/trap-sandbox/internal/installer"] = { read_globals = { "SOURCE" } };

-- What `luacheck .` checks from the repository's root (.ci/run and tests/luacheck run that).
include_files = { "trapos/**/*.lua", "tools/trap-sandbox/internal/installer/*.lua" };
