-- Specs for /apis/libsandboxproof: SHA-256 against FIPS 180-4's examples (and messages of
-- every padding case), HMAC-SHA256 against RFC 4231's test cases, the proof a gateway gives
-- (the same rule as the gateway's gateway.ProofOf), the nonce and the record.

local lib = require('/apis/libsandboxproof');

local function hex(bytes)
  return lib.toHex(bytes);
end

local function unhex(text)
  return (text:gsub("%x%x", function(h) return string.char(tonumber(h, 16)); end));
end

describe("libsandboxproof", function()
  describe("sha256", function()
    it("gives FIPS 180-4's example digests", function()
      expect(hex(lib.sha256(""))):eq("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
      expect(hex(lib.sha256("abc"))):eq("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
      expect(hex(lib.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))
        :eq("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
      expect(hex(lib.sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")))
        :eq("cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    end);

    -- The lengths where the padding fits in the last block, just does not, or fills it.
    it("pads every length right", function()
      local want = {
        [55] = "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318",
        [56] = "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a",
        [63] = "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34",
        [64] = "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb",
        [65] = "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0",
        [119] = "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb",
        [120] = "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c",
      };
      for n, digest in pairs(want) do
        expect(hex(lib.sha256(string.rep("a", n)))):eq(digest);
      end
    end);

    it("hashes every byte value", function()
      local all = {};
      for i = 0, 255 do
        all[#all + 1] = string.char(i);
      end
      expect(hex(lib.sha256(table.concat(all)))):eq("40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880");
    end);
  end);

  describe("hmacSha256", function()
    it("gives RFC 4231's test cases", function()
      local cases = {
        { string.rep("\11", 20), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
        { "Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
        { string.rep("\170", 20), string.rep("\221", 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
        { unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"), string.rep("\205", 50),
          "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
        { string.rep("\170", 131), "Test Using Larger Than Block-Size Key - Hash Key First",
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
        { string.rep("\170", 131), "This is a test using a larger than block-size key and a larger than block-size data."
          .. " The key needs to be hashed before being used by the HMAC algorithm.",
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
      };
      for _, c in ipairs(cases) do
        expect(hex(lib.hmacSha256(c[1], c[2]))):eq(c[3]);
      end
    end);
  end);

  describe("expectedProof", function()
    local nonce = "0123456789abcdef0123456789abcdef";

    it("is the password's proof for a password, asking with the nonce alone", function()
      local proof, payload = lib.expectedProof("pw", nonce);
      expect(proof):eq("3ccab16de5f5b1dc66c5995feccc0241d102e047968063ca4da3a16604c988fa");
      expect(payload):same({ nonce = nonce });
    end);

    it("is the credential's proof for a credential, naming its id", function()
      local proof, payload = lib.expectedProof("tsc_selector_secretpart", nonce);
      expect(proof):eq("6135bc3ba4e9f9a77416fe837b1245d1e77e7f494d2d7535508f33e22bb98ed4");
      expect(payload):same({ nonce = nonce, credential = "selector" });
    end);

    -- The gateway reads the hello's secret as text: CC's byte E4 is its "ä", whose UTF-8 it
    -- hashes (SANDBOX_PASSWORD=pässwort); a proof from the bytes as they are never matched.
    it("hashes a password as the gateway reads it, each byte past ASCII its code point's UTF-8", function()
      local proof = lib.expectedProof("p\228sswort", nonce);
      expect(proof):eq("d56d426c9e23bbc391152edab18162054b0233b387b04818dacb32a4a3fcfd72");
    end);

    -- The gateway's slow key of "pw" (argon2id, docs/protocol.md), as its hello answer gives it.
    local PW_KEY = "0c95d5a72967a63dbfafb363075baa097cb5457564dc6525dd3de5235a1884c7";

    it("is the password's version 2 proof under the gateway's slow key, asking for version 2", function()
      local proof, payload = lib.expectedProof("pw", nonce, PW_KEY);
      expect(proof):eq("f4f473ac425c878dcc103333a2f522fde627779b8920def13bef433dc7a49868");
      expect(payload):same({ nonce = nonce, version = 2 });
      expect(proof == lib.expectedProof("pw", nonce)):eq(false);
    end);

    it("keeps a credential's proof the first one, and takes no key that is not 64 hex digits", function()
      local proof, payload = lib.expectedProof("tsc_selector_secretpart", nonce, PW_KEY);
      expect(proof):eq("6135bc3ba4e9f9a77416fe837b1245d1e77e7f494d2d7535508f33e22bb98ed4");
      expect(payload):same({ nonce = nonce, credential = "selector" });
      for _, bad in ipairs({ "", PW_KEY:sub(2), string.upper(PW_KEY), PW_KEY .. "0" }) do
        local _, asked = lib.expectedProof("pw", nonce, bad);
        expect(asked):same({ nonce = nonce });
      end
    end);

    it("reads a secret of another shape as a password", function()
      for _, secret in ipairs({ "tsc_a", "tsc_a_b_c", "tsc__b", "tsc_" .. string.rep("a", 65) .. "_b" }) do
        local _, payload = lib.expectedProof(secret, nonce);
        expect(payload.credential):eq(nil);
      end
    end);
  end);

  describe("newNonce", function()
    it("is 32 hex digits, another each time", function()
      local a, b = lib.newNonce(), lib.newNonce();
      expect(a:match("^%x+$") ~= nil and #a == 32):eq(true);
      expect(a == b):eq(false);
    end);
  end);

  describe("the record", function()
    before_each(function()
      lib.forget();
    end);
    after_each(function()
      lib.forget();
    end);

    it("remembers the gateways that proved themselves, and forgets them all", function()
      expect(lib.provesSince("ws://a/trapos/ws")):eq(nil);
      expect(lib.remember("ws://a/trapos/ws", 1000)):eq(true);
      expect(lib.remember("ws://b/trapos/ws", 2000)):eq(true);
      expect(lib.provesSince("ws://a/trapos/ws")):eq(1000);
      expect(lib.provesSince("ws://b/trapos/ws")):eq(2000);
      expect(fs.exists(lib.RECORD_PATH)):eq(true);
      lib.forget();
      expect(lib.provesSince("ws://a/trapos/ws")):eq(nil);
      expect(fs.exists(lib.RECORD_PATH)):eq(false);
    end);

    it("keeps a gateway's slow key with its record, and forgets it with the record", function()
      local KEY = string.rep("ab", 32);
      expect(lib.remember("ws://a/trapos/ws", 1000, KEY)):eq(true);
      expect(lib.remember("ws://b/trapos/ws", 2000)):eq(true);
      expect(lib.proofKey("ws://a/trapos/ws")):eq(KEY);
      expect(lib.proofKey("ws://b/trapos/ws")):eq(nil);
      -- recorded again without a key: the key stays
      expect(lib.remember("ws://a/trapos/ws", 1000)):eq(true);
      expect(lib.proofKey("ws://a/trapos/ws")):eq(KEY);
      expect(lib.provesSince("ws://a/trapos/ws")):eq(1000);
      -- what 0.5.33 reads of it: a number for each URL, the keys' table passed over
      local handle = fs.open(lib.RECORD_PATH, "r");
      local record = textutils.unserialize(handle.readAll());
      handle.close();
      local old = {};
      for url, since in pairs(record) do
        if type(url) == "string" and type(since) == "number" then
          old[url] = since;
        end
      end
      expect(old):same({ ["ws://a/trapos/ws"] = 1000, ["ws://b/trapos/ws"] = 2000 });
      lib.forget();
      expect(lib.proofKey("ws://a/trapos/ws")):eq(nil);
      expect(fs.exists(lib.RECORD_PATH)):eq(false);
    end);

    it("reads the record 0.5.33 wrote, with no keys, and adds a key to it", function()
      local handle = fs.open(lib.RECORD_PATH, "w");
      handle.write(textutils.serialize({ ["ws://a/trapos/ws"] = 1000 }));
      handle.close();
      expect(lib.provesSince("ws://a/trapos/ws")):eq(1000);
      expect(lib.proofKey("ws://a/trapos/ws")):eq(nil);
      local KEY = string.rep("cd", 32);
      expect(lib.remember("ws://a/trapos/ws", 1000, KEY)):eq(true);
      expect(lib.provesSince("ws://a/trapos/ws")):eq(1000);
      expect(lib.proofKey("ws://a/trapos/ws")):eq(KEY);
    end);

    it("takes no key for a URL it has no record of, nor one that is not a key", function()
      local handle = fs.open(lib.RECORD_PATH, "w");
      handle.write(textutils.serialize({ ["ws://a/trapos/ws"] = 1000,
        proofKeys = { ["ws://a/trapos/ws"] = "short", ["ws://b/trapos/ws"] = string.rep("ab", 32) } }));
      handle.close();
      expect(lib.proofKey("ws://a/trapos/ws")):eq(nil);
      expect(lib.proofKey("ws://b/trapos/ws")):eq(nil);
      expect(lib.provesSince("proofKeys")):eq(nil);
    end);

    it("reads a record that is not one as none", function()
      local handle = fs.open(lib.RECORD_PATH, "w");
      handle.write("{ not lua");
      handle.close();
      expect(lib.provesSince("ws://a/trapos/ws")):eq(nil);
    end);
  end);

  describe("sinceShown", function()
    it("shows a record's since as the minute in UTC, whatever the computer's time zone", function()
      expect(lib.sinceShown(1765078800000)):eq("2025-12-07 03:40 UTC");
      expect(lib.sinceShown(1765078859999)):eq("2025-12-07 03:40 UTC"); -- the minute, not rounded
      expect(lib.sinceShown(0)):eq("1970-01-01 00:00 UTC");
    end);
  end);
end);
