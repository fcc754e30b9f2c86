package world

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"fakecraft/computer"
	"fakecraft/peripheral/drive"
)

// diskDir is where the world keeps floppy disks' files, one directory per id, as CC keeps
// them in computercraft/disk/<id>.
const diskDir = "disk"

// Floppy is the world's floppy disk id: the same item (label included) each time it is
// asked for.
func (w *World) Floppy(id int) *drive.Media {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m := w.floppies[id]; m != nil {
		return m
	}
	m := drive.NewFloppy(id, filepath.Join(w.dir, diskDir, strconv.Itoa(id)))
	w.floppies[id] = m
	return m
}

// Media is the item that what names, as a drive spec reads it: a number is the world's
// floppy disk of that id, a host directory is a disk of its files, a host file is a music
// disc named after it.
func (w *World) Media(what string) (*drive.Media, error) { return w.media(what, true) }

// media is Media; without hostPaths (what a program asks for) only floppy disks, so no
// program reaches the host's files.
func (w *World) media(what string, hostPaths bool) (*drive.Media, error) {
	if id, err := strconv.Atoi(what); err == nil {
		// CC numbers disks as it numbers computers, from 0 up in a Java int.
		if id < 0 || id > computer.MaxID {
			return nil, fmt.Errorf("disk id %d: CC's disk ids run from 0 to %d", id, computer.MaxID)
		}
		return w.Floppy(id), nil
	}
	if !hostPaths {
		return nil, fmt.Errorf("%q is not a disk id (host files and directories can only be inserted from outside the computer: --attach, world files, Go)", what)
	}
	st, err := os.Stat(what)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file or directory", what)
	case err != nil:
		return nil, err
	case st.IsDir():
		return drive.NewFolder(what), nil
	}
	return drive.NewRecord(drive.Title(filepath.Base(what))), nil
}
