-- libsandboxlayout: text laid out for a CC screen, where CC's own write would cut a word a
-- player must read whole: a URL or a path longer than a row, and a command in a sentence (`sandbox
-- setup`, `set shell.allow_startup`) (fitLongWords); the rows it takes (printedRows); and the
-- room a typed answer needs after its question (roomToAnswer).
--
-- The module requires nothing of the package, so the gateway's installer, which runs before
-- the package's files are on the computer, loads this same file as the gateway serves it
-- (tools/trap-sandbox/internal/installer: SOURCE.layout), and every line the sandbox and ai
-- commands and the installer print breaks by one rule.

local expect = require('cc.expect').expect;

-- Where a URL too long for a row breaks: before one of these characters after its scheme's
-- "://", so that each row after the first begins with one (":4444", "/trapos/ws", "?x=1")
-- and reads as the rest of the URL above it, never as a word of its own. Before a "." of the
-- host only when no such break fits the row (a host name longer than the row); at the row's
-- end only when neither does.
local URL_BREAK = "[/?#&=:]";
local HOST_BREAK = "%.";
-- Where a path too long for a row breaks (a word with a "/" that is no URL: "Could not write
-- /apis/libsandboxsettings.lua: ..." on a pocket computer's 26 columns, which CC cut as
-- "/apis/libs" / "andboxsettings.lua:"): before a "/", so that each row after the first begins
-- with one and reads as the rest of the path; before a "." of a name longer than the row.
local PATH_BREAK = "/";
local NAME_BREAK = "%.";

-- The words after "sandbox" that make it a command to type ("Fix it with: sandbox setup"):
-- CC would break the sentence between the two ("... with: sandbox" / "link"), and a player
-- who types the first row's end runs `sandbox` alone. Kept on one row, as a command printed
-- on a line of its own is.
local COMMAND_WORDS = {
  health = true, status = true, reconnect = true, stop = true, setup = true, link = true,
  help = true, ["--help"] = true, ["--version"] = true,
};

-- The length of the command "sandbox <word>", or CC's "set <setting>" (a setting's name has a
-- dot: "Run: set shell.allow_startup true", where "set" ending a row, typed alone, lists every
-- setting), that starts text at at (a bracket or quote before it and what follows the word up
-- to a space, punctuation too, as CC's write keeps them), or nil when no command starts there.
local function commandAt(text, at)
  local setting = text:match("^[%(\"'`]?set [%w_]+%.[^ \t\n]*", at);
  if setting ~= nil then
    return #setting;
  end
  local pair = text:match("^[%(\"'`]?sandbox [^ \t\n]+", at);
  if pair == nil then
    return nil;
  end
  local word = pair:match("sandbox (.*)$"):gsub("[%.,;:%)\"'`]+$", "");
  return COMMAND_WORDS[word] and #pair or nil;
end

-- The index the row of url starting at start ends before (the next row starts there), for a
-- row of room columns: the last break of pattern that fits, or the end when the rest fits;
-- nil when none does. Never inside its scheme (scheme: the scheme's length, "://" included).
local function urlBreak(url, start, room, scheme, pattern)
  if #url - start + 1 <= room then
    return #url + 1;
  end
  for i = start + room, start + 1, -1 do
    if i > scheme + 1 and url:sub(i, i):find(pattern) then
      return i;
    end
  end
  return nil;
end

-- The rows of url, longer than a row of width columns, when room columns are left on the row
-- it would start on (0 when that row is empty): its first part stays there when it fits whole
-- up to a URL_BREAK (the scheme and host not cut: "url: ws://127.0.0.1:4444" / "/trapos/ws"),
-- else the URL starts a row of its own; then each row holds as much as fits (urlBreak). A path
-- (isPath) is laid out the same way, by PATH_BREAK and NAME_BREAK. Returns the rows and
-- whether the first goes on the row begun.
local function urlRows(url, width, room, path)
  -- a bracket or quote may come before the scheme: "(ws:" / "//…" would read as two words
  local scheme = #(url:match("^[%(%[<\"']*%a[%w+.-]*://") or "");
  local breaks, fallback = URL_BREAK, HOST_BREAK;
  if path then
    breaks, fallback = PATH_BREAK, NAME_BREAK;
  end
  local rows, start, continued = {}, 1, false;
  local cut = room > 0 and urlBreak(url, 1, room, scheme, breaks) or nil;
  if cut ~= nil then
    rows[1], start, continued = url:sub(1, cut - 1), cut, true;
  end
  while #url - start + 1 > width do
    cut = urlBreak(url, start, width, scheme, breaks) or urlBreak(url, start, width, scheme, fallback)
      or start + width;
    rows[#rows + 1] = url:sub(start, cut - 1);
    start = cut;
  end
  rows[#rows + 1] = url:sub(start);
  return rows, continued;
end

-- Whether word is a path (a "/" in it, no "://"), which urlRows breaks by PATH_BREAK.
local function isPath(word)
  return word:find("/", 1, true) ~= nil and not word:find("://", 1, true);
end

-- text as CC's write lays it out on a screen width columns wide, starting at column x (1 by
-- default), except for a URL or a path longer than a row (ws://192.168.100.200:4444/trapos/ws on a
-- pocket computer's 26 columns). CC writes such a word from the cursor on and breaks it at
-- the row's end wherever that falls ("url: ws://192.168.100.200:44" / "44/trapos/ws"): a
-- player cannot tell which part is what, nor type it back. Here it breaks only before its
-- separators (urlRows): its first part, scheme and host whole, on the row begun when it fits
-- there, else on a row of its own ("ws://192.168.100.200:4444" / "/trapos/ws"); each row is
-- read, and typed, as it is, the rows run together without a space. A path longer than a row
-- breaks the same way, before its "/" (isPath). Other long words (what a broken gateway sent)
-- are CC's to break. A command "sandbox <word>" (commandAt) that would
-- end one row and begin the next starts the next whole. Returns text with the line breaks put
-- in (text itself when it needs none).
local function fitLongWords(text, width, x)
  expect(1, text, "string");
  expect(2, width, "number");
  expect(3, x, "number", "nil");
  x = x or 1;
  local out, changed = {}, false;
  local at = 1;
  while at <= #text do
    local space = text:match("^[ \t]+", at);
    local newline = space == nil and text:sub(at, at) == "\n";
    local word = (space == nil and not newline) and text:match("^[^ \t\n]+", at) or nil;
    local piece = space or (newline and "\n") or word;
    at = at + #piece;
    if newline then
      x = 1;
    elseif space ~= nil then
      x = x + #space;
    elseif #word <= width or not (word:find("://", 1, true) or isPath(word)) then
      local command = commandAt(text, at - #piece);
      if command ~= nil and x > 1 and x + #word - 1 <= width and x + command - 1 > width and command <= width then
        if out[#out] ~= nil and out[#out]:find("^[ \t]+$") then
          out[#out] = ""; -- the spaces before it would end the row above, unseen
        end
        piece = "\n" .. word;
        x, changed = #word + 1, true;
      elseif #word > width then
        -- CC's write fills the rest of the row, then whole rows, the cursor after the last
        x = (math.min(x, width + 1) - 2 + #word) % width + 2;
      elseif x + #word - 1 > width then
        x = #word + 1; -- CC's write starts it on the next row
      else
        x = x + #word;
      end
    else
      local rows, continued = urlRows(word, width, x > 1 and math.max(width - x + 1, 0) or 0, isPath(word));
      piece = table.concat(rows, "\n");
      if x > 1 and not continued then
        if out[#out] ~= nil and out[#out]:find("^[ \t]+$") then
          out[#out] = ""; -- the spaces before it would end the row above, unseen
        end
        piece = "\n" .. piece;
      end
      x, changed = #rows[#rows] + 1, true;
    end
    out[#out + 1] = piece;
  end
  if not changed then
    return text;
  end
  return table.concat(out);
end

-- The indent of each row of a line after its first (hangingRows), on a screen width columns
-- wide: two columns, one on a screen narrower than a turtle's 39 (a pocket computer's 26),
-- where a column is 4 % of the row and the longest status (an error that says its remedy
-- itself) already fills its 20 rows with one.
local function hangingIndent(width)
  expect(1, width, "number");
  return width < 39 and " " or "  ";
end

-- The first row of text on a row of width columns, as print lays it out (fitLongWords, then
-- CC's write): a word that does not fit the rest of the row starts the next (the blanks before
-- it, which CC writes past the row's end, are left off); one longer than a row fills the rest
-- of the row and goes on at the next; a line break ends the row. The row is the start of text
-- as it is: fitLongWords only puts line breaks in (for blanks, or between a URL's parts).
local function firstRow(text, width)
  local laid = fitLongWords(text, width);
  local x, at, rowEnd = 1, 1, 0;
  while at <= #laid do
    local space = laid:match("^[ \t]+", at);
    if space ~= nil then
      x, at = x + #space, at + #space;
    elseif laid:sub(at, at) == "\n" then
      break;
    else
      local word = laid:match("^[^ \t\n]+", at);
      if x + #word - 1 <= width then
        x, at = x + #word, at + #word;
        rowEnd = at - 1;
      elseif #word > width and x <= width then
        return laid:sub(1, at + width - x);
      else
        break;
      end
    end
  end
  return laid:sub(1, rowEnd);
end

-- The rows of text on a screen width columns wide, as print lays it out (fitLongWords, then
-- CC's wrap), except that every row after the first starts with hangingIndent and holds the
-- columns left after it. CC's own wrap starts a continued row at the row's start, where the
-- words on it read as a line of their own: a gateway's words in sandbox status (an account, an
-- error it sent, each one line of up to 256 bytes) could be chosen so that a row of them read
-- "proof: required" under the line they belong to. Indented, a continued row is never taken for
-- a line of the client's. Each row fits the screen, so print wraps none of them again.
local function hangingRows(text, width, indent)
  expect(1, text, "string");
  expect(2, width, "number");
  expect(3, indent, "string", "nil");
  indent = indent or hangingIndent(width);
  local rows, rest, room = {}, text, width;
  repeat
    local row = firstRow(rest, room);
    rows[#rows + 1] = (#rows > 0 and indent or "") .. row;
    -- the blanks a wrap leaves at the row's end, or the line break that ended it
    rest = rest:sub(#row + 1):gsub("^[ \t]*", "", 1):gsub("^\n", "", 1);
    room = math.max(width - #indent, 1);
  until rest == ""
  return rows;
end

-- Columns a typed answer needs after its question ("yes" and the cursor): read() shows only
-- what fits after the cursor, so a question that ends at the right edge (it can, on a pocket
-- computer's 26 columns or a turtle's 39 as on the computer's 51) would hide the answer typed.
local ANSWER_ROOM = 4;

-- Columns a typed password needs: the 16 characters the gateway takes without a warning, as
-- stars, and the cursor; with fewer, read() scrolls the first ones out of sight as they are
-- typed (at 51 columns the question left 5).
local PASSWORD_ROOM = 17;

-- Columns a typed gateway URL needs: ws://192.168.100.200:4444 and the cursor. With fewer,
-- read() scrolls its start out of sight as it is typed: after the current URL in brackets
-- (`[ws://127.0.0.1:4444/trapos/ws]: `, 17 columns left of 51), ws://10.0.0.9:4444 read
-- ://10.0.0.9:4444, its scheme gone.
local URL_ROOM = 26;

-- Whether the line holding t's cursor has room (ANSWER_ROOM by default) columns left for the
-- answer; when it does not, the program asking moves to the next line before read(). The
-- one home of how much room an answer needs: the sandbox command's questions and the
-- installer's (which loads this file before the package is installed) ask it.
local function roomToAnswer(t, room)
  expect(1, t, "table");
  expect(2, room, "number", "nil");
  local width = t.getSize();
  local x = t.getCursorPos();
  return width - x + 1 >= (room or ANSWER_ROOM);
end

-- Whether a question's last word (wordLength columns: "[y/N]"), which would end its row at
-- column rowEnd, starts a row of its own instead, after indentLength columns: when the row it
-- ends leaves fewer than room columns (ANSWER_ROOM by default) after the question's blanks
-- for the answer typed there, and a row of its own does not. roomToAnswer alone would move
-- the answer to the next row's start, away from the "[y/N]" it answers. The one home of the
-- rule: hangingQuestionRows (sandbox's questions) and ai's Allow? ask it.
local function lastWordOwnRow(rowEnd, wordLength, blanks, width, room, indentLength)
  expect(1, rowEnd, "number");
  expect(2, wordLength, "number");
  expect(3, blanks, "number");
  expect(4, width, "number");
  expect(5, room, "number", "nil");
  expect(6, indentLength, "number", "nil");
  room = room or ANSWER_ROOM;
  return rowEnd + blanks + room > width and (indentLength or 0) + wordLength + blanks + room <= width;
end

-- The rows of a question on a screen width columns wide, as hangingRows lays them out, with
-- the blanks text ends with and room columns (ANSWER_ROOM by default) left after its last row
-- for the answer typed there: when they are not, its last word ("[y/N]") starts a row of its
-- own, indented, so that the question's end stays beside the answer (lastWordOwnRow: sandbox
-- link's question on a pocket computer, which a long account fills to the row's end). indent, when
-- given, is the rows' after the first instead: "" for a question of the client's own words,
-- which print's rows lay out (questionRows).
local function hangingQuestionRows(text, width, room, indent)
  expect(1, text, "string");
  expect(2, width, "number");
  expect(3, room, "number", "nil");
  expect(4, indent, "string", "nil");
  room = room or ANSWER_ROOM;
  indent = indent or hangingIndent(width);
  local rows = hangingRows(text, width, indent);
  local blanks = #text:match("[ \t]*$");
  local last = rows[#rows];
  local before, word = last:match("^(.*%S)[ \t]+(%S+)$");
  if before ~= nil and lastWordOwnRow(#last, #word, blanks, width, room, #indent) then
    rows[#rows], rows[#rows + 1] = before, indent .. word;
  end
  return rows;
end

-- The rows of a question of the client's own (sandbox uninstall's [y/N], sandbox setup's
-- [yes]:) as print lays them out, its last word starting a row of its own where the row it
-- ends leaves no room for the answer (hangingQuestionRows, unindented): on a pocket computer
-- "from this computer? [y/N]" filled its row, and the y typed stood alone at the next row's start.
local function questionRows(text, width, room)
  return hangingQuestionRows(text, width, room, "");
end

-- A program's print, printError and write with every text laid out by fitLongWords for the
-- screen: env is the program's environment (_ENV), whose print, printError and write (taken
-- now) put the text on the screen, and whose term gives the width, and write's column, at each
-- call. print() with no text prints an empty line, as CC's.
local function fitted(env)
  local envPrint, envPrintError, envWrite = env.print, env.printError, env.write;
  local function width()
    return (env.term.getSize());
  end
  -- write a question from the row's start in the rows rowsOf lays it out in, then the blanks
  -- it ends with, after which its answer is typed.
  local function writeQuestionRows(rowsOf, text, room)
    text = tostring(text);
    return envWrite(table.concat(rowsOf(text, width(), room), "\n") .. text:match("[ \t]*$"));
  end
  return {
    print = function(text)
      if text == nil then
        return envPrint();
      end
      return envPrint(fitLongWords(tostring(text), width()));
    end,
    -- print, each row after the first indented (hangingRows): for a line that holds words of
    -- the gateway's, among lines a player reads by their start.
    printHanging = function(text)
      return envPrint(table.concat(hangingRows(tostring(text), width()), "\n"));
    end,
    -- write a question from the row's start, laid out by hangingQuestionRows: one that holds
    -- words of the gateway's (sandbox link's account), among lines a player reads by their
    -- start; its answer is typed after it.
    writeHangingQuestion = function(text, room)
      return writeQuestionRows(hangingQuestionRows, text, room);
    end,
    -- write a question of the client's own from the row's start, laid out by questionRows;
    -- its answer is typed after it.
    writeQuestion = function(text, room)
      return writeQuestionRows(questionRows, text, room);
    end,
    printError = function(text)
      return envPrintError(fitLongWords(tostring(text), width()));
    end,
    write = function(text)
      return envWrite(fitLongWords(tostring(text), width(), (env.term.getCursorPos())));
    end,
  };
end

-- The mark a row of a command ends with when the command goes on at the next row: a shell's
-- line continuation, so the rows read as one command and type as one.
local CONTINUED = " \\";

-- Whether text is one word of the host's shell as it is, with no quotes.
local function plainWord(text)
  return text:match("^[%w:._,+=@/-]+$") ~= nil;
end

-- text in single quotes, as one word of the host's shell ("'" itself as '\'').
local function singleQuoted(text)
  return "'" .. text:gsub("'", "'\\''") .. "'";
end

-- text as one word of the host's shell: as it is when it is plain, else in single quotes
-- (a label with a space: '7:my kitchen').
local function shellWord(text)
  return plainWord(text) and text or singleQuoted(text);
end

-- The rows of one argument too wide for its row, room columns on the first (after the
-- command's indent) and width on each after; lastMark: the columns the last row's mark takes
-- (0 or #CONTINUED). CC would wrap it wherever the row ended, inside its quotes too
-- ("'8:my big kitchen pc by" / "the windows'"), the second row read as a command of its own.
-- Each row holds a part of it as a shell word of its own, quoted as the whole is, and all but
-- the last end in "\" against it ("'8:my big kitchen pc'\" / "' by the windows'"): a shell
-- drops a "\" that ends a line outside quotes, and so joins the parts into the one argument.
-- The rows after the first start at the row's start: a blank there would split the argument.
-- A part ends before a space when one is in its second half, so the next row begins with it,
-- inside its quotes, and words are not cut.
local function argumentRows(text, room, width, lastMark)
  local quote = plainWord(text) and function(part) return part; end or singleQuoted;
  local rows, rest = {}, text;
  while #quote(rest) + lastMark > room do
    local cut = 1; -- the length of the longest part that fits with its "\", at least 1
    while cut < #rest and #quote(rest:sub(1, cut + 1)) + 1 <= room do
      cut = cut + 1;
    end
    local space = rest:sub(1, cut + 1):match(".*() ");
    if space ~= nil and space - 1 > cut / 2 then
      cut = space - 1;
    end
    rows[#rows + 1] = quote(rest:sub(1, cut)) .. "\\";
    rest, room = rest:sub(cut + 1), width;
  end
  rows[#rows + 1] = quote(rest);
  return rows;
end

-- The rows of a command to type on another machine (the host's shell), given as its
-- arguments (shellWord quotes each), indented by two spaces, for a screen width columns wide.
-- sandbox link's lines and the installer's uninstall use it. On a screen too narrow for it (a
-- pocket computer's 26 columns: trap-sandbox link approve BCDF-GHJK is 35) it goes on at the
-- next rows as a shell continues a line: broken between its words (never inside a quoted one:
-- '7:my kitchen'), each row but the last ending in CONTINUED, the rows after the first
-- indented further. Broken bare, "approve BCDF-GHJK" read as a command of its own. An
-- argument wider than a row by itself goes on rows of its own (argumentRows).
-- onComputer: for CC's shell (no ' quoting, no \ continuation): words as given, no CONTINUED.
local function commandRows(args, width, onComputer)
  expect(1, args, "table");
  expect(2, width, "number");
  expect(3, onComputer, "boolean", "nil");
  local words = {};
  for i, arg in ipairs(args) do
    words[i] = onComputer and arg or shellWord(arg);
  end
  local command = table.concat(words, " ");
  if 2 + #command <= width then
    return { "  " .. command };
  end
  local rows, indent, line = {}, "  ", nil;
  for i, word in ipairs(words) do
    -- the mark needs its columns on every row but the last
    local continued = onComputer and "" or CONTINUED;
    local mark = i < #words and #continued or 0;
    if line ~= nil and #indent + #line + 1 + #word + mark > width then
      rows[#rows + 1] = indent .. line .. continued;
      indent, line = "    ", nil;
    end
    if line == nil and #indent + #word + mark > width then
      local parts = {};
      if onComputer then
        indent = "";
        for part in (fitLongWords(word, width) .. "\n"):gmatch("([^\n]*)\n") do
          parts[#parts + 1] = part;
        end
      else
        parts = argumentRows(args[i], width - #indent, width, mark);
      end
      for j = 1, #parts - 1 do
        rows[#rows + 1] = indent .. parts[j];
        indent = "";
      end
      word = parts[#parts];
    end
    line = line == nil and word or line .. " " .. word;
  end
  rows[#rows + 1] = indent .. (line or "");
  return rows;
end

return {
  ANSWER_ROOM = ANSWER_ROOM,
  PASSWORD_ROOM = PASSWORD_ROOM,
  URL_ROOM = URL_ROOM,
  roomToAnswer = roomToAnswer,
  fitLongWords = fitLongWords,
  hangingIndent = hangingIndent,
  hangingRows = hangingRows,
  lastWordOwnRow = lastWordOwnRow,
  hangingQuestionRows = hangingQuestionRows,
  questionRows = questionRows,
  fitted = fitted,
  commandRows = commandRows,
};
