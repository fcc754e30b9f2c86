-- libsandboxevents: the os events between TrapOS programs and the sandbox daemon.
-- Only the daemon touches the socket; programs talk to it with these events (libsandbox
-- wraps them as request/requestStatus/reconnect).

-- CC's event queue holds at most this many events and drops the rest.
local EVENT_QUEUE_LIMIT = 256;
local EVENT_SEND = "trapos_sandbox_send";                     -- (messageId, type, payload)
local EVENT_REPLY = "trapos_sandbox_reply";                   -- (messageId, ok, payload, error)
local EVENT_CONNECTED = "trapos_sandbox_connected";           -- (traposId)
local EVENT_RECONNECT = "trapos_sandbox_reconnect";           -- ()
local EVENT_STOP = "trapos_sandbox_stop";                     -- (): `sandbox stop`
-- A waiting daemon tries at once instead of at its timer: `sandbox health`, `sandbox status`.
local EVENT_RETRY_NOW = "trapos_sandbox_retry_now";           -- ()
local EVENT_STATUS_REQUEST = "trapos_sandbox_status_request"; -- (replyId)
local EVENT_STATUS = "trapos_sandbox_status";                 -- (replyId, status)
-- The daemon's marker, queued behind the gateway's frames to learn how many wait at once.
local EVENT_MARK = "trapos_sandbox_mark";                     -- (token)
-- The screen's marker, queued behind a screen.input's events: back, they have left the queue.
local EVENT_INPUT_TYPED = "trapos_sandbox_input_typed";       -- (token)
-- A program serving request types (libsandbox.serve) and the daemon that routes them to it.
local EVENT_SERVE_OFFER = "trapos_sandbox_serve_offer";       -- (providerId, {type, ...}), every heartbeat
local EVENT_SERVE_WITHDRAW = "trapos_sandbox_serve_withdraw"; -- (providerId)
local EVENT_SERVE_REQUEST = "trapos_sandbox_serve_request";   -- (providerId, requestId, type, payload)
local EVENT_SERVE_REPLY = "trapos_sandbox_serve_reply";       -- (requestId, ok, payload, error)

return {
  EVENT_QUEUE_LIMIT = EVENT_QUEUE_LIMIT,
  EVENT_SEND = EVENT_SEND,
  EVENT_REPLY = EVENT_REPLY,
  EVENT_CONNECTED = EVENT_CONNECTED,
  EVENT_RECONNECT = EVENT_RECONNECT,
  EVENT_STOP = EVENT_STOP,
  EVENT_RETRY_NOW = EVENT_RETRY_NOW,
  EVENT_STATUS_REQUEST = EVENT_STATUS_REQUEST,
  EVENT_STATUS = EVENT_STATUS,
  EVENT_MARK = EVENT_MARK,
  EVENT_INPUT_TYPED = EVENT_INPUT_TYPED,
  EVENT_SERVE_OFFER = EVENT_SERVE_OFFER,
  EVENT_SERVE_WITHDRAW = EVENT_SERVE_WITHDRAW,
  EVENT_SERVE_REQUEST = EVENT_SERVE_REQUEST,
  EVENT_SERVE_REPLY = EVENT_SERVE_REPLY,
};
