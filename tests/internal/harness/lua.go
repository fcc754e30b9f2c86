package harness

// WaitConnectedLua is the start of a test's program for a computer with the real daemon: it
// waits until the daemon says it is connected (libsandbox's status), leaving lib, the library,
// for the rest of the program.
const WaitConnectedLua = `
local lib = require('/apis/libsandbox')
while true do
  local st = lib.requestStatus()
  if st ~= nil and st.connected then break end
  sleep(0.2)
end
`
