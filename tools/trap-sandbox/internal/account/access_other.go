//go:build !unix

package account

// fileOwner is unknown here: notOurs then leaves the error as it is.
func fileOwner(string) string { return "" }

// closedDir is unknown here: shut then leaves the error as it is.
func closedDir(string) (string, string, uint32) { return "", "", 0 }

func currentUser() string { return "this user" }

func readOnlyFS(error) bool { return false }

func noSpace(error) bool { return false }

// heldByAnother is unknown here: Close then says the -wal is kept, as if no other process had
// the store open.
func heldByAnother(string) bool { return false }

// whileNoOneElse is unknown here: a backup then leaves the -wal and -shm it made.
func whileNoOneElse(string, func()) bool { return false }
