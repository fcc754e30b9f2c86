-- time: the in-game time of day and the day number.

print("The time is " .. textutils.formatTime(os.time(), false) .. " on Day " .. os.day());
