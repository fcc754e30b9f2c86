-- Specs for /rom/apis/parallel.lua (loaded as the global `parallel`).

describe("parallel", function()
  describe("argument checks", function()
    it("rejects a non-function", function()
      expect.error(parallel.waitForAny, function() end, 3)
        :str_match("bad argument #2 %(function expected, got number%)$");
      expect.error(parallel.waitForAll, nil):str_match("bad argument #1 %(function expected, got nil%)$");
    end);
  end);

  describe("waitForAny", function()
    it("returns 0 with no functions", function()
      expect(parallel.waitForAny()):eq(0);
    end);

    it("returns the index of the first function to finish", function()
      local result = parallel.waitForAny(
        function() os.pullEvent("never"); end,
        function() end,
        function() os.pullEvent("never"); end
      );
      expect(result):eq(2);
    end);

    it("starts every function in order before pulling events", function()
      local order = {};
      parallel.waitForAny(
        function() order[#order + 1] = 1; os.pullEvent("go"); end,
        function() order[#order + 1] = 2; os.queueEvent("go"); os.pullEvent("never"); end
      );
      expect(order):same({ 1, 2 });
    end);

    it("does not hand the finishing event to later functions", function()
      local seen = false;
      os.queueEvent("stop");
      local result = parallel.waitForAny(
        function() os.pullEvent("stop"); end,
        function() os.pullEvent("stop"); seen = true; end
      );
      expect(result):eq(1);
      expect(seen):eq(false);
    end);

    it("honours each coroutine's filter", function()
      local got = {};
      os.queueEvent("a", 1);
      os.queueEvent("b", 2);
      os.queueEvent("done");
      parallel.waitForAny(
        function() local _, v = os.pullEvent("b"); got[#got + 1] = "b" .. v; os.pullEvent("never"); end,
        function() local ev = os.pullEvent(); got[#got + 1] = ev; os.pullEvent("done"); end
      );
      expect(got):same({ "a", "b2" });
    end);

    it("re-raises a child error without a position", function()
      local ok, err = pcall(parallel.waitForAny, function() error("boom", 0); end);
      expect(ok):eq(false);
      expect(err):eq("boom");
      ok, err = pcall(parallel.waitForAny, function() error({ code = 1 }); end);
      expect(err):same({ code = 1 });
    end);

    it("delivers terminate through any filter", function()
      os.queueEvent("terminate");
      local ok, err = pcall(parallel.waitForAny, function() os.pullEvent("never"); end);
      expect(ok):eq(false);
      expect(err):eq("Terminated");
    end);
  end);

  describe("waitForAll", function()
    it("returns 0 with no functions", function()
      expect(parallel.waitForAll()):eq(0);
    end);

    it("waits for every function and returns the last index", function()
      local done = {};
      local result = parallel.waitForAll(
        function() os.pullEvent("two"); done[#done + 1] = 1; end,
        function() done[#done + 1] = 2; os.queueEvent("two"); end
      );
      expect(result):eq(1);
      expect(done):same({ 2, 1 });
    end);

    it("works with sleep", function()
      local result = parallel.waitForAll(
        function() sleep(0.1); end,
        function() sleep(0.05); end
      );
      expect(result):eq(1);
    end);
  end);
end);
