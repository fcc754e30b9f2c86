-- reboot: restarts the computer; its files and settings stay.
print("Goodbye");
sleep(1);
os.reboot();
