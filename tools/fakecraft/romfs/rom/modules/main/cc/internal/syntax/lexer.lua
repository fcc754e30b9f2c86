-- cc.internal.syntax.lexer: reads Lua source one token at a time for the parser (internal
-- to the ROM, as in CC: Tweaked). Written for fakecraft from CC's test-rom specs; it shares
-- no code with CC's ROM.
--
--   lex_one(context, source, pos) -> token, start, end[, name]   (nil at the end)
--
-- It skips whitespace, telling context.line(pos) where each line starts, and never fails:
-- what it cannot read it reports (context.report(message)) and returns as well as it can,
-- an ERROR token where nothing can be made of it. Comments come back as COMMENT tokens;
-- names and keywords also return their text.

local errors = require("cc.internal.syntax.errors");
local tokens = require("cc.internal.syntax.parser").tokens;

local KEYWORDS = {};
for _, word in ipairs({
  "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
  "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
}) do
  KEYWORDS[word] = tokens[word:upper()];
end

local SINGLE = {
  [","] = tokens.COMMA, [";"] = tokens.SEMICOLON, ["("] = tokens.OPAREN, [")"] = tokens.CPAREN,
  ["]"] = tokens.CSQUARE, ["{"] = tokens.OBRACE, ["}"] = tokens.CBRACE, ["*"] = tokens.MUL,
  ["/"] = tokens.DIV, ["#"] = tokens.LEN, ["%"] = tokens.MOD, ["^"] = tokens.POW,
  ["+"] = tokens.ADD,
};

-- Operators of other languages that CC names, with the token they stand for.
local FOREIGN = {
  ["&&"] = { tokens.AND, "wrong_and" },
  ["||"] = { tokens.OR, "wrong_or" },
  ["!="] = { tokens.NE, "wrong_ne" },
  ["!"] = { tokens.NOT, "wrong_not" },
};

-- Steps over the newline at pos (\n, \r, or a pair of the two) and marks the next line's
-- start; returns the position after it.
local function newline(context, source, pos)
  local first = source:sub(pos, pos);
  pos = pos + 1;
  local second = source:sub(pos, pos);
  if second ~= first and (second == "\n" or second == "\r") then
    pos = pos + 1;
  end
  context.line(pos);
  return pos;
end

-- A numeral, as Lua 5.2 reads one: after its first character, hexadecimal digits, points
-- and exponents with their signs; then checked by tonumber.
local function number(context, source, start)
  local pos = start + 1;
  local exponent = "[eE]";
  if source:sub(start, start) == "0" and source:find("^[xX]", pos) then
    pos = pos + 1;
    exponent = "[pP]";
  end
  while true do
    local c = source:sub(pos, pos);
    if c:find(exponent) then
      pos = pos + 1;
      if source:find("^[+-]", pos) then
        pos = pos + 1;
      end
    elseif c ~= "" and c:find("[%x.]") then
      pos = pos + 1;
    else
      break;
    end
  end
  if not tonumber(source:sub(start, pos - 1)) then
    context.report(errors.malformed_number(start, pos - 1));
  end
  return tokens.NUMBER, pos - 1;
end

-- A quoted string from its opening quote.
local function quoted(context, source, start)
  local quote = source:sub(start, start);
  local pos = start + 1;
  while true do
    local c = source:sub(pos, pos);
    if c == quote then
      return tokens.STRING, pos;
    elseif c == "" or c == "\n" or c == "\r" then
      -- The newline itself is the next token's to step over.
      context.report(errors.unfinished_string(start, pos, quote));
      return tokens.STRING, pos - 1;
    elseif c ~= "\\" then
      pos = pos + 1;
    else
      local escaped = source:sub(pos + 1, pos + 1);
      if escaped == "" then
        context.report(errors.unfinished_string_escape(start, pos, quote));
        return tokens.STRING, pos;
      elseif escaped == "\n" or escaped == "\r" then
        pos = newline(context, source, pos + 1);
      elseif escaped == "z" then
        -- \z skips the whitespace after it, newlines included.
        pos = pos + 2;
        while true do
          local next_pos = source:find("[%S\r\n]", pos);
          if not next_pos then
            context.report(errors.unfinished_string(start, #source, quote));
            return tokens.STRING, #source;
          end
          local c2 = source:sub(next_pos, next_pos);
          if c2 ~= "\n" and c2 ~= "\r" then
            pos = next_pos;
            break;
          end
          pos = newline(context, source, next_pos);
        end
      else
        pos = pos + 2;
      end
    end
  end
end

-- After a long bracket's first [ (or ]) at pos - 1: its level (1 + the number of =) and the
-- position of its second bracket, or false and where the =s stopped.
local function bracket_level(source, pos, bracket)
  local stop = source:find("[^=]", pos) or #source + 1;
  if source:sub(stop, stop) == bracket then
    return stop - pos + 1, stop;
  end
  return false, stop;
end

-- The body of a long string or comment, from pos; returns where its closing bracket ends,
-- or nil when it has none. A [[ inside a [[ ]] is reported, as Lua 5.1 refused it.
local function long_body(context, source, pos, level)
  while true do
    pos = source:find("[%[%]\n\r]", pos);
    if not pos then return nil; end
    local c = source:sub(pos, pos);
    if c == "\n" or c == "\r" then
      pos = newline(context, source, pos);
    else
      local found, stop = bracket_level(source, pos + 1, c);
      if c == "]" and found == level then
        return stop;
      elseif c == "[" and found == 1 and level == 1 then
        context.report(errors.nested_long_str(pos, stop));
      end
      pos = stop;
    end
  end
end

-- The token starting at pos, whose first character is no whitespace.
local function token_at(context, source, pos)
  local c = source:sub(pos, pos);

  if c:find("[%a_]") then
    local _, stop = source:find("^[%w_]+", pos);
    local word = source:sub(pos, stop);
    return KEYWORDS[word] or tokens.IDENT, stop, word;
  elseif c:find("%d") then
    return number(context, source, pos);
  elseif c == "\"" or c == "'" then
    return quoted(context, source, pos);
  elseif c == "[" then
    local level, stop = bracket_level(source, pos + 1, "[");
    if level then
      local finish = long_body(context, source, stop + 1, level);
      if finish then return tokens.STRING, finish; end
      context.report(errors.unfinished_long_string(pos, stop, level));
      return tokens.ERROR, #source;
    elseif stop == pos + 1 then
      return tokens.OSQUARE, pos;
    end
    context.report(errors.malformed_long_string(pos, stop, stop - pos));
    return tokens.ERROR, stop;
  elseif c == "-" then
    if source:sub(pos + 1, pos + 1) ~= "-" then return tokens.SUB, pos; end
    local body = pos + 2;
    if source:sub(body, body) == "[" then
      local level, stop = bracket_level(source, body + 1, "[");
      if level then
        local finish = long_body(context, source, stop + 1, level);
        if finish then return tokens.COMMENT, finish; end
        context.report(errors.unfinished_long_comment(pos, stop, level));
        return tokens.ERROR, #source;
      end
    end
    local _, stop = source:find("^[^\n\r]*", body);
    return tokens.COMMENT, stop;
  elseif c == "." then
    local after = source:sub(pos + 1, pos + 1);
    if after:find("^%d") then return number(context, source, pos); end
    if after ~= "." then return tokens.DOT, pos; end
    if source:sub(pos + 2, pos + 2) == "." then return tokens.DOTS, pos + 2; end
    return tokens.CONCAT, pos + 1;
  end

  -- Two-character operators, and their first characters.
  local pair = source:sub(pos, pos + 1);
  if pair == "==" then return tokens.EQ, pos + 1;
  elseif c == "=" then return tokens.EQUALS, pos;
  -- CC's lexer reads >= as <= and < as >: its messages name them so, and so do these.
  elseif pair == ">=" or pair == "<=" then return tokens.LE, pos + 1;
  elseif c == ">" or c == "<" then return tokens.GT, pos;
  elseif pair == "::" then return tokens.DOUBLE_COLON, pos + 1;
  elseif c == ":" then return tokens.COLON, pos;
  elseif pair == "~=" then return tokens.NE, pos + 1;
  elseif SINGLE[c] then return SINGLE[c], pos;
  end

  -- Something Lua has no use for: the run of such characters is one ERROR token, unless it
  -- is another language's operator.
  local stop = source:find("[%s%w(){}%[%]]", pos);
  stop = stop and stop - 1 or #source;
  local foreign = FOREIGN[source:sub(pos, stop)];
  if foreign then
    context.report(errors[foreign[2]](pos, stop));
    return foreign[1], stop;
  end
  context.report(errors.unexpected_character(pos));
  return tokens.ERROR, stop;
end

--- The next token at or after pos: its id, start and end, and a name's text; nil at the end.
local function lex_one(context, source, pos)
  while true do
    local start = source:find("[%S\r\n]", pos);
    if not start then return nil; end
    local c = source:sub(start, start);
    if c == "\n" or c == "\r" then
      pos = newline(context, source, start);
    else
      local token, stop, word = token_at(context, source, start);
      return token, start, stop, word;
    end
  end
end

return { lex_one = lex_one };
