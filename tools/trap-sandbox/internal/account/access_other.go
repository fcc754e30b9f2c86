//go:build !unix

package account

// fileOwner is unknown here: notOurs then leaves the error as it is.
func fileOwner(string) string { return "" }

func currentUser() string { return "this user" }

func readOnlyFS(error) bool { return false }

func noSpace(error) bool { return false }
