// Package romfs embeds the files fakecraft gives a computer: the ROM (laid out as CC: Tweaked's,
// read-only at /rom) and fakecraft's launcher programs, which are not part of CC's ROM.
package romfs

import (
	"embed"
	"io/fs"
)

//go:embed all:rom all:launcher
var files embed.FS

// ROM returns the ROM tree, rooted so that "apis/parallel.lua" is /rom/apis/parallel.lua. It
// holds what CC: Tweaked's ROM holds at its top level and nothing else, so Lua that lists /rom
// sees what it would in the game.
func ROM() fs.FS { return sub("rom") }

// Launcher returns fakecraft's launcher programs (boot.lua, console.lua, spec.lua): what a
// TrapOS computer's shell runs at boot in fakecraft's place of a player. Like CC's bios.lua they
// are the emulator's, not the ROM's; the machine mounts them outside /rom.
func Launcher() fs.FS { return sub("launcher") }

func sub(dir string) fs.FS {
	tree, err := fs.Sub(files, dir)
	if err != nil {
		// fs.Sub only fails on an invalid path, and dir is a constant valid one.
		panic(err)
	}
	return tree
}
