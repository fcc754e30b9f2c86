-- cc.internal.syntax.errors: the messages the Lua lexer and parser give, worded as CC:
-- Tweaked's (internal to the ROM). Written for fakecraft from CC's test-rom specs, whose
-- golden files hold every message; it shares no code with CC's ROM.
--
-- A message is a list: lines of text (strings or cc.pretty documents, code in light grey),
-- and annotations { tag = "annotate", start_pos, end_pos, msg } that point at the source
-- (positions are byte offsets; msg may be ""). cc.internal.error_printer shows them.

local pretty = require("cc.pretty");
local tokens = require("cc.internal.syntax.parser").tokens;

local function code(text)
  return pretty.text(text, colours.lightGrey);
end

-- An annotation of start_pos..end_pos, or of the one position start_pos.
local function at(start_pos, end_pos, msg)
  if type(end_pos) ~= "number" then
    end_pos, msg = start_pos, end_pos;
  end
  return { tag = "annotate", start_pos = start_pos, end_pos = end_pos, msg = msg or "" };
end

-- How a message names a token: its class, or its text as code.
local TOKEN_NAMES = {
  [tokens.IDENT] = "identifier",
  [tokens.NUMBER] = "number",
  [tokens.STRING] = "string",
  [tokens.EOF] = "end of file",
};
for name, text in pairs({
  ADD = "+", AND = "and", BREAK = "break", CBRACE = "}", COLON = ":", COMMA = ",",
  CONCAT = "..", CPAREN = ")", CSQUARE = "]", DIV = "/", DO = "do", DOT = ".", DOTS = "...",
  DOUBLE_COLON = "::", ELSE = "else", ELSEIF = "elseif", END = "end", EQ = "==", EQUALS = "=",
  FALSE = "false", FOR = "for", FUNCTION = "function", GE = ">=", GOTO = "goto", GT = ">",
  IF = "if", IN = "in", LE = "<=", LEN = "#", LOCAL = "local", LT = "<", MOD = "%", MUL = "*",
  NE = "~=", NIL = "nil", NOT = "not", OBRACE = "{", OPAREN = "(", OR = "or", OSQUARE = "[",
  POW = "^", REPEAT = "repeat", RETURN = "return", SEMICOLON = ";", SUB = "-", THEN = "then",
  TRUE = "true", UNTIL = "until", WHILE = "while",
}) do
  TOKEN_NAMES[tokens[name]] = code(text);
end

local function name_of(token)
  return TOKEN_NAMES[token] or error("No such token " .. tostring(token), 3);
end

-- The closing delimiter of a long bracket whose opening is `level` characters past its [.
local function closer(level)
  return code("]" .. ("="):rep(level - 1) .. "]");
end

local errors = {};

-- The lexer's ---------------------------------------------------------------

function errors.unfinished_string(start_pos, end_pos, quote)
  return {
    "This string is not finished. Are you missing a closing quote (" .. code(quote) .. ")?",
    at(start_pos, "String started here."),
    at(end_pos, "Expected a closing quote here."),
  };
end

-- A string whose last character is a backslash: a quote would not finish it.
function errors.unfinished_string_escape(start_pos, end_pos)
  return {
    "This string is not finished.",
    at(start_pos, "String started here."),
    at(end_pos, "An escape sequence was started here, but with nothing following it."),
  };
end

function errors.unfinished_long_string(start_pos, end_pos, level)
  return {
    "This string was never finished.",
    at(start_pos, end_pos, "String was started here."),
    "We expected a closing delimiter (" .. closer(level) .. ") somewhere after this string was started.",
  };
end

-- `[=` with no second `[`.
function errors.malformed_long_string(start_pos, end_pos)
  return {
    "Incorrect start of a long string.",
    at(start_pos, end_pos),
    "Tip: If you wanted to start a long string here, add an extra " .. code("[") .. " here.",
  };
end

function errors.nested_long_str(start_pos, end_pos)
  return {
    code("[[") .. " cannot be nested inside another " .. code("[[ ... ]]"),
    at(start_pos, end_pos),
  };
end

function errors.malformed_number(start_pos, end_pos)
  return {
    "This isn't a valid number.",
    at(start_pos, end_pos),
    "Numbers must be in one of the following formats: " .. code("123") .. ", " .. code("3.14")
      .. ", " .. code("23e35") .. ", " .. code("0x01AF") .. ".",
  };
end

function errors.unfinished_long_comment(start_pos, end_pos, level)
  return {
    "This comment was never finished.",
    at(start_pos, end_pos, "Comment was started here."),
    "We expected a closing delimiter (" .. closer(level) .. ") somewhere after this comment was started.",
  };
end

-- Operators from other languages, with the Lua they stand for.
local function wrong_operator(lua, purpose)
  return function(start_pos, end_pos)
    return {
      "Unexpected character.",
      at(start_pos, end_pos),
      "Tip: Replace this with " .. code(lua) .. " to " .. purpose .. ".",
    };
  end
end
errors.wrong_and = wrong_operator("and", "check if both values are true");
errors.wrong_or = wrong_operator("or", "check if either value is true");
errors.wrong_ne = wrong_operator("~=", "check if two values are not equal");
errors.wrong_not = wrong_operator("not", "negate a boolean");

function errors.unexpected_character(pos)
  return {
    "Unexpected character.",
    at(pos, "This character isn't usable in Lua code."),
  };
end

-- The parser's: expressions ---------------------------------------------------

-- "Unexpected X. <what was expected>" at the token.
local function unexpected_expecting(what)
  return function(token, start_pos, end_pos)
    return { "Unexpected " .. name_of(token) .. ". " .. what, at(start_pos, end_pos) };
  end
end
errors.expected_expression = unexpected_expecting("Expected an expression.");
errors.expected_var = unexpected_expecting("Expected a variable name.");
errors.expected_statement = unexpected_expecting("Expected a statement.");

function errors.use_double_equals(start_pos, end_pos)
  return {
    "Unexpected " .. code("=") .. " in expression.",
    at(start_pos, end_pos),
    "Tip: Replace this with " .. code("==") .. " to check if two values are equal.",
  };
end

-- `=` after a table entry that has no key.
function errors.table_key_equals(start_pos, end_pos)
  return {
    "Unexpected " .. code("=") .. " in expression.",
    at(start_pos, end_pos),
    "Tip: Wrap the preceding expression in " .. code("[") .. " and " .. code("]") .. " to use it as a table key.",
  };
end

-- Two table entries with nothing between them; previous_end is where the first ended.
function errors.missing_table_comma(token, start_pos, end_pos, previous_end)
  return {
    "Unexpected " .. name_of(token) .. " in table.",
    at(start_pos, end_pos),
    at(previous_end + 1, previous_end + 1, "Are you missing a comma here?"),
  };
end

function errors.trailing_call_comma(comma_start, comma_end, paren_start, paren_end)
  return {
    "Unexpected " .. code(")") .. " in function call.",
    at(paren_start, paren_end),
    at(comma_start, comma_end, "Tip: Try removing this " .. code(",") .. "."),
  };
end

-- The parser's: statements ----------------------------------------------------

function errors.local_function_dot(local_start, local_end, dot_start, dot_end)
  return {
    "Cannot use " .. code("local function") .. " with a table key.",
    at(dot_start, dot_end, code(".") .. " appears here."),
    at(local_start, local_end, "Tip: Try removing this " .. code("local") .. " keyword."),
  };
end

-- A name on its own followed by a token on the same line (at pos).
function errors.standalone_name(token, pos)
  return {
    "Unexpected " .. name_of(token) .. " after name.",
    at(pos),
    "Did you mean to assign this or call it as a function?",
  };
end

-- Names on their own, separated by commas: they can only be assigned.
function errors.standalone_names(token, pos)
  return {
    "Unexpected " .. name_of(token) .. " after name.",
    at(pos),
    "Did you mean to assign this?",
  };
end

-- A name on its own at the end of its line (pos is where it ends): a call missing its ().
function errors.standalone_name_call(token, pos)
  return {
    "Unexpected " .. name_of(token) .. " after name.",
    at(pos + 1, "Expected something before the end of the line."),
    "Tip: Use " .. code("()") .. " to call with no arguments.",
  };
end

function errors.expected_then(if_start, if_end, token_pos)
  return {
    "Expected " .. code("then") .. " after if condition.",
    at(if_start, if_end, "If statement started here."),
    at(token_pos, "Expected " .. code("then") .. " before here."),
  };
end

-- A block that needs an `end` met a token that neither ends it nor starts a statement.
function errors.expected_end(block_start, block_end, token, start_pos, end_pos)
  return {
    "Unexpected " .. name_of(token) .. ". Expected " .. code("end") .. " or another statement.",
    at(block_start, block_end, "Block started here."),
    at(start_pos, end_pos, "Expected end of block here."),
  };
end

function errors.unexpected_end(start_pos, end_pos)
  return {
    "Unexpected " .. code("end") .. ".",
    at(start_pos, end_pos),
    "Your program contains more " .. code("end") .. "s than needed. Check each block ("
      .. code("if") .. ", " .. code("for") .. ", " .. code("function") .. ", ...) only has one "
      .. code("end") .. ".",
  };
end

function errors.unclosed_label(open_start, open_end, token, start_pos, end_pos)
  return {
    "Unexpected " .. name_of(token) .. ".",
    at(open_start, open_end, "Label was started here."),
    at(start_pos, end_pos, "Tip: Try adding " .. code("::") .. " here."),
  };
end

-- The parser's: anywhere --------------------------------------------------------

function errors.unexpected_token(token, start_pos, end_pos)
  return { "Unexpected " .. name_of(token) .. ".", at(start_pos, end_pos) };
end

function errors.unclosed_brackets(open_start, open_end, token, start_pos, end_pos)
  return {
    "Unexpected " .. name_of(token) .. ". Are you missing a closing bracket?",
    at(open_start, open_end, "Brackets were opened here."),
    at(start_pos, end_pos, "Unexpected " .. name_of(token) .. " here."),
  };
end

function errors.expected_function_args(token, start_pos, end_pos)
  return {
    "Unexpected " .. name_of(token) .. ". Expected " .. code("(") .. " to start function arguments.",
    at(start_pos, end_pos),
  };
end

return errors;
