-- ai: ask the gateway's agent from this computer (docs/ai.md). `ai <question>` prints the answer
-- as it streams, word-wrapped and paged, its Markdown laid out (lists, code, headings, blank
-- lines: libsandboxai.newAnswerReader); `ai` alone holds a conversation (the agent keeps its
-- history) until `exit` or Ctrl-T; `ai --reset` starts the conversation anew. Each change the
-- agent wants to make here is put to the player first unless the owner set sandbox.ai_confirm
-- false. The requests go through the sandbox daemon (libsandboxai); nothing here holds a
-- credential. User errors are one red line naming the fix, never a traceback.

-- libsandbox's own requires load every library of the client. One missing (this program
-- copied alone to another computer, or a file of the client deleted) stopped require with CC's
-- traceback: the player reads the sandbox command's one line, the file and the install line.
local loaded, libsandbox = pcall(require, '/apis/libsandbox');
if not loaded then
  -- The line from sandbox.url (libsandboxsettings), unless that library is the one missing.
  local function installLine()
    local found, settingsLib = pcall(require, '/apis/libsandboxsettings');
    return found and settingsLib.installLine() or "wget run .../trapos/install, as its operator gives it out";
  end
  local missing = tostring(libsandbox):match("module '(/apis/[^']+)' not found");
  error(missing == nil and libsandbox or ("ai: " .. missing .. ".lua is missing: the trapos-sandbox client is "
    .. "not whole on this computer. Install it with the gateway's install line (" .. installLine() .. ")."), 0);
end
local advice = require('/apis/libsandboxadvice');
local VERSION = require('/apis/libsandboxversion').VERSION;
local newAnswerReader = require('/apis/libsandboxai').newAnswerReader;
local tableLines = require('/apis/libsandboxai').tableLines;
-- The gateway's words outside the answer itself (a refusal, a turn's error, a tool's line, the
-- change a confirm asks for) are one line, as the sandbox command shows them: a broken or
-- hostile gateway may send many lines, fake ones among them, or 128 KiB.
local oneLine = require('/apis/libsandboxcodec').oneLine;
-- Asked once before a conversation's prompt: whether the agent can answer (ai alone).
local TYPE_PROBE_GATEWAY = require('/apis/libsandboxcodec').TYPE_PROBE_GATEWAY;
-- Seconds that probe is waited for before the prompt opens anyway: a gateway answers it at
-- once, but one whose opencode has just started waits on it (played: 5 s, the screen blank
-- under `ai`), and the first question then says what is wrong, as before.
local PROBE_WAIT = 2;
-- The most bytes of such a line within a turn, where the pager shows it: a provider's failure
-- may well pass the 256 bytes a refusal keeps (MAX_SHOWN_BYTES), and is read whole up to here.
local MAX_EVENT_LINE_BYTES = 1024;

-- The gateway's text as one line of a turn: a string or a number; anything else (a field
-- missing, or of another type from a broken or hostile gateway) is fallback, "" by default,
-- never Lua's "nil" or "table: 3b44…", which a player read as the gateway's words.
local function eventLine(value, fallback)
  if type(value) ~= "string" and type(value) ~= "number" then
    return fallback or "";
  end
  return oneLine(tostring(value), MAX_EVENT_LINE_BYTES);
end

-- A text event's part of the answer: a string (or a number) as it came, anything else none.
local function eventText(value)
  if type(value) == "number" then
    return tostring(value);
  end
  return type(value) == "string" and value or "";
end

-- The mark before a tool line (the issue's gear is not in CC's font; a plain * reads the same
-- on every terminal and in a transcript).
local TOOL_MARK = "*";
local THINKING = "Thinking... (Q stops)";
-- Instead of it while opencode loads this computer for its first question since opencode
-- started (a starting event: 8 to 17 s, which read as a hang); the short one where the long
-- one does not fit (a pocket computer's 26 columns, a turtle's 39).
local STARTING = "Starting the agent for this computer... (Q stops)";
local STARTING_SHORT = "Starting up... (Q stops)";
-- While the daemon gets back a gateway it lost mid-answer (libsandbox.awaitReconnect: 16 s, or
-- up to the daemon's own next try): the screen stood still meanwhile, as if the computer hung. Both notices fit a pocket computer's 26 columns.
local RECONNECTING = "Reconnecting... (Q stops)";
-- After the line saying why the daemon did not get the gateway back in that wait.
local MSG_ANSWER_LOST = "The answer is lost: ask again once reconnected";
local MORE = "Press any key to continue";
-- Queued behind the key that turned a page: the pager takes what CC queued with the key (its
-- char) off the queue up to it.
local PAGE_TURNED = "sandbox_ai_page_turned";
-- Starts each further row of a code line too long for one (a run's code, a write's content or
-- changed lines), after the line's own indent, so nested code keeps its shape where it wraps
-- (on a pocket computer its continuation rows read as flat code at column 1).
local CONTINUED = ">";
-- The colours, on an advanced computer, of an answer's headings and of its code (whose fences
-- are not shown: the colour sets it apart from the text around it).
local HEADING_COLOUR = "yellow";
local ANSWER_CODE_COLOUR = "lightBlue";
local PROMPT = "ai> ";
local EXIT_WORD = "exit";
-- The lines that leave as exit does, lower-cased: CC's lua prompt, which the conversation is
-- like, leaves on exit(), and a word in capitals or quit went to the agent as a question,
-- which it answered by telling the player to type exit.
local EXIT_LINES = { exit = true, ["exit()"] = true, quit = true, ["quit()"] = true };
-- The answers to a confirm that allow the change; anything else (Enter too) denies it.
local YES = { y = true, yes = true };
-- Seconds a confirm's question waits for the player: a second past the gateway's 60 s, after
-- which it has refused the change by itself and the agent's turn goes on (the tool's line says
-- so), so the question does not stay on the screen as if it still counted.
local CONFIRM_WAIT = 61;
-- The most bytes of what a write puts here (a new file's content, the lines it changes of one
-- there) the player is shown before its question: what can be paged and read within the
-- gateway's 60 s, as much as it shows of a run's code (longer, it refuses the run). A longer
-- write is still put to the player, its question saying it was not shown and how long it is.
local MAX_SHOWN_WRITE_BYTES = 4096;
-- Lines the same shown before and after each line a write changes.
local CHANGE_CONTEXT = 2;
-- After a line a write changes that has no line break (the file's last).
local NO_LINE_BREAK = "  (no line break)";
-- The biggest file there a write is compared with (read whole, then compared line by line); a
-- bigger one is shown as replaced.
local MAX_COMPARED_BYTES = 64 * 1024;
-- The most content a gateway sends with a write (docs/protocol.md's confirm row: one file
-- chunk); more, from a gateway that is not ours, is not read: a 1 MiB one compared with a file
-- there ran too long without yielding, and CC stopped ai.
local MAX_SENT_CONTENT_BYTES = 16 * 1024;

local MSG_URL_NOT_SET = "sandbox.url is not set. Run: sandbox setup";
local MSG_ABORTED = "Aborted: the turn was stopped (Ctrl-T).";
-- Ctrl-T while an answer all received is still paged: the turn had ended, nothing was stopped.
local MSG_NOT_SHOWN = "The rest of the answer was not shown (Ctrl-T).";
local MSG_STOPPED = "Stopped: the turn was aborted (Q).";
-- Each line fits a pocket computer's 26 columns (usage's rule).
local MSG_EMPTY_QUESTION = "ai: the question is empty.\nRun: ai <question>\nor: ai (a conversation)";
-- TrapOS's old ai kept opencode's password on the computer under this prefix (docs/ai.md).
local OLD_SETTINGS_PREFIX = "opencc.";

-- Every line fits a pocket computer's 26 columns (at most 25, so none wraps), and the whole,
-- with the command typed and the next prompt, a turtle's 13 rows.
local function usage()
  print("Usage: ai <question>");
  print("       ai");
  print("  a conversation: exit or");
  print("  Ctrl-T leaves");
  print("       ai --reset");
  print("  forget the conversation");
  print("       ai --version");
  print("Setting:");
  print("  sandbox.ai_confirm");
  print("  (true: ask before");
  print("  changes)");
end

local function colourOf(name)
  return (colours or colors or {})[name];
end

-- The screen the answer goes to: words wrapped at the width, and a "Press any key" pause
-- once a screenful has scrolled past since the player last looked (as CC's pagers do).
local function newScreen(t)
  local width, height = t.getSize();
  local col = select(1, t.getCursorPos());
  -- Whether the current line holds nothing but spaces (an indent) since it began: a word that
  -- does not fit after an indent is cut there, not moved to a line of its own, which would
  -- show code put to the player with a blank line and without its indent.
  local indentOnly = col == 1;
  -- The word being received, in the pieces it came in, written once it is whole: joined
  -- once, not a byte at a time (a run of 100 KB without a space, a base64 blob, would cost
  -- CC seconds of copying and end the program with "Too long without yielding").
  local word = {};
  -- The colour of each of its pieces (a name; nil: the line's own): inline code of the answer
  -- is a word's, or part of one ("`door`." is one word, which wraps whole).
  local wordColours = {};
  local wordFrom = 1;    -- its first byte not written yet (a pause may stop it half written)
  -- Lines moved on since the player last read the screen: newline counts them, and readTo
  -- alone sets where the count starts. The line they typed (the shell's command line that
  -- started ai, later a question at ai>) is the row above the cursor, and counts as one
  -- already shown: the first page stops while it is still on the screen (it stopped a row
  -- later, that line scrolled off, and the player no longer saw their question).
  local scrolled;
  local status = false;  -- the notice (Thinking...) that stands on the current line, or false
  -- Whether the pager or a question reads the keys now: true while it waits, "ending" from the
  -- key that ended a question until the stop-key watcher has seen that same key (see
  -- keysTaken; the pager's key it sees while the pager still waits, for the key's char).
  local inputting = false;
  -- The columns the current line's further rows start at: under code (codeLine), its own
  -- indent, then hangMark (CONTINUED); under a list item of the answer, its text's first; nil
  -- for text that goes on at the margin.
  local hang = nil;
  local hangMark = nil;
  -- Blanks after the last word written, put before the next on its row: blanks that end a row
  -- or a line show nothing, and took a row of their own where they passed the screen's edge.
  local spaces = 0;
  -- The first part of a word shown before a wait (flushWord(true)), while its rest may still
  -- come: {x, y, length, pieces, colours, whole = it is on one row}, nil once a blank or a
  -- line break came after it; x + length is the column after it, where the rest goes on.
  -- The rest, when it does not fit the row, takes the whole word to the next row, as had it
  -- come in one piece (the first part is written over with blanks): an answer streams a word
  -- in tokens, often across two polls, and "stand-in m" / "odel." broke it at the edge.
  -- A URL longer than a row (flushWord lays it out before its separators) is shown so far as
  -- {url = true, from = the column its first row began at, rows = its rows shown, x, y, length
  -- = its last row's, pieces, colours}: its rest lays the whole URL out again from there, and
  -- rewrites only its last row, as the rows before it come out the same.
  local shownPart = nil;
  local rowsMoved = 0; -- rows moved on since the screen began: a word shown on one row moved none

  -- The player has just read the screen (a key turned the page, or they typed a line): the
  -- next page stops once a screenful less one has scrolled past, `rows` of it the rows above
  -- the cursor that stay in view: what they typed, with the question it answers. At most a
  -- screenful less two, so a page shows at least a row of what comes next before it stops.
  local function readTo(rows)
    scrolled = math.max(0, math.min(rows, height - 2));
  end
  readTo(1); -- the command line that started ai

  local function setColour(name)
    if name ~= nil and t.isColour() and colourOf(name) ~= nil then
      t.setTextColour(colourOf(name));
    end
  end

  -- Takes a notice (Thinking..., Press any key) off the current row by writing spaces over
  -- it, as a transcript that records writes then reads the row as the screen shows it.
  local function erase(notice)
    local _, y = t.getCursorPos();
    t.setCursorPos(1, y);
    t.write(string.rep(" ", #notice));
    t.setCursorPos(1, y);
  end

  -- Set by a Ctrl-T at a "Press any key": the player stopped reading, so the answer's end
  -- (finish) shows nothing more of what was held back (the word the pause came before, a
  -- code line, a mark's text).
  local stoppedReading = false;

  -- Waits for the key that turns the page. A Ctrl press is none, nor a key pressed while Ctrl
  -- is down: CC sends the Ctrl press of a Ctrl-T held to stop reading as a key before the
  -- hold's terminate (CraftOS-PC and fakecraft the T too), and it turned the page: the next
  -- screenful showed, and in a conversation the terminate then left ai at its prompt.
  -- The key's char, which CC queues right behind a printable key, goes with it: left in the
  -- queue it was typed into what read next, the shell's prompt, the ai> question, or the
  -- answer to Allow? [y/N], where a y that turned a write's last page stood as the answer.
  local function pageKey()
    local ctrlDown = false;
    while true do
      local event, key = os.pullEvent();
      if (event == "key" or event == "key_up") and (key == keys.leftCtrl or key == keys.rightCtrl) then
        ctrlDown = event == "key";
      elseif event == "key" and not ctrlDown then
        os.queueEvent(PAGE_TURNED);
        os.pullEvent(PAGE_TURNED);
        return;
      end
    end
  end

  -- The cursor blinks while it waits, as read() does: the player is to act (and fakecraft,
  -- which types its next line when a blink starts, can drive the pager).
  -- A Ctrl-T while it waits takes the notice away too, before the turn's abort line.
  local function pause()
    t.write(MORE);
    t.setCursorBlink(true);
    inputting = true;
    local ok, err = pcall(pageKey);
    -- Not "ending": the stop-key watcher saw the page's key already, while pageKey took its
    -- char off the queue, and would take the player's next key (a Q) for the page's.
    inputting = false;
    t.setCursorBlink(false);
    erase(MORE);
    readTo(0);
    if not ok then
      if err == "Terminated" then
        stoppedReading = true;
      end
      error(err, 0);
    end
  end

  -- Called before anything is written: takes "Thinking..." away, pauses when due.
  local function beforeWrite()
    if status then
      erase(status);
      col, status, indentOnly = 1, false, true;
    end
    if scrolled >= height - 1 then
      pause();
    end
  end

  local function newline()
    local _, y = t.getCursorPos();
    if y >= height then
      t.scroll(1);
      t.setCursorPos(1, height);
    else
      t.setCursorPos(1, y + 1);
    end
    col, indentOnly = 1, true;
    scrolled = scrolled + 1;
    rowsMoved = rowsMoved + 1;
    shownPart = nil;
  end

  local function put(text)
    beforeWrite();
    t.write(text);
    col = col + #text;
    indentOnly = indentOnly and not text:find("[^ ]");
  end

  -- Moves on to the next row within a line, at its hang. Under code, the row starts at the
  -- line's own indent with CONTINUED (light grey where there is colour), taken as an indent: a
  -- word too long for the rest of the row is cut there, not moved on again.
  local function wrap()
    newline();
    spaces = 0;
    if hang ~= nil then
      put((" "):rep(hang));
    end
    if hangMark ~= nil then
      local before = t.getTextColour();
      setColour("lightGrey");
      put(hangMark);
      t.setTextColour(before);
      indentOnly = true;
    end
  end

  -- Puts the blanks held before a word, as many as the row has room for.
  local function putSpaces()
    local room = math.min(spaces, width - col + 1);
    if room > 0 then
      put((" "):rep(room));
    end
    spaces = 0;
  end

  -- The word's colour runs, {last byte, colour} in order, from its pieces' colours.
  local function colourRuns()
    local runs, at = {}, 0;
    for i, piece in ipairs(word) do
      at = at + #piece;
      local colour = wordColours[i];
      if #runs > 0 and runs[#runs][2] == colour then
        runs[#runs][1] = at;
      else
        runs[#runs + 1] = { at, colour };
      end
    end
    return runs;
  end

  -- Whether a word of these pieces is laid out as a URL (flushWord): longer than a row's
  -- text, with a "://" (the pieces are joined only when long enough to be one).
  local function isLongURL(pieces, length)
    return hangMark == nil and length > width - (hang or 0) and table.concat(pieces):find("://", 1, true) ~= nil;
  end

  -- Joins the rest of a word to its first part shown before a wait (shownPart), as one word:
  -- returns true and that part when the rest goes on where it ends (it fits the row, or the
  -- first part began its row, where the whole word would be cut at the width too); otherwise
  -- the first part (a URL's: its last row) is written over with blanks and put back before
  -- the rest, to be written whole (on the next row; a URL from where it began, returned third).
  local function joinShownPart()
    local shown = shownPart;
    shownPart = nil;
    local _, y = t.getCursorPos();
    if shown == nil or wordFrom ~= 1 or y ~= shown.y or col ~= shown.x + shown.length then
      return false, nil;
    elseif not shown.whole and not shown.url then
      return true, shown; -- longer than a row, cut at the width: the rest is cut on from here
    end
    local rest = 0;
    for _, piece in ipairs(word) do
      rest = rest + #piece;
    end
    local pieces, colours, n = {}, {}, #shown.pieces;
    for i = 1, n do
      pieces[i], colours[i] = shown.pieces[i], shown.colours[i];
    end
    for i = 1, #word do
      pieces[n + i], colours[n + i] = word[i], wordColours[i];
    end
    -- a URL is laid out whole again, also where its first part began the row: cut at the
    -- width from there, it broke where its whole did not
    if not shown.url and (col - 1 + rest <= width or shown.x <= (hang or 0) + 1 or hangMark ~= nil)
        and not isLongURL(pieces, shown.length + rest) then
      return true, shown;
    end
    t.setCursorPos(shown.x, y);
    t.write((" "):rep(shown.length));
    t.setCursorPos(shown.x, y);
    col = shown.x;
    word, wordColours = pieces, colours;
    return false, nil, shown.url and shown or nil;
  end

  -- Writes the whole word: on the next line when it does not fit on this one, cut at the
  -- width when it is longer than a line; a URL longer than a line breaks before its "/" or
  -- ":" instead, its scheme and host whole, as everything the sandbox command prints
  -- (libsandbox.fitLongWords). beforeWait: its rest may still come (shownPart).
  local function flushWord(beforeWait)
    if #word == 0 then
      return;
    end
    local continuing, shown, urlShown = joinShownPart();
    local whole = table.concat(word);
    local runs, run = colourRuns(), 1;
    word, wordColours = { whole }, {};
    if #runs > 1 or runs[1][2] ~= nil then
      word = {}; -- kept in its pieces, with their colours, for a flush a pause cut short
      for i, r in ipairs(runs) do
        word[i], wordColours[i] = whole:sub((runs[i - 1] or { 0 })[1] + 1, r[1]), r[2];
      end
    end
    -- Writes the word up to byte `to`, each run in its colour.
    local function putTo(to)
      while wordFrom <= to do
        while runs[run][1] < wordFrom do
          run = run + 1;
        end
        local stop, colour = math.min(to, runs[run][1]), runs[run][2];
        if colour == nil then
          put(whole:sub(wordFrom, stop));
        else
          local before = t.getTextColour();
          setColour(colour);
          put(whole:sub(wordFrom, stop));
          t.setTextColour(before);
        end
        wordFrom = stop + 1;
      end
    end
    local margin = hang or 0; -- columns before a further row's text
    if hangMark == nil and wordFrom == 1 and #whole > width - margin and whole:find("://", 1, true) then
      local after, shownRows;
      if urlShown ~= nil then
        -- its rows but the last are on the screen already, and the whole laid out again
        -- begins with them: the last is rewritten from its start, where the cursor is
        after, shownRows = urlShown.from, urlShown.rows - 1;
      else
        if col > width then
          wrap();
        end
        -- where the URL would start after the blanks held before it; they are written only
        -- when its first part stays on this row (else they would end the row, unseen on the
        -- screen but a blank in a transcript)
        after, shownRows = col + math.min(spaces, width - col + 1), 0;
      end
      local rows = libsandbox.fitLongWords(whole, width - margin, math.max(1, after - margin));
      if urlShown ~= nil or rows:sub(1, 1) == "\n" then
        spaces = 0;
      else
        putSpaces();
      end
      local pieces, colours, n, lastRow = word, wordColours, 0, nil;
      for row in (rows .. "\n"):gmatch("([^\n]*)\n") do
        n = n + 1;
        if n <= shownRows then
          wordFrom = wordFrom + #row;
        else
          if n > shownRows + 1 then
            beforeWrite();
            wrap();
          end
          lastRow = { x = col, length = #row };
          putTo(wordFrom + #row - 1);
        end
      end
      word, wordColours, wordFrom = {}, {}, 1;
      if beforeWait then
        shownPart = { url = true, from = after, rows = n, x = lastRow.x, y = select(2, t.getCursorPos()),
          length = lastRow.length, pieces = pieces, colours = colours };
      end
      return;
    end
    -- A word that does not fit the rest of the row, with the blanks before it, goes to the
    -- next, unless the next would cut it too (under code: a continuation row starts at the
    -- indent): then it is cut here. Before a wait it waits for its rest instead: with it, it
    -- may be a URL longer than a row, whose first part stays on this row.
    local left = #whole - wordFrom + 1;
    if not continuing and col > 1 and not indentOnly and col - 1 + spaces + left > width
        and (hangMark == nil or margin + #hangMark + left <= width) then
      if beforeWait then
        return;
      end
      wrap();
    end
    putSpaces();
    local x, rowBefore, written, colours = col, rowsMoved, word, wordColours;
    while wordFrom <= #whole do
      if col > width then
        wrap();
      end
      putTo(math.min(#whole, wordFrom + width - col));
    end
    word, wordColours, wordFrom = {}, {}, 1;
    if beforeWait and (rowsMoved ~= rowBefore or continuing and not shown.whole) then
      -- cut across rows: only to go on from
      shownPart = { x = col - #whole, y = select(2, t.getCursorPos()), length = #whole, whole = false };
    elseif beforeWait then
      if continuing then
        -- the part shown so far is the first part and this one, still on its row
        local pieces, n = {}, #shown.pieces;
        for i = 1, n do
          pieces[i] = shown.pieces[i];
        end
        for i = 1, #written do
          pieces[n + i], shown.colours[n + i] = written[i], colours[i];
        end
        shown.pieces, shown.length = pieces, shown.length + #whole;
        shownPart = shown;
      else
        shownPart = { x = x, y = select(2, t.getCursorPos()), length = #whole, pieces = written, colours = colours,
          whole = true };
      end
    end
  end

  -- Adds streamed text (in colour, a name, when given: else the line's); a word split across
  -- two pieces is written once whole.
  local function text(piece, colour)
    local from = 1;
    while from <= #piece do
      local at = piece:find("[\n\r\t ]", from) or #piece + 1;
      if at > from then
        word[#word + 1] = piece:sub(from, at - 1);
        wordColours[#word] = colour;
      end
      local c = piece:sub(at, at);
      if c == "\n" then
        flushWord();
        spaces, shownPart = 0, nil;
        beforeWrite();
        newline();
      elseif c == " " or c == "\t" then
        flushWord();
        spaces, shownPart = spaces + 1, nil; -- a tab shows as one blank
      end
      from = at + 1;
    end
  end

  -- Writes one line of code (no line break in it) on rows of its own: the one rule for code,
  -- a run's, a write's and the answer's. As text, each further row of a line that wraps
  -- starting at the line's own indent (the spaces and tabs after its first `gutter` columns, a
  -- changed line's mark and number, counted too; text shows a tab as a space), up to half the
  -- width, then CONTINUED. Blanks no row shows are left out: those that end a line, and of an
  -- indent wider than the row, all but the row's width less a column for the code (a line of
  -- only spaces took rows of " >", a 3000-space indent 250 of them).
  local function codeLine(body, gutter)
    local after = body:sub(gutter + 1);
    local indent = after:match("^[ \t]*");
    -- to the last byte that is no blank: greedy, one pass (a lazy "(.-)[ \t]*$" is
    -- quadratic in a run of blanks inside a line, and 100 KB ended ai, too long without yielding)
    local rest = after:sub(#indent + 1):match("^.*[^ \t]") or "";
    indent = indent:sub(1, math.max(0, width - gutter - 1));
    hang, hangMark = math.min(gutter + #indent, math.floor(width / 2)), CONTINUED;
    text(body:sub(1, gutter) .. indent .. rest .. "\n");
    hang, hangMark = nil, nil;
  end

  -- Inline code as shown: in the code colour, its backticks not shown (they took columns, a
  -- pocket computer's few); where there is no colour they are what sets it apart: as typed.
  -- Returns its text and colour name (nil: the line's).
  local function codePiece(code, typed)
    if t.isColour() and colourOf(ANSWER_CODE_COLOUR) ~= nil then
      return code, ANSWER_CODE_COLOUR;
    end
    return typed, nil;
  end

  -- The colour a heading's line of the answer replaced, to put back at its end.
  local colourBefore = nil;
  -- The answer's lines as libsandboxai's reader tells them (newAnswerReader): text word-wrapped,
  -- a list item's (or an indented line's) further rows under its text's first column, up to
  -- half the width, a heading in colour; code by codeLine, in its colour, and inline code in
  -- it too; one blank row between blocks, never two.
  local answerReader = newAnswerReader({
    line = function(kind, indent, marker)
      local half = math.floor(width / 2);
      indent = math.min(indent, half);
      local margin = math.min(indent + #marker, half);
      hang = margin > 0 and margin or nil;
      if kind == "heading" then
        colourBefore = t.getTextColour();
        setColour(HEADING_COLOUR);
      end
      if indent > 0 then
        put((" "):rep(indent));
      end
      text(marker);
    end,
    text = text,
    inlineCode = function(code, typed)
      text(codePiece(code, typed));
    end,
    -- A table as libsandboxai.tableLines lays it out for the width after its indent (a list
    -- item's, up to half the width, as a line's): in columns when they fit, else a line a
    -- cell; its inline code as the text's.
    table = function(header, rows, aligns, indent)
      indent = math.min(indent or 0, math.floor(width / 2));
      local function cells(row)
        local shown = {};
        for i, parts in ipairs(row) do
          shown[i] = {};
          for j, part in ipairs(parts) do
            shown[i][j] = type(part) == "string" and { part } or { codePiece(part[1], part[2]) };
          end
        end
        return shown;
      end
      local shownRows = {};
      for i, row in ipairs(rows) do
        shownRows[i] = cells(row);
      end
      for _, tableLine in ipairs(tableLines(cells(header), shownRows, aligns, width - indent)) do
        hang = (tableLine.hang or indent > 0) and indent + (tableLine.hang or 0) or nil;
        if indent > 0 and #tableLine.pieces > 0 then
          put((" "):rep(indent));
        end
        for _, piece in ipairs(tableLine.pieces) do
          text(piece[1], piece[2]);
        end
        text("\n");
        hang = nil;
      end
    end,
    lineEnd = function()
      text("\n");
      hang = nil;
      if colourBefore ~= nil then
        t.setTextColour(colourBefore);
        colourBefore = nil;
      end
    end,
    code = function(body)
      local before = t.getTextColour();
      setColour(ANSWER_CODE_COLOUR);
      codeLine(body, 0);
      t.setTextColour(before);
    end,
    blank = function()
      beforeWrite();
      newline();
    end,
  });

  -- Ends the streamed text: the answer's last line shown, the cursor at the start of a line.
  local function finish()
    if stoppedReading then
      stoppedReading = false;
      answerReader.drop();
      word, wordColours, wordFrom = {}, {}, 1;
    end
    answerReader.finish();
    flushWord();
    -- a line's hang ends with it, also one a Ctrl-T at a "Press any key" left half written
    hang, hangMark, spaces = nil, nil, 0;
    if status then
      beforeWrite();
    end
    if col > 1 then
      newline();
    end
  end

  -- A line of its own (tool activity, errors), wrapped like the answer, and laid out first
  -- by the rule of every line the sandbox command prints (libsandbox.fitLongWords): a command
  -- in it that would end one row and begin the next starts the next whole (a refused write's
  -- "... allow it with: set" / "sandbox.allow_files write." on a pocket computer, where "set"
  -- typed alone lists every setting).
  local function line(message, colour)
    finish();
    local before = t.getTextColour();
    setColour(colour);
    text(libsandbox.fitLongWords(message, width));
    finish();
    t.setTextColour(before);
  end

  -- Writes code (a run's, a file's lines) on lines of its own, in colour, each by codeLine.
  local function code(body, colour, gutter)
    finish();
    local before = t.getTextColour();
    setColour(colour);
    local from = 1;
    while from <= #body do
      local lineEnd = body:find("\n", from, true) or #body + 1;
      codeLine(body:sub(from, lineEnd - 1), gutter or 0);
      from = lineEnd + 1;
    end
    finish();
    t.setTextColour(before);
  end

  -- Shows a notice ("Thinking...") until the next output replaces it.
  local function thinking(notice)
    finish();
    beforeWrite();
    notice = notice or THINKING;
    t.write(notice);
    status = notice;
  end

  -- Writes a question and returns what the player types after it, on the same line, or on
  -- the next when the question ends too near the right edge for the answer to show; "" when
  -- the player typed nothing within wait seconds (the line then ends where the typing stopped).
  local function ask(question, wait)
    finish();
    local firstRow = rowsMoved;
    -- Its last word ("[y/N]") starts a row of its own when the row it would end has no room
    -- left for the answer (libsandboxlayout.lastWordOwnRow), the answer typed beside it: on a
    -- pocket computer "/old.lua. Allow? [y/N]" filled its row, and the y typed stood alone at
    -- the next row's start. The blank after it is the one the answer is typed after.
    local body, last = question:match("^(.-)(%S+)[ \t]*$");
    text(body or question);
    flushWord();
    if last ~= nil and not indentOnly and libsandbox.lastWordOwnRow(col - 1 + spaces + #last, #last, 1, width) then
      newline();
      spaces = 0;
    end
    text((last or "") .. " ");
    flushWord();
    putSpaces(); -- the blank after the question: the answer is typed after it
    if not libsandbox.roomToAnswer(t) then
      newline();
    end
    -- The question's rows and the one its answer is typed on (read() does not wrap it): they
    -- stay in view until the next page stops, as a question typed at ai> does (it counted
    -- none, and a long answer scrolled "Allow? [y/N] y" away before its "Press any key").
    local asked = rowsMoved - firstRow + 1;
    inputting = true;
    local answer;
    parallel.waitForAny(function() answer = read(); end, function() sleep(wait); end);
    if answer == nil then
      t.setCursorBlink(false); -- read() had it on, and was left waiting
      newline();
    end
    inputting = "ending";
    col = select(1, t.getCursorPos());
    indentOnly = col == 1;
    readTo(asked);
    return answer or "";
  end

  -- Whether a key event belongs to the pager or a question (so the stop key is not the
  -- player's answer). Called once per key by the watcher, which runs after them.
  local function keysTaken()
    if inputting == "ending" then
      inputting = false;
      return true;
    end
    return inputting == true;
  end

  -- The player just typed a line (a question at ai>), the row above the cursor: a new
  -- screenful begins, that line its first row (as the command line is for a new screen).
  local function seen()
    col = select(1, t.getCursorPos());
    indentOnly, spaces = col == 1, 0;
    readTo(1);
  end

  return {
    text = text, answer = answerReader.add, flush = function() flushWord(true); end, finish = finish, line = line, code = code, thinking = thinking,
    ask = ask, seen = seen, keysTaken = keysTaken,
  };
end

-- How the gateway's ai_unavailable lines begin when opencode is down or refuses (the probe's
-- wording); a provider's own failure, with the same code, does not.
local UNAVAILABLE_PREFIX = "the agent is unavailable: ";

-- The one line for the agent being unavailable, whether a request or the turn said so: the
-- gateway's prefix said once, and whose fix it is, as the model's failure says it. opencode
-- runs on the gateway's host, so only its operator can start or fix it; `sandbox health`,
-- which this line sent the player to, only said the same detail again.
local function unavailableLine(message)
  message = message or "opencode does not answer";
  if message:sub(1, #UNAVAILABLE_PREFIX):lower() == UNAVAILABLE_PREFIX then
    message = message:sub(#UNAVAILABLE_PREFIX + 1);
  end
  return "The agent is unavailable (tell the gateway's operator): " .. message;
end

-- The gateway's message as a sentence on the screen: its messages begin in lower case, as
-- errors do on the host ("the agent is off: ...").
local function sentence(message)
  return message:sub(1, 1):upper() .. message:sub(2);
end

-- Why the daemon has no gateway, in the words `sandbox status` and `sandbox health` say it:
-- asked its status when the line is made, the daemon is explained as they explain it
-- (libsandbox.explainStatus), so the line names the seconds to its next try while it waits and
-- the reason it waits after (a turn that waited for it to reconnect holds its poll's older
-- reason), and a stopped daemon's fix. Without that status (no daemon, or it connected
-- meanwhile), the request's reason is turned into advice (libsandboxadvice): CC's own message
-- ("Could not connect") names no fix. A reason the advice has no rule for is sent to `sandbox
-- status`, which says more. No daemon answering (it died during the turn) is said as it is,
-- with its one fix: `sandbox status` would only say it again.
local function notConnectedLine(message)
  local why = message or "no connection";
  local fix;
  local status = libsandbox.requestStatus();
  if status == nil then
    return libsandbox.noDaemon();
  elseif not status.connected then
    why = status.lastError ~= nil and oneLine(tostring(status.lastError)) or why;
    fix = oneLine(libsandbox.explainStatus(status));
  else
    fix = advice.explain(why, libsandbox.normaliseUrl(settings.get(libsandbox.SETTING_URL)),
      settings.get(libsandbox.SETTING_PASSWORD));
  end
  if fix == why then
    return "Not connected to the gateway: " .. why .. ". Run: sandbox status";
  end
  return "Not connected to the gateway: " .. fix;
end

-- Whose reply to the agent's last question it was (notMade.asked: the player was asked), and
-- what it came to when it got to no gateway that held the turn (libsandboxai's notMade): the
-- change (notMade.change, changeOf's words) was not made. "The gateway lost the answer" alone,
-- under an Allow? just answered, left the player to wonder whether their yes had written the
-- file.
local function answerOf(notMade)
  return notMade.asked and "your reply to Allow?" or "this computer's reply";
end
local function notMadeOf(notMade)
  return "the agent did not " .. notMade.change;
end

-- One line for a failed request, naming the fix. notMade: libsandboxai's, its change said as
-- changeOf says it (notMade.change).
local function explain(err, notMade)
  local code, message = oneLine(tostring(err.code)), err.message;
  if message == nil or message == "" then
    message = nil;
  else
    message = oneLine(tostring(message));
  end
  if err.answerLost then
    -- The daemon did not get the gateway back in its wait, or a poll after it did not get
    -- through: the gateway ended the turn with the socket, so a reconnect brings no more of
    -- this answer.
    local lost = explain({ code = err.code, message = err.message }) .. ". ";
    if notMade ~= nil then
      lost = lost .. sentence(answerOf(notMade)) .. " did not get to the gateway: " .. notMadeOf(notMade) .. ". ";
    end
    return lost .. MSG_ANSWER_LOST;
  elseif code == libsandbox.ERR_NOT_CONNECTED then
    return notConnectedLine(message);
  elseif code == libsandbox.ERR_TIMEOUT then
    return "The gateway did not answer in time. Run: sandbox health";
  elseif code == libsandbox.ERR_AI_DISABLED or code == libsandbox.ERR_UNKNOWN_TYPE then
    -- A gateway with the agent off, or from before the agent: `sandbox health` says it too.
    return libsandbox.noAgentLine(err);
  elseif code == libsandbox.ERR_AI_UNAVAILABLE then
    return unavailableLine(message);
  elseif code == libsandbox.ERR_BUSY then
    return message and sentence(message) or "The agent is busy here: wait or stop it (Q, Ctrl-T)";
  elseif code == libsandbox.ERR_UNKNOWN_TURN then
    if notMade ~= nil then
      return "The gateway lost the answer (restarted?) before " .. answerOf(notMade) .. " got to it: "
        .. notMadeOf(notMade) .. ". Ask again";
    end
    return "The gateway lost the answer (restarted?): ask again";
  elseif code == libsandbox.ERR_BAD_PAYLOAD then
    return message or "The gateway refused the question";
  end
  return "The gateway refused: " .. code .. ": " .. (message or "no reason given");
end

-- A tool's error up to its first sentence's end: what follows is usually advice to the agent
-- (e.g. "Do not retry it"), and a tool line stays short.
local function firstSentence(text)
  return text:match("^(.-[%.!?])%s") or text;
end

-- A path as the gateway's details show one (its cctext.ShowPath): a control byte or "\" as
-- \xNN, the form the agent's tools read back, so none moves the cursor or hides a byte.
local function shownPath(path)
  return (path:gsub("[%z\1-\31\127-\159\\]", function(c) return ("\\x%02x"):format(c:byte()); end));
end

-- A byte as \xNN.
local function escapedByte(c)
  return ("\\x%02x"):format(c:byte());
end

-- Text as the player reads it, with no byte that moves the cursor or hides itself: each
-- control byte but tab and line break (a \r before a line break is dropped) as \xNN, as the host
-- shows a file's text (docs/protocol.md, "Text and bytes"); of bytes that are not text
-- (binary), tabs and line breaks too, so they read as the bytes they are. A \ stays: code
-- reads as written.
local function shownText(text, binary)
  if binary then
    return (text:gsub("[%z\1-\31\127-\159]", escapedByte));
  end
  return (text:gsub("\r\n", "\n"):gsub("[%z\1-\8\11-\31\127-\159]", escapedByte));
end

-- Whether bytes are text, to compare and show line by line: no NUL byte, as git judges (a
-- program may hold an escape or CC's drawing characters and still be read by its lines).
local function isText(data)
  return not data:find("%z");
end

-- The verb a change is put to the player with, by the type of the request it will be (the one
-- this computer checks its settings against): the gateway's action word is "write" for a move
-- and a new directory too ("wants to write /old.lua -> /new.lua"), and a gateway not ours may
-- word it as it likes.
local CHANGE_VERBS = {
  ["fs.write"] = "write", ["fs.delete"] = "delete", ["fs.move"] = "move", ["fs.makeDir"] = "make the directory",
  ["lua.exec"] = "run", ["shell.run"] = "run",
};

-- The verb for event's change: its request's, else the gateway's word (or default).
local function verbOf(event, default)
  local request = type(event.request) == "table" and event.request or {};
  return CHANGE_VERBS[request.type] or eventLine(event.action, default);
end

-- What a change acts on, whole: the paths of the request it will be (the one this computer
-- checks its settings against), else the gateway's detail. The detail is cut at 60 bytes (one
-- short line of a computer): on a pocket computer a write was put to the player as
-- "/a/.../scree" "n/doo..." (13 bytes), which file unsaid.
local function targetOf(event)
  local payload = type(event.request) == "table" and event.request.payload;
  if type(payload) == "table" then
    if type(payload.from) == "string" and type(payload.to) == "string" then
      return eventLine(shownPath(payload.from) .. " to " .. shownPath(payload.to));
    elseif type(payload.path) == "string" then
      return eventLine(shownPath(payload.path));
    end
  end
  return eventLine(event.detail, eventLine(event.tool, "something"));
end

-- "312 bytes", "1 byte".
local function bytesOf(n)
  n = math.floor(n);
  return n .. (n == 1 and " byte" or " bytes");
end

-- The change a confirm event asks for, e.g. "write /door.lua (312 bytes)"; note is said in
-- the brackets after the size ("not shown").
local function changeOf(event, note)
  local what = verbOf(event, "change") .. " " .. targetOf(event);
  if type(event.bytes) == "number" then
    what = what .. " (" .. bytesOf(event.bytes) .. (note and ", " .. note or "") .. ")";
  elseif note then
    what = what .. " (" .. note .. ")";
  end
  return what;
end

-- What the player is asked before the agent changes this computer.
local function confirmQuestion(event, note)
  return "The agent wants to " .. changeOf(event, note) .. ". Allow? [y/N] ";
end

-- The line a done event leaves, when its reason needs one (an error event said it already).
local function doneLine(result)
  if result.error ~= nil then
    return nil;
  elseif result.reason == libsandbox.DONE_ABORTED then
    return "The turn was aborted.";
  elseif result.reason == libsandbox.DONE_DEADLINE then
    return "The agent took too long: ask again later";
  elseif result.reason == libsandbox.DONE_DISCONNECTED then
    return "The turn ended: this computer lost the gateway.";
  elseif result.reason == libsandbox.DONE_ERROR then
    return "The turn failed.";
  end
  return nil;
end

libsandbox.defineSettings();
local client = libsandbox.newAiClient({ request = libsandbox.request, settings = settings, term = term,
  awaitReconnect = libsandbox.awaitReconnect });
local screen = newScreen(term);

-- The tool lines waiting for their end: a completed call that showed no running line
-- still gets its line.
local running = {};
-- The provider's failure the last retry line showed: opencode retries five times over about
-- 70 s, mostly for the same reason, which two lines each would scroll (and on a turtle or a
-- pocket page) past the question; a repeat shows only its attempt.
local lastRetry;

local function showEvent(event)
  if event.kind == libsandbox.KIND_TEXT then
    screen.answer(eventText(event.text));
  elseif event.kind == libsandbox.KIND_TOOL then
    local detail = eventLine(event.detail);
    -- no detail (a tool of opencode's own): no blank for it, which read "* bash  failed"
    local label = TOOL_MARK .. " " .. eventLine(event.tool, "a tool") .. (detail ~= "" and " " .. detail or "");
    if event.state == "running" then
      running[label] = true;
      screen.line(label, "lightGrey");
    elseif event.state == "error" then
      running[label] = nil;
      screen.line(label .. " failed: " .. firstSentence(eventLine(event.error, "error")), "orange");
    elseif not running[label] then
      screen.line(label, "lightGrey");
    else
      running[label] = nil;
    end
  elseif event.kind == libsandbox.KIND_STARTING then
    local width = term.getSize();
    screen.thinking(#STARTING <= width and STARTING or STARTING_SHORT);
  elseif event.kind == libsandbox.KIND_RETRY then
    local number = eventLine(event.attempt);
    number = number ~= "" and " (attempt " .. number .. ")" or "";
    local attempt = "Retrying" .. number;
    if event.message ~= lastRetry then
      -- Whose failure it is, and where: the provider's words speak of "the computer" (opencode's
      -- host), which a player read as this one, to be fixed here; "The agent's model failed"
      -- alone did not say which computer (played: a minute of retries, "Is the computer able
      -- to access the url?" under it).
      attempt = "The agent's model failed on the gateway's host, retrying" .. number .. ": "
        .. eventLine(event.message, "no reason given");
      lastRetry = event.message;
    end
    screen.line(attempt, "yellow");
    screen.thinking(); -- the turn still runs, and Q still stops it
  elseif event.kind == libsandbox.KIND_CUT then
    local why = eventLine(event.message);
    screen.line("(The answer was cut" .. (why ~= "" and ": " .. why or "") .. ")", "yellow");
  elseif event.kind == libsandbox.KIND_ERROR then
    local message = eventLine(event.message, eventLine(event.code, "the turn failed"));
    if event.code == libsandbox.ERR_AI_UNAVAILABLE and message:sub(1, #UNAVAILABLE_PREFIX):lower() == UNAVAILABLE_PREFIX then
      message = unavailableLine(message); -- opencode is down: the turn's line names the fix too
    end
    screen.line(message, "red");
  elseif event.kind == libsandbox.KIND_CONFIRM and not event.asked and event.refused == nil then
    -- Answered without the player (sandbox.ai_confirm false): say what was allowed. A change
    -- the settings refuse shows as its tool's failure, with why.
    screen.line((event.allowed and "Allowed" or "Denied") .. ": " .. changeOf(event), "lightGrey");
  end
end

-- What a write would replace at path, as fs tells it without reading the file: its size
-- (false when there is no file) and whether a directory is there instead. A write that is not
-- shown needs no more: reading up to MAX_COMPARED_BYTES for it was work for nothing.
local function fileThere(path)
  if type(path) ~= "string" or not fs.exists(path) then
    return false, false;
  elseif fs.isDir(path) then
    return false, true;
  end
  return fs.getSize(path), false;
end

-- The bytes of the file of `size` at path, to compare with a write's content: nil when there
-- is none, it is too big to compare (MAX_COMPARED_BYTES) or cannot be opened.
local function readToCompare(path, size)
  if not size or size > MAX_COMPARED_BYTES then
    return nil;
  end
  local file = fs.open(path, "rb");
  if file == nil then
    return nil;
  end
  local data = file.readAll() or "";
  file.close();
  return data;
end

-- The rows of lineChanges as the player reads them, one line each with its colour and the
-- columns of its mark and number (a row that wraps goes on after them): "-" for a
-- line removed (red), "+" for one added (green), a space for one the same, and how many the
-- same were left out. Every number is the line's in the file after the write; a removed line,
-- which has none there, has none (its old number beside the new ones read as "150" twice).
-- endingsChange: the write changes how the file's lines end (\r\n or \n).
local function changeLines(rows, endingsChange)
  local widest = 1;
  for _, row in ipairs(rows) do
    if row.mark ~= "-" then
      widest = math.max(widest, #tostring(row.line or 0));
    end
  end
  local lines = {};
  for _, row in ipairs(rows) do
    if row.skipped then
      local count = row.skipped .. (row.skipped == 1 and " line" or " lines");
      lines[#lines + 1] = { (" "):rep(widest + 2) .. "(" .. count .. " the same)", "lightGrey" };
    else
      local colour = row.mark == "-" and "red" or row.mark == "+" and "green" or nil;
      local shown = row.mark == "-" and "" or tostring(row.line);
      local number = (" "):rep(widest - #shown) .. shown;
      -- A line changed says it has no line break, and, when the write changes the file's line
      -- breaks (\r\n to \n or back), keeps the \r of its \r\n (\x0d): what tells "-  b" from
      -- "+2 b" when only its ending changed.
      local text = (row.mark == " " or not endingsChange) and row.text:gsub("\r$", "") or row.text;
      if row.mark ~= " " and row.unbroken then
        text = text .. NO_LINE_BREAK;
      end
      lines[#lines + 1] = { row.mark .. number .. " " .. shownText(text, false), colour, widest + 2 };
    end
  end
  return lines;
end

-- Shows what a write puts here and returns its question: a new file's content; of a text
-- file there, only the lines it changes (libsandboxai.lineChanges); else the content, as
-- replacing the file. Content longer than the player can read in time, or not sent (the
-- gateway sends at most 16 KiB), is not shown, and the question says so with its size.
local function showWrite(event)
  local content = event.content;
  -- The file there is looked at only for the request the owner's settings were checked
  -- against (libsandboxai's refusal): an fs.write, whose allow_files write lets the host read
  -- it anyway. A confirm of another request (a hostile gateway's ping naming /.settings) put a
  -- file the host may not read on the screen, which allow_screen view lets it watch.
  local request = type(event.request) == "table" and event.request or {};
  local payload = request.type == "fs.write" and request.payload;
  local path = type(payload) == "table" and type(payload.path) == "string" and payload.path or nil;
  local oldSize, isDir = fileThere(path);
  local target = targetOf(event);
  if type(content) ~= "string" or #content > MAX_SENT_CONTENT_BYTES then
    -- Not shown, but whether it replaces a file is, where the request names it: the player
    -- allows a new file more lightly than one over a file they have.
    local long = type(content) == "string" or type(event.bytes) == "number" and event.bytes > MAX_SHOWN_WRITE_BYTES;
    local note = long and "not shown: too long" or "not shown";
    if type(event.bytes) ~= "number" or path == nil or isDir then
      return confirmQuestion(event, isDir and "a directory here: the write will fail" or note);
    elseif oldSize then
      return "The agent wants to replace " .. target .. " (" .. bytesOf(oldSize) .. ") with " .. bytesOf(event.bytes)
        .. " (" .. note .. "). Allow? [y/N] ";
    end
    return "The agent wants to write a new file " .. target .. " (" .. bytesOf(event.bytes) .. ", " .. note .. "). Allow? [y/N] ";
  end
  local size = bytesOf(type(event.bytes) == "number" and event.bytes or #content);
  local old = readToCompare(path, oldSize);
  if isDir then
    return "The agent wants to write " .. target .. " (" .. size .. "), a directory here: the write will fail. Allow? [y/N] ";
  elseif old == content then
    return "The agent wants to write " .. target .. " (" .. size .. "), the same as it holds now. Allow? [y/N] ";
  elseif old ~= nil and isText(old) and isText(content) then
    local endingsChange = (old:find("\r\n") ~= nil) ~= (content:find("\r\n") ~= nil);
    local lines = changeLines(libsandbox.lineChanges(old, content, CHANGE_CONTEXT), endingsChange);
    local shown = 0;
    for _, line in ipairs(lines) do
      shown = shown + #line[1] + 1;
    end
    local sizes = bytesOf(#old):gsub(" bytes?$", "") .. " -> " .. size;
    if shown > MAX_SHOWN_WRITE_BYTES then
      return "The agent wants to change " .. target .. " (" .. sizes .. ", not shown: too many changes). Allow? [y/N] ";
    end
    screen.line("The agent wants to change " .. target .. " (" .. sizes .. "):");
    for _, line in ipairs(lines) do
      screen.code(line[1], line[2], line[3]);
    end
    return "Allow? [y/N] ";
  end
  local what = oldSize and "replace " .. target .. " (" .. bytesOf(oldSize) .. ") with this (" .. size .. ")"
    or "write a new file " .. target .. " (" .. size .. ")";
  -- bounded as shown: a byte that is not text takes four (\xNN)
  local shown = shownText(content, not isText(content));
  if #shown > MAX_SHOWN_WRITE_BYTES then
    return "The agent wants to " .. what:gsub("%)$", ", not shown: too long)") .. ". Allow? [y/N] ";
  elseif content == "" then
    return "The agent wants to " .. what .. ". Allow? [y/N] ";
  end
  screen.line("The agent wants to " .. what .. ":");
  if isText(content) then
    screen.code(shown);
  else
    -- bytes, one line of \xNN and more: no lines, no indent to keep
    screen.text(shown);
    screen.finish();
  end
  return "Allow? [y/N] ";
end

-- Puts a change to the player. A run whose code (or command line) the one-line detail does not
-- show whole comes with it (event.full), and a write with what it writes (event.content): the
-- player reads it, paged, before the question, so they approve what they read.
local function confirm(event)
  local question;
  if type(event.full) == "string" and event.full ~= "" then
    screen.line("The agent wants to " .. verbOf(event, "run") .. " this on this computer:");
    screen.code(shownText(event.full));
    question = "Allow? [y/N] ";
  elseif event.tool == "write_file" then
    question = showWrite(event);
  else
    question = confirmQuestion(event);
  end
  local answer = screen.ask(question, CONFIRM_WAIT);
  return YES[answer:match("^%s*(.-)%s*$"):lower()] == true;
end

-- Whether an abort failed because there is no turn left to stop: the daemon lost the gateway
-- (Q during "Reconnecting..."), which ends a turn when its socket goes (docs/protocol.md), or
-- the gateway no longer knows it (restarted). Q then stopped it as Ctrl-T does; a daemon that is
-- not running at all is said as it is.
local function turnGone(err)
  if err.code == libsandbox.ERR_NOT_CONNECTED then
    return err.message ~= libsandbox.noDaemon();
  end
  return err.code == libsandbox.ERR_UNKNOWN_TURN;
end

-- Asks one question and shows its answer. Returns the line saying why it failed, not shown
-- yet (nil when there is none), and whether the turn answered: false after a failure shown
-- already (an error event, a done reason other than stop) and after a stop (Q, Ctrl-T).
-- Ctrl-T aborts the turn (libsandboxai does) and says so.
local function turn(question)
  running, lastRetry = {}, nil;
  screen.thinking();
  local result, err, turnId;
  local stopped = false;
  local ended = false; -- the turn's done event came: a Ctrl-T then stops only the paging
  local function follow()
    -- The word being received is shown before each wait: a model that pauses mid-answer
    -- leaves no word unseen (one split across the pause may break at the edge).
    result, err = client.run(question, {
      markdown = true, -- the answer's layout (showEvent, libsandboxai.newAnswerReader)
      onStart = function(id) turnId = id; end,
      onEvent = showEvent, confirm = confirm, onWait = screen.flush,
      onReconnect = function() screen.thinking(RECONNECTING); end,
      onEnded = function() ended = true; end,
    });
  end
  -- Q stops the turn too, without holding Ctrl-T. Raw pulls: a terminate is follow's to
  -- handle (it aborts), not a reason to end this one.
  local function watchStopKey()
    while true do
      local event, key = os.pullEventRaw();
      if event == "key" and not screen.keysTaken() and key == keys.q and turnId ~= nil then
        stopped = true;
        return;
      end
    end
  end
  local colour = term.getTextColour();
  local ok, raised = pcall(parallel.waitForAny, follow, watchStopKey);
  -- A Ctrl-T at a "Press any key" inside a heading or code left its colour set: the lines
  -- after, and in a conversation the next question and its answer, showed in it.
  term.setTextColour(colour);
  -- The answer's end shows a code line still held, which may page: a Ctrl-T there is this
  -- turn's to say, as one during the turn is.
  local finished, finishRaised = pcall(screen.finish);
  if not finished and ok then
    ok, raised = false, finishRaised;
  end
  if ok and stopped then
    local aborted, abortErr = client.abort(turnId);
    if not aborted and not turnGone(abortErr) then
      return explain(abortErr), false;
    end
    screen.line(MSG_STOPPED, "red");
    return nil, false;
  elseif not ok then
    if raised == "Terminated" then
      screen.line(ended and MSG_NOT_SHOWN or MSG_ABORTED, "red");
      return nil, false;
    end
    error(raised, 0);
  elseif result == nil then
    local notMade = nil;
    if type(err.notMade) == "table" then
      notMade = { asked = err.notMade.asked == true, change = changeOf(err.notMade) };
    end
    return explain(err, notMade), false;
  end
  local last = doneLine(result);
  if last ~= nil then
    screen.line(last, "red");
  end
  return nil, result.error == nil and result.reason == libsandbox.DONE_STOP;
end

-- Names the old ai's settings still on this computer: they are not used, and opencode's
-- password there is readable by anyone at the computer.
local function warnOldSettings()
  if settings.getNames == nil then
    return;
  end
  local old = {};
  for _, name in ipairs(settings.getNames()) do
    if name:sub(1, #OLD_SETTINGS_PREFIX) == OLD_SETTINGS_PREFIX then
      old[#old + 1] = name;
    end
  end
  if #old > 0 then
    table.sort(old);
    -- Each removal a line of its own, as the installer's "Undo with:" lines: one line for all
    -- named only the first, and a pocket computer (a computer too) broke it after "set".
    screen.line("Not used any more: " .. table.concat(old, ", ") .. ". Remove "
      .. (#old == 1 and "it" or "them") .. " with:", "yellow");
    for _, name in ipairs(old) do
      screen.line("set " .. name .. " nil", "yellow");
    end
  end
end

-- Fails with message, which the shell prints from the row's start: a URL in it breaks as the
-- answer's do (libsandbox.fitLongWords).
local function fail(message)
  error(libsandbox.fitLongWords(message, (term.getSize())), 0);
end

-- Makes a daemon waiting to reconnect try now, and waits for that try's outcome (or, right
-- after boot, for the connection under way), as `sandbox health` does: typed right after the
-- gateway's restart, a question said "nothing answers" until the daemon's timer tried. Returns
-- the daemon's status, nil when it does not run. The wait (up to 10 s for a daemon still
-- connecting) shows libsandbox.whileWaiting's notice, not a blank screen.
local function reachGateway()
  return libsandbox.whileWaiting(term, function()
    libsandbox.retryNow();
    return libsandbox.awaitConnection();
  end);
end

-- Fails at once with the fix when the daemon cannot carry the question.
local function checkDaemon()
  if libsandbox.normaliseUrl(settings.get(libsandbox.SETTING_URL)) == nil then
    fail(MSG_URL_NOT_SET);
  end
  if reachGateway() == nil then
    fail(libsandbox.noDaemon());
  end
  warnOldSettings();
end

local function reset()
  checkDaemon();
  local ok, err = client.reset();
  if not ok then
    fail(explain(err));
  end
  print("The conversation is reset: the next question starts a new one.");
end

local function conversation()
  checkDaemon();
  -- A gateway without an agent, or no gateway, says so before the prompt, not at the first
  -- question.
  local available, err = libsandbox.whileWaiting(term, client.available);
  if not available then
    fail(explain(err));
  end
  -- An agent that is on, but cannot answer (opencode down, or without the agent's model: the
  -- probe's aiDetail), says so before the prompt too, as its first question would: the player
  -- typed one first, and read why only then. One probe a conversation, none a question (the
  -- gateway itself refuses at once a question the model cannot answer).
  local probed, health = libsandbox.whileWaiting(term, libsandbox.request, TYPE_PROBE_GATEWAY, {}, PROBE_WAIT);
  local why = probed and type(health) == "table" and (health.opencodeOk == true and health.aiDetail
    or health.opencodeOk == false and health.opencodeDetail);
  if type(why) == "string" and why ~= "" then
    fail(unavailableLine(oneLine(why)));
  end
  print("Ask the agent. " .. EXIT_WORD .. " or Ctrl-T leaves.");
  local history = {};
  while true do
    local before = term.getTextColour();
    if term.isColour() and colourOf("yellow") ~= nil then
      term.setTextColour(colourOf("yellow"));
    end
    write(PROMPT);
    term.setTextColour(before);
    local ok, line = pcall(read, nil, history);
    if not ok then
      if line == "Terminated" then
        -- read() left the cursor after the prompt: the shell's own prompt, written where the
        -- cursor is, read "ai> >".
        print();
        return;
      end
      error(line, 0);
    end
    if line == nil or EXIT_LINES[line:match("^%s*(.-)%s*$"):lower()] then
      return;
    end
    if not line:match("^%s*$") then
      if history[#history] ~= line then
        history[#history + 1] = line;
      end
      screen.seen();
      -- Each question as the first: a gateway that restarted while the prompt waited is back
      -- (a daemon that backs off waits up to a minute), and a daemon that stopped says so.
      reachGateway();
      local failure = turn(line);
      if failure ~= nil then
        screen.line(failure, "red");
      end
    end
  end
end

local args = { ... };
if args[1] == "--help" or args[1] == "-h" then
  usage();
elseif args[1] == "--version" then
  print("ai " .. VERSION);
elseif args[1] == "--reset" then
  if #args > 1 then
    error("ai --reset: unexpected argument '" .. args[2] .. "'.\nRun: ai --help", 0);
  end
  reset();
elseif args[1] ~= nil and args[1]:sub(1, 1) == "-" then
  -- As sandbox's: a first word starting with "-" is an option (`ai -v` is not a question),
  -- and the help to read is on a line of its own, so the screen does not break it in two.
  error("ai: unknown option '" .. args[1] .. "'.\nRun: ai --help", 0);
elseif #args == 0 then
  conversation();
elseif table.concat(args, " "):match("^%s*$") then
  -- `ai ""` is a mistake of the command line, told before the gateway is asked (which said
  -- only "The question is empty", and an unavailable agent first), with what to type instead.
  error(MSG_EMPTY_QUESTION, 0);
else
  checkDaemon();
  local failure, answered = turn(table.concat(args, " "));
  if failure ~= nil then
    fail(failure);
  elseif not answered then
    -- The turn's line is on the screen already: fail without a second one (the shell prints
    -- no empty error), so shell.run("ai", ...) returns false, as for any failed program.
    error("", 0);
  end
end
