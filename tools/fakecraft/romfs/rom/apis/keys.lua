-- keys: the key codes of `key` and `key_up` events, by name, and the name of a code.
-- CC: Tweaked's codes are GLFW's (so LWJGL 3's); fakecraft's `shell` sends the same.
-- Loaded with os.loadAPI as `keys`.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

local LISTED = {
  [32] = "space", [39] = "apostrophe", [44] = "comma", [45] = "minus", [46] = "period",
  [47] = "slash", [59] = "semicolon", [61] = "equals", [91] = "leftBracket",
  [92] = "backslash", [93] = "rightBracket", [96] = "grave",
  [257] = "enter", [258] = "tab", [259] = "backspace", [260] = "insert", [261] = "delete",
  [262] = "right", [263] = "left", [264] = "down", [265] = "up", [266] = "pageUp",
  [267] = "pageDown", [268] = "home", [269] = "end", [280] = "capsLock",
  [281] = "scrollLock", [282] = "numLock", [283] = "printScreen", [284] = "pause",
  [330] = "numPadDecimal", [331] = "numPadDivide", [332] = "numPadMultiply",
  [333] = "numPadSubtract", [334] = "numPadAdd", [335] = "numPadEnter",
  [336] = "numPadEqual", [340] = "leftShift", [341] = "leftCtrl", [342] = "leftAlt",
  [343] = "leftSuper", [344] = "rightShift", [345] = "rightCtrl", [346] = "rightAlt",
  [348] = "menu",
};

-- Digits 0-9 are codes 48-57, letters a-z 65-90, f1-f25 290-314, numPad0-9 320-329.
local DIGITS = { "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine" };
for i, name in ipairs(DIGITS) do
  LISTED[47 + i] = name;
  LISTED[319 + i] = "numPad" .. (i - 1);
end
for i = 0, 25 do
  LISTED[65 + i] = string.char(97 + i);
end
for i = 1, 25 do
  LISTED[289 + i] = "f" .. i;
end

-- The names by code, set one by one in increasing order into an empty table, as CC's
-- keys.lua sets its table: the order the names are copied in below, and so the order
-- pairs(keys) walks them, follows from that table's layout, as in CC.
local codes = {};
for code in pairs(LISTED) do codes[#codes + 1] = code; end
table.sort(codes);
local NAMES = {};
for _, code in ipairs(codes) do NAMES[code] = LISTED[code]; end

-- The API's own environment (os.loadAPI's table).
local api = _ENV;
for code, name in pairs(NAMES) do
  api[name] = code;
end
-- An old name CC keeps working, and CC's own misspelling of scrollLock; CC's keys.lua also
-- sets cimcumflex to its circumflex, which 1.113.1 has not, so to nil, leaving that name's
-- dead node in the table's layout, as here.
api["return"] = 257;
api.scollLock = 281;
api.cimcumflex = nil;

--- The name of a key code, or nil when the code has none.
function getName(code)
  expect(1, code, "number");
  return NAMES[code];
end
