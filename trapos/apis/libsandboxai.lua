-- libsandboxai: ask the gateway's agent (the ai.* requests of docs/protocol.md) and read its
-- answer as it streams. Any program can use it: run() is one call that asks, long-polls and
-- hands each event to a callback, yielding only through os.pullEvent (so it runs inside
-- parallel); ask/poll/approve/abort/reset are the single requests for a program that keeps its
-- own loop. Nothing here touches the screen: the `ai` program (programs/ai.lua) does.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');
local config = require('/apis/libsandboxsettings');
local requests = require('/apis/libsandboxrequests');

-- The request types (computer -> gateway).
local TYPE_ASK = "ai.ask";
local TYPE_POLL = "ai.poll";
local TYPE_ABORT = "ai.abort";
local TYPE_RESET = "ai.reset";
local TYPE_APPROVE = "ai.approve";

-- The kinds of the events a poll delivers; done is always the last.
local KIND_TEXT = "text";
local KIND_TOOL = "tool";
local KIND_CONFIRM = "confirm";
-- opencode loads this computer's instance for the question (its first since opencode started).
local KIND_STARTING = "starting";
local KIND_RETRY = "retry";
local KIND_CUT = "cut";
local KIND_ERROR = "error";
local KIND_DONE = "done";

-- Why a turn ended (the done event's reason).
local DONE_STOP = "stop";
local DONE_ABORTED = "aborted";
local DONE_ERROR = "error";
local DONE_DEADLINE = "deadline";
local DONE_DISCONNECTED = "disconnected";

-- The error codes of the ai.* requests besides the seed's.
local ERR_AI_DISABLED = "ai_disabled";
local ERR_AI_UNAVAILABLE = "ai_unavailable";
local ERR_UNKNOWN_TURN = "unknown_turn";
local ERR_BUSY = codec.ERR_BUSY;

-- The conversation a program gets when it names none, and the form of a name.
local DEFAULT_SESSION = "main";
local SESSION_PATTERN = "^[a-z0-9_-]+$";
local MAX_SESSION_LENGTH = 32;
-- The longest question the gateway takes, in bytes (its bad_payload says so too).
local MAX_PROMPT_BYTES = 4096;
-- How long one poll may wait at the gateway for the next event (its maximum), well under the
-- request timeout, so a quiet turn costs one request every few seconds.
local POLL_WAIT_MS = 5000;
-- A confirm's bytes above this (2^53, where a number stops counting by one) are no size.
local MAX_BYTES_SAID = 2 ^ 53;
-- The gateway waits by its clock and we time the request by ours, which may run faster (a
-- fakecraft computer's clock runs scaled): after a poll that timed out, run() halves the wait,
-- down to this.
local MIN_POLL_WAIT_MS = 500;
-- Polls in a row at the shortest wait that may go unanswered (timeout) before run() gives
-- up: one lost reply must not end a turn, a gateway that stopped answering must.
local MAX_POLL_FAILURES = 3;

-- Seconds run() waits for the answer to the ai.abort it sends on terminate. Short, so Ctrl-T
-- feels immediate: an abort that is lost leaves the turn to end at the gateway's deadline (the
-- sandbox daemon keeps running on Ctrl-T, so it is rarely lost).
local ABORT_TIMEOUT = 2;

local TERMINATED = "Terminated";

-- What the player reads when the gateway runs with its agent off and says no more.
local AGENT_OFF = "The agent is off: its operator must set --ai-model";
-- What the player reads when the gateway is older than the agent (it knows no ai.* type).
local NO_AGENT = "This gateway has no agent (it is older than this client); its operator must upgrade it";

-- The player's line for a gateway that has no agent to ask, naming whose fix it is: the
-- operator's, who runs it with the agent off (ai_disabled, in the gateway's own words, which
-- begin in lower case as its errors do) or runs one older than the agent (unknown_type); nil
-- for any other error. `ai` and `sandbox health` say it.
local function noAgentLine(err)
  if type(err) ~= "table" then
    return nil;
  elseif err.code == ERR_AI_DISABLED then
    local message = type(err.message) == "string" and codec.oneLine(err.message) or "";
    if message == "" then
      return AGENT_OFF;
    end
    return message:sub(1, 1):upper() .. message:sub(2);
  elseif err.code == codec.ERR_UNKNOWN_TYPE then
    return NO_AGENT;
  end
  return nil;
end

local function checkSession(n, session)
  expect(n, session, "string", "nil");
  if session ~= nil and (#session > MAX_SESSION_LENGTH or not session:find(SESSION_PATTERN)) then
    error("bad argument #" .. n .. " (session must be 1-" .. MAX_SESSION_LENGTH
      .. " characters of a-z, 0-9, _ and -)", 3);
  end
end

-- What kind of computer this is, as the agent is told.
local function computerKind()
  if turtle ~= nil then
    return "turtle";
  elseif pocket ~= nil then
    return "pocket";
  end
  return "computer";
end

-- The lines of a text, each with its "\n" (the last may have none), so a change of the final
-- line break is a change of the last line.
local function splitLines(text)
  local lines = {};
  for line in text:gmatch("[^\n]*\n") do
    lines[#lines + 1] = line;
  end
  local last = text:match("[^\n]+$");
  if last ~= nil then
    lines[#lines + 1] = last;
  end
  return lines;
end

-- A line as shown, without its line break.
local function lineText(line)
  return (line:gsub("\n$", ""));
end

-- A row of lineChanges for a line: unbroken when it has no line break (the text's last).
local function lineRow(mark, number, line)
  return { mark = mark, line = number, text = lineText(line), unbroken = line:sub(-1) ~= "\n" or nil };
end

-- The most lines removed and added lineChanges looks for the fewest of: the search costs
-- (lines) x (this), so a long file changed all over costs CC no more than a few passes over it.
local MAX_LINE_EDITS = 64;

-- The fewest lines removed and added that make the n lines of a after offset into the m of b
-- after it (Myers' walk, "An O(ND) Difference Algorithm", 1986: it costs (n + m) x edits,
-- never n x m), as steps in order: {"=", i, j} (a line the same, a's i-th and b's j-th after
-- offset), {"-", i} and {"+", j}; nil when more than MAX_LINE_EDITS are needed.
local function fewestEdits(a, b, offset, n, m)
  local furthest = { [1] = 0 }; -- on each diagonal k (x - y), the furthest x reached
  local trace = {};
  local edits;
  for d = 0, math.min(MAX_LINE_EDITS, n + m) do
    local copy = {};
    for k, x in pairs(furthest) do
      copy[k] = x;
    end
    trace[d + 1] = copy;
    for k = -d, d, 2 do
      local x;
      if k == -d or (k ~= d and furthest[k - 1] < furthest[k + 1]) then
        x = furthest[k + 1]; -- a line of b added
      else
        x = furthest[k - 1] + 1; -- a line of a removed
      end
      local y = x - k;
      while x < n and y < m and a[offset + x + 1] == b[offset + y + 1] do
        x, y = x + 1, y + 1;
      end
      furthest[k] = x;
      if x >= n and y >= m then
        edits = d;
        break;
      end
    end
    if edits ~= nil then
      break;
    end
  end
  if edits == nil then
    return nil;
  end
  local backwards = {};
  local x, y = n, m;
  for d = edits, 0, -1 do
    local reached, k = trace[d + 1], x - y;
    local fromK = (k == -d or (k ~= d and reached[k - 1] < reached[k + 1])) and k + 1 or k - 1;
    local fromX = reached[fromK];
    local fromY = fromX - fromK;
    while x > fromX and y > fromY do
      backwards[#backwards + 1] = { "=", x, y };
      x, y = x - 1, y - 1;
    end
    if d > 0 then
      backwards[#backwards + 1] = x == fromX and { "+", y } or { "-", x };
    end
    x, y = fromX, fromY;
  end
  local steps = {};
  for i = #backwards, 1, -1 do
    steps[#steps + 1] = backwards[i];
  end
  return steps;
end

-- What a write changes of a text file: rows of {mark, line, text, unbroken}, mark "-" for a
-- line removed (line: its number in the old text), "+" for one added and " " for one the same
-- (line: its number in the new text), text without its line break, unbroken true for a line
-- that has none (the text's last), and {skipped = n} for n lines the same left out, each changed line
-- keeping up to `context` of them on either side; and how many lines were removed and added.
-- Cheap enough for CC whatever the size: the lines the same at the start and end are set
-- aside, and between them the fewest lines removed and added are looked for up to
-- MAX_LINE_EDITS (fewestEdits); past that, when the line counts are equal (lines edited in
-- place), each line is compared with the one at its place, else they are all removed and added.
-- Of lines changed together, those removed come first.
local function lineChanges(old, new, context)
  expect(1, old, "string");
  expect(2, new, "string");
  expect(3, context, "number");
  local a, b = splitLines(old), splitLines(new);
  local top, bottom = 0, 0;
  while top < #a and top < #b and a[top + 1] == b[top + 1] do
    top = top + 1;
  end
  while bottom < #a - top and bottom < #b - top and a[#a - bottom] == b[#b - bottom] do
    bottom = bottom + 1;
  end
  local ops = {};
  local changed = { ["-"] = 0, ["+"] = 0 }; -- lines removed and added
  local function same(line)
    ops[#ops + 1] = lineRow(" ", line, b[line]);
  end
  -- Lines from..to after offset, each numbered in its own text: removed ("-") from the old
  -- text, or added ("+") from the new.
  local function change(mark, from, to, offset)
    local lines = mark == "-" and a or b;
    for k = from, to do
      ops[#ops + 1] = lineRow(mark, offset + k, lines[offset + k]);
    end
    changed[mark] = changed[mark] + math.max(0, to - from + 1);
  end
  for line = 1, top do
    same(line);
  end
  local middleA, middleB = #a - top - bottom, #b - top - bottom;
  local steps = middleA > 0 and middleB > 0 and fewestEdits(a, b, top, middleA, middleB);
  if steps then
    local i = 1;
    while i <= #steps do
      if steps[i][1] == "=" then
        same(top + steps[i][3]);
        i = i + 1;
      else
        local j = i;
        while j <= #steps and steps[j][1] ~= "=" do
          j = j + 1;
        end
        for _, kind in ipairs({ "-", "+" }) do
          for t = i, j - 1 do
            if steps[t][1] == kind then
              change(kind, steps[t][2], steps[t][2], top);
            end
          end
        end
        i = j;
      end
    end
  elseif middleA == middleB then
    local i = 1;
    while i <= middleA do
      if a[top + i] == b[top + i] then
        same(top + i);
        i = i + 1;
      else
        local j = i;
        while j <= middleA and a[top + j] ~= b[top + j] do
          j = j + 1;
        end
        change("-", i, j - 1, top);
        change("+", i, j - 1, top);
        i = j;
      end
    end
  else
    change("-", 1, middleA, top);
    change("+", 1, middleB, top);
  end
  for k = 1, bottom do
    same(#b - bottom + k);
  end
  -- How far each row is from the nearest change, one pass each way.
  local near = {};
  local since = math.huge;
  for i = 1, #ops do
    since = ops[i].mark == " " and since + 1 or 0;
    near[i] = since;
  end
  since = math.huge;
  for i = #ops, 1, -1 do
    since = ops[i].mark == " " and since + 1 or 0;
    near[i] = math.min(near[i], since);
  end
  local rows, skipped = {}, 0;
  for i, op in ipairs(ops) do
    if near[i] > context then
      skipped = skipped + 1;
    else
      if skipped > 0 then
        rows[#rows + 1] = { skipped = skipped };
        skipped = 0;
      end
      rows[#rows + 1] = op;
    end
  end
  if skipped > 0 and #rows > 0 then
    rows[#rows + 1] = { skipped = skipped };
  end
  return rows, changed["-"], changed["+"];
end

-- The answer's Markdown, read a line at a time as it streams (newAnswerReader). A model
-- answers in paragraphs, "- " and "1. " lists, headings, quotes and code, fenced (```lua ...
-- ```, or ~~~) or indented by four columns; the reader says what each line is, and the
-- screen lays it out (programs/ai.lua): a list item's further rows under its text, code with
-- its indent and never word-wrapped as prose.

-- The columns of blanks (a tab counts four, as Markdown reads it) that make a line code
-- where a paragraph cannot go on: after a blank line, a heading, more code, or at the start.
local CODE_INDENT = 4;
local CODE_MAY_FOLLOW = { start = true, blank = true, code = true, heading = true };
-- A list item's number has at most nine digits (CommonMark): more is a number in the text.
local MAX_ITEM_DIGITS = 9;
-- A heading has one to six #s: more is text.
local MAX_HEADING_LEVEL = 6;

-- What a line's start (rest: what follows its blanks) makes it, and its marker with the blanks
-- after it: "fence" (``` or ~~~: the marker is the run), "row" ("|": a table's, when the
-- lines around it make one; no marker), "item" ("- ", "* ", "+ ", "1. ", "1) "), "heading"
-- ("# " to "###### "), "quote" ("> "), else "text" (no marker). nil while
-- more of the line may still make it one (final: the line has ended). rest is never ""; and a
-- start still undecided is at most a few bytes (a marker's prefix), so it is cheap to add to.
local function markerOf(rest, final)
  local fence = rest:match("^```+") or rest:match("^~~~+");
  if fence ~= nil then
    return "fence", fence;
  elseif rest:find("^|") then
    return "row", "";
  end
  local item = rest:match("^[-*+][ \t]+") or rest:match("^%d+[.)][ \t]+");
  if item ~= nil and #item:match("^%d*") <= MAX_ITEM_DIGITS then
    return "item", item;
  end
  local heading = rest:match("^#+[ \t]+");
  if heading ~= nil and #heading:match("^#+") <= MAX_HEADING_LEVEL then
    return "heading", heading;
  end
  if rest:find("^>") and (#rest > 1 or final) then
    return "quote", rest:match("^>[ \t]*");
  end
  if not final and (rest:find("^`?`$") or rest:find("^~?~$") or rest:find("^[-*+>]$")
      or rest:find("^#+$") and #rest <= MAX_HEADING_LEVEL or rest:find("^%d+[.)]?$") and #rest:match("^%d*") <= MAX_ITEM_DIGITS) then
    return nil;
  end
  return "text", "";
end

-- The emphasis marks: "**" (bold), and "*" or "_" (italic), each shown without its marks (CC
-- has neither face). A run of another length is text (`***`, and `__`, which is in names:
-- __init__).
local EMPHASIS_MARKS = { ["**"] = true, ["*"] = true, ["_"] = true };

-- The most of one line the answer's reader holds back: a code line (its indent too) until the
-- line ends, the rest counted, not kept, and the line given cut; the text of inline marks
-- still open (a code span's, a bold's, a link's) until they close, past which they are no
-- marks and are given as typed. The gateway relays 64 KiB of answer a turn, but a hostile one
-- streamed a line without end (fenced, or after a `), held whole in the computer's memory
-- (the server's), with nothing shown to page or stop on.
local MAX_HELD_LINE_BYTES = 16 * 1024;

-- The bytes a backslash escapes (CommonMark: ASCII punctuation): `\*` is a star, not a mark.
local ESCAPABLE = "^[!-/:-@[-`{-~]$";

-- Whether a byte (or "" for a line's edge) is blank, as a mark's neighbour: ** opens bold only
-- before text, and closes it only after text (CommonMark's flanking), so `2 ** 3` is typed.
local function isBlank(byte)
  return byte == "" or byte == " " or byte == "\t" or byte == "\r";
end

-- Whether a byte is part of a word (a letter or digit, CC's accented letters too): a single
-- * or _ inside a word is no mark (snake_case, a*b*c), where CommonMark would read a*b*c's.
local function isWordByte(byte)
  return byte:find("^[%w\128-\255]") ~= nil;
end

-- Whether the text in <> is an autolink's: a URL (a scheme, then no blank) or a mail address.
local function isAutolink(text)
  return text:find("^%a[%w+.%-]*:[^%s]+$") ~= nil or text:find("^[^@%s]+@[^@%s]+$") ~= nil;
end

-- Reads the inline marks of a prose line's text as it streams (add, then lineEnd at the line's
-- end), for newAnswerReader, as a terminal's Markdown shows them where it has no faces:
--   a code span (`code`, or ``a ` in it``: a run of backticks to the next run as long) goes to
--     out.inlineCode(text, typed), its text without the marks (and without a blank at each end
--     when it has one at both, as CommonMark reads `` `x` ``), typed as written;
--   **bold**, *italic* and _italic_ go to out.text without their marks (CC has no faces); a
--     single * or _ inside a word is no mark (snake_case);
--   a link, [text](url), as "text (url)": a computer cannot follow it, and the player types
--     the URL elsewhere; just "url" when the text is the URL, as <url> is;
--   a backslash escape (\*, \_, \[, \\) as the byte it escapes.
-- Everything else goes to out.text as it comes. A mark's text is held until it closes: one
-- that does not close within the line was no mark, and shows as typed with the rest of the
-- line (its inline code still laid out inside a bold that does not close). Marks may come
-- split across pieces: a run is read once it has ended. A program without out.inlineCode gets
-- the span as typed through out.text.
local function newInlineReader(out)
  local tick = nil;          -- the open code span's backtick run, nil outside one
  local heldBytes = 0;       -- bytes held back, at most about MAX_HELD_LINE_BYTES
  local spanHeld = {};       -- the open code span's text so far, in pieces
  -- The open marks, innermost last: {mark = "**", "*", "_" or "[" (a link's text), parts = its
  -- parts so far: strings of text, and {text, typed} code spans}.
  local frames = {};
  -- A link's text that has ended ("]"): {parts = its text's parts, url = nil until its "(",
  -- then the URL's pieces}; nil outside one.
  local link = nil;
  local angle = nil;         -- an autolink's text so far (after "<"), in pieces; nil outside one
  local escaping = false;    -- a \ ended the last piece: the next byte says what it escapes
  local runChar, runLength = nil, 0; -- a run of `, * or _ whose end has not come yet
  local before = "";         -- the byte before that run ("" at the line's start)

  -- Whether nothing is held back: what is held is counted anew from there.
  local function settle()
    if #frames == 0 and link == nil and angle == nil and tick == nil then
      heldBytes = 0;
    end
  end

  local function emitText(part)
    if part == "" then
      return;
    elseif #frames > 0 then
      local parts = frames[#frames].parts;
      parts[#parts + 1] = part;
      heldBytes = heldBytes + #part;
    else
      out.text(part);
    end
  end

  local function emitCode(span)
    if #frames > 0 then
      local parts = frames[#frames].parts;
      parts[#parts + 1] = span;
      heldBytes = heldBytes + #span[2];
    elseif out.inlineCode ~= nil then
      out.inlineCode(span[1], span[2]);
    else
      out.text(span[2]);
    end
  end

  -- Gives parts held in a mark, which has ended (closed, or not a mark after all).
  local function emitParts(parts)
    for _, part in ipairs(parts) do
      if type(part) == "string" then
        emitText(part);
      else
        emitCode(part);
      end
    end
  end

  -- The frames from the i-th up, gone, as typed: each one's mark, then its parts.
  local function unmark(i)
    local gone = {};
    while #frames >= i do
      table.insert(gone, 1, table.remove(frames));
    end
    for _, frame in ipairs(gone) do
      emitText(frame.mark);
      emitParts(frame.parts);
    end
  end

  -- A link's text and the URL so far, as typed: it was no link.
  local function unlink()
    local ended = link;
    link = nil;
    emitText("[");
    emitParts(ended.parts);
    emitText("]");
    if ended.url ~= nil then
      emitText("(" .. table.concat(ended.url));
    end
    settle();
  end

  -- The link whose ")" came: its text, then its URL in brackets unless the text says it.
  local function emitLink()
    local ended = link;
    link = nil;
    local url = table.concat(ended.url);
    local plain = {};
    for _, part in ipairs(ended.parts) do
      plain[#plain + 1] = type(part) == "string" and part or part[1];
    end
    emitParts(ended.parts);
    if url ~= "" and table.concat(plain) ~= url then
      emitText(#ended.parts > 0 and " (" .. url .. ")" or url);
    end
    before = ")";
    settle();
  end

  -- The "]" of a link's text: the innermost open "[" ends (the marks opened inside it since
  -- are no marks), and the byte after says whether a URL follows; with no "[" open, text.
  local function endLinkText()
    local at = nil;
    for i = #frames, 1, -1 do
      if frames[i].mark == "[" then
        at = i;
        break;
      end
    end
    if at == nil then
      emitText("]");
      return;
    end
    unmark(at + 1);
    link = { parts = table.remove(frames).parts };
  end

  -- Reads the run of marks that just ended, `after` the byte that ended it ("": the line's end).
  local function endRun(after)
    local typed = runChar:rep(runLength);
    local char = runChar;
    runChar, runLength = nil, 0;
    if char == "`" then
      if tick == nil then
        tick, spanHeld = typed, {};
      elseif #typed == #tick then
        local text = table.concat(spanHeld);
        local span = { text, tick .. text .. tick };
        tick, spanHeld = nil, {};
        if text:sub(1, 1) == " " and text:sub(-1) == " " and text:find("[^ ]") then
          span[1] = text:sub(2, -2);
        end
        emitCode(span);
        settle();
      else
        spanHeld[#spanHeld + 1] = typed;
        heldBytes = heldBytes + #typed;
      end
    elseif EMPHASIS_MARKS[typed] then
      -- a single mark is no mark inside a word: it must have no letter on its outer side
      local single = #typed == 1;
      local top = frames[#frames];
      if top ~= nil and top.mark == typed and not isBlank(before) and not (single and isWordByte(after)) then
        table.remove(frames);
        emitParts(top.parts);
        settle();
      elseif not isBlank(after) and not (single and isWordByte(before)) then
        frames[#frames + 1] = { mark = typed, parts = {} };
      else
        emitText(typed);
      end
    else
      emitText(typed);
    end
    before = char;
  end

  -- Gives what the marks still open hold, as typed: they were no marks (the line ended, or
  -- they held MAX_HELD_LINE_BYTES). The state is reset before out hears of it (out may raise:
  -- a Ctrl-T at a "Press any key").
  local function release()
    local open, ended, openAngle, openTick, heldText, escaped = frames, link, angle, tick, table.concat(spanHeld), escaping;
    tick, spanHeld, frames, link, angle, escaping, heldBytes = nil, {}, {}, nil, nil, false, 0;
    local typed = {};
    for _, frame in ipairs(open) do
      typed[#typed + 1] = frame.mark;
      for _, part in ipairs(frame.parts) do
        typed[#typed + 1] = part;
      end
    end
    if ended ~= nil then
      typed[#typed + 1] = "[";
      for _, part in ipairs(ended.parts) do
        typed[#typed + 1] = part;
      end
      typed[#typed + 1] = "]" .. (ended.url ~= nil and "(" .. table.concat(ended.url) or "");
    end
    if openTick ~= nil then
      typed[#typed + 1] = openTick .. heldText;
    end
    if openAngle ~= nil then
      typed[#typed + 1] = "<" .. table.concat(openAngle);
    end
    if escaped then
      typed[#typed + 1] = "\\";
    end
    emitParts(typed);
  end

  -- Adds a piece of the line's text (no line break in it).
  local function addPiece(part)
    local from = 1;
    while from <= #part do
      if escaping then
        escaping = false;
        local c = part:sub(from, from);
        if c:find(ESCAPABLE) then
          emitText(c);
          before, from = c, from + 1;
        else
          emitText("\\"); -- no escape: the byte after is read as it is
          before = "\\";
        end
      elseif runChar ~= nil then
        local stop = part:find(runChar == "`" and "[^`]" or runChar == "*" and "[^*]" or "[^_]", from) or #part + 1;
        runLength = runLength + stop - from;
        if runLength > MAX_HELD_LINE_BYTES then
          -- no mark is that long: typed, and whatever follows begins a run anew
          local typed = runChar:rep(runLength);
          before, runChar, runLength = runChar, nil, 0;
          if tick ~= nil then
            spanHeld[#spanHeld + 1] = typed;
            heldBytes = heldBytes + #typed;
          else
            emitText(typed);
          end
        elseif stop > #part then
          return; -- the run may go on in the next piece
        else
          endRun(part:sub(stop, stop));
        end
        from = stop;
      elseif link ~= nil and link.url == nil then
        if part:sub(from, from) == "(" then
          link.url, from = {}, from + 1;
        else
          unlink(); -- "[text]" alone is text: the byte after is read as it is
        end
      elseif link ~= nil or angle ~= nil then
        -- a URL (of a link, or in <>) ends at its closing byte; a blank or a "<" first: no URL
        local close = link ~= nil and ")" or ">";
        local at = part:find(link ~= nil and "[)<%s]" or "[><%s]", from) or #part + 1;
        local held = link ~= nil and link.url or angle;
        if at > from then
          held[#held + 1] = part:sub(from, at - 1);
          heldBytes = heldBytes + at - from;
        end
        if at > #part then
          return;
        elseif part:sub(at, at) ~= close then
          if link ~= nil then
            unlink();
          else
            emitText("<" .. table.concat(angle));
            angle = nil;
            settle();
          end
          before, from = part:sub(at - 1, at - 1), at;
        elseif link ~= nil then
          emitLink();
          from = at + 1;
        else
          local text = table.concat(angle);
          angle = nil;
          emitText(isAutolink(text) and text or "<" .. text .. ">");
          settle();
          before, from = ">", at + 1;
        end
      else
        -- inside a code span only a backtick run can end it; elsewhere ` * _ \ [ ] < may begin marks
        local at = part:find(tick ~= nil and "`" or "[`*_\\%[%]<]", from) or #part + 1;
        if at > from then
          local plain = part:sub(from, at - 1);
          if tick ~= nil then
            spanHeld[#spanHeld + 1] = plain;
            heldBytes = heldBytes + #plain;
          else
            emitText(plain);
          end
          before = plain:sub(-1);
        end
        if at > #part then
          return;
        end
        local c = part:sub(at, at);
        from = at + 1;
        if c == "\\" then
          escaping = true;
        elseif c == "[" then
          frames[#frames + 1] = { mark = "[", parts = {} };
          before = c;
        elseif c == "]" then
          endLinkText();
          before = c;
        elseif c == "<" then
          angle = {};
        else
          runChar, runLength, from = c, 0, at;
        end
      end
    end
  end

  -- Adds a piece of the line's text; marks that hold more than MAX_HELD_LINE_BYTES are
  -- given as typed, so a hostile gateway's line that opens one and never ends is not held.
  local function add(part)
    addPiece(part);
    if heldBytes > MAX_HELD_LINE_BYTES then
      release();
    end
  end

  -- Ends the line: a mark still open was no mark, and shows as typed.
  local function lineEnd()
    if runChar ~= nil then
      endRun("");
    end
    if link ~= nil and link.url == nil then
      unlink();
    end
    before = "";
    release();
  end

  -- Forgets the line (an answer's end after out raised in the middle of it).
  local function reset()
    tick, spanHeld, frames, link, angle, escaping = nil, {}, {}, nil, nil, false;
    runChar, runLength, before, heldBytes = nil, 0, "", 0;
  end

  return { add = add, lineEnd = lineEnd, reset = reset };
end

-- A table (GitHub's Markdown): a line that begins with "|", its header, then its delimiter row
-- ("|---|:--:|"), then its body, the lines after that begin with "|". Its cells are split at
-- each "|" but an escaped one ("\|", a "|" in the cell), the "|" at the line's start and end
-- left out, and each is read for its inline marks as a prose line is (newInlineReader).

-- A cell's text without the blanks around it, in one pass ("^[ \t]*(.*[^ \t])" is
-- quadratic in a run of blanks).
local function trimmed(text)
  local first = text:find("[^ \t\r]");
  if first == nil then
    return "";
  end
  return text:match("^.*[^ \t\r]", first);
end

-- The cells of a table's line, as typed (their marks not read yet).
local function splitCells(line)
  local body = trimmed(line);
  if body:sub(1, 1) == "|" then
    body = body:sub(2);
  end
  if body:sub(-1) == "|" and body:sub(-2, -2) ~= "\\" then
    body = body:sub(1, -2);
  end
  -- one pass over the line, each "|" (or "\|") found once
  local cells, cell, from = {}, {}, 1;
  body:gsub("()(\\?)|", function(at, backslash)
    if backslash ~= "" then
      cell[#cell + 1] = body:sub(from, at - 1) .. "|"; -- an escaped one, the cell's
    else
      cell[#cell + 1] = body:sub(from, at - 1);
      cells[#cells + 1] = trimmed(table.concat(cell));
      cell = {};
    end
    from = at + #backslash + 1;
  end);
  cell[#cell + 1] = body:sub(from);
  cells[#cells + 1] = trimmed(table.concat(cell));
  return cells;
end

-- The most columns a table has; a header of more is prose. Each row is read as the header's
-- columns (the cells it lacks made empty), so a row costs its header's width: past a bound,
-- a wide header over rows of "|" would cost an answer its length squared (CC stops the
-- program: too long without yielding). A screen shows far fewer.
local MAX_TABLE_COLUMNS = 32;

-- The columns' alignments ("left", "right", "center" or false) when line is the delimiter row
-- of a header of `count` cells (each cell dashes, a colon at either end or both, at most
-- MAX_TABLE_COLUMNS), else nil.
local function delimiterRow(line, count)
  if count > MAX_TABLE_COLUMNS then
    return nil;
  end
  local cells = splitCells(line);
  if #cells ~= count then
    return nil;
  end
  local aligns = {};
  for i, cell in ipairs(cells) do
    local left, right = cell:match("^(:?)%-+(:?)$");
    if left == nil then
      return nil;
    end
    aligns[i] = left ~= "" and right ~= "" and "center" or right ~= "" and "right" or left ~= "" and "left" or false;
  end
  return aligns;
end

-- A cell's parts, its inline marks read: strings of text, and {text, typed} code spans.
local function cellParts(cell)
  local parts = {};
  local reader = newInlineReader({
    text = function(part) parts[#parts + 1] = part; end,
    inlineCode = function(code, typed) parts[#parts + 1] = { code, typed }; end,
  });
  reader.add(cell);
  reader.lineEnd();
  return parts;
end

-- The columns between two of a table laid out in columns: TABLE_GAP, or the narrower
-- MIN_TABLE_GAP where only that fits (the dashes under the header still tell the columns).
local TABLE_GAP = 2;
local MIN_TABLE_GAP = 1;
-- The columns in of the further rows of a "name: value" line whose name is longer than a row:
-- under the value, that name's own rest (a pocket computer's "computer: the") read as a cell
-- of its own.
local LONG_NAME_HANG = 2;

-- A table's rows as the player reads them on a screen `width` columns wide: the one rule for
-- an answer's table. header, and each of rows, is a list of cells; a cell, a list of pieces
-- {text, colour} as shown (colour is the caller's, handed back as it is); aligns, each
-- column's ("right", "center", else left). When every column fits, the rows are laid out in
-- columns TABLE_GAP apart (MIN_TABLE_GAP where only that fits), the header's underlined with
-- dashes:
--   side  what
--   ----  ---------
--   left  the door
-- Else each row shows as one line a cell, "name: value" (name: the header's cell, left out
-- when empty), a blank line between two rows, so a wide table reads on 26 columns too, its
-- further rows under the value, up to half the width in (LONG_NAME_HANG for a name longer
-- than a row):
--   side: left
--   what: the door
-- Returns the lines: {pieces = {{text, colour}, ...}, hang = the columns a wrapped row of the
-- line goes on at (nil: the margin)}; a line with no pieces is a blank one. No line ends in a
-- blank.
local function tableLines(header, rows, aligns, width)
  expect(1, header, "table");
  expect(2, rows, "table");
  expect(3, aligns, "table");
  expect(4, width, "number");
  local function widthOf(cell)
    local n = 0;
    for _, piece in ipairs(cell) do
      n = n + #piece[1];
    end
    return n;
  end
  local widths, total = {}, 0;
  for i = 1, #header do
    local w = math.max(1, widthOf(header[i]));
    for _, row in ipairs(rows) do
      w = math.max(w, widthOf(row[i] or {}));
    end
    widths[i] = w;
    total = total + w;
  end
  local gap = total + TABLE_GAP * (#header - 1) <= width and TABLE_GAP or MIN_TABLE_GAP;
  local lines = {};
  local function append(pieces, cell)
    for _, piece in ipairs(cell) do
      if piece[1] ~= "" then
        pieces[#pieces + 1] = piece;
      end
    end
  end
  if total + gap * (#header - 1) <= width then
    local function aligned(cells)
      local pieces, pending = {}, 0; -- pending: the blanks after the last cell, written only before the next
      for i, w in ipairs(widths) do
        local cell = cells[i] or {};
        local pad = w - widthOf(cell);
        local before = aligns[i] == "right" and pad or aligns[i] == "center" and math.floor(pad / 2) or 0;
        local blanks = pending + (i > 1 and gap or 0) + before;
        if widthOf(cell) > 0 then
          if blanks > 0 then
            pieces[#pieces + 1] = { (" "):rep(blanks) };
          end
          append(pieces, cell);
          pending = pad - before;
        else
          pending = blanks + pad - before;
        end
      end
      return { pieces = pieces };
    end
    lines[1] = aligned(header);
    local rule = {};
    for i, w in ipairs(widths) do
      rule[i] = ("-"):rep(w);
    end
    lines[2] = { pieces = { { table.concat(rule, (" "):rep(gap)) } } };
    for _, row in ipairs(rows) do
      lines[#lines + 1] = aligned(row);
    end
    return lines;
  end
  if #rows == 0 then
    for _, cell in ipairs(header) do
      local pieces = {};
      append(pieces, cell);
      lines[#lines + 1] = { pieces = pieces };
    end
    return lines;
  end
  for r, row in ipairs(rows) do
    if r > 1 then
      lines[#lines + 1] = { pieces = {} };
    end
    for i, name in ipairs(header) do
      local value, pieces, hang = row[i] or {}, {}, nil;
      if widthOf(name) > 0 then
        append(pieces, name);
        pieces[#pieces + 1] = { widthOf(value) > 0 and ": " or ":" };
        hang = widthOf(name) + 2 > width and LONG_NAME_HANG or math.min(widthOf(name) + 2, math.floor(width / 2));
      end
      append(pieces, value);
      lines[#lines + 1] = { pieces = pieces, hang = hang };
    end
  end
  return lines;
end

-- Reads an answer's text, given in pieces as it streams (add), and calls out for each line as
-- soon as its start tells what it is:
--   out.line(kind, indent, marker) begins a line of prose: kind "text", "item", "heading" or
--     "quote"; indent, the bytes of blanks before it; marker, what begins it with the blanks
--     after ("- ", "12. ", "## ", "" for text); out.text(part) then gives the rest of it as it
--     comes, and out.inlineCode(text, typed) each code span in it (newInlineReader: a span, and
--     **bold**, held until it closes), out.lineEnd() its end;
--   out.code(line) gives a line of code whole, as written (its indent kept, no line break);
--   out.blank() one blank line between two lines shown: a run of them is one, and none comes
--     before the first line or after the last;
--   out.table(header, rows, aligns, indent) gives a table whole, once its last row came
--     (indent: its header's blanks, in bytes, as out.line's): header and
--     each of rows a list of cells (as many as the header's), a cell a list of parts (strings,
--     and {text, typed} code spans, as out.inlineCode has them), aligns each column's
--     ("left", "right", "center" or false); tableLines lays it out. A line beginning with "|"
--     is held until the next tells whether it is a table's header; it is prose when not. A
--     program without out.table gets the table's lines as prose, as typed.
-- A fence's own lines are not given. finish() ends the answer (its last line given, a fence
-- left open closed), drop() without giving what it holds: what is added after begins anew. Each byte is looked at a bounded number
-- of times, so an answer costs its length (a 16 KiB answer in one-byte pieces too).
local function newAnswerReader(out)
  expect(1, out, "table");
  local lead, indent, columns = {}, 0, 0; -- the line's blanks so far: pieces, bytes, columns
  local rest = "";      -- what follows them while the line's kind is not known
  local kind = nil;     -- the line's: nil (not known yet), "prose", "code", "fence" (not shown), "blank"
  local what = nil;     -- a prose line's kind, as out.line was told
  local held = {};      -- a code line's pieces: code is given a line at a time
  local heldBytes = 0;  -- the code line's length, of which held keeps MAX_HELD_LINE_BYTES
  local fence = nil;    -- the open fence's marker, nil outside one
  local last = "start"; -- the kind of the line before, for where indented code may begin
  local inItem = false; -- after a list item, until text or a fence at the margin: its indented lines are its own
  local shown, blank = false, false;
  local inline = newInlineReader(out); -- a prose line's text, its inline marks read
  -- A line beginning with "|" held (whole, its blanks before it left out) until the next says
  -- whether it is a table's header; nil when there is none. headerIndent: its blanks, in bytes.
  local maybeHeader, headerIndent = nil, 0;
  -- The table being read: {header = its cells, aligns, indent = its header's, rows = the body's
  -- cells, lines = its lines as typed, bytes = their length}; nil outside one.
  local grid = nil;

  -- Adds to the code line held; bytes past MAX_HELD_LINE_BYTES are counted only.
  local function hold(part)
    local room = MAX_HELD_LINE_BYTES - heldBytes;
    if room > 0 then
      held[#held + 1] = #part > room and part:sub(1, room) or part;
    end
    heldBytes = heldBytes + #part;
  end

  local function show()
    if blank then
      out.blank();
    end
    shown, blank = true, false;
  end

  -- A line held as a table's, shown as the prose line it is after all.
  local function proseLine(line, lineIndent)
    show();
    out.line("text", lineIndent, "");
    inline.add(line);
    inline.lineEnd();
    out.lineEnd();
  end

  -- Gives the table read so far (to out.table, or as typed without it); keepHeader: the table
  -- goes on after (it held MAX_HELD_LINE_BYTES), its next rows read under the same header.
  local function giveTable(keepHeader)
    local ended = grid;
    grid = keepHeader and { header = ended.header, aligns = ended.aligns, indent = ended.indent, rows = {}, lines = {}, bytes = 0 } or nil;
    if out.table == nil then
      for _, line in ipairs(ended.lines) do
        proseLine(line, ended.indent);
      end
      return;
    end
    local function parts(cells)
      local row = {};
      for i = 1, #ended.header do
        row[i] = cellParts(cells[i] or "");
      end
      return row;
    end
    local rows = {};
    for i, cells in ipairs(ended.rows) do
      rows[i] = parts(cells);
    end
    show();
    out.table(parts(ended.header), rows, ended.aligns, ended.indent);
  end

  -- Ends the table, or the line held as a header, before any other line: the table is given,
  -- the held line shown as prose. Its state is reset before out hears of it (out may raise).
  local function endTable()
    if maybeHeader ~= nil then
      local line = maybeHeader;
      maybeHeader = nil;
      proseLine(line, headerIndent);
    elseif grid ~= nil then
      giveTable(false);
    end
  end

  -- A line that begins with "|", whole: a table's header (held until the next line says so),
  -- its delimiter row, or a row of its body.
  local function addRow(line, lineIndent)
    if grid ~= nil then
      if grid.bytes + #line > MAX_HELD_LINE_BYTES and #grid.rows > 0 then
        giveTable(true);
      end
      grid.rows[#grid.rows + 1] = splitCells(line);
      grid.lines[#grid.lines + 1] = line;
      grid.bytes = grid.bytes + #line;
    elseif maybeHeader ~= nil then
      local header = splitCells(maybeHeader);
      local aligns = delimiterRow(line, #header);
      if aligns ~= nil then
        grid = { header = header, aligns = aligns, indent = headerIndent, rows = {}, lines = { maybeHeader, line },
          bytes = #maybeHeader + #line };
        maybeHeader = nil;
      else
        endTable();
        maybeHeader, headerIndent = line, lineIndent;
      end
    else
      maybeHeader, headerIndent = line, lineIndent;
    end
  end

  -- Decides the line's kind from its start; false while more of it is needed (final: it ended).
  local function decide(final)
    if rest == "" then
      if final then
        endTable();
        kind = "blank";
      end
      return final;
    end
    if not inItem and columns >= CODE_INDENT and CODE_MAY_FOLLOW[last] then
      endTable();
      kind, held, heldBytes = "code", {}, 0;
      hold(table.concat(lead));
      heldBytes = indent; -- lead kept no more blanks than the line may hold
      hold(rest);
      return true;
    end
    local marked, marker = markerOf(rest, final);
    if marked == nil then
      return false;
    elseif marked == "row" then
      kind, held, heldBytes = "row", {}, 0;
      hold(rest);
      return true;
    end
    endTable();
    if marked == "fence" then
      -- at the margin it is no item's: the item ends, as a terminal's Markdown ends the list
      -- there (and the indented line after the fence is code, not the item's text)
      kind, fence = "fence", marker;
      if indent == 0 then
        inItem = false;
      end
      return true;
    end
    kind, what = "prose", marked;
    if marked == "item" then
      inItem = true;
    elseif indent == 0 then
      inItem = false;
    end
    show();
    out.line(marked, indent, marker);
    if #rest > #marker then
      inline.add(rest:sub(#marker + 1));
    end
    return true;
  end

  -- Adds part of the current line (no line break in it).
  local function addPart(part)
    if part == "" or kind == "fence" then
      return;
    elseif kind == "prose" then
      inline.add(part);
    elseif kind == "code" or kind == "row" then
      hold(part);
    elseif fence ~= nil then
      kind, held, heldBytes = "code", {}, 0; -- in a fence every line is code, its blanks too
      hold(part);
    else
      if rest == "" then
        local blanks = part:match("^[ \t\r]*"); -- a \r: of a \r\n line break, which shows nothing
        if #blanks > 0 then
          if indent < MAX_HELD_LINE_BYTES then
            lead[#lead + 1] = blanks:sub(1, MAX_HELD_LINE_BYTES - indent);
          end
          indent = indent + #blanks;
          columns = columns + #blanks + 3 * select(2, blanks:gsub("\t", ""));
          part = part:sub(#blanks + 1);
        end
        rest = part;
      else
        rest = rest .. part;
      end
      decide(false);
    end
  end

  -- Ends the current line. Its state is reset before out hears of it: out may raise (the
  -- player's Ctrl-T at a "Press any key"), and the answer's finish() must not give it again.
  local function endLine()
    if kind == nil then
      if fence ~= nil then
        kind, held, heldBytes = "code", {}, 0;
      else
        decide(true);
      end
    end
    local ended, line, lineIndent = kind, (kind == "code" or kind == "row") and table.concat(held) or nil, indent;
    if ended == "code" and heldBytes > MAX_HELD_LINE_BYTES then
      line = line .. "...(cut, " .. heldBytes .. " bytes)";
    end
    if ended ~= nil and ended ~= "fence" then
      last = ended == "prose" and what or ended;
    end
    lead, indent, columns, rest, kind, what, held, heldBytes = {}, 0, 0, "", nil, nil, {}, 0;
    if ended == "prose" then
      inline.lineEnd();
      out.lineEnd();
    elseif ended == "code" then
      local closing = fence ~= nil and line:match("^[ \t]*(" .. fence:sub(1, 1) .. "+)[ \t\r]*$");
      if closing and #closing >= #fence then
        fence = nil;
      else
        show();
        out.code(line);
      end
    elseif ended == "row" then
      addRow(line, lineIndent);
    elseif ended == "blank" then
      blank = shown;
    end
  end

  -- Adds a piece of the answer.
  local function add(piece)
    expect(1, piece, "string");
    local from = 1;
    while from <= #piece do
      local lineEnd = piece:find("\n", from, true);
      addPart(piece:sub(from, (lineEnd or #piece + 1) - 1));
      if lineEnd == nil then
        return;
      end
      endLine();
      from = lineEnd + 1;
    end
  end

  -- Forgets the answer's state: what is added next begins a new answer, outside any fence.
  local function forgetAnswer()
    fence, last, inItem, shown, blank = nil, "start", false, false, false;
    maybeHeader, grid = nil, nil;
    inline.reset();
  end

  local function finish()
    local ok, err = true, nil;
    if kind ~= nil or rest ~= "" or indent > 0 then
      -- out may raise (a Ctrl-T at the "Press any key" of the line it shows): the next
      -- answer still begins anew, outside any fence.
      ok, err = pcall(endLine);
    end
    if ok then
      ok, err = pcall(endTable); -- a table, or a line held as a header, the answer ends with
    end
    forgetAnswer();
    if not ok then
      error(err, 0);
    end
  end

  -- Ends the answer giving nothing more: what it holds back (a code line, the text of a mark
  -- not closed yet) is forgotten, as the player stopped reading it.
  local function drop()
    lead, indent, columns, rest, kind, what, held, heldBytes = {}, 0, 0, "", nil, nil, {}, 0;
    forgetAnswer();
  end

  return { add = add, finish = finish, drop = drop };
end

-- deps: request(type, payload) -> ok, payload, error (libsandbox.request, or a fake), and
-- optionally settings (sandbox.ai_confirm and the permissions the agent's changes are checked
-- against), fs (for that check), term (whose size and colour the agent is told) and kind
-- ("computer", "turtle" or "pocket"), and awaitReconnect() -> whether the daemon got the
-- gateway back (libsandbox.awaitReconnect): with it, a poll that finds the daemon disconnected
-- waits for it once and polls again, so the turn's own end is read (the gateway stopped it when
-- the socket went, or restarted and forgot it) rather than the lost socket.
local function newClient(deps)
  expect(1, deps, "table");
  field(deps, "request", "function");
  field(deps, "awaitReconnect", "function", "nil");
  field(deps, "settings", "table", "nil");
  field(deps, "fs", "table", "nil");
  field(deps, "term", "table", "nil");
  field(deps, "kind", "string", "nil");
  local request = deps.request;

  -- Asks the agent. Returns the turn's id, or nil and {code, message}.
  -- opts: session (default "main"), and screen/kind/colour to override what is sent;
  -- markdown, true when the caller lays out the answer's Markdown as ai does (newAnswerReader:
  -- the agent is then told to give code in fences; otherwise plain text); what the owner
  -- allows (allowed, confirm) is always this computer's settings.
  local function ask(prompt, opts)
    expect(1, prompt, "string");
    expect(2, opts, "table", "nil");
    opts = opts or {};
    checkSession(2, opts.session);
    if prompt:match("^%s*$") then
      return nil, { code = codec.ERR_BAD_PAYLOAD, message = "The question is empty" };
    elseif #prompt > MAX_PROMPT_BYTES then
      return nil, { code = codec.ERR_BAD_PAYLOAD, message = "The question is " .. #prompt
        .. " bytes, over " .. MAX_PROMPT_BYTES .. ": shorten it" };
    end
    local screenTerm = deps.term or term;
    local payload = { prompt = prompt, session = opts.session or DEFAULT_SESSION };
    payload.kind = opts.kind or deps.kind or computerKind();
    if opts.screen ~= nil then
      payload.screen = opts.screen;
    elseif screenTerm ~= nil then
      local width, height = screenTerm.getSize();
      payload.screen = { width = width, height = height };
    end
    if opts.markdown then
      payload.markdown = true;
    end
    if opts.colour ~= nil then
      payload.colour = opts.colour == true;
    elseif screenTerm ~= nil then
      payload.colour = screenTerm.isColour() == true;
    end
    -- What the owner allows now, so the agent plans by it (a write at allow_files read is
    -- shown to the player, not tried and refused): computer.info's reading, and whether each
    -- change is put to the player. Read at every question: a change between two counts.
    local settingsApi = deps.settings or settings;
    payload.allowed = requests.allowed(settingsApi);
    payload.confirm = config.aiConfirm(settingsApi);
    local ok, reply, err = request(TYPE_ASK, payload);
    if not ok then
      return nil, err;
    elseif type(reply.turnId) ~= "string" then
      return nil, { code = codec.ERR_INTERNAL, message = "The gateway's answer to ai.ask has no turnId" };
    end
    return reply.turnId;
  end

  -- Waits (up to waitMs at the gateway, default 5000) for the turn's events after seq `after`.
  -- Returns the events (a list, in order) and whether the turn is done, or nil and an error.
  local function poll(turnId, after, waitMs)
    expect(1, turnId, "string");
    expect(2, after, "number", "nil");
    expect(3, waitMs, "number", "nil");
    local ok, reply, err = request(TYPE_POLL, { turnId = turnId, after = after or 0, waitMs = waitMs or POLL_WAIT_MS });
    if not ok then
      return nil, err;
    end
    local list = {};
    if type(reply.events) == "table" then
      for _, event in ipairs(reply.events) do
        if type(event) == "table" and type(event.seq) == "number" and type(event.kind) == "string" then
          -- A size is a count of bytes: any other number ("-1 bytes", "inf bytes") says none.
          if type(event.bytes) == "number" and not (event.bytes >= 0 and event.bytes < MAX_BYTES_SAID
              and event.bytes == math.floor(event.bytes)) then
            event.bytes = nil;
          end
          list[#list + 1] = event;
        end
      end
    end
    return list, reply.done == true;
  end

  -- The single requests that answer {}: true, or false and the error.
  local function simple(msgType, payload, timeoutSeconds)
    local ok, _, err = request(msgType, payload, timeoutSeconds);
    if not ok then
      return false, err;
    end
    return true;
  end

  -- Stops the turn; its stream ends with done/aborted. timeoutSeconds: the request's (default
  -- libsandbox.REQUEST_TIMEOUT).
  local function abort(turnId, timeoutSeconds)
    expect(1, turnId, "string");
    expect(2, timeoutSeconds, "number", "nil");
    return simple(TYPE_ABORT, { turnId = turnId }, timeoutSeconds);
  end

  -- Whether the gateway has an agent to ask, learnt before a conversation's prompt: true, or
  -- false and the error when the gateway says it has none (ai_disabled: it runs with the
  -- agent off; unknown_type: it is older than the agent) or the daemon has no gateway now
  -- (not_connected, as a question would fail at once). It asks for a turn that cannot
  -- exist: an agent that is off answers every ai.* request ai_disabled, one that is on answers
  -- unknown_turn, touching nothing (docs/protocol.md). Any other failure (no answer in time)
  -- is true: the first question says it.
  local function available()
    local ok, _, err = request(TYPE_POLL, { turnId = "", after = 0, waitMs = 0 });
    if not ok and type(err) == "table" and (err.code == ERR_AI_DISABLED or err.code == codec.ERR_UNKNOWN_TYPE
        or err.code == codec.ERR_NOT_CONNECTED) then
      return false, err;
    end
    return true;
  end

  -- Makes the session's next question start a new conversation (busy while a turn runs).
  local function reset(session)
    checkSession(1, session);
    return simple(TYPE_RESET, { session = session or DEFAULT_SESSION });
  end

  -- Answers a confirm event. reason: why this computer refuses it without asking (its
  -- settings), which the agent reads.
  local function approve(turnId, confirmId, allow, reason)
    expect(1, turnId, "string");
    expect(2, confirmId, "string");
    expect(3, allow, "boolean");
    expect(4, reason, "string", "nil");
    return simple(TYPE_APPROVE, { turnId = turnId, confirmId = confirmId, allow = allow, reason = reason });
  end

  -- Why this computer's settings would refuse the request a confirm event announces, or nil:
  -- the daemon's own check (libsandboxrequests.refusal), so the player is asked only what the
  -- owner allows. An event without its request (an older gateway) is left to the player.
  local function refusalOf(event)
    local req = event.request;
    if type(req) ~= "table" or type(req.type) ~= "string" then
      return nil;
    end
    local payload = {};
    if type(req.payload) == "table" then
      for k, v in pairs(req.payload) do
        if type(k) == "string" and type(v) == "string" then
          payload[k] = v;
        end
      end
    end
    return requests.refusal(deps.settings or settings, deps.fs or fs, req.type, payload);
  end

  -- Whether to allow a confirm: by itself when the owner turned sandbox.ai_confirm off, else
  -- the program's callback decides (none: deny, so an unattended program changes nothing).
  local function decide(event, confirm)
    if not config.aiConfirm(deps.settings) then
      return true, false;
    elseif confirm == nil then
      return false, false;
    end
    return confirm(event) == true, true;
  end

  -- Whether a poll's events end the turn: they hold its done event (the gateway says done
  -- with it).
  local function endsTurn(list, done)
    if done == true then
      return true;
    end
    for _, event in ipairs(list) do
      if event.kind == KIND_DONE then
        return true;
      end
    end
    return false;
  end

  -- Follows the turn until its done event. Returns {turnId, reason, error?, cut?} or nil and
  -- {code, message} (the poll failed). state.after is the last event's seq handed on;
  -- state.ended is set once the done event came, before the events it came with are handed
  -- on (the player may still be paging them).
  local function follow(turnId, opts, state)
    local after, failures, waitMs = 0, 0, POLL_WAIT_MS;
    local reconnected = false; -- waited for the daemon since the last poll that got through
    local result = { turnId = turnId };
    -- The last confirm whose answer reached no gateway that held the turn, until a poll brings
    -- more of it: a turn that fails then ends without the change it asked for (notMade).
    local unanswered = nil;
    local function failed(err)
      local copy = {};
      for key, value in pairs(err) do
        copy[key] = value;
      end
      copy.notMade = unanswered;
      return copy;
    end
    while true do
      if after > 0 and opts.onWait ~= nil then
        opts.onWait();
      end
      local list, errOrDone = poll(turnId, after, waitMs);
      if list == nil then
        if reconnected and (errOrDone.code == codec.ERR_NOT_CONNECTED or errOrDone.code == codec.ERR_TIMEOUT) then
          -- A poll after the reconnect only reads how the turn ended, which the gateway
          -- answers at once (it ended the turn with the first socket, or restarted and forgot
          -- it). One that does not get through (the gateway got back broke too: it took the
          -- hello and died, or restarted twice; or it does not answer) is the same lost answer,
          -- not a new wait: polling on waited some 70 s for an end that changes nothing.
          return nil, failed({ code = errOrDone.code, message = errOrDone.message, answerLost = true });
        elseif errOrDone.code == codec.ERR_NOT_CONNECTED and deps.awaitReconnect ~= nil then
          reconnected = true;
          if opts.onReconnect ~= nil then
            opts.onReconnect();
          end
          if not deps.awaitReconnect() then
            -- The gateway ends a turn with the socket that asked it: a later connection does
            -- not bring the rest of the answer back.
            return nil, failed({ code = errOrDone.code, message = errOrDone.message, answerLost = true });
          end
        elseif errOrDone.code ~= codec.ERR_TIMEOUT then
          return nil, failed(errOrDone);
        elseif waitMs > MIN_POLL_WAIT_MS then
          waitMs = math.max(MIN_POLL_WAIT_MS, math.floor(waitMs / 2));
        else
          failures = failures + 1;
          if failures >= MAX_POLL_FAILURES then
            return nil, failed(errOrDone);
          end
        end
      else
        failures, reconnected = 0, false;
        if #list > 0 then
          unanswered = nil;
        end
        if not state.ended and endsTurn(list, errOrDone) then
          state.ended = true;
          if opts.onEnded ~= nil then
            opts.onEnded();
          end
        end
        for _, event in ipairs(list) do
          if event.seq > after then
            after = event.seq;
            state.after = after;
            if event.kind == KIND_CONFIRM and type(event.confirmId) == "string" then
              -- A failed answer needs no handling: the gateway rejects on its own after its
              -- wait, and the stream says what happened.
              local why = refusalOf(event);
              if why ~= nil then
                event.allowed, event.asked, event.refused = false, false, why;
                approve(turnId, event.confirmId, false, why);
              else
                local allow, asked = decide(event, opts.confirm);
                event.allowed, event.asked = allow, asked;
                local sent, approveErr = approve(turnId, event.confirmId, allow);
                -- Sent to no gateway (the daemon had none: it was restarting), or refused by
                -- one that does not know the turn (restarted) or no longer waits for this
                -- answer: the gateway went on without the change.
                if not sent and type(approveErr) == "table" and (approveErr.code == codec.ERR_NOT_CONNECTED
                    or approveErr.code == ERR_UNKNOWN_TURN) then
                  unanswered = event;
                end
              end
            elseif event.kind == KIND_ERROR then
              result.error = { code = event.code, message = event.message };
            elseif event.kind == KIND_CUT then
              result.cut = true;
            end
            if opts.onEvent ~= nil then
              opts.onEvent(event);
            end
            if event.kind == KIND_DONE then
              result.reason = event.reason;
              return result;
            end
          end
        end
        if errOrDone == true and result.reason == nil then
          -- done without its event: should not happen; end rather than poll forever.
          result.reason = DONE_STOP;
          return result;
        end
      end
    end
  end

  -- Whether the turn has ended on the gateway, its done event among those after seq `after`
  -- (one look, not waited for): a turn whose events are all in but not all read (the player
  -- pages the first, the program polls no more meanwhile) needs no abort. A turn the gateway
  -- no longer knows (it forgets one 2 min after its end) has ended too. Any other failure (a
  -- second Ctrl-T, no answer within ABORT_TIMEOUT) is false: the abort is sent as before.
  local function endedMeanwhile(turnId, after)
    local ok, sent, reply, err = pcall(request, TYPE_POLL, { turnId = turnId, after = after, waitMs = 0 }, ABORT_TIMEOUT);
    if ok and not sent and type(err) == "table" and err.code == ERR_UNKNOWN_TURN then
      return true;
    elseif not ok or not sent or type(reply) ~= "table" then
      return false;
    end
    local list = type(reply.events) == "table" and reply.events or {};
    local events = {};
    for _, event in ipairs(list) do
      if type(event) == "table" then
        events[#events + 1] = event;
      end
    end
    return endsTurn(events, reply.done);
  end

  -- Asks and follows the answer to its end, calling opts.onEvent(event) for every event in
  -- order. A confirm event is answered before onEvent sees it (event.allowed, event.asked):
  -- a change this computer's settings refuse is refused at once, with why (event.refused),
  -- and nobody is asked; otherwise opts.confirm(event) returning true allows it; without it
  -- the change is denied; with sandbox.ai_confirm false it is allowed without asking. opts.session, screen, kind,
  -- colour and markdown are ask()'s; opts.onStart(turnId) runs once the gateway took the question, and
  -- opts.onWait() each time run() is about to wait for more (show what you held back), and
  -- opts.onReconnect() when it waits for the daemon to get back the gateway it lost (with
  -- deps.awaitReconnect), and opts.onEnded() once run learns that the turn has ended on the
  -- gateway: its done event came (called before the events it came with are handed on), or
  -- a look at a terminate found it. Terminate (Ctrl-T) aborts the turn, unless it has ended
  -- (an answer all in, still paged in onEvent: there is nothing to stop), then raises
  -- "Terminated" as os.pullEvent does. Returns {turnId, reason, error?, cut?}, or nil and
  -- {code, message, answerLost?, notMade?}: answerLost when the daemon did not get the gateway
  -- back in its wait, or a poll after it did not get through (not_connected, timeout), so the
  -- turn has ended on the gateway unfinished; notMade, the confirm event whose answer reached
  -- no gateway that held the turn (not connected, or unknown_turn: it restarted), when nothing
  -- of the turn came after it: the change it asked for was not made.
  local function run(prompt, opts)
    expect(1, prompt, "string");
    expect(2, opts, "table", "nil");
    opts = opts or {};
    field(opts, "onEvent", "function", "nil");
    field(opts, "confirm", "function", "nil");
    field(opts, "onStart", "function", "nil");
    field(opts, "onWait", "function", "nil");
    field(opts, "onReconnect", "function", "nil");
    field(opts, "onEnded", "function", "nil");
    checkSession(2, opts.session);
    local turnId, err = ask(prompt, opts);
    if turnId == nil then
      return nil, err;
    end
    if opts.onStart ~= nil then
      opts.onStart(turnId);
    end
    local state = { ended = false, after = 0 };
    local outcome = table.pack(pcall(follow, turnId, opts, state));
    if not outcome[1] then
      if outcome[2] == TERMINATED and not state.ended then
        if endedMeanwhile(turnId, state.after) then
          state.ended = true;
          if opts.onEnded ~= nil then
            opts.onEnded();
          end
        else
          abort(turnId, ABORT_TIMEOUT);
        end
      end
      error(outcome[2], 0);
    end
    return outcome[2], outcome[3];
  end

  return {
    available = available,
    ask = ask,
    poll = poll,
    abort = abort,
    reset = reset,
    approve = approve,
    run = run,
  };
end

return {
  TYPE_ASK = TYPE_ASK,
  TYPE_POLL = TYPE_POLL,
  TYPE_ABORT = TYPE_ABORT,
  TYPE_RESET = TYPE_RESET,
  TYPE_APPROVE = TYPE_APPROVE,
  KIND_TEXT = KIND_TEXT,
  KIND_TOOL = KIND_TOOL,
  KIND_CONFIRM = KIND_CONFIRM,
  KIND_STARTING = KIND_STARTING,
  KIND_RETRY = KIND_RETRY,
  KIND_CUT = KIND_CUT,
  KIND_ERROR = KIND_ERROR,
  KIND_DONE = KIND_DONE,
  DONE_STOP = DONE_STOP,
  DONE_ABORTED = DONE_ABORTED,
  DONE_ERROR = DONE_ERROR,
  DONE_DEADLINE = DONE_DEADLINE,
  DONE_DISCONNECTED = DONE_DISCONNECTED,
  ERR_AI_DISABLED = ERR_AI_DISABLED,
  ERR_AI_UNAVAILABLE = ERR_AI_UNAVAILABLE,
  ERR_UNKNOWN_TURN = ERR_UNKNOWN_TURN,
  ERR_BUSY = ERR_BUSY,
  DEFAULT_SESSION = DEFAULT_SESSION,
  MAX_PROMPT_BYTES = MAX_PROMPT_BYTES,
  MAX_HELD_LINE_BYTES = MAX_HELD_LINE_BYTES,
  POLL_WAIT_MS = POLL_WAIT_MS,
  MIN_POLL_WAIT_MS = MIN_POLL_WAIT_MS,
  MAX_POLL_FAILURES = MAX_POLL_FAILURES,
  ABORT_TIMEOUT = ABORT_TIMEOUT,
  newClient = newClient,
  noAgentLine = noAgentLine,
  lineChanges = lineChanges,
  newAnswerReader = newAnswerReader,
  tableLines = tableLines,
  MAX_TABLE_COLUMNS = MAX_TABLE_COLUMNS,
};
