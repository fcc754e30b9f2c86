-- colours: the British spelling of the colors API (grey and lightGrey instead of
-- gray and lightGray). Loaded with os.loadAPI as `colours`.

-- os.loadAPI loads /rom/apis in name order, so colors is normally there already;
-- load a private copy otherwise.
local source = colors;
if type(source) ~= "table" then
  source = setmetatable({}, { __index = _G });
  local fn = assert(loadfile("rom/apis/colors.lua", nil, source));
  fn();
end

-- The same values under the same names, copied in the order colors walks them, as CC's
-- colours.lua copies them (so pairs(colours) walks as in CC), then the two greys renamed.
for name, value in pairs(source) do _ENV[name] = value; end
grey, gray = source.gray, nil;
lightGrey, lightGray = source.lightGray, nil;
