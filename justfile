# trap-sandbox task menu. Every recipe runs from the repository root; only Go (1.26.8+) is needed.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Oldest Go release the workspace builds with (go.work says go 1.26.8).
min_go := "1.26.8"

# List the recipes
default:
    @just --list --unsorted

# Run the trap-sandbox gateway (port 4444, or SANDBOX_LISTEN; flags: `go run ./tools/trap-sandbox serve --help`)
sandbox-serve:
    go run ./tools/trap-sandbox

# One computer runs both, so that what a trapos spec leaves behind (a program on the shell's stack of running
# programs, which the ROM specs check) fails here; TestLuaSpecs runs them apart, a computer per directory.

# trapos/'s specs and fakecraft's ROM specs run on fakecraft's virtual clock (`fakecraft test`'s default), then trapos/'s
# again on a pocket computer (26x20), as TestLuaSpecs does. (`just --list` shows only the line above a recipe.)
# Run the Lua specs of trapos/ (and fakecraft's ROM specs) inside fakecraft, on a computer and on a pocket computer
craftos-test:
    go run ./tools/fakecraft test trapos/tests tools/fakecraft/romfs/testdata/spec
    go run ./tools/fakecraft test --pocket trapos/tests

# The name the seed's plan uses for the recipe above; kept so `just _craftos-test` still works
alias _craftos-test := craftos-test

# Run every Go test of the workspace with the race detector
test:
    go test -race work

# Check formatting (gofmt), go vet, and that every Lua file parses
check:
    #!/usr/bin/env bash
    set -euo pipefail
    unformatted=$(gofmt -l tools tests *.go)
    if [ -n "$unformatted" ]; then
      echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
    fi
    go vet work
    go test -count=1 ./tests/luasyntax ./tests/packages

# Run what CI runs
ci:
    bash .ci/run

# Run fakecraft, the headless CC: Tweaked computer (e.g. `just fakecraft run sandbox health`)
[positional-arguments]
fakecraft *args:
    go run ./tools/fakecraft "$@"

# Download every module's dependencies and check the toolchain versions
install:
    #!/usr/bin/env bash
    set -euo pipefail
    for dir in $(go list -m -f '{{{{.Dir}}'); do
      echo "go mod download in ${dir#"$PWD/"}"
      # Each module on its own: in workspace mode go would add every module's sums to go.work.sum.
      (cd "$dir" && GOWORK=off go mod download)
    done
    have=$(go env GOVERSION); have=${have#go}
    echo "go version: $have (need >= {{min_go}})"
    if [ "$(printf '%s\n%s\n' "{{min_go}}" "$have" | sort -V | head -n1)" != "{{min_go}}" ]; then
      echo "Go $have is older than {{min_go}}" >&2; exit 1
    fi
    just --version

# Benchmark the real gateway against a bare WebSocket baseline (docs/performance.md; ~50 s)
bench *ARGS:
    go run ./tests/bench -computers 50 -duration 3s -rounds 6 -http-clients 16 -idle 10000 {{ARGS}}
