-- cc.internal.event: event helpers the ROM's programs share (internal to the ROM, as in CC:
-- Tweaked; not for programs of your own). Written for fakecraft from CC's documentation.

--- Drops the `char` event that may follow the `key` event a program just handled (a program
--- that closes on Q, so the Q does not turn up at the shell's prompt). The key's char comes
--- in the same tick, so this waits at most one tick (a zero timer) and stops at the first
--- char, key or key_up; events pulled on the way are dropped.
local function discard_char()
  local timer = os.startTimer(0);
  while true do
    local event, id = os.pullEvent();
    if event == "timer" and id == timer then
      return;
    end
    if event == "char" or event == "key" or event == "key_up" then
      os.cancelTimer(timer);
      return;
    end
  end
end

return { discard_char = discard_char };
