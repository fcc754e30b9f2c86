-- commands: CC: Tweaked's API for running Minecraft commands, which exists only on command
-- computers. fakecraft has none (they are out of its scope), so this file only keeps CC's
-- place for it and refuses to load, as CC's does on an ordinary computer. The bios never
-- loads it: it loads the files of /rom/apis, not its directories.

if not commands then
  error("Cannot load command API on normal computer", 2);
end
