// Command fakecraft is a headless CC: Tweaked computer: `fakecraft run PROGRAM` and
// `fakecraft test SPECS`. See README.md.
package main

import (
	"os"

	"fakecraft/internal/cli"
)

func main() {
	os.Exit(cli.MainWithInput(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
