-- help: finds help topics, files named after the topic (optionally .txt or .md) in the
-- directories of a colon-separated path. Loaded with os.loadAPI as `help`.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

local EXTENSIONS = { "", ".md", ".txt" };

local search_path = "/rom/help";

--- The colon-separated directories searched for topics.
function path()
  return search_path;
end

--- Replaces the search path.
function setPath(new_path)
  expect(1, new_path, "string");
  search_path = new_path;
end

--- The file of a topic, or nil when there is none.
function lookup(topic)
  expect(1, topic, "string");
  for dir in search_path:gmatch("[^:]+") do
    for _, extension in ipairs(EXTENSIONS) do
      local file = fs.combine(dir, topic .. extension);
      if fs.exists(file) and not fs.isDir(file) then
        return file;
      end
    end
  end
  return nil;
end

--- Sorted names of every topic on the path.
function topics()
  local seen = {};
  for dir in search_path:gmatch("[^:]+") do
    if fs.isDir(dir) then
      for _, name in ipairs(fs.list(dir)) do
        if not fs.isDir(fs.combine(dir, name)) then
          seen[(name:gsub("%.txt$", ""):gsub("%.md$", ""))] = true;
        end
      end
    end
  end
  local names = {};
  for name in pairs(seen) do names[#names + 1] = name; end
  table.sort(names);
  return names;
end

--- Suffixes completing a topic name.
function completeTopic(prefix)
  expect(1, prefix, "string");
  local out = {};
  for _, name in ipairs(topics()) do
    if #name > #prefix and name:sub(1, #prefix) == prefix then
      out[#out + 1] = name:sub(#prefix + 1);
    end
  end
  return out;
end
