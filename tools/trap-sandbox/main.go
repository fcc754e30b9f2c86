// Command trap-sandbox is the sandbox HTTP service: `go run ./tools/trap-sandbox` serves the
// trapos-cloud-gateway WebSocket on :4444. See docs/protocol.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"

	"trap-sandbox/internal/cli"
)

func main() {
	var root cli.CLI
	parser, err := cli.NewParser(&root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trap-sandbox:", err)
		os.Exit(2)
	}
	kctx, err := parser.Parse(os.Args[1:])
	if err != nil {
		// kong's own exit status for this is 80, which says nothing to anyone.
		var perr *kong.ParseError
		if errors.As(err, &perr) {
			_ = perr.Context.PrintUsage(true)
		}
		fmt.Fprintf(os.Stderr, "trap-sandbox: %v\n(a usage error: exit status %d; `trap-sandbox --help` lists the commands, `trap-sandbox serve --help` the gateway's flags)\n", err, cli.ExitUsage)
		os.Exit(cli.ExitUsage)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	kctx.BindTo(ctx, (*context.Context)(nil))
	kctx.BindTo(os.Stderr, (*io.Writer)(nil))
	kctx.Bind(cli.Stdout{Writer: os.Stdout})
	kctx.Bind(cli.Stdin{Reader: os.Stdin})
	err = kctx.Run()
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trap-sandbox:", err)
		os.Exit(cli.ExitError)
	}
}
