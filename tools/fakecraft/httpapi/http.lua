-- fakecraft's http API: the blocking and argument-checking layer over the native
-- functions in Go. It behaves like CC: Tweaked 1.113's http API; it is written for
-- fakecraft, not taken from CC's ROM.
--
-- Loaded once per computer with (native); returns the `http` table and the factory that
-- builds each websocket handle's receive function.
local native = ...

local type, select, error, pcall = type, select, error, pcall
local getinfo = debug and debug.getinfo
local co_yield = coroutine.yield

local METHODS = {
  GET = true, POST = true, HEAD = true, OPTIONS = true,
  PUT = true, DELETE = true, PATCH = true, TRACE = true,
}

-- The "a, b or c" list of cc.expect's messages; "nil" is accepted but not listed.
local function type_names(...)
  local names = {}
  for i = 1, select("#", ...) do
    local name = select(i, ...)
    if name ~= "nil" then names[#names + 1] = name end
  end
  if #names == 0 then return "nil" end
  if #names == 1 then return names[1] end
  return table.concat(names, ", ", 1, #names - 1) .. " or " .. names[#names]
end

-- cc.expect's argument check: the message names the caller when it was called by a
-- name from Lua code ("bad argument #1 to 'get' (string expected, got nil)"), and is bare
-- when called from pcall or Go.
local function expect(index, value, ...)
  local t = type(value)
  for i = 1, select("#", ...) do
    if t == select(i, ...) then return value end
  end
  local name
  if getinfo then
    local ok, info = pcall(getinfo, 3, "nS")
    if ok and info and info.what ~= "C" and info.what ~= "G" and type(info.name) == "string"
      and info.name:match("^[%a_][%w_]*$") then
      name = info.name
    end
  end
  if name then
    error(("bad argument #%d to '%s' (%s expected, got %s)"):format(index, name, type_names(...), t), 3)
  end
  error(("bad argument #%d (%s expected, got %s)"):format(index, type_names(...), t), 3)
end

-- A field of an options table. CC's message really lacks the closing parenthesis.
local function check_key(options, key, ty, optional)
  local value = options[key]
  local value_ty = type(value)
  if (value ~= nil or not optional) and value_ty ~= ty then
    error(("bad field '%s' (%s expected, got %s"):format(key, ty, value_ty), 4)
  end
end

-- body: nil = optional string, true = required string, false = must be absent.
local function check_request_options(options, body)
  check_key(options, "url", "string")
  if body == false then
    check_key(options, "body", "nil")
  else
    check_key(options, "body", "string", not body)
  end
  check_key(options, "headers", "table", true)
  check_key(options, "method", "string", true)
  check_key(options, "redirect", "boolean", true)
  check_key(options, "timeout", "number", true)
  if options.method and not METHODS[options.method:upper()] then
    error("Unsupported HTTP method", 3)
  end
end

local function check_websocket_options(options)
  check_key(options, "url", "string")
  check_key(options, "headers", "table", true)
  check_key(options, "timeout", "number", true)
end

-- Starts a request and waits for its result, swallowing every other event as CC does.
local function wait_request(url, ...)
  local ok, err = native.request(...)
  if not ok then return nil, err end
  while true do
    local event, p1, p2, p3 = os.pullEvent()
    if event == "http_success" and p1 == url then
      return p2
    elseif event == "http_failure" and p1 == url then
      return nil, p2, p3
    end
  end
end

local http = {}

function http.request(url, body, headers, binary)
  local actual_url
  if type(url) == "table" then
    check_request_options(url)
    actual_url = url.url
  else
    expect(1, url, "string")
    expect(2, body, "string", "nil")
    expect(3, headers, "table", "nil")
    expect(4, binary, "boolean", "nil")
    actual_url = url
  end
  local ok, err = native.request(url, body, headers, binary)
  if not ok then os.queueEvent("http_failure", actual_url, err) end
  return ok, err
end

function http.get(url, headers, binary)
  if type(url) == "table" then
    check_request_options(url, false)
    return wait_request(url.url, url)
  end
  expect(1, url, "string")
  expect(2, headers, "table", "nil")
  expect(3, binary, "boolean", "nil")
  return wait_request(url, url, nil, headers, binary)
end

function http.post(url, body, headers, binary)
  if type(url) == "table" then
    check_request_options(url, true)
    return wait_request(url.url, url)
  end
  expect(1, url, "string")
  expect(2, body, "string")
  expect(3, headers, "table", "nil")
  expect(4, binary, "boolean", "nil")
  return wait_request(url, url, body, headers, binary)
end

function http.checkURLAsync(url)
  expect(1, url, "string")
  return native.checkURL(url)
end

function http.checkURL(url)
  expect(1, url, "string")
  local ok, err = native.checkURL(url)
  if not ok then return ok, err end
  while true do
    local _, event_url, result, message = os.pullEvent("http_check")
    if event_url == url then return result, message end
  end
end

function http.websocketAsync(url, headers)
  local actual_url
  if type(url) == "table" then
    check_websocket_options(url)
    actual_url = url.url
  else
    expect(1, url, "string")
    expect(2, headers, "table", "nil")
    actual_url = url
  end
  local ok, err = native.websocket(url, headers)
  if not ok then os.queueEvent("websocket_failure", actual_url, err) end
  -- CC returns these too, undocumented.
  return ok, err
end

function http.websocket(url, headers)
  local actual_url
  if type(url) == "table" then
    check_websocket_options(url)
    actual_url = url.url
  else
    expect(1, url, "string")
    expect(2, headers, "table", "nil")
    actual_url = url
  end
  local ok, err = native.websocket(url, headers)
  if not ok then return ok, err end
  while true do
    local event, event_url, param = os.pullEvent()
    if event == "websocket_success" and event_url == actual_url then
      return param
    elseif event == "websocket_failure" and event_url == actual_url then
      return false, param
    end
  end
end

-- ws.receive([timeout]) for one socket. start checks the argument and the socket and
-- returns the timeout timer's id; like CC's native method it then waits with a nil
-- filter, so every unrelated event is consumed.
local function make_receive(url, start, is_closed)
  return function(timeout)
    local ok, timer = pcall(start, timeout)
    if not ok then error(timer, 2) end
    while true do
      local event, p1, p2, p3 = co_yield()
      if event == "terminate" then
        error("Terminated", 0)
      elseif event == "websocket_message" and p1 == url then
        return p2, p3
      elseif event == "websocket_closed" and p1 == url and is_closed() then
        return
      elseif event == "timer" and timer ~= nil and p1 == timer then
        return
      end
    end
  end
end

return http, make_receive
