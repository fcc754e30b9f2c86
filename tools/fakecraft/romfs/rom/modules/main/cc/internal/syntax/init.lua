-- cc.internal.syntax: explains Lua syntax errors (internal to the ROM, as in CC: Tweaked).
-- When load refuses a chunk, the shell, edit and the lua prompt run it through this parser,
-- which prints what is wrong in words, with the line and a mark under the place
-- (cc.internal.error_printer); when it finds nothing wrong they print load's own message.
-- Written for fakecraft from CC's documentation and test-rom specs; it shares no code with
-- CC's ROM.
--
--   parse_program(source) -> true, or false after printing the error
--   parse_repl(line)      -> the same, for a prompt line: a program or a list of expressions

local expect = require("cc.expect").expect;
local lex_one = require("cc.internal.syntax.lexer").lex_one;
local parser = require("cc.internal.syntax.parser");
local error_printer = require("cc.internal.error_printer");

local tokens = parser.tokens;

-- Raised by a context's report to stop at the first error.
local STOP = {};

-- The view of the source that the lexer, the parser and the error printer share: where
-- each line starts, and what a position is as a line and a column.
local function make_context(source)
  local starts = { 1 };
  local context = {};

  function context.line(pos)
    starts[#starts + 1] = pos;
  end

  local function line_of(pos)
    for line = #starts, 1, -1 do
      if pos >= starts[line] then return line; end
    end
    error("Position is <= 0", 3);
  end

  function context.get_pos(pos)
    expect(1, pos, "number");
    local line = line_of(pos);
    return line, pos - starts[line] + 1;
  end

  function context.get_line(pos)
    expect(1, pos, "number");
    return source:match("[^\r\n]*", starts[line_of(pos)]);
  end

  return context;
end

-- A function giving the parser one token a call: comments are skipped, the end of the
-- source is EOF, and a token the lexer could not read at all (ERROR) stops the parse,
-- the lexer having reported it.
local function token_reader(source, context)
  local pos = 1;
  return function()
    while true do
      local token, start, stop = lex_one(context, source, pos);
      if not token then
        return tokens.EOF, #source + 1, #source + 1;
      end
      pos = stop + 1;
      if token < tokens.COMMENT then
        return token, start, stop;
      elseif token == tokens.ERROR then
        error(STOP, 0);
      end
    end
  end
end

--- Parses a program; prints its first syntax error and returns false, or returns true.
local function parse_program(source)
  expect(1, source, "string");
  local context = make_context(source);
  function context.report(message)
    error_printer(context, message);
    error(STOP, 0);
  end
  local ok, err = pcall(parser.parse, context, token_reader(source, context), parser.program);
  if ok then return err; end
  if err == STOP then return false; end
  error(err, 0);
end

--- Parses a prompt line, which may be a program or a list of expressions: both readings run
--- side by side, a token at a time, and the line is good when either reads all of it.
--- Otherwise the error of the reading that got further (the program's, on a tie) is printed.
local function parse_repl(source)
  expect(1, source, "string");
  local context = make_context(source);
  local last_error;
  function context.report(message)
    last_error = message;
    error(STOP, 0);
  end
  local next_token = token_reader(source, context);

  local readers = {};
  for i, start in ipairs({ parser.repl_exprs, parser.program }) do
    readers[i] = coroutine.create(parser.parse);
    assert(coroutine.resume(readers[i], context, coroutine.yield, start));
  end

  local ok, err = pcall(function()
    while true do
      local token, start, stop = next_token();
      local alive = false;
      for i = 1, #readers do
        local reader = readers[i];
        if reader then
          local resumed, reason = coroutine.resume(reader, token, start, stop);
          if not resumed then
            if reason ~= STOP then error(reason, 0); end
            readers[i] = false;
          elseif coroutine.status(reader) == "dead" then
            return; -- this reading took the whole line
          else
            alive = true;
          end
        end
      end
      if not alive then error(STOP, 0); end
    end
  end);
  if ok then return true; end
  if err ~= STOP then error(err, 0); end
  error_printer(context, last_error);
  return false;
end

return {
  parse_program = parse_program,
  parse_repl = parse_repl,
};
