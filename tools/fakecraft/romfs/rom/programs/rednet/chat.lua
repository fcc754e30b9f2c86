-- chat host <hostname> | chat join <hostname> <nickname>: CC's chat rooms over rednet. The
-- host serves a room under a rednet hostname; each joiner talks to it with tables sent on
-- the "chat" protocol, in CC: Tweaked's format (sType, nUserID, sUsername, sText), so a
-- room hosted here takes CC's own clients and the other way round. The messages are CC's.

local PROTOCOL = "chat";
-- Seconds between the pings each side sends; a side that has not answered the last one by
-- the next is gone.
local PING_PERIOD = 15;
-- The room's commands, in the order /help lists them (/logout is the joiner's own).
local COMMAND_ORDER = { "me", "nick", "users", "help" };

local highlight = term.isColour() and colours.yellow or colours.white;
local text_colour = colours.white;

local function usage()
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usages:");
  print(name .. " host <hostname>");
  print(name .. " join <hostname> <nickname>");
end

-- Opens the first modem for rednet. Returns whether there is one, and its name when this
-- program opened it (so it closes it again at the end).
local function open_modem()
  for _, name in ipairs(peripheral.getNames()) do
    if peripheral.getType(name) == "modem" then
      if rednet.isOpen(name) then return true, nil; end
      rednet.open(name);
      return true, name;
    end
  end
  print("No modems found.");
  return false, nil;
end

local function close_modem(opened)
  if opened ~= nil then rednet.close(opened); end
end

-- The key of a user in the host's table: a number id by its text, never the number (an id is
-- random up to 2^31, and gopher-lua keeps an integer key below 2^26 in a table's array part,
-- filling every slot before it first, in Go that no abort interrupts: fakecraft's README,
-- "Sparse integer keys"); the text is marked so that no other id has the same key.
local function user_key(user_id)
  if type(user_id) == "number" then return "#" .. tostring(user_id); end
  if type(user_id) == "string" then return "'" .. user_id; end
  return user_id;
end

local function host(hostname)
  local found, opened = open_modem();
  if not found then return; end
  rednet.host(PROTOCOL, hostname);
  print("0 users connected.");

  -- By user_key(user id): { id = computer id, user_id = user id, name = nickname, ponged = bool }.
  local users, count = {}, 0;
  local pings = {}; -- timer id -> user id

  local function tell(user_id, text)
    local user = users[user_key(user_id)];
    if user then rednet.send(user.id, { sType = "text", nUserID = user_id, sText = text }, PROTOCOL); end
  end
  local function tell_all(text)
    for _, user in pairs(users) do tell(user.user_id, text); end
  end
  -- Rewrites the count on the line above the cursor, where it stands.
  local function show_count()
    local _, y = term.getCursorPos();
    term.setCursorPos(1, y - 1);
    term.clearLine();
    print(count .. (count == 1 and " user connected." or " users connected."));
  end
  local function ping(user_id)
    local user = users[user_key(user_id)];
    rednet.send(user.id, { sType = "ping to client", nUserID = user_id }, PROTOCOL);
    user.ponged = false;
    pings[os.startTimer(PING_PERIOD)] = user_id;
  end
  local function leave(user_id, why)
    tell_all("* " .. users[user_key(user_id)].name .. why);
    users[user_key(user_id)] = nil;
    count = count - 1;
    show_count();
  end

  local commands = {
    me = function(user, words)
      if words == "" then return tell(user.user_id, "* Usage: /me [words]"); end
      tell_all("* " .. user.name .. " " .. words);
    end,
    nick = function(user, nickname)
      if nickname == "" then return tell(user.user_id, "* Usage: /nick [nickname]"); end
      local old = user.name;
      user.name = nickname;
      tell_all("* " .. old .. " is now known as " .. nickname);
    end,
    users = function(user)
      tell(user.user_id, "* Connected Users:");
      local names = "*";
      for _, other in pairs(users) do names = names .. " " .. other.name; end
      tell(user.user_id, names);
    end,
    help = function(user)
      tell(user.user_id, "* Available commands:");
      tell(user.user_id, "* /" .. table.concat(COMMAND_ORDER, " /") .. " /logout");
    end,
  };

  local function said(user, text)
    local command = text:match("^/([a-z]+)");
    if command == nil then return tell_all("<" .. user.name .. "> " .. text); end
    local run = commands[command];
    if run == nil then return tell(user.user_id, "* Unrecognised command: /" .. command); end
    run(user, text:sub(#command + 3));
  end

  local function serve()
    while true do
      local event, a, b, c = os.pullEvent();
      if event == "timer" then
        local user_id = pings[a];
        pings[a] = nil;
        if user_id and users[user_key(user_id)] then
          if users[user_key(user_id)].ponged then ping(user_id); else leave(user_id, " has timed out"); end
        end
      elseif event == "rednet_message" and c == PROTOCOL and type(b) == "table" then
        local sender, message = a, b;
        local user_id = message.nUserID;
        if message.sType == "login" then
          if user_id and message.sUsername then
            users[user_key(user_id)] = { id = sender, user_id = user_id, name = message.sUsername };
            count = count + 1;
            show_count();
            tell_all("* " .. message.sUsername .. " has joined the chat");
            ping(user_id);
          end
        elseif users[user_key(user_id)] and users[user_key(user_id)].id == sender then
          local user = users[user_key(user_id)];
          if message.sType == "logout" then
            leave(user_id, " has left the chat");
          elseif message.sType == "chat" and message.sText then
            said(user, message.sText);
          elseif message.sType == "ping to server" then
            rednet.send(sender, { sType = "pong to client", nUserID = user_id }, PROTOCOL);
          elseif message.sType == "pong to server" then
            user.ponged = true;
          end
        end
      end
    end
  end

  -- Terminating ends the room: everyone in it is told to go.
  local ok, err = pcall(serve);
  if not ok then printError(err); end
  for _, user in pairs(users) do
    rednet.send(user.id, { sType = "kick", nUserID = user.user_id }, PROTOCOL);
  end
  rednet.unhost(PROTOCOL);
  close_modem(opened);
end

local function join(hostname, nickname)
  local found, opened = open_modem();
  if not found then return; end
  write("Looking up " .. hostname .. "... ");
  local server = rednet.lookup(PROTOCOL, hostname);
  if server == nil then
    print("Failed.");
    close_modem(opened);
    return;
  end
  print("Success.");

  local me = math.random(1, 2147483647);
  local function send(message)
    message.nUserID = me;
    rednet.send(server, message, PROTOCOL);
  end
  send({ sType = "login", sUsername = nickname });

  -- The screen: a title row, the room's history, and a prompt row at the bottom.
  local width, height = term.getSize();
  local parent = term.current();
  local title = window.create(parent, 1, 1, width, 1, true);
  local history = window.create(parent, 1, 2, width, height - 2, true);
  local prompt = window.create(parent, 1, height, width, 1, true);
  history.setCursorPos(1, height - 2);
  term.clear();
  term.setTextColour(text_colour);
  term.redirect(prompt);

  local heading = nickname .. " on " .. hostname;
  title.setTextColour(highlight);
  title.setCursorPos(math.floor(width / 2 - #heading / 2), 1);
  title.clearLine();
  title.write(heading);
  prompt.restoreCursor();

  -- Adds a line to the history: room notices (* …) in the highlight colour, and a
  -- speaker's <name> too.
  local function show(message)
    term.redirect(history);
    print();
    local marked = message:match("^%*") and message or message:match("^<[^>]*>");
    if marked then
      term.setTextColour(highlight);
      write(marked);
      term.setTextColour(text_colour);
    end
    write(message:sub(#(marked or "") + 1));
    term.redirect(prompt);
    prompt.restoreCursor();
  end

  local function listen()
    local ponged, ping_timer = true, os.startTimer(0);
    while true do
      local event, a, b, c = os.pullEvent();
      if event == "timer" and a == ping_timer then
        if not ponged then
          show("Server timeout.");
          return;
        end
        send({ sType = "ping to server" });
        ponged, ping_timer = false, os.startTimer(PING_PERIOD);
      elseif event == "term_resize" then
        local w, h = parent.getSize();
        title.reposition(1, 1, w, 1);
        history.reposition(1, 2, w, h - 2);
        prompt.reposition(1, h, w, 1);
      elseif event == "rednet_message" and a == server and c == PROTOCOL and type(b) == "table" and b.nUserID == me then
        if b.sType == "text" and b.sText then
          show(b.sText);
        elseif b.sType == "ping to client" then
          send({ sType = "pong to server" });
        elseif b.sType == "pong to client" then
          ponged = true;
        elseif b.sType == "kick" then
          return;
        end
      end
    end
  end

  local function talk()
    local sent = {};
    while true do
      prompt.setCursorPos(1, 1);
      prompt.clearLine();
      prompt.setTextColour(highlight);
      prompt.write(": ");
      prompt.setTextColour(text_colour);
      local line = read(nil, sent);
      if line:match("^/logout") then return; end
      send({ sType = "chat", sText = line });
      sent[#sent + 1] = line;
    end
  end

  local ok, err = pcall(parallel.waitForAny, listen, talk);
  term.redirect(parent);
  local _, h = term.getSize();
  term.setCursorPos(1, h);
  term.clearLine();
  term.setCursorBlink(false);
  if not ok then printError(err); end
  send({ sType = "logout" });
  close_modem(opened);
  print("Disconnected.");
end

local command, name, nickname = ...;
if command == "host" and name ~= nil then
  host(name);
elseif command == "join" and name ~= nil and nickname ~= nil then
  join(name, nickname);
else
  usage();
end
