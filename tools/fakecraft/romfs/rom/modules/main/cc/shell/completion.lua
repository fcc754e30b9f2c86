-- cc.shell.completion: building blocks for shell.setCompletionFunction. Each
-- helper takes (shell, text, previous, ...) and returns the suffixes completing
-- text; build() chains one helper per argument position.

local expect = require("cc.expect").expect;
local completion = require("cc.completion");

-- Lists the entries of dir (a computer path) that start with the last segment of
-- text, as fs.complete does, for VMs without fs.complete.
local function list_complete(text, dir, include_files, include_dirs)
  local base, partial = text:match("^(.*/)([^/]*)$");
  if not base then
    base, partial = "", text;
  end
  local search = fs.combine(dir, base);
  if base:sub(1, 1) == "/" then
    search = fs.combine("", base);
  end
  if not fs.isDir(search) then
    return {};
  end
  local results = {};
  local names = fs.list(search);
  table.sort(names);
  for _, name in ipairs(names) do
    if #name >= #partial and name:sub(1, #partial) == partial
      and (partial ~= "" or name:sub(1, 1) ~= ".") then
      local is_dir = fs.isDir(fs.combine(search, name));
      local rest = name:sub(#partial + 1);
      if is_dir then
        results[#results + 1] = rest .. "/";
        if include_dirs and rest ~= "" then
          results[#results + 1] = rest;
        end
      elseif include_files and rest ~= "" then
        results[#results + 1] = rest;
      end
    end
  end
  return results;
end

-- Hidden names (starting with ".") are offered only for a "." typed, unless the setting
-- shell.autocomplete_hidden is on, as CC's shell completes.
local function fs_complete(text, dir, include_files, include_dirs)
  if fs.complete then
    return fs.complete(text, dir, {
      include_files = include_files, include_dirs = include_dirs,
      include_hidden = settings.get("shell.autocomplete_hidden"),
    });
  end
  return list_complete(text, dir, include_files, include_dirs);
end

--- Completes a file name relative to the shell's directory.
local function file(shell, text)
  return fs_complete(text, shell.dir(), true, false);
end

--- Completes a directory name relative to the shell's directory.
local function dir(shell, text)
  return fs_complete(text, shell.dir(), false, true);
end

--- Completes a file or directory name; with add_space, file names get a space.
local function dirOrFile(shell, text, previous, add_space)
  local results = fs_complete(text, shell.dir(), true, true);
  if add_space then
    for i = 1, #results do
      if results[i]:sub(-1) ~= "/" then
        results[i] = results[i] .. " ";
      end
    end
  end
  return results;
end

--- Completes a program name.
local function program(shell, text)
  return shell.completeProgram(text);
end

--- Completes a program name at argument `starting`, then that program's own
--- arguments using its completion function. A program name is followed by a space only
--- when the program has a completion function, so its arguments can be typed next.
local function programWithArgs(shell, text, previous, starting)
  if #previous + 1 == starting then
    local info = shell.getCompletionInfo();
    local function completes(name)
      local resolved = shell.resolveProgram(name);
      return resolved ~= nil and info[resolved] ~= nil;
    end
    if text ~= "" and text:sub(-1) ~= "/" and completes(text) then
      return { " " };
    end
    local results = shell.completeProgram(text);
    for i = 1, #results do
      if results[i]:sub(-1) ~= "/" and completes(text .. results[i]) then
        results[i] = results[i] .. " ";
      end
    end
    return results;
  end
  local name = previous[starting];
  local resolved = name and shell.resolveProgram(name);
  if not resolved then
    return nil;
  end
  local info = shell.getCompletionInfo()[resolved];
  if not info then
    return nil;
  end
  local rest = { name };
  for i = starting + 1, #previous do
    rest[#rest + 1] = previous[i];
  end
  return info.fnComplete(shell, #previous - starting + 1, text, rest);
end

-- Adapts a cc.completion helper (text, ...) to the shell signature.
local function from_text(fn)
  return function(shell, text, previous, ...)
    return fn(text, ...);
  end
end

--- Builds a completion function from one spec per argument. A spec is a helper,
--- or a table { helper, extra args..., many = true } whose extra args are passed
--- after (shell, text, previous); `many` on the last spec repeats it for every
--- later argument; nil skips that argument.
local function build(...)
  local specs = table.pack(...);
  for i = 1, specs.n do
    local spec = specs[i];
    if spec ~= nil then
      expect(i, spec, "table", "function");
      if type(spec) == "function" then
        spec = { spec };
        specs[i] = spec;
      end
      if type(spec[1]) ~= "function" then
        error(("Bad table entry #1 at argument #%d (function expected, got %s)"):format(i, type(spec[1])), 2);
      end
      if spec.many and i < specs.n then
        error(("Unexpected 'many' field on argument #%d (should only occur on the last argument)"):format(i), 2);
      end
    end
  end

  return function(shell, index, text, previous)
    local spec = specs[index];
    if not spec then
      if index <= specs.n then
        return nil;
      end
      spec = specs[specs.n];
      if not spec or not spec.many then
        return nil;
      end
    end
    return spec[1](shell, text, previous, table.unpack(spec, 2));
  end
end

return {
  file = file,
  dir = dir,
  dirOrFile = dirOrFile,
  program = program,
  programWithArgs = programWithArgs,
  help = from_text(function(text) return help.completeTopic(text); end),
  choice = from_text(completion.choice),
  peripheral = from_text(completion.peripheral),
  side = from_text(completion.side),
  setting = from_text(completion.setting),
  command = from_text(completion.command),
  build = build,
};
