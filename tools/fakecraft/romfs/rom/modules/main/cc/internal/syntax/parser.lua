-- cc.internal.syntax.parser: reads Lua 5.2's grammar to find the first syntax error of a
-- program or of a `lua` prompt line, and explains it (internal to the ROM, as in CC:
-- Tweaked). Written for fakecraft from CC's test-rom specs (their golden messages for every
-- error state of CC's parser); it shares no code with CC's ROM. CC's parser is a generated
-- LR automaton; this one descends the grammar by hand and words each error as CC's does in
-- the same place.
--
--   parse(context, next_token[, start]) -> true, or false after context.report(message)
--
-- next_token() returns a token id (tokens.X), its start and its end position; the lexer
-- (cc.internal.syntax.lexer) makes them, and they can be fed one at a time from another
-- coroutine (next_token = coroutine.yield), as cc.internal.syntax's parse_repl runs two
-- parsers side by side. The parser asks for a token only when it needs one, and returns as
-- soon as it has the end of file, so both parsers read exactly as far as CC's would.
-- `start` is one of the start symbols: program (the default) or repl_exprs (a list of
-- expressions, what the prompt prints).

local tokens = {};
for id, name in ipairs({
  "ADD", "AND", "BREAK", "CBRACE", "COLON", "COMMA", "CONCAT", "CPAREN", "CSQUARE", "DIV", "DO",
  "DOT", "DOTS", "DOUBLE_COLON", "ELSE", "ELSEIF", "END", "EQ", "EQUALS", "FALSE", "FOR",
  "FUNCTION", "GE", "GOTO", "GT", "IDENT", "IF", "IN", "LE", "LEN", "LOCAL", "LT", "MOD", "MUL",
  "NE", "NIL", "NOT", "NUMBER", "OBRACE", "OPAREN", "OR", "OSQUARE", "POW", "REPEAT", "RETURN",
  "SEMICOLON", "STRING", "SUB", "THEN", "TRUE", "UNTIL", "WHILE", "EOF",
  -- Never handed to the parser: the lexer's comments, and what it could not read. These two
  -- come last, so that `id < tokens.COMMENT` is a token the parser takes.
  "COMMENT", "ERROR",
}) do
  tokens[name] = id;
end
setmetatable(tokens, {
  __index = function(_, name) error("No such token " .. tostring(name), 2); end,
});

-- Start symbols.
local PROGRAM, REPL_EXPRS = 1, 2;

local function set(...)
  local s = {};
  for _, name in ipairs({ ... }) do
    s[tokens[name]] = true;
  end
  return s;
end

-- CC's grammar reads `goto` as a name wherever a name can be (goto is no keyword in Lua
-- 5.1), besides its own statement `goto label`.
local NAME = set("IDENT", "GOTO");
local EXPR_START = set("NIL", "FALSE", "TRUE", "NUMBER", "STRING", "DOTS", "FUNCTION", "OBRACE",
  "OPAREN", "IDENT", "GOTO", "NOT", "SUB", "LEN");
local STATEMENT_START = set("SEMICOLON", "IDENT", "OPAREN", "DOUBLE_COLON", "BREAK", "GOTO", "DO",
  "WHILE", "REPEAT", "IF", "FOR", "FUNCTION", "LOCAL", "RETURN");
local UNARY = set("NOT", "SUB", "LEN");
-- Tokens that, after a table entry, CC takes for the start of the next one (a missing comma).
local ENTRY_START = set("STRING", "NUMBER", "TRUE", "FALSE", "NIL", "OSQUARE", "OPAREN", "IDENT");

-- Binary operators: left and right priority, as Lua's (right > left is right associative).
local BINARY = {};
for _, op in ipairs({
  { "OR", 1, 1 }, { "AND", 2, 2 },
  { "LT", 3, 3 }, { "GT", 3, 3 }, { "LE", 3, 3 }, { "GE", 3, 3 }, { "NE", 3, 3 }, { "EQ", 3, 3 },
  { "CONCAT", 5, 4 }, { "ADD", 6, 6 }, { "SUB", 6, 6 },
  { "MUL", 7, 7 }, { "DIV", 7, 7 }, { "MOD", 7, 7 }, { "POW", 10, 9 },
}) do
  BINARY[tokens[op[1]]] = { left = op[2], right = op[3] };
end
local UNARY_PRIORITY = 8;

-- The errors module needs the tokens, so it is loaded on the first error.
local errors;
local function messages()
  errors = errors or require("cc.internal.syntax.errors");
  return errors;
end

-- Raised (and caught in parse) once an error has been reported.
local FAILED = setmetatable({}, { __tostring = function() return "syntax error"; end });

local function parse(context, next_token, start)
  start = start or PROGRAM;
  local tok, tok_start, tok_end = next_token();
  local prev_end = 1; -- where the token before tok ended

  local function advance()
    prev_end = tok_end;
    tok, tok_start, tok_end = next_token();
  end

  local function fail(name, ...)
    context.report(messages()[name](...));
    error(FAILED, 0);
  end

  -- The plain errors, at the current token.
  local function unexpected() fail("unexpected_token", tok, tok_start, tok_end); end
  local function expected_expression() fail("expected_expression", tok, tok_start, tok_end); end
  local function expected_var() fail("expected_var", tok, tok_start, tok_end); end
  local function expected_statement() fail("expected_statement", tok, tok_start, tok_end); end

  -- After a complete expression, a `=` is the classic slip for `==`; anything else gets
  -- otherwise().
  local function after_expression(otherwise, ...)
    if tok == tokens.EQUALS then
      fail("use_double_equals", tok_start, tok_end);
    end
    otherwise(...);
  end

  -- Inside brackets opened at open_start..open_end: the token can be neither the next thing
  -- nor the closing bracket.
  local function unclosed(open_start, open_end)
    fail("unclosed_brackets", open_start, open_end, tok, tok_start, tok_end);
  end

  -- Whether the current token is on the line of position pos (the end of the file is not).
  local function same_line(pos)
    return tok ~= tokens.EOF and context.get_pos(pos) == context.get_pos(tok_start);
  end

  local function expect_token(id)
    if tok ~= id then unexpected(); end
    advance();
  end

  local function expect_name()
    if not NAME[tok] then unexpected(); end
    advance();
  end

  local expression, block;

  -- Arguments of a call, at `(`, a string or `{`.
  local table_constructor;
  local function call_args()
    if tok == tokens.STRING then
      advance();
      return;
    elseif tok == tokens.OBRACE then
      table_constructor();
      return;
    elseif tok ~= tokens.OPAREN then
      unexpected();
    end
    local open_start, open_end = tok_start, tok_end;
    advance();
    if tok == tokens.CPAREN then
      advance();
      return;
    end
    if not EXPR_START[tok] then unclosed(open_start, open_end); end
    while true do
      expression();
      if tok ~= tokens.COMMA then break; end
      local comma_start, comma_end = tok_start, tok_end;
      advance();
      if tok == tokens.CPAREN then
        fail("trailing_call_comma", comma_start, comma_end, tok_start, tok_end);
      elseif not EXPR_START[tok] then
        expected_expression();
      end
    end
    if tok ~= tokens.CPAREN then after_expression(unclosed, open_start, open_end); end
    advance();
  end

  -- A function's parameters and body, at its `(`; opener is where the block started.
  local function function_body(opener_start, opener_end)
    if tok ~= tokens.OPAREN then fail("expected_function_args", tok, tok_start, tok_end); end
    local open_start, open_end = tok_start, tok_end;
    advance();
    -- Names and `...`, in any order: CC's grammar is that loose.
    if NAME[tok] or tok == tokens.DOTS then
      advance();
      while tok == tokens.COMMA do
        advance();
        if not NAME[tok] and tok ~= tokens.DOTS then expected_var(); end
        advance();
      end
    end
    if tok ~= tokens.CPAREN then unclosed(open_start, open_end); end
    advance();
    block("function", opener_start, opener_end);
    advance(); -- end
  end

  -- One expression inside brackets opened at open_start..open_end, then the closing token.
  local function bracketed(open_start, open_end, close)
    if not EXPR_START[tok] then expected_expression(); end
    expression();
    if tok ~= close then after_expression(unclosed, open_start, open_end); end
    advance();
  end

  -- A prefix expression and its suffixes (fields, indexes, calls). Returns its kind:
  -- "call", "var" (assignable) or "paren" (a bracketed expression alone). A name already
  -- read by the caller (a table field's) is passed as `name_read`.
  local function suffixed(name_read)
    local kind;
    if name_read then
      kind = "var";
    elseif NAME[tok] then
      advance();
      kind = "var";
    elseif tok == tokens.OPAREN then
      local open_start, open_end = tok_start, tok_end;
      advance();
      bracketed(open_start, open_end, tokens.CPAREN);
      kind = "paren";
    else
      expected_expression();
    end
    while true do
      if tok == tokens.DOT then
        advance();
        expect_name();
        kind = "var";
      elseif tok == tokens.OSQUARE then
        local open_start, open_end = tok_start, tok_end;
        advance();
        bracketed(open_start, open_end, tokens.CSQUARE);
        kind = "var";
      elseif tok == tokens.COLON then
        advance();
        expect_name();
        call_args();
        kind = "call";
      elseif tok == tokens.OPAREN or tok == tokens.STRING or tok == tokens.OBRACE then
        call_args();
        kind = "call";
      else
        return kind;
      end
    end
  end

  -- An operand: a literal, a function, a table, a unary operation or a prefix expression.
  local function simple(name_read)
    if name_read then
      suffixed(name_read);
    elseif tok == tokens.NIL or tok == tokens.TRUE or tok == tokens.FALSE or tok == tokens.NUMBER
      or tok == tokens.STRING or tok == tokens.DOTS then
      advance();
    elseif tok == tokens.OBRACE then
      table_constructor();
    elseif tok == tokens.FUNCTION then
      local kw_start, kw_end = tok_start, tok_end;
      advance();
      function_body(kw_start, kw_end);
    else
      suffixed();
    end
  end

  -- An expression whose operators bind tighter than limit.
  local function sub_expression(limit, name_read)
    if not name_read and UNARY[tok] then
      advance();
      if not EXPR_START[tok] then expected_expression(); end
      sub_expression(UNARY_PRIORITY);
    else
      simple(name_read);
    end
    while BINARY[tok] and BINARY[tok].left > limit do
      local op = BINARY[tok];
      advance();
      if not EXPR_START[tok] then expected_expression(); end
      sub_expression(op.right);
    end
  end

  function expression(name_read)
    sub_expression(0, name_read);
  end

  -- `{ fields }`, at `{`.
  function table_constructor()
    local open_start, open_end = tok_start, tok_end;
    advance();
    while tok ~= tokens.CBRACE do
      -- One field: [key] = value, name = value, or a value.
      if tok == tokens.OSQUARE then
        local key_start, key_end = tok_start, tok_end;
        advance();
        bracketed(key_start, key_end, tokens.CSQUARE);
        expect_token(tokens.EQUALS);
        if not EXPR_START[tok] then expected_expression(); end
        expression();
        after_expression(function() end);
      elseif NAME[tok] then
        advance();
        if tok == tokens.EQUALS then
          advance();
          if not EXPR_START[tok] then expected_expression(); end
          expression();
          after_expression(function() end);
        else
          expression(true);
          if tok == tokens.EQUALS then fail("table_key_equals", tok_start, tok_end); end
        end
      elseif EXPR_START[tok] then
        expression();
        if tok == tokens.EQUALS then fail("table_key_equals", tok_start, tok_end); end
      else
        unclosed(open_start, open_end);
      end

      -- Then a separator, or the end.
      if tok == tokens.COMMA or tok == tokens.SEMICOLON then
        advance();
      elseif tok ~= tokens.CBRACE then
        if ENTRY_START[tok] then
          fail("missing_table_comma", tok, tok_start, tok_end, prev_end);
        end
        unclosed(open_start, open_end);
      end
    end
    advance();
  end

  -- A list of expressions, the token known to start one.
  local function expression_list()
    expression();
    while tok == tokens.COMMA do
      advance();
      if not EXPR_START[tok] then expected_expression(); end
      expression();
    end
  end

  -- A statement starting with a prefix expression: a call, or an assignment. Returns how it
  -- ended, "call" or "expression" (see block).
  local function expression_statement(name_read)
    local kind = suffixed(name_read);
    if kind == "call" then return "call"; end
    if kind == "paren" and (tok == tokens.EQUALS or tok == tokens.COMMA) then unexpected(); end
    if tok == tokens.COMMA then
      while tok == tokens.COMMA do
        advance();
        if not NAME[tok] and tok ~= tokens.OPAREN then expected_var(); end
        if suffixed() ~= "var" then unexpected(); end
      end
      if tok ~= tokens.EQUALS then fail("standalone_names", tok, tok_start); end
    elseif tok ~= tokens.EQUALS then
      -- A name on its own: a call missing its (), or an assignment missing its value.
      if not same_line(prev_end) then
        fail("standalone_name_call", tok, prev_end);
      elseif kind == "paren" then
        unexpected();
      end
      fail("standalone_name", tok, tok_start);
    end
    advance();
    if not EXPR_START[tok] then expected_expression(); end
    expression_list();
    return "expression";
  end

  local function if_statement()
    local kw_start, kw_end = tok_start, tok_end; -- if, then each elseif
    while true do
      advance();
      if not EXPR_START[tok] then expected_expression(); end
      expression();
      if tok ~= tokens.THEN then
        -- The missing `then` is placed at the token when it is on the condition's line,
        -- else just after the condition.
        local where = tok_start;
        if not same_line(prev_end) then where = prev_end + 1; end
        after_expression(fail, "expected_then", kw_start, kw_end, where);
      end
      advance();
      block("if", kw_start, kw_end);
      if tok ~= tokens.ELSEIF then break; end
      kw_start, kw_end = tok_start, tok_end;
    end
    if tok == tokens.ELSE then
      local else_start, else_end = tok_start, tok_end;
      advance();
      block("end", else_start, else_end);
    end
    advance(); -- end
  end

  local function for_statement()
    local kw_start, kw_end = tok_start, tok_end;
    advance();
    if not NAME[tok] then expected_var(); end
    advance();
    if tok == tokens.EQUALS then
      advance();
      for i = 1, 3 do
        if not EXPR_START[tok] then expected_expression(); end
        expression();
        if tok ~= tokens.COMMA or i == 3 then
          if i == 1 and tok ~= tokens.COMMA then after_expression(unexpected); end
          break;
        end
        advance();
      end
    elseif tok == tokens.COMMA or tok == tokens.IN then
      while tok == tokens.COMMA do
        advance();
        if not NAME[tok] then expected_var(); end
        advance();
      end
      expect_token(tokens.IN);
      if not EXPR_START[tok] then expected_expression(); end
      expression_list();
    else
      unexpected();
    end
    if tok ~= tokens.DO then after_expression(unexpected); end
    advance();
    block("end", kw_start, kw_end);
    advance(); -- end
  end

  local function local_statement()
    local local_start, local_end = tok_start, tok_end;
    advance();
    if tok == tokens.FUNCTION then
      local function_end = tok_end;
      advance();
      if not NAME[tok] then expected_var(); end
      advance();
      if tok == tokens.DOT then
        fail("local_function_dot", local_start, local_end, tok_start, tok_end);
      end
      function_body(local_start, function_end);
      return "other";
    end
    if not NAME[tok] then expected_var(); end
    advance();
    while tok == tokens.COMMA do
      advance();
      if not NAME[tok] then expected_var(); end
      advance();
    end
    if tok == tokens.EQUALS then
      advance();
      if not EXPR_START[tok] then expected_expression(); end
      expression_list();
      return "expression";
    end
    return "other";
  end

  -- One statement; returns how it ended: "call" (a call statement), "expression" (an
  -- assignment or until's condition: a `=` after it is a slip for `==`) or "other".
  local function statement()
    if tok == tokens.SEMICOLON or tok == tokens.BREAK then
      advance();
    elseif tok == tokens.IF then
      if_statement();
    elseif tok == tokens.WHILE then
      local kw_start, kw_end = tok_start, tok_end;
      advance();
      if not EXPR_START[tok] then expected_expression(); end
      expression();
      if tok ~= tokens.DO then after_expression(unexpected); end
      advance();
      block("end", kw_start, kw_end);
      advance();
    elseif tok == tokens.DO then
      local kw_start, kw_end = tok_start, tok_end;
      advance();
      block("end", kw_start, kw_end);
      advance();
    elseif tok == tokens.FOR then
      for_statement();
    elseif tok == tokens.REPEAT then
      advance();
      block("repeat");
      advance(); -- until
      if not EXPR_START[tok] then expected_expression(); end
      expression();
      return "expression";
    elseif tok == tokens.FUNCTION then
      local kw_start, kw_end = tok_start, tok_end;
      advance();
      if not NAME[tok] then expected_var(); end
      advance();
      while tok == tokens.DOT do
        advance();
        expect_name();
      end
      if tok == tokens.COLON then
        advance();
        expect_name();
      end
      function_body(kw_start, kw_end);
    elseif tok == tokens.LOCAL then
      return local_statement();
    elseif tok == tokens.DOUBLE_COLON then
      local open_start, open_end = tok_start, tok_end;
      advance();
      expect_name();
      if tok ~= tokens.DOUBLE_COLON then
        fail("unclosed_label", open_start, open_end, tok, tok_start, tok_end);
      end
      advance();
    elseif tok == tokens.GOTO then
      -- goto label, or else `goto` is a name starting an expression statement.
      advance();
      if not NAME[tok] then return expression_statement(true); end
      advance();
    else
      return expression_statement();
    end
    return "other";
  end

  -- The tokens that end each kind of block.
  local ENDS = {
    program = set("EOF"),
    ["end"] = set("END"),
    ["function"] = set("END"),
    ["if"] = set("END", "ELSE", "ELSEIF"),
    ["repeat"] = set("UNTIL"),
  };

  -- What a block says of a token that neither starts a statement nor ends the block, after
  -- a last statement that ended as `last` (statement's answer, "return" for a bare return,
  -- nil for none). A `=` after an expression is a slip for `==`. A block closed by `end`
  -- expects its end, pointing at where it started; but a program, a repeat's body and a
  -- function's body once it holds a statement say what CC's parser says there: a call at
  -- the end of its line that wanted () (the token is on a later line); an `end` too many; at
  -- the end of the file, that a name was wanted (nothing read yet), an expression (after a
  -- bare return) or just that the file ended; else that a statement was wanted.
  local function bad_end(kind, last, opener_start, opener_end)
    if tok == tokens.EQUALS and last == "expression" then
      fail("use_double_equals", tok_start, tok_end);
    end
    if kind == "end" or kind == "if" or (kind == "function" and last == nil) then
      fail("expected_end", opener_start, opener_end, tok, tok_start, tok_end);
    end
    if last == "call" and not same_line(prev_end) then
      fail("standalone_name_call", tok, prev_end);
    end
    if tok == tokens.END then fail("unexpected_end", tok_start, tok_end); end
    if tok == tokens.EOF then
      if last == nil then expected_var(); end
      if last == "return" then expected_expression(); end
      unexpected();
    end
    expected_statement();
  end

  function block(kind, opener_start, opener_end)
    local ends = ENDS[kind];
    local last;
    while not ends[tok] do
      if tok == tokens.RETURN then
        -- return [values] [;] ends its block.
        advance();
        last = "return";
        if EXPR_START[tok] then
          expression_list();
          last = "expression";
        end
        if tok == tokens.SEMICOLON then
          last = "other";
          advance();
        end
        if not ends[tok] then bad_end(kind, last, opener_start, opener_end); end
        return;
      elseif not STATEMENT_START[tok] then
        bad_end(kind, last, opener_start, opener_end);
      end
      last = statement();
    end
  end

  local function repl_expressions()
    if not EXPR_START[tok] then expected_expression(); end
    expression_list();
    if tok ~= tokens.EOF then after_expression(unexpected); end
  end

  local ok, err = pcall(function()
    if start == REPL_EXPRS then
      repl_expressions();
    else
      block("program");
    end
  end);
  if ok then return true; end
  if err == FAILED then return false; end
  error(err, 0);
end

return {
  tokens = tokens,
  parse = parse,
  program = PROGRAM,
  repl_exprs = REPL_EXPRS,
};
