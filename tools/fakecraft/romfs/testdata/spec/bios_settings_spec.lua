-- Specs for the settings the bios defines, as CC: Tweaked 1.113.1's bios does: each one's
-- default, type and description (what `set NAME` shows a player).

describe("the bios's settings", function()
  -- name, default, type, description; motd.enable's default is fakecraft's own (README,
  -- Known differences: no message of the day at boot).
  local defined = {
    { "shell.allow_startup", true, "boolean", "Run startup files when the computer turns on." },
    { "shell.allow_disk_startup", true, "boolean", "Run startup files from disk drives when the computer turns on." },
    { "shell.autocomplete", true, "boolean", "Autocomplete program and arguments in the shell." },
    { "edit.autocomplete", true, "boolean", "Autocomplete API and function names in the editor." },
    { "lua.autocomplete", true, "boolean", "Autocomplete API and function names in the Lua REPL." },
    { "edit.default_extension", "lua", "string", 'The file extension the editor will use if none is given. Set to "" to disable.' },
    { "paint.default_extension", "nfp", "string", 'The file extension the paint program will use if none is given. Set to "" to disable.' },
    { "list.show_hidden", false, "boolean", 'Whether the list program show  hidden files (those starting with ".").' },
    { "motd.enable", false, "boolean", "Display a random message when the computer starts up." },
    { "motd.path", "/rom/motd.txt:/motd.txt", "string", 'The path to load random messages from. Should be a colon (":") separated string of file paths.' },
    { "lua.warn_against_use_of_local", true, "boolean", "Print a message when input in the Lua REPL starts with the word 'local'. Local variables defined in the Lua REPL are be inaccessible on the next input." },
    { "lua.function_args", true, "boolean", "Show function arguments when printing functions." },
    { "lua.function_source", false, "boolean", "Show where a function was defined when printing functions." },
    { "bios.strict_globals", false, "boolean", "Prevents assigning variables into a program's environment. Make sure you use the local keyword or assign to _G explicitly." },
    { "shell.autocomplete_hidden", false, "boolean", 'Autocomplete hidden files and folders (those starting with ".").' },
  };

  it("defines CC's, with its defaults, types and descriptions", function()
    for _, def in ipairs(defined) do
      local details = settings.getDetails(def[1]);
      expect({ def[1], details.default, details.type, details.description }):same(def);
    end
  end);

  -- CC's os.run, as its shell, makes a program's new global an error under
  -- bios.strict_globals, placed where the program made it; the environment gets itself as
  -- _ENV first (CC's bios does so before it guards the table).
  it("makes os.run refuse a program's new global under bios.strict_globals", function()
    local path = "/bios_settings_strict.lua";
    local file = fs.open(path, "w");
    file.write("local ok = 1\n_G.BIOS_SPEC_RESULT = 'G'\ncounter = 1\n");
    file.close();
    local errors = {};
    stub(_G, "printError", function(msg) errors[#errors + 1] = msg; end);

    settings.set("bios.strict_globals", true);
    local env = {};
    local ok = os.run(env, path);
    settings.unset("bios.strict_globals");
    expect(ok):eq(false);
    -- Cobalt shows a path of more than 22 bytes as "..." and its last 22.
    expect(errors):same({ "...os_settings_strict.lua:3: Attempt to create global counter" });
    expect(rawget(env, "_ENV")):eq(env);
    expect(_G.BIOS_SPEC_RESULT):eq("G");

    env = {};
    ok = os.run(env, path);
    fs.delete(path);
    _G.BIOS_SPEC_RESULT = nil;
    expect(ok):eq(true);
    -- Cobalt shows a path of more than 22 bytes as "..." and its last 22.
    expect(errors):same({ "...os_settings_strict.lua:3: Attempt to create global counter" });
    expect(env.counter):eq(1);
    expect(rawget(env, "_ENV")):eq(nil);
  end);

  it("defines bios.use_multishell on a colour computer only", function()
    local details = settings.getDetails("bios.use_multishell");
    if term.isColour() then
      expect({ details.default, details.type, details.description }):same({
        true, "boolean", 'Allow running multiple programs at once, through the use of the "fg" and "bg" programs.',
      });
    else
      expect(details.default):eq(nil);
    end
  end);
end);
