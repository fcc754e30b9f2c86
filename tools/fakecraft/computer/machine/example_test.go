package machine_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/luakit"
)

// An API of one's own is one function of the installers' signature: here a global greet,
// given to one machine through ExtraAPIs. An API every computer gets is the same function
// as a row of the table in computer/apis.go. The README's "Adding an API or a peripheral"
// shows this example.
func Example_extraAPI() {
	greet := func(L *lua.LState, e *computer.Env) error {
		L.SetGlobal("greet", L.NewFunction(func(L *lua.LState) int {
			// CC's Java APIs refuse anything but a string, and say so as CC does.
			name := luakit.StrictString(L, 1)
			L.Push(lua.LString(fmt.Sprintf("hello %s, from computer %d", name, e.ID())))
			return 1
		}))
		return nil
	}
	var transcript strings.Builder
	m, err := machine.New(machine.Options{
		ID:        7,
		Files:     map[string]string{"/greet.lua": `print(greet("Ada")) print(pcall(greet))`},
		Program:   "/greet.lua",
		Stdout:    &transcript,
		ExtraAPIs: []computer.Installer{greet},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := m.Run(ctx)
	// The transcript is the screen's lines as print wrapped them at its width, each kept with
	// the blank the wrap left at its end: shown here without it.
	for line := range strings.Lines(transcript.String()) {
		fmt.Println(strings.TrimRight(line, " \n"))
	}
	fmt.Println(res.OK, err)
	// Output:
	// hello Ada, from computer 7
	// false	/greet.lua:1: bad argument #1 (string
	// expected, got nil)
	// true <nil>
}
