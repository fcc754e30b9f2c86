-- shutdown: turns the computer off.
print("Goodbye");
sleep(1);
os.shutdown();
