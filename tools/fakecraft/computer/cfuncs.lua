-- Lua code that stands in for C functions. It is compiled under the chunk name "=[C]", so
-- error positions never point into it, as C Lua's never point into C (boot.go).
--
-- It makes pcall's coroutine body, and the library functions that call back into Lua code
-- (pairs' __pairs, an __index ipairs reads, table.sort's comparator, table.foreach/foreachi)
-- so that the callback can yield as in
-- CC: gopher-lua cannot yield through a Go function. Go library functions that call Lua
-- (tostring's __tostring, string.format's %s, load's reader, the metamethods of a table
-- table.concat, unpack, table.insert and table.remove follow) hand the call off to stand-ins
-- here (LState.HandOff), which run in their place. native.sort is gopher-lua's sort (its
-- errors placed again, cfuncs.go). string.gsub stays Go: written here it cost every call
-- (README, Known differences).
--
-- The debug hooks tell a stand-in's calls back from its own workings by how it holds what
-- it calls (the fork's callsBack): a function it was given is called from a local or as a
-- call's result (same(f)(...)), and fires its call and return, as one a Java function
-- calls in CC; a library function it uses itself is called through an upvalue, and fires
-- none.
local native = ...;
local pack, unpack, select, type, error, next = table.pack, table.unpack, select, type, error, next;
local getmetatable, rawget, native_sort, go_sortable = debug.getmetatable, rawget, native.sort, native.go_sortable;

local function same(f) return f; end

-- The body of a pcall coroutine. It is not a tail call, so error levels count it as the
-- frame of pcall itself.
local function trampoline(fn)
  return function(...)
    -- Called through same() so the callee has no name, as a function pcall calls in C
    -- Lua has none: argument errors read "bad argument #1 (...)", not "... to 'fn' (...)".
    local r = pack(same(fn)(...));
    return unpack(r, 1, r.n);
  end;
end

-- pcall and xpcall run the function in a coroutine and pass its yields outwards, so code
-- under pcall can still wait for events (gopher-lua cannot yield across its Go pcall). They
-- are written here so that they count as C, as CC's Java pcall does: an error's position
-- and error(msg, level) look past them (luakit's FrameAt).
local co_create, co_resume, co_status, pcall_yield =
  coroutine.create, coroutine.resume, coroutine.status, coroutine.yield;
local placed, set_error_handler, error_handler, shared =
  native.placed, native.set_error_handler, native.error_handler, native.shares_hooks;
-- NO_HANDLER is pcall's handler: none (xpcall's may be any value, nil or false included).
local NO_HANDLER = {};

local function callable(f)
  if type(f) == "function" then return f; end
  local mt = getmetatable(f);
  if type(mt) == "table" and mt.__call ~= nil then return f; end
  return nil;
end

-- resumed runs co, a pcall's coroutine, to its end, passing its yields outwards: its
-- results, or false and its error. The traceback of a coroutine suspended in here reads co,
-- the first parameter, to list the frames that yielded (luakit's suspendedIn).
local function resumed(co, handler, ...)
  local result = pack(co_resume(co, ...));
  while true do
    if not result[1] then
      -- A handler saw the error placed already and its result is its own.
      if handler == NO_HANDLER then return false, placed(result[2]); end
      return false, result[2];
    end
    if co_status(co) == "dead" then return unpack(result, 1, result.n); end
    result = pack(co_resume(co, pcall_yield(unpack(result, 2, result.n))));
  end
end

-- protected_by calls f in a coroutine of its own. With a handler (xpcall's), an error that
-- ends it is handed to the handler where it was raised, over the frames that raised it, as
-- Cobalt's ProtectedCall calls it, and the error is the handler's result (the fork's
-- SetErrorHandler: it may yield, and an error in it is "error in error handling").
local function protected_by(handler, f, ...)
  local fn = callable(f);
  if not fn then
    local err = "attempt to call a " .. type(f) .. " value";
    if handler == NO_HANDLER then return false, err; end
    local ok, handled = protected_by(NO_HANDLER, handler, err);
    if not ok then return false, "error in error handling"; end
    return false, handled;
  end
  -- The Lua wrapper matters: gopher-lua loses the arguments and errors of a coroutine whose
  -- body is a Go function. The coroutine's hook is the caller's, as Cobalt's pcall calls f
  -- in the caller's coroutine.
  local co = shared(co_create(trampoline(fn)));
  if handler ~= NO_HANDLER then set_error_handler(co, handler); end
  return resumed(co, handler, ...);
end

function pcall(...)
  if select("#", ...) == 0 then error("bad argument #1 (value expected)", 2); end
  return protected_by(NO_HANDLER, ...);
end

local function handled(f, handler, ...)
  return protected_by(handler, f, ...);
end

-- Cobalt refuses a missing function or handler, not a nil one.
function xpcall(...)
  local given = select("#", ...);
  if given < 2 then error(("bad argument #%d (value expected)"):format(given + 1), 2); end
  return handled(...);
end

-- coroutine.wrap stands in for Cobalt's, a Java function: its own errors (a missing function,
-- and a coroutine that is not suspended: dead, running or normal) are placed as Cobalt places
-- a Java function's error raised without a level, at the Lua code nearest on the stack
-- (native.raise: luakit.RaiseMessage), so under pcall(w) at the line that called pcall. An
-- error inside the coroutine passes as it was raised.
local raise = native.raise;
-- STAND_IN_POSITION is where gopher-lua places an error raised in a coroutine that holds no
-- Lua code but a body standing in for C.
local STAND_IN_POSITION = "^%[C%]:%d+: ";
function coroutine.wrap(f)
  -- Cobalt's Java check: its type errors name no argument.
  if type(f) ~= "function" then raise(("bad argument (function expected, got %s)"):format(type(f))); end
  local co = co_create(trampoline(f));
  return function(...)
    local status = co_status(co);
    if status ~= "suspended" then raise(("cannot resume %s coroutine"):format(status)); end
    local result = pack(co_resume(co, ...));
    if not result[1] then
      local err = result[2];
      -- A Go function as the coroutine's body: no Lua code to place its error at, as in CC.
      if type(err) == "string" then err = err:gsub(STAND_IN_POSITION, "", 1); end
      error(err, 0);
    end
    return unpack(result, 2, result.n);
  end;
end

-- Cobalt's coroutine.isyieldable and table.move are Java functions too; being set here, before
-- the libraries are laid out in Cobalt's order (cobaltlibs.go), they are in that order.
function coroutine.isyieldable()
  return true;
end

function table.move(a1, f, e, t, a2)
  a2 = a2 or a1;
  if e >= f then
    if t > e or t <= f or a1 ~= a2 then
      for i = 0, e - f do a2[t + i] = a1[f + i]; end
    else
      for i = e - f, 0, -1 do a2[t + i] = a1[f + i]; end
    end
  end
  return a2;
end

-- Cobalt's pairs(v): all that v's __pairs(v) returns, called so that it may yield (Cobalt
-- resumes it), else next, v, nil for any value, a table or not: a value next cannot walk
-- fails in the loop, at its first call of next.
function pairs(...)
  if select("#", ...) == 0 then error("bad argument #1 (value expected)", 2); end
  local value = ...;
  local meta, handler = getmetatable(value), nil;
  if meta ~= nil then handler = rawget(meta, "__pairs"); end
  if handler == nil then return next, value, nil; end
  return handler(value);
end

-- ipairs' iterator over a table with a metatable (ipairs in baselib.go): value[index + 1]
-- read by the VM, so that an __index function may yield, as off Cobalt's fast path. Any
-- other argument goes to the Go iterator, for its checks and errors.
local go_inext = native.inext;
function native.proxy_inext(value, index)
  if type(value) ~= "table" or type(index) ~= "number" or index % 1 ~= 0 then
    return go_inext(value, index);
  end
  index = index + 1;
  local element = value[index];
  if element == nil then return nil; end
  return index, element;
end

-- Raises Cobalt's "bad argument" when value is not of type want: its type checks name no
-- argument, and a missing one is nil.
local function check(value, want)
  if type(value) == want then return; end
  error(("bad argument (%s expected, got %s)"):format(want, type(value)), 3);
end

function table.foreach(t, f)
  check(t, "table");
  check(f, "function");
  for k, v in next, t do
    local r = f(k, v);
    if r ~= nil then return r; end
  end
end

function table.foreachi(t, f)
  check(t, "table");
  check(f, "function");
  for i = 1, #t do
    local r = f(i, t[i]);
    if r ~= nil then return r; end
  end
end

-- Lua's < for what table.sort compares with no comparator, calling __lt as a plain call so
-- that it may yield (the VM's own < would run it in a nested loop).
local function less_than(a, b)
  local ta, tb = type(a), type(b);
  if ta == tb and (ta == "number" or ta == "string") then return a < b; end
  local handler;
  if ta == tb then
    local meta = getmetatable(a);
    handler = meta and meta.__lt;
    if handler == nil then
      meta = getmetatable(b);
      handler = meta and meta.__lt;
    end
  end
  if handler == nil then
    -- The VM's own error, placed past the stand-ins at the Lua code nearest (even under a
    -- pcall that calls table.sort itself), as Cobalt places it.
    return a < b;
  end
  return not not handler(a, b);
end

-- Cobalt 0.9.4's table.sort is a heapsort (TableLib.Sort, read from its source and run), so
-- elements a comparator holds equal end in its order, a comparator is never "invalid"
-- (function(a, b) return true end sorts to something), and the comparator sees the pairs
-- Cobalt's shows it. Indices here count from 0, as its do; t[i + 1] is element i.

-- sift_down moves element root down the heap that ends at element last, ordered by the
-- comparator lt, or by less_than when lt is nil: less_than is called through its upvalue,
-- as the stand-in's own workings are, so that the debug hooks see no call of it, as Cobalt
-- compares without one (the fork's callsBack).
local function sift_down(t, lt, root, last)
  local root_value = t[root + 1];
  while root * 2 + 1 <= last do
    local child = root * 2 + 1;
    local child_value = t[child + 1];
    if child < last then
      local other = t[child + 2];
      local before;
      if lt then before = lt(child_value, other); else before = less_than(child_value, other); end
      if before then
        child = child + 1;
        child_value = other;
      end
    end
    local before;
    if lt then before = lt(root_value, child_value); else before = less_than(root_value, child_value); end
    if not before then return; end
    t[root + 1] = child_value;
    t[child + 1] = root_value;
    root = child; -- root_value is still the value at root
  end
end

local function heap_sort(t, lt)
  local count = #t;
  if count < 2 then return; end
  for start = (count - count % 2) / 2 - 1, 0, -1 do
    sift_down(t, lt, start, count - 1);
  end
  local last = count - 1;
  while last > 0 do
    local last_value, first_value = t[last + 1], t[1];
    t[last + 1] = first_value;
    t[1] = last_value;
    last = last - 1;
    sift_down(t, lt, 0, last);
  end
end

-- table.sort: gopher-lua's (in Go, much faster) for numbers or strings alone, whose order
-- is the same however they are sorted; Cobalt's heapsort for the rest: a comparator or an
-- __lt metamethod may yield there, and a mix fails at the pair Cobalt's compares first.
function table.sort(t, comp)
  check(t, "table");
  if comp == nil then
    if go_sortable(t) then return native_sort(t); end
    heap_sort(t, nil);
    return;
  end
  check(comp, "function");
  heap_sort(t, comp);
end

-- tostring's call of a __tostring (a function, a table with __call), handed off from Go
-- (format.go's luaToString) so that it may yield, as Cobalt resumes it: its first result,
-- whatever it is. The callbacks here are called through same() so that they have no name,
-- as when C calls them.
function native.tostring_meta(handler, value)
  return (same(handler)(value));
end

-- string.format from its first %s of a value with a __tostring on, handed off from Go
-- (format.go's luaStringFormat): each such __tostring is called here, so that it may
-- yield, and format_step formats on to the next one or the end.
local format_step = native.format_step;
function native.format_rest(handler, value, text, spec, index, arg, ...)
  while true do
    text, spec, index, arg, handler, value = format_step(text, (same(handler)(value)), spec, index, arg, ...);
    if spec == nil then return text; end
  end
end

-- load's reader, handed off from Go (lua52.go's luaLoad) so that it may yield, as Cobalt
-- resumes it: called until it returns nil or "", then what it read is loaded with load's
-- other arguments. As Cobalt's FunctionInputReader, a number is read as its text (Lua's
-- lua_isstring) and anything else refused; the reader runs protected, as Cobalt's load
-- calls it, so its error is load's nil, err.
local load_text, reader_not_string, concat = native.load_text, native.reader_not_string, table.concat;
local number_text = native.concat_piece;

-- read_all is all reader returns up to its end, or nil at a piece that is no string.
local function read_all(reader)
  local pieces, n = {}, 0;
  while true do
    local piece = same(reader)();
    if piece == nil or piece == "" then return concat(pieces); end
    local kind = type(piece);
    if kind == "number" then
      piece = number_text(piece);
    elseif kind ~= "string" then
      return nil;
    end
    n = n + 1;
    pieces[n] = piece;
  end
end

function native.load_reader(reader, ...)
  -- Under xpcall the reader's error goes through its handler, as Cobalt's load calls the
  -- reader with the running thread's error function.
  local ok, text = protected_by(error_handler(NO_HANDLER), read_all, reader);
  if not ok then return nil, text; end
  if text == nil then return nil, reader_not_string; end
  return load_text(text, ...);
end

-- table.concat, unpack, table.insert and table.remove of a table with a metatable, handed
-- off from Go (proxyhandoff.go): #t through __len and the elements through __index and
-- __newindex, read and written by the VM so that the metamethods may yield, as Cobalt
-- resumes them. native's checks raise the Go functions' errors.
local rawlen, int_length = rawlen, native.length;

-- #t as Cobalt's intLength: the raw length, or __len's result, which must be an integer.
local function length(t)
  local handler = rawget(getmetatable(t), "__len");
  if handler == nil then return rawlen(t); end
  return int_length(same(handler)(t));
end

local concat_args, concat_piece = native.concat_args, native.concat_piece;
function native.concat_proxy(t, ...)
  local sep, first, last = concat_args(length(t), ...);
  local pieces, n = {}, 0;
  for i = first, last do
    n = n + 1;
    pieces[n] = concat_piece(t[i]);
  end
  return concat(pieces, sep);
end

local unpack_range, unpack_count = native.unpack_range, native.unpack_count;
function native.unpack_proxy(t, ...)
  local first, last = unpack_range(t, ...);
  if last == nil then last = length(t); end
  local count = unpack_count(first, last);
  local values = {};
  for i = 1, count do values[i] = t[first + i - 1]; end
  return unpack(values, 1, count);
end

local insert_args = native.insert_args;
function native.insert_proxy(t, ...)
  local position = insert_args(t, ...);
  local value = select(select("#", ...), ...);
  if position == nil then
    t[length(t) + 1] = value;
    return;
  end
  local last = length(t) + 1;
  if position > last then last = position; end
  for i = last, position + 1, -1 do t[i] = t[i - 1]; end
  t[position] = value;
end

local remove_position = native.remove_position;
function native.remove_proxy(t, ...)
  local size = length(t);
  local position = remove_position(t, (...), size);
  if position > size then return; end
  local removed = t[position];
  while position < size do
    t[position] = t[position + 1];
    position = position + 1;
  end
  t[position] = nil;
  return removed;
end

-- The body of a helper coroutine that calls string.gsub's replacement function, so that the
-- function can yield (gsubyield.go). Each resume brings the coroutine the gsub runs in, a
-- function and its arguments; the helper yields ANSWERED and the function's first result,
-- then waits for the next call. A tail call, so a helper that runs many calls keeps one
-- frame. Levels and tracebacks in the function go on in owner, past gsub (luakit's
-- SetCallbackBody).
local ANSWERED = {};
local co_yield = native.yield;
local function gsub_helper(owner, fn, ...)
  return gsub_helper(co_yield(ANSWERED, (fn(...))));
end
native.gsub_helper, native.gsub_answered = gsub_helper, ANSWERED;

-- The wait of a main-thread function (task.go), handed off from Go: as CC's TaskCallback, it
-- pulls task_complete until the one of its task (an id, then a boolean), and returns what the
-- task left (native.task_results); any other event the coroutine is sent meanwhile is not its
-- own, and terminate ends the call, as a Java pullEvent does.
function native.task_wait(id)
  while true do
    local event = pack(pcall_yield("task_complete"));
    if event[1] == "terminate" then error("Terminated", 0); end
    if event[1] == "task_complete" and event[2] == id and type(event[3]) == "boolean" then
      return native.task_results(id);
    end
  end
end

return trampoline;
