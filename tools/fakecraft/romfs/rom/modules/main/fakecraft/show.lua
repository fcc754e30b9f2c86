-- fakecraft.show: a value as the Lua prompt prints it: strings quoted, tables written
-- out ({ 1, 2, key = "v" }), nested tables seen twice shown as {...}.

local KEYWORDS = {};
for word in ("and break do else elseif end false for function goto if in local nil not or repeat return then true until while"):gmatch("%a+") do
  KEYWORDS[word] = true;
end

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == "\n" then return "\\n"; end
    if c == "\t" then return "\\t"; end
    if c == '"' or c == "\\" then return "\\" .. c; end
    return ("\\%03d"):format(c:byte());
  end) .. '"';
end

local show;

local function key_text(k, seen)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") and not KEYWORDS[k] then
    return k;
  end
  return "[" .. show(k, seen) .. "]";
end

local function key_order(a, b)
  local ta, tb = type(a), type(b);
  if ta ~= tb then return ta < tb; end
  if ta == "number" or ta == "string" then return a < b; end
  return tostring(a) < tostring(b);
end

function show(value, seen)
  local t = type(value);
  if t == "string" then return quote(value); end
  if t ~= "table" then return tostring(value); end
  local mt = getmetatable(value);
  if type(mt) == "table" and mt.__tostring then return tostring(value); end
  seen = seen or {};
  if seen[value] then return "{...}"; end
  seen[value] = true;
  local parts = {};
  local n = #value;
  for i = 1, n do parts[#parts + 1] = show(value[i], seen); end
  local keys = {};
  for k in pairs(value) do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then
      keys[#keys + 1] = k;
    end
  end
  table.sort(keys, key_order);
  for _, k in ipairs(keys) do
    parts[#parts + 1] = key_text(k, seen) .. " = " .. show(value[k], seen);
  end
  seen[value] = nil;
  if #parts == 0 then return "{}"; end
  return "{ " .. table.concat(parts, ", ") .. " }";
end

return { show = show };
