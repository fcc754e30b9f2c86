-- peripherals: lists the peripherals the computer can use, each with its types.

local names = peripheral.getNames();
print("Attached Peripherals:");
if #names == 0 then
  print("None");
  return;
end
for _, name in ipairs(names) do
  print(name .. " (" .. table.concat({ peripheral.getType(name) }, ", ") .. ")");
end
