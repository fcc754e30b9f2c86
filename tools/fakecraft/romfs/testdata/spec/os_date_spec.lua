-- Specs for os.date: strftime's conversions in the C locale, "*t" and "!".

describe("os.date", function()
  -- 2000-10-01 23:12:17 UTC, a Sunday.
  local t = 970441937;

  it("formats every C conversion", function()
    local cases = {
      a = "Sun", A = "Sunday", b = "Oct", B = "October", c = "Sun Oct  1 23:12:17 2000",
      C = "20", d = "01", D = "10/01/00", e = " 1", F = "2000-10-01", g = "00", G = "2000",
      h = "Oct", H = "23", I = "11", j = "275", m = "10", M = "12", n = "\n", p = "PM",
      r = "11:12:17 PM", R = "23:12", S = "17", t = "\t", T = "23:12:17", u = "7", U = "40",
      V = "39", w = "0", W = "39", x = "10/01/00", X = "23:12:17", y = "00", Y = "2000",
      z = "+0000", Z = "UTC",
    };
    for code, want in pairs(cases) do
      expect(os.date("!%" .. code, t)):eq(want);
    end
    expect(os.date("!%%", t)):eq("%");
    expect(os.date("!%I %p", 1670373922)):eq("12 AM");
  end);

  it("builds a table that os.time turns back", function()
    local T = os.date("!*t", t);
    expect(T.year):eq(2000);
    expect(T.yday):eq(275);
    expect(T.wday):eq(1);
    expect(T.isdst):eq(false);
    local now = math.floor(os.epoch("utc") / 1000);
    expect(os.time(os.date("*t", now))):eq(now);
  end);

  it("rejects an unknown conversion", function()
    expect.error(os.date, "%Q", t):str_match("invalid conversion specifier '%%Q'");
  end);

  it("names inf in timer errors", function()
    expect.error(os.startTimer, 1 / 0):eq("bad argument #1 (number expected, got inf)");
    expect.error(os.startTimer, -1 / 0):eq("bad argument #1 (number expected, got -inf)");
    expect.error(os.startTimer, 0 / 0):eq("bad argument #1 (number expected, got nan)");
  end);

  it("truncates %d as Cobalt does", function()
    expect(("%d"):format(2.7)):eq("2");
  end);
end);

-- CC's Java APIs hand a table over as a Java HashMap, which CC copies into a new Lua table
-- in the map's iteration order (CobaltLuaMachine.toValue); that order, and so the order
-- pairs walks the table in, follows from the keys' Java hashes and the map's capacity
-- (os.date's HashMap(9), fs.attributes' HashMap()): read off Java's HashMap and Cobalt.
describe("a table a Java API returns", function()
  local function keys_of(t)
    local out = {};
    for k in pairs(t) do out[#out + 1] = k; end
    return table.concat(out, " ");
  end

  it("walks as CC's: os.date('*t'), on every run", function()
    expect(keys_of(os.date("*t"))):eq("hour min wday year yday day sec month isdst");
    expect(keys_of(os.date("!*t", 0))):eq("hour min wday year yday day sec month isdst");
  end);

  it("walks as CC's: fs.attributes", function()
    expect(keys_of(fs.attributes("/rom"))):eq("created isReadOnly modified modification isDir size");
  end);
end);
