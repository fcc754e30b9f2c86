-- about: says which CraftOS and which host this is, as CC: Tweaked's program (fakecraft's
-- _HOST names fakecraft). Written for fakecraft from CC's documentation.

term.setTextColour(colours.yellow);
print(os.version() .. " on " .. _HOST);
term.setTextColour(colours.white);
