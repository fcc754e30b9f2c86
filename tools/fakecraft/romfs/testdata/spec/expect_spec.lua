-- Specs for /rom/modules/main/cc/expect.lua.

local e = require("cc.expect");

describe("cc.expect", function()
  describe("expect", function()
    it("returns the value when the type matches", function()
      expect(e.expect(1, "x", "string")):eq("x");
      expect(e.expect(1, nil, "number", "nil")):eq(nil);
      expect(e.expect(2, 3, "string", "number")):eq(3);
    end);

    it("names one expected type", function()
      expect.error(e.expect, 1, nil, "string"):eq("bad argument #1 (string expected, got nil)");
    end);

    it("joins two types with or", function()
      expect.error(e.expect, 2, {}, "string", "number"):eq("bad argument #2 (string or number expected, got table)");
    end);

    it("accepts nil when asked to but does not list it", function()
      expect(e.expect(1, nil, "table", "nil")):eq(nil);
      expect.error(e.expect, 1, 5, "table", "nil"):eq("bad argument #1 (table expected, got number)");
      expect.error(e.expect, 2, 5, "string", "nil", "table"):eq("bad argument #2 (string or table expected, got number)");
    end);

    it("joins several types with commas and a final or", function()
      expect.error(e.expect, 1, nil, "table", "string", "number", "boolean")
        :eq("bad argument #1 (table, string, number or boolean expected, got nil)");
    end);

    it("names the checking function when it is known", function()
      local function checked(x)
        e.expect(1, x, "string");
      end
      local ok, err = pcall(function() checked(nil); end);
      expect(ok):eq(false);
      expect(err):str_match("bad argument #1 to 'checked' %(string expected, got nil%)$");
    end);

    it("reports __name of a table's metatable as its type", function()
      local value = setmetatable({}, { __name = "thing" });
      expect.error(e.expect, 1, value, "string"):eq("bad argument #1 (string expected, got thing)");
    end);

    it("is what calling the module does", function()
      expect(e(1, 5, "number")):eq(5);
      expect.error(e, 3, true, "string"):eq("bad argument #3 (string expected, got boolean)");
    end);
  end);

  describe("field", function()
    it("returns the field when the type matches", function()
      expect(e.field({ k = 1 }, "k", "number")):eq(1);
    end);

    it("names the field", function()
      expect.error(e.field, { k = 1 }, "x", "string"):eq("field 'x' missing from table"); -- CC's test-rom expect_spec
      expect.error(e.field, { k = 1 }, "k", "string", "boolean"):eq("bad field 'k' (string or boolean expected, got number)");
    end);

    it("checks its own arguments", function()
      expect.error(e.field, nil, "x", "string"):eq("bad argument #1 (table expected, got nil)");
    end);
  end);

  describe("range", function()
    it("returns numbers within the bounds", function()
      expect(e.range(1, 1, 1)):eq(1);
      expect(e.range(3, 1)):eq(3);
      expect(e.range(-100, nil, 5)):eq(-100);
    end);

    it("rejects numbers outside", function()
      expect.error(e.range, 7, 1, 5):eq("number outside of range (expected 7 to be within 1 and 5)");
      expect.error(e.range, 0, 1, 5):eq("number outside of range (expected 0 to be within 1 and 5)");
    end);

    it("checks the number's type", function()
      expect.error(e.range, nil):eq("bad argument #1 (number expected, got nil)");
    end);
  end);
end);
