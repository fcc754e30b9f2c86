// Command trap-sandbox is the sandbox HTTP service: `go run ./tools/trap-sandbox` serves the
// trapos-cloud-gateway WebSocket on :4444 (docs/protocol.md), the host's HTTP API, the web
// console and /mcp. Its other commands are the host's client of that service (`trap-sandbox
// --help`); all of them live in internal/cli.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"trap-sandbox/internal/cli"
	"trap-sandbox/internal/server"
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
		status := cli.ReportUsageError(err, os.Stderr)
		cli.AnswerUsageError(context.Background(), err, cli.Stdin{Reader: os.Stdin}, cli.Stdout{Writer: os.Stdout})
		os.Exit(status)
	}

	// SIGHUP (the terminal or SSH session that started it closed; there is no configuration to
	// reload) stops it as cleanly as SIGTERM: at Go's default it would end the process at once,
	// without close frames to the computers or a replica's goodbye to the others.
	// Its cause names the signal, which the gateway's "shutting down" line says.
	ctx, stop := server.NotifyStop(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	kctx.BindTo(ctx, (*context.Context)(nil))
	kctx.BindTo(os.Stderr, (*io.Writer)(nil))
	kctx.Bind(cli.Stdout{Writer: os.Stdout})
	kctx.Bind(cli.Stdin{Reader: os.Stdin})
	err = cli.RunCommand(kctx) // its error names the command
	stop()
	if err != nil {
		os.Exit(cli.ReportError(err, os.Stderr)) // 1, or 3 for a copy that left something out
	}
}
