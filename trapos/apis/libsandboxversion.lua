-- libsandboxversion: the version of the trapos-sandbox package these files belong to. It must
-- equal "version" in packages/trapos-sandbox/ccpm.json (tests/packages checks it); the hello
-- sends it as clientVersion and `sandbox --version` prints it.

-- The numbers of a MAJOR.MINOR.PATCH version of one to three digits each ("0.5.11"), or nil
-- for anything else: a version a gateway names is taken only in that shape, so that a
-- hostile or broken one cannot fill a status line with it.
local function parse(text)
  if type(text) ~= "string" then
    return nil;
  end
  local major, minor, patch = text:match("^(%d%d?%d?)%.(%d%d?%d?)%.(%d%d?%d?)$");
  if major == nil then
    return nil;
  end
  return { tonumber(major), tonumber(minor), tonumber(patch) };
end

-- Whether version a is newer than version b, number by number (0.5.10 is newer than 0.5.9);
-- false when either is not a MAJOR.MINOR.PATCH version (parse).
local function newer(a, b)
  local x, y = parse(a), parse(b);
  if x == nil or y == nil then
    return false;
  end
  for i = 1, 3 do
    if x[i] ~= y[i] then
      return x[i] > y[i];
    end
  end
  return false;
end

return {
  VERSION = "0.5.43",
  parse = parse,
  newer = newer,
};
