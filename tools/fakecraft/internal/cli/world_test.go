package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer/machine"
)

// TestRunInAWorld: `fakecraft run --world FILE` boots the world file's other computers
// beside this one (its own entry gives it a position and peripherals, --attach adds more),
// and they talk over rednet; they stop when this computer's program ends.
func TestRunInAWorld(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "time_scale": 20,
  "computers": [
    { "id": 7, "position": [0, 64, 0], "peripherals": { "top": "modem" } },
    { "id": 8, "label": "echo", "position": [10, 64, 0], "peripherals": { "top": "modem" },
      "files": { "startup.lua": "rednet.open('top') rednet.host('echo', 'echo') while true do local from, m = rednet.receive('echo') rednet.send(from, 'echo: ' .. m, 'echo') end" } }
  ]
}`), 0o644))
	writeDisk(t, filepath.Join(dir, "pc"), map[string]string{"ask.lua": `
rednet.open("top")
local id
repeat id = rednet.lookup("echo", "echo") until id
rednet.send(id, "hi", "echo")
print(id, select(2, rednet.receive("echo")))
print(table.concat(peripheral.getNames(), ","))
`})
	code, out, errOut := bare(t, filepath.Join(dir, "pc"), "", "--id", "7", "--world", file, "--attach", "left=speaker", "ask")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "8\techo: hi\techo\n")
	assert.Contains(t, out, "top,left\n")
	assert.Empty(t, errOut)
}

// TestRunComputerTakesItsOwnEntry: the computer being run is its world file's entry, as
// the others are theirs: its label, a basic computer, its dir and its files (a program
// written there runs), not only its position and peripherals; --label wins.
func TestRunComputerTakesItsOwnEntry(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "computers": [
    { "id": 7, "label": "main", "basic": true, "dir": "pc7", "peripherals": { "top": "modem" },
      "files": { "prog.lua": "print(os.getComputerLabel(), term.isColour(), peripheral.getType('top')) fs.open('/made', 'w').close()" } }
  ]
}`), 0o644))
	root := repo(t, map[string]string{"trapos/.keep": ""})
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		all := append([]string{"run", "--root", root, "--bare", "--no-virtual-time", "--id", "7", "--world", file}, args...)
		code := MainWithInput(append(all, "prog"), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run()
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "main\tfalse\tmodem\n")
	assert.FileExists(t, filepath.Join(dir, "pc7", "made"))

	code, out, errOut = run("--label", "other")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "other\tfalse\tmodem\n")
}

// TestAWorldComputerIsTurnedOnAgain: a world computer shut down through its computer
// peripheral (wired_modem:CABLE:on) stays off until another computer turns it on, then
// boots again on the same disk with the label it had.
func TestAWorldComputerIsTurnedOnAgain(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "computers": [
    { "id": 7, "peripherals": { "back": "wired_modem:lan" } },
    { "id": 8, "label": "door", "peripherals": { "back": "wired_modem:lan:on" },
      "files": { "startup.lua": "if fs.exists('/booted') then peripheral.call('back', 'transmit', 1, 1, 'again ' .. os.getComputerLabel()) else os.setComputerLabel('gate') fs.open('/booted', 'w').close() end" } }
  ]
}`), 0o644))
	writeDisk(t, filepath.Join(dir, "pc"), map[string]string{"ask.lua": `
local m = peripheral.wrap("back")
m.open(1)
local c = peripheral.wrap("computer_0")
print("on", c.getID(), c.getLabel(), c.isOn())
c.shutdown()
while c.isOn() do os.sleep(0) end
print("off", c.getLabel(), c.isOn())
c.turnOn()
local _, _, _, _, message = os.pullEvent("modem_message")
print("heard", message, c.isOn())
`})
	code, out, errOut := bare(t, filepath.Join(dir, "pc"), "", "--id", "7", "--world", file, "ask")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "on\t8\tgate\ttrue\noff\tgate\tfalse\nheard\tagain gate\ttrue\n")
	assert.Empty(t, errOut)
}

// TestWorldTextEntersAsCCBytes: a world file's labels, file names and peripheral names,
// and --attach's side, are text outside and CC's bytes inside, as --label is: "bäd" is
// three bytes in game and the transcript shows it as written (they went in as UTF-8's
// bytes: "bÃ¤d", 4).
func TestWorldTextEntersAsCCBytes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "time_scale": 20,
  "computers": [
    { "id": 2, "label": "bäd", "position": [0, 64, 0], "dir": "two",
      "peripherals": { "drüben": "wired_modem:büro" },
      "files": { "grüße.txt": "x", "startup.lua": "rednet.open('dr\\252ben') local id = rednet.receive('q') rednet.send(id, os.getComputerLabel() .. ' ' .. #os.getComputerLabel() .. ' ' .. table.concat(fs.list('/'), ','), 'q')" } }
  ],
  "cables": { "büro": { "drücker_0": "printer" } }
}`), 0o644))
	writeDisk(t, filepath.Join(dir, "pc"), map[string]string{"ask.lua": `
for _, name in ipairs(peripheral.getNames()) do print(name, #name) end
for _, name in ipairs(peripheral.call("k\252che", "getNamesRemote")) do print(name, #name) end
rednet.open("k\252che")
rednet.send(2, "who", "q")
print((select(2, rednet.receive("q"))))
`})
	code, out, errOut := bare(t, filepath.Join(dir, "pc"), "", "--id", "1", "--world", file, "--attach", "küche=wired_modem:büro", "ask")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "küche\t5\ndrücker_0\t9\n")
	assert.Contains(t, out, "bäd 3 grüße.txt,rom,startup.lua\n")
	assert.FileExists(t, filepath.Join(dir, "two", "grüße.txt"))
	assert.Empty(t, errOut)
}

// TestWorldFileHostPathsAreRelativeToIt: a world file's drive:DIR and printer:FILE, like
// its dirs, are taken from the world file's directory (they were taken from wherever
// fakecraft ran: "music/Stal: no such file or directory").
func TestWorldFileHostPathsAreRelativeToIt(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"music/Stal": "not really music", "floppy/hello.txt": "hi"})
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "computers": [ { "id": 1, "peripherals": { "left": "drive:music/Stal", "right": "printer:pages.txt" } } ],
  "cables": { "lan": { "drive_0": "drive:floppy" } }
}`), 0o644))
	writeDisk(t, filepath.Join(dir, "pc"), map[string]string{"show.lua": `
local p = peripheral.wrap("right")
p.newPage() p.write("printed") p.endPage()
print(disk.getAudioTitle("left"))
`})
	code, out, errOut := bare(t, filepath.Join(dir, "pc"), "", "--id", "1", "--world", file, "show")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\nStal\n")
	pages, err := os.ReadFile(filepath.Join(dir, "pages.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(pages), "printed")
}

// TestAttachFlagErrors: a bad --attach or world file is a usage error naming the fix.
func TestAttachFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no side", []string{"--attach", "modem"}, `--attach "modem": want SIDE=TYPE[:ARG...]`},
		{"unknown type", []string{"--attach", "top=toaster"}, "No peripheral named toaster (one of "},
		{"bad argument", []string{"--attach", "top=monitor:9:9"}, "a monitor is 1x1 to 8x6 blocks, not 9x9"},
		{"taken side", []string{"--attach", "top=modem", "--attach", "TOP=speaker"}, "Peripheral already attached on side TOP"},
		{"no such disk", []string{"--attach", "left=drive:" + filepath.Join(dir, "nope")}, "no such file or directory"},
		// Extra arguments were dropped without a word, and a cable's were "name the cable".
		{"speaker argument", []string{"--attach", "top=speaker:3"}, "speaker:3: a speaker takes no arguments (want speaker)"},
		{"two cables", []string{"--attach", "top=wired_modem:a:b"}, `wired_modem:a:b: "b": the only word after the cable is on (want wired_modem:CABLE:[on])`},
		{"too many", []string{"--attach", "top=wired_modem:a:on:b"}, "wired_modem:a:on:b: too many arguments (want wired_modem:CABLE:[on])"},
		{"monitor size", []string{"--attach", "top=monitor:x:2"}, `monitor:x:2: width "x" and height "2" must be whole numbers of blocks`},
		// It made the world's disk 2147483648, which no CC disk can be.
		{"disk id past CC's", []string{"--attach", "left=drive:2147483648"}, "disk id 2147483648: CC's disk ids run from 0 to 2147483647"},
		// Every page printed was lost without a word.
		{"unwritable pages", []string{"--attach", "right=printer:" + filepath.Join(dir, "nope", "pages.txt")},
			"printer:" + filepath.Join(dir, "nope", "pages.txt") + ": cannot write the pages to " + filepath.Join(dir, "nope", "pages.txt") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := bare(t, dir, "", tc.args...)
			assert.Equal(t, ExitUsage, code)
			assert.Contains(t, errOut, tc.want)
		})
	}
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"computers": [{"id": 1, "peripheral": {}}]}`), 0o644))
	code, _, errOut := bare(t, dir, "", "--world", bad)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `unknown field "peripheral"`)

	// In a file of many computers, the message names the entry (it named only the field).
	for body, want := range map[string]string{
		`{"computers": [{"id": 1}, {"id": 11, "positon": [0, 0, 0]}]}`:                                                                                                         `world ` + bad + `: computers[1] (id 11): json: unknown field "positon"`,
		`{"computers": [{"id": 1}], "wires": [{"a": {"computer": 1, "side": "left"}, "c": {}}]}`:                                                                               `world ` + bad + `: wires[0]: json: unknown field "c"`,
		`{"computers": [{"id": 1}], "tme_scale": 2}`:                                                                                                                           `world ` + bad + `: json: unknown field "tme_scale"`,
		`{"computers": [{"id": 1}], "touching": [{"a": {"computer": 1, "side": "left"}, "c": {}}]}`:                                                                            `world ` + bad + `: touching[0]: json: unknown field "c"`,
		`{"computers": [{"id": 1, "peripherals": {"left": "modem"}}, {"id": 2}], "touching": [{"a": {"computer": 1, "side": "left"}, "b": {"computer": 2, "side": "right"}}]}`: `touching: computer 1's left: Peripheral already attached on side left`,
		// A position of two numbers put the computer at z 0 without a word.
		`{"computers": [{"id": 1}, {"id": 11, "position": [5, 64]}]}`: `world ` + bad + `: computers[1] (id 11): position is x, y and z: 3 numbers, not 2`,
		// Two names that are one in CC (a character past U+00FF is ?): one of them vanished
		// without a word.
		`{"computers": [{"id": 1}, {"id": 11, "files": {"日.txt": "a", "月.txt": "b"}}]}`:               `world ` + bad + `: computers[1] (id 11): files "日.txt" and "月.txt" are both "?.txt" in CC (a character past U+00FF becomes ?): rename one`,
		`{"computers": [{"id": 1, "peripherals": {"monitor_日": "monitor", "monitor_月": "speaker"}}]}`: `computers[0] (id 1): peripherals "monitor_日" and "monitor_月" are both "monitor_?"`,
		`{"computers": [{"id": 1}], "cables": {"lan": {"modem_0": "wired_modem:lan:on"}}}`:            `cable lan, modem_0: wired_modem:lan:on: a cable's own modem has no computer to connect (want wired_modem:CABLE:[on])`,
		`{"computers": [{"id": 1}], "cables": {"lan": {"drive_日": "drive", "drive_月": "drive"}}}`:     `world ` + bad + `: cable lan: peripherals "drive_日" and "drive_月" are both "drive_?"`,
	} {
		require.NoError(t, os.WriteFile(bad, []byte(body), 0o644))
		code, _, errOut = bare(t, dir, "", "--world", bad)
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, errOut, want)
	}
}

// TestREADMEWorldExample: the README's world file locates computer 1 with its GPS hosts,
// as the README says.
func TestREADMEWorldExample(t *testing.T) {
	root, err := machine.FindRepoRoot(".")
	require.NoError(t, err)
	example := filepath.Join(root, "tools", "fakecraft", "world", "testdata", "example.json")
	code, out, errOut := bare(t, t.TempDir(), "", "--world", example, "--id", "1", "gps", "locate")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "Position is 12,70,-3\n")
}

// TestAWorldsComputersAllowPrivateToo: --allow-private is the server's http rule, so the
// world file's other computers reach a loopback address too (a world of TrapOS computers
// linked to one gateway on 127.0.0.1); before, only the computer being run did, and the
// others got "Domain not permitted". Computer 8 says what its check answered, then lights
// the wire to the computer being run, which waits for it.
func TestAWorldsComputersAllowPrivateToo(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "computers": [
    { "id": 7, "files": { "wait.lua": "while not redstone.getInput('right') do os.pullEvent('redstone') end" } },
    { "id": 8, "dir": "pc8", "files": { "startup.lua": "local ok, err = http.checkURL('http://127.0.0.1:4444/') local f = fs.open('/checked', 'w') f.write(tostring(ok) .. ' ' .. tostring(err)) f.close() redstone.setOutput('left', true)" } }
  ],
  "wires": [ { "a": { "computer": 7, "side": "right" }, "b": { "computer": 8, "side": "left" } } ]
}`), 0o644))
	root := repo(t, map[string]string{"trapos/.keep": ""})
	for _, c := range []struct {
		flags []string
		want  string
	}{{nil, "false Domain not permitted"}, {[]string{"--allow-private"}, "true nil"}} {
		var out, errOut bytes.Buffer
		args := append([]string{"run", "--root", root, "--bare", "--no-virtual-time", "--time-limit", "30s", "--id", "7", "--world", file}, c.flags...)
		code := MainWithInput(append(args, "wait"), strings.NewReader(""), &out, &errOut)
		require.Equal(t, ExitOK, code, errOut.String())
		checked, err := os.ReadFile(filepath.Join(dir, "pc8", "checked"))
		require.NoError(t, err)
		assert.Equal(t, c.want, string(checked), "computer 8 with %v", c.flags)
	}
}

// TestShowScreens: --show-screens prints, when the computer stops, what a player walking
// round the world would read: the other computers' terminals (a server's error there) and
// the monitors (a program the monitor program ran on one); without it, nothing.
func TestShowScreens(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "computers": [
    { "id": 7, "position": [0, 64, 0], "peripherals": { "top": "monitor:2:1" } },
    { "id": 8, "position": [10, 64, 0],
      "files": { "startup.lua": "print('listening') rednet.open('top')" } }
  ],
  "cables": { "hall": { "monitor_0": "monitor" } }
}`), 0o644))
	code, out, errOut := bare(t, filepath.Join(dir, "pc"), "", "--id", "7", "--world", file, "--show-screens", "monitor", "top", "hello")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "Running hello on monitor top\n")
	assert.Contains(t, errOut, "fakecraft: computer 8's screen (51x19):\nCraftOS 1.9\nlistening\n"+
		"/startup.lua:1: No such modem: top\n")
	assert.Contains(t, errOut, "fakecraft: computer 7's top, a monitor (18x5):\nHello World!\n")
	assert.Contains(t, errOut, "fakecraft: cable hall's monitor_0, a monitor (7x5):\n(blank)\n")

	code, _, errOut = bare(t, filepath.Join(dir, "pc"), "", "--id", "7", "--world", file, "monitor", "top", "hello")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Empty(t, errOut)
}

// TestWorldComputersKeepDisksOfTheirOwn: two computers of a world given one directory are
// refused, naming both and the directory, before any boots: they would share every file,
// /.settings too, so one owner's `set sandbox.allow_files write` would be the other
// computer's as well, where in CC each computer has a disk of its own. So is the computer
// being run whose --dir is another computer's dir; before, both ran on one disk.
func TestWorldComputersKeepDisksOfTheirOwn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "computers": [
    { "id": 8, "dir": "shared", "files": { "startup.lua": "settings.set('sandbox.allow_files', 'write') settings.save()" } },
    { "id": 9, "dir": "shared" }
  ]
}`), 0o644))
	code, out, errOut := bare(t, filepath.Join(dir, "pc7"), "", "--id", "7", "--world", file)
	assert.Equal(t, ExitUsage, code, out)
	assert.Equal(t, "fakecraft: computers 8 and 9 both keep their files in "+filepath.Join(dir, "shared")+
		": each needs a dir of its own, as each CC computer has a disk of its own\n", errOut)
	assert.NoFileExists(t, filepath.Join(dir, "shared", ".settings"), "no computer booted")

	require.NoError(t, os.WriteFile(file, []byte(`{ "computers": [ { "id": 8, "dir": "pc8" } ] }`), 0o644))
	code, out, errOut = bare(t, filepath.Join(dir, ".", "pc8"), "", "--id", "7", "--world", file)
	assert.Equal(t, ExitUsage, code, out)
	assert.Equal(t, "fakecraft: computers 7 and 8 both keep their files in "+filepath.Join(dir, "pc8")+
		": each needs a dir of its own, as each CC computer has a disk of its own\n", errOut)
}

// TestWorldComputersKeepDisksOfTheirOwnThroughSymlinks: a dir named through a symlink is the
// directory it leads to, an existing one or one made under a symlinked parent: two such
// entries, or --dir and an entry, share a disk and are refused. The paths were compared as
// written, and both computers ran on one disk.
func TestWorldComputersKeepDisksOfTheirOwnThroughSymlinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir()) // the error names the resolved path
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "real"), 0o755))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "link")))
	file := filepath.Join(dir, "world.json")
	for body, shared := range map[string]string{
		`{ "computers": [ { "id": 8, "dir": "real" }, { "id": 9, "dir": "link" } ] }`:       "real",
		`{ "computers": [ { "id": 8, "dir": "real/pc" }, { "id": 9, "dir": "link/pc" } ] }`: filepath.Join("real", "pc"),
	} {
		require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
		code, out, errOut := bare(t, filepath.Join(dir, "pc7"), "", "--id", "7", "--world", file)
		assert.Equal(t, ExitUsage, code, out)
		assert.Equal(t, "fakecraft: computers 8 and 9 both keep their files in "+filepath.Join(dir, shared)+
			": each needs a dir of its own, as each CC computer has a disk of its own\n", errOut, body)
	}

	require.NoError(t, os.WriteFile(file, []byte(`{ "computers": [ { "id": 8, "dir": "real" } ] }`), 0o644))
	code, out, errOut := bare(t, filepath.Join(dir, "link"), "", "--id", "7", "--world", file)
	assert.Equal(t, ExitUsage, code, out)
	assert.Equal(t, "fakecraft: computers 7 and 8 both keep their files in "+filepath.Join(dir, "real")+
		": each needs a dir of its own, as each CC computer has a disk of its own\n", errOut)
}
