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

-- The same values under the same names, except the two greys.
white = source.white;
orange = source.orange;
magenta = source.magenta;
lightBlue = source.lightBlue;
yellow = source.yellow;
lime = source.lime;
pink = source.pink;
cyan = source.cyan;
purple = source.purple;
blue = source.blue;
brown = source.brown;
green = source.green;
red = source.red;
black = source.black;
combine = source.combine;
subtract = source.subtract;
test = source.test;
packRGB = source.packRGB;
unpackRGB = source.unpackRGB;
rgb8 = source.rgb8;
toBlit = source.toBlit;
fromBlit = source.fromBlit;
grey = source.gray;
lightGrey = source.lightGray;
