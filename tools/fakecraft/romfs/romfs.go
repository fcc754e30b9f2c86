// Package romfs embeds fakecraft's ROM: the tree a computer sees, read-only, at /rom.
package romfs

import (
	"embed"
	"io/fs"
)

//go:embed all:rom
var files embed.FS

// ROM returns the ROM tree, rooted so that "apis/parallel.lua" is /rom/apis/parallel.lua.
func ROM() fs.FS {
	sub, err := fs.Sub(files, "rom")
	if err != nil {
		// fs.Sub only fails on an invalid path, and "rom" is a constant valid one.
		panic(err)
	}
	return sub
}
