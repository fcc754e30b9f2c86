-- cc.require: builds the `require` function and `package` table the shell gives
-- each program. Modules are found relative to the program's directory (and in
-- /rom/modules/main), loaded with the program's environment, and cached in
-- package.loaded.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

-- Where modules are looked for; "?" is the module name with "." turned into "/".
-- Entries not starting with "/" are relative to the program's directory.
local DEFAULT_PATH = "?;?.lua;?/init.lua;/rom/modules/main/?;/rom/modules/main/?.lua;/rom/modules/main/?/init.lua";
local TURTLE_PATH = ";/rom/modules/turtle/?;/rom/modules/turtle/?.lua;/rom/modules/turtle/?/init.lua";
local COMMAND_PATH = ";/rom/modules/command/?;/rom/modules/command/?.lua;/rom/modules/command/?/init.lua";

-- Directory separator, path separator, substitution mark, executable mark and
-- ignore mark, as Lua's package.config lists them.
local PACKAGE_CONFIG = "/\n;\n?\n!\n-";

-- Escapes a string for use as a literal in a Lua pattern / gsub replacement.
local function pattern_literal(s)
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"));
end

local function replacement_literal(s)
  return (s:gsub("%%", "%%%%"));
end

-- package.searchpath bound to the program's directory.
local function make_searchpath(dir)
  return function(name, path, sep, rep)
    expect(1, name, "string");
    expect(2, path, "string");
    sep = expect(3, sep, "string", "nil") or ".";
    rep = expect(4, rep, "string", "nil") or "/";

    local file_name = name;
    if sep ~= "" then
      file_name = name:gsub(pattern_literal(sep), replacement_literal(rep));
    end
    local tried = {};
    for template in path:gmatch("[^;]+") do
      local candidate = template:gsub("%?", replacement_literal(file_name));
      if candidate:sub(1, 1) ~= "/" then
        candidate = fs.combine(dir, candidate);
      end
      if fs.exists(candidate) and not fs.isDir(candidate) then
        return candidate;
      end
      tried[#tried + 1] = "no file '" .. candidate .. "'";
    end
    return nil, table.concat(tried, "\n  ");
  end
end

-- Searcher 1: functions registered in package.preload.
local function preload_searcher(package)
  return function(name)
    local loader = package.preload[name];
    if loader ~= nil then
      return loader;
    end
    return nil, "no field package.preload['" .. name .. "']";
  end
end

-- Searcher 2: files on package.path, loaded with the program's environment. A
-- file that does not compile is reported among the places looked, as CC does:
-- its compile error is the searcher's reason.
local function file_searcher(package, env)
  return function(name)
    local path, err = package.searchpath(name, package.path);
    if not path then
      return nil, err;
    end
    local fn, load_err = loadfile(path, nil, env);
    if not fn then
      return nil, load_err;
    end
    return fn, path;
  end
end

local function make_require(package)
  -- Marks a module that is being loaded, to catch require loops.
  local LOADING = {};
  return function(name)
    expect(1, name, "string");
    local cached = package.loaded[name];
    if cached == LOADING then
      error("loop or previous error loading module '" .. name .. "'", 0);
    end
    if cached then
      return cached;
    end

    local reasons = { "module '" .. name .. "' not found:" };
    for _, searcher in ipairs(package.loaders) do
      -- A loader gets the module name and whatever else its searcher returned
      -- (the file searcher: the path), no more values than that.
      local found = table.pack(searcher(name));
      local loader = found[1];
      if loader then
        -- On error the marker stays, so a second require reports the failure.
        package.loaded[name] = LOADING;
        local result = loader(name, table.unpack(found, 2, found.n));
        if result == nil then
          result = true;
        end
        package.loaded[name] = result;
        return result;
      end
      reasons[#reasons + 1] = found[2];
    end
    error(table.concat(reasons, "\n  "), 2);
  end
end

--- Returns require and package for a program whose environment is env and whose
--- file lives in directory dir (a computer path, "" for the root).
local function make(env, dir)
  expect(1, env, "table");
  expect(2, dir, "string", "nil");
  dir = dir or "";

  local package = {};
  package.loaded = {
    _G = _G,
    bit32 = bit32,
    coroutine = coroutine,
    math = math,
    package = package,
    string = string,
    table = table,
  };
  package.path = DEFAULT_PATH;
  if turtle then
    package.path = package.path .. TURTLE_PATH;
  elseif commands then
    package.path = package.path .. COMMAND_PATH;
  end
  package.config = PACKAGE_CONFIG;
  package.preload = {};
  package.searchpath = make_searchpath(dir);
  package.loaders = { preload_searcher(package), file_searcher(package, env) };

  return make_require(package), package;
end

return { make = make };
