-- libsandboxproof: the gateway proves itself before the computer gives its secret
-- (docs/protocol.md, "The gateway proves itself"). SHA-256 (FIPS 180-4) and HMAC-SHA256
-- (RFC 2104) on bit32, the proof the computer expects for its nonce, the nonce itself, and the
-- computer's record of the gateways that proved themselves (per sandbox.url): once one has,
-- the daemon sends its hello there only after a good proof.

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;
local places = require('/apis/libsandboxuninstall');
local codec = require('/apis/libsandboxcodec');
local toWire, oneLine = codec.toWire, codec.oneLine;

local band, bxor, bnot = bit32.band, bit32.bxor, bit32.bnot;
local rrotate, rshift = bit32.rrotate, bit32.rshift;
local byte, char, rep = string.byte, string.char, string.rep;

-- The proof's message starts with this, as the gateway's (gateway.ProofContext): a proof is
-- then never the HMAC of anything else the key might sign. The password's version 2 proof,
-- under the slow key the gateway gave in a hello's answer (proofKey), starts with the second.
local PROOF_CONTEXT = "trap-sandbox gateway proof v1";
local PROOF_CONTEXT_V2 = "trap-sandbox gateway proof v2";
-- A proof key is 32 bytes, as 64 lower-case hex digits.
local PROOF_KEY_HEX_DIGITS = 64;
-- The key a proof names: the shared password's, or a credential's by its selector; and what
-- the gateway's proof of its refusal of a revoked credential names (gateway 0.5.36 on), so
-- that it is never a proof to say hello after.
local WHICH_PASSWORD, WHICH_CREDENTIAL = "password", "credential:";
local WHICH_REVOKED = "revoked-credential:";
-- A nonce is 128 bits, as 32 lower-case hex digits.
local NONCE_HEX_DIGITS = 32;
-- Where the record of the gateways that proved themselves is kept: protected from the host's
-- file requests (libsandboxprotected: /.trapos-sandbox*), removed by sandbox uninstall.
local RECORD_PATH = places.GATEWAY_PROOFS;
-- Seconds a gateway that proved itself here before has to send its proof on a new socket
-- (docs/protocol.md, "The gateway proves itself"), the daemon's and sandbox link's: it
-- answers at once, and has to be said hello to within its hello timeout (10 s) anyway.
local PROOF_WAIT = 10;
-- A credential (tsc_<selector>_<secret>) names its selector, at most this long (the
-- gateway's account.maxSelectorBytes): anything else is read as a password.
local MAX_SELECTOR_BYTES = 64;

local WORD = 4294967296; -- 2^32: sums of words are taken modulo it

-- FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first
-- 64 primes (computed with exact integer cube roots of p * 2^96, then kept modulo 2^32).
local K = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
-- FIPS 180-4 5.3.3: the first 32 bits of the fractional parts of the square roots of the
-- first 8 primes.
local H0 = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

-- The message padded to whole 64-byte blocks (5.1.1): a 1 bit, zeros, its length in bits
-- as 64 bits big-endian.
local function pad(message)
  local bits = #message * 8;
  local zeros = (55 - #message) % 64;
  local length = {};
  for i = 8, 1, -1 do
    length[i] = char(bits % 256);
    bits = math.floor(bits / 256);
  end
  return message .. "\128" .. rep("\0", zeros) .. table.concat(length);
end

-- One 64-byte block at offset into the hash state h (6.2.2).
local function compress(h, block, offset)
  local w = {};
  for t = 1, 16 do
    local a, b, c, d = byte(block, offset + t * 4 - 3, offset + t * 4);
    w[t] = ((a * 256 + b) * 256 + c) * 256 + d;
  end
  for t = 17, 64 do
    local x, y = w[t - 15], w[t - 2];
    local s0 = bxor(rrotate(x, 7), rrotate(x, 18), rshift(x, 3));
    local s1 = bxor(rrotate(y, 17), rrotate(y, 19), rshift(y, 10));
    w[t] = (w[t - 16] + s0 + w[t - 7] + s1) % WORD;
  end
  local a, b, c, d, e, f, g, hh = h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8];
  for t = 1, 64 do
    local S1 = bxor(rrotate(e, 6), rrotate(e, 11), rrotate(e, 25));
    local ch = bxor(band(e, f), band(bnot(e), g));
    local t1 = (hh + S1 + ch + K[t] + w[t]) % WORD;
    local S0 = bxor(rrotate(a, 2), rrotate(a, 13), rrotate(a, 22));
    local maj = bxor(band(a, b), band(a, c), band(b, c));
    local t2 = (S0 + maj) % WORD;
    hh, g, f, e, d, c, b, a = g, f, e, (d + t1) % WORD, c, b, a, (t1 + t2) % WORD;
  end
  h[1], h[2], h[3], h[4] = (h[1] + a) % WORD, (h[2] + b) % WORD, (h[3] + c) % WORD, (h[4] + d) % WORD;
  h[5], h[6], h[7], h[8] = (h[5] + e) % WORD, (h[6] + f) % WORD, (h[7] + g) % WORD, (h[8] + hh) % WORD;
end

-- The SHA-256 of message (a string of bytes), as 32 bytes.
local function sha256(message)
  expect(1, message, "string");
  local padded = pad(message);
  local h = { table.unpack(H0) };
  for offset = 0, #padded - 64, 64 do
    compress(h, padded, offset);
  end
  local out = {};
  for i = 1, 8 do
    local v = h[i];
    out[i] = char(rshift(v, 24), band(rshift(v, 16), 255), band(rshift(v, 8), 255), band(v, 255));
  end
  return table.concat(out);
end

-- HMAC-SHA256 of message under key (RFC 2104, B = 64): 32 bytes.
local function hmacSha256(key, message)
  expect(1, key, "string");
  expect(2, message, "string");
  if #key > 64 then
    key = sha256(key);
  end
  key = key .. rep("\0", 64 - #key);
  local inner, outer = {}, {};
  for i = 1, 64 do
    local k = byte(key, i);
    inner[i] = char(bxor(k, 0x36));
    outer[i] = char(bxor(k, 0x5c));
  end
  return sha256(table.concat(outer) .. sha256(table.concat(inner) .. message));
end

-- bytes as lower-case hex.
local function toHex(bytes)
  expect(1, bytes, "string");
  return (bytes:gsub(".", function(c) return string.format("%02x", byte(c)); end));
end

-- The selector and secret part of a credential (tsc_<selector>_<secret>), or nil for a secret
-- of another shape (the shared password), read as the gateway reads one.
local function credentialParts(secret)
  local selector, part = secret:match("^tsc_([^_]+)_([^_]+)$");
  if selector == nil or #selector > MAX_SELECTOR_BYTES then
    return nil;
  end
  return selector, part;
end

-- Whether key is a proof key as a hello's answer carries it: 64 lower-case hex digits.
local function isProofKey(key)
  return type(key) == "string" and #key == PROOF_KEY_HEX_DIGITS and key:match("^[0-9a-f]+$") ~= nil;
end

-- hex (lower-case, even length) as bytes.
local function fromHex(hex)
  return (hex:gsub("..", function(pair) return char(tonumber(pair, 16)); end));
end

-- The proof a gateway that knows secret gives for nonce (hex), the prove request's payload
-- that asks for it (a credential names its selector, the password nothing), and, for a
-- credential, the proof the gateway gives with its refusal of it revoked. The key
-- is the hash of the secret as the gateway reads it from the hello (its UTF-8: a byte E4
-- of the password is the gateway's "ä"). With proofKey (the gateway's slow key of the
-- password, recorded from a hello's answer), the password's proof is version 2, under that
-- key: one answer then lets no one test password guesses at SHA-256's speed. A credential's
-- proof is version 1 always: its secret is random.
local function expectedProof(secret, nonce, proofKey)
  expect(1, secret, "string");
  expect(2, nonce, "string");
  expect(3, proofKey, "string", "nil");
  secret = toWire(secret);
  local selector, part = credentialParts(secret);
  if selector == nil and isProofKey(proofKey) then
    local proof = toHex(hmacSha256(fromHex(proofKey), PROOF_CONTEXT_V2 .. "\n" .. nonce .. "\n" .. WHICH_PASSWORD));
    return proof, { nonce = nonce, version = 2 };
  end
  local key, which = sha256(secret), WHICH_PASSWORD;
  if selector ~= nil then
    key, which = sha256(part), WHICH_CREDENTIAL .. selector;
  end
  local proof = toHex(hmacSha256(key, PROOF_CONTEXT .. "\n" .. nonce .. "\n" .. which));
  local revokedProof = selector ~= nil
    and toHex(hmacSha256(key, PROOF_CONTEXT .. "\n" .. nonce .. "\n" .. WHICH_REVOKED .. selector)) or nil;
  return proof, { nonce = nonce, credential = selector }, revokedProof;
end

local nonces = 0;

-- A fresh nonce: 32 hex digits. CC has no source of random bytes for programs: math.random
-- (seeded by CC when the computer starts), the time to the millisecond, the computer's
-- uptime and id, a count and a table's address are hashed together. What matters is that
-- a program that did not see the nonce cannot guess it, and that it is never used twice.
-- deps: os (epoch, clock, getComputerID), random (a number in [0, 1): math.random).
local function newNonce(deps)
  expect(1, deps, "table", "nil");
  deps = deps or {};
  local osApi, random = deps.os or os, deps.random or math.random;
  nonces = nonces + 1;
  local function read(f, ...)
    return tostring(f ~= nil and f(...));
  end
  local parts = { read(osApi.epoch, "utc"), read(osApi.clock), read(osApi.getComputerID), tostring(nonces), tostring({}) };
  for _ = 1, 8 do
    parts[#parts + 1] = tostring(math.floor(random() * 65536));
  end
  return toHex(sha256(table.concat(parts, "|"))):sub(1, NONCE_HEX_DIGITS);
end

-- The record: url -> the epoch ms the gateway there first proved itself, and, in the table
-- under PROOF_KEYS, url -> its slow proof key (hex) from a hello's answer (0.5.34 on). A
-- client before 0.5.34 reads the first and passes over the second (not a number), so its
-- record still holds after a downgrade. An unreadable file is no record (the computer then
-- trusts the next gateway as on its first connection).
local PROOF_KEYS = "proofKeys";

local function readRecord(fsApi)
  fsApi = fsApi or fs;
  if not fsApi.exists(RECORD_PATH) then
    return {}, {};
  end
  local handle = fsApi.open(RECORD_PATH, "r");
  if handle == nil then
    return {}, {};
  end
  local record = textutils.unserialize(handle.readAll() or "");
  handle.close();
  if type(record) ~= "table" then
    return {}, {};
  end
  local since, keys = {}, {};
  for url, value in pairs(record) do
    if type(url) == "string" and type(value) == "number" then
      since[url] = value;
    end
  end
  if type(record[PROOF_KEYS]) == "table" then
    for url, key in pairs(record[PROOF_KEYS]) do
      if since[url] ~= nil and isProofKey(key) then
        keys[url] = key;
      end
    end
  end
  return since, keys;
end

-- Since when (epoch ms) the gateway at url proves itself to this computer, or nil.
local function provesSince(url, fsApi)
  expect(1, url, "string");
  return (readRecord(fsApi))[url];
end

-- The slow proof key (hex) recorded for the gateway at url, or nil: a record of a client
-- before 0.5.34, or of a gateway that gives none (older, or to a credential).
local function proofKey(url, fsApi)
  expect(1, url, "string");
  local _, keys = readRecord(fsApi);
  return keys[url];
end

-- How a record's since (epoch ms) is shown to the player, the minute in UTC: "2026-12-07
-- 04:38 UTC" (the daemon's error for a server that did not prove itself, sandbox status).
local function sinceShown(since)
  expect(1, since, "number");
  return os.date("!%Y-%m-%d %H:%M UTC", math.floor(since / 1000));
end

-- Records that the gateway at url proves itself, since epoch ms since, with its slow proof
-- key (hex; nil keeps the one recorded). Written beside the old record and moved over it, so
-- a full drive keeps the old one. Returns whether it did.
local function remember(url, since, key, fsApi)
  expect(1, url, "string");
  expect(2, since, "number");
  expect(3, key, "string", "nil");
  fsApi = fsApi or fs;
  local record, keys = readRecord(fsApi);
  record[url] = since;
  if isProofKey(key) then
    keys[url] = key;
  end
  if next(keys) ~= nil then
    record[PROOF_KEYS] = keys;
  end
  local temp = RECORD_PATH .. places.NEW;
  local ok = pcall(function()
    local handle = fsApi.open(temp, "w");
    handle.write(textutils.serialize(record));
    handle.close();
    if fsApi.exists(RECORD_PATH) then
      fsApi.delete(RECORD_PATH);
    end
    fsApi.move(temp, RECORD_PATH);
  end);
  if not ok then
    pcall(fsApi.delete, temp);
  end
  return ok;
end

-- What was wrong with the answer to a prove (ok, payload, err, as a request's answer is read),
-- against the proof wanted: nil when it is that proof; else what the server did, worded for
-- notProvedWhy's detail, or nil and the words of its refusal (an error other than
-- not_authenticated, which a gateway older than prove answers, as may any other program),
-- which are the server's own, and whether the refusal carried refusalWanted (expectedProof's
-- third): then they are the gateway's, which proved that it refuses a revoked credential.
local function proveAnswerFault(ok, payload, err, wanted, refusalWanted)
  expect(1, ok, "boolean");
  expect(4, wanted, "string");
  expect(5, refusalWanted, "string", "nil");
  if ok and type(payload) == "table" and payload.proof == wanted then
    return nil;
  elseif ok then
    return "sent a wrong proof";
  elseif type(err) == "table" and err.code == codec.ERR_NOT_AUTHENTICATED then
    return "answered without a proof (" .. oneLine(err.code) .. ": " .. oneLine(err.message) .. ")";
  end
  local says = type(err) == "table" and oneLine(tostring(err.message)) or "";
  return nil, says, refusalWanted ~= nil and type(err) == "table" and err.proof == refusalWanted;
end

-- Why the server at url is not taken for the gateway that proved itself here since `since`
-- (epoch ms): the one wording of the daemon and of sandbox link (docs/protocol.md). detail says
-- what the server did (proveAnswerFault's, or "sent no proof within 10 s"); says, instead, its
-- own words of a refusal. unkeyed: the prove went out with no sandbox.password, with which no
-- server can make the proof: what the player removed (set sandbox.password nil, as for a
-- gateway whose password its operator took away) is what to mend, not another program on the
-- port. sandbox setup forgets the record.
local function notProvedWhy(url, since, unkeyed, detail, says)
  expect(1, url, "string");
  expect(2, since, "number");
  expect(4, detail, "string", "nil");
  expect(5, says, "string", "nil");
  local shown = sinceShown(since);
  if unkeyed then
    return "sandbox.password is not set, so the server at " .. url .. " cannot prove it is the gateway"
      .. " this computer was set up with (it has since " .. shown .. "), as it must before the hello;"
      .. " run sandbox setup (with the gateway's password, or none if it has none now)";
  elseif says ~= nil then
    return "the server at " .. url .. " gave no proof it is the gateway, and says: " .. says;
  end
  return "the server at " .. url .. " did not prove it is the gateway this computer was set up with"
    .. " (it has since " .. shown .. "): it " .. tostring(detail) .. "; another program may hold its port;"
    .. " if the operator moved the gateway, changed its password or went back to an older one, run sandbox setup";
end

-- Forgets every gateway that proved itself (sandbox setup, an install with a new secret):
-- the next one is trusted on first use.
local function forget(fsApi)
  fsApi = fsApi or fs;
  for _, path in ipairs({ RECORD_PATH, RECORD_PATH .. places.NEW }) do
    if fsApi.exists(path) then
      pcall(fsApi.delete, path);
    end
  end
end

return {
  PROOF_CONTEXT = PROOF_CONTEXT,
  PROOF_CONTEXT_V2 = PROOF_CONTEXT_V2,
  PROOF_WAIT = PROOF_WAIT,
  isProofKey = isProofKey,
  NONCE_HEX_DIGITS = NONCE_HEX_DIGITS,
  RECORD_PATH = RECORD_PATH,
  sha256 = sha256,
  hmacSha256 = hmacSha256,
  toHex = toHex,
  expectedProof = expectedProof,
  newNonce = newNonce,
  provesSince = provesSince,
  proofKey = proofKey,
  sinceShown = sinceShown,
  proveAnswerFault = proveAnswerFault,
  notProvedWhy = notProvedWhy,
  remember = remember,
  forget = forget,
};
