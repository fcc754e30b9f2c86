-- apis: lists the APIs loaded on this computer (every global table but _G, and the
-- shell's own shell, package and multishell), as CC: Tweaked's program. Written for
-- fakecraft from CC's documentation.

local names = {};
for name, value in pairs(_G) do
  if type(name) == "string" and type(value) == "table" and name ~= "_G" then
    names[#names + 1] = name;
  end
end
names[#names + 1] = "shell";
names[#names + 1] = "package";
if multishell then
  names[#names + 1] = "multishell";
end
table.sort(names);
textutils.pagedTabulate(names);
