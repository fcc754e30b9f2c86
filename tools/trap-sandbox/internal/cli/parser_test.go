package cli

import (
	"sync"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtParsers are the parsers that tests have built and let go, for the next test to parse
// with: kong.New interpolates every help string of the command tree with regular expressions,
// about 80 ms a parser under -race, and building one for every parse was over a quarter of
// this package's CPU.
var builtParsers struct {
	sync.Mutex
	free []*reusableParser
}

// reusableParser is a parser over a CLI of its own that can be put back as NewParser made it.
// Parse alone cannot be run twice: kong keeps a parse's state in its model (a value's Set and
// Active, a node's Active, a flag's Negated) and resets only the values' fields, so what one
// parse was given reads as given to the next (TestAReusedParserParsesAsANewOne).
type reusableParser struct {
	root   *CLI
	parser *kong.Kong
	// restore puts back, one struct each, the root, the parser and every node, flag and value
	// of its model as kong.New left them: everything a parse may change, without a list of
	// kong's fields to keep up to date.
	restore []func()
}

func newReusableParser() (*reusableParser, error) {
	p := &reusableParser{root: &CLI{}}
	parser, err := NewParser(p.root)
	if err != nil {
		return nil, err
	}
	p.parser = parser
	keep(p, p.root)
	keep(p, p.parser)
	keep(p, p.parser.Model)
	err = kong.Visit(p.parser.Model.Node, func(node kong.Visitable, next kong.Next) error {
		switch node := node.(type) {
		case *kong.Node:
			keep(p, node)
		case *kong.Flag:
			keep(p, node)
		case *kong.Value:
			keep(p, node)
		}
		return next(nil)
	})
	return p, err
}

// keep saves *v as it is now for p's restore.
func keep[T any](p *reusableParser, v *T) {
	saved := *v
	p.restore = append(p.restore, func() { *v = saved })
}

// takeParser is NewParser(&root, options...) over a zero CLI (p.root), reused from the free
// parsers when one is: give it back when nothing reads its root or a context of its parses any
// more. options may be only those that set the parser's fields (kong.Writers, kong.Exit): they
// are applied to a built parser. A test of what NewParser reads as it builds (the version)
// calls NewParser itself.
func takeParser(t testing.TB, options ...kong.Option) *reusableParser {
	t.Helper()
	builtParsers.Lock()
	var p *reusableParser
	if n := len(builtParsers.free); n > 0 {
		p, builtParsers.free = builtParsers.free[n-1], builtParsers.free[:n-1]
	}
	builtParsers.Unlock()
	if p == nil {
		var err error
		p, err = newReusableParser()
		require.NoError(t, err)
	} else {
		for _, restore := range p.restore {
			restore()
		}
	}
	for _, option := range options {
		require.NoError(t, option.Apply(p.parser))
	}
	return p
}

// giveBack frees p for the next takeParser.
func (p *reusableParser) giveBack() {
	builtParsers.Lock()
	builtParsers.free = append(builtParsers.free, p)
	builtParsers.Unlock()
}

// newTestParser is takeParser for the rest of the test: a gateway it starts may read its
// flags until the test ends.
func newTestParser(t testing.TB, options ...kong.Option) (*CLI, *kong.Kong) {
	t.Helper()
	p := takeParser(t, options...)
	t.Cleanup(p.giveBack)
	return p.root, p.parser
}

// parseError is the error a command line is refused with (nil: none), parsed as main parses it
// (kong.Exit does nothing). Its parser is given back at once, so a table of command lines takes
// one parser: only the error's text and type are the caller's to read, not its Context.
func parseError(t testing.TB, args ...string) error {
	t.Helper()
	p := takeParser(t, kong.Exit(func(int) {}))
	defer p.giveBack()
	_, err := p.parser.Parse(args)
	return err
}

// TestAReusedParserParsesAsANewOne: a parser given back and taken again parses each command
// line as a parser NewParser has just built does, whatever the parse before set. Kong keeps a
// parse's state in its model: on a parser only reset by Parse, `ping` after `ping 7:a` (its
// traposId still marked as given) was refused as "missing positional arguments <traposId>",
// where trap-sandbox says `expected "<traposId>"`.
func TestAReusedParserParsesAsANewOne(t *testing.T) {
	clearEnv(t)
	p := takeParser(t)
	p.giveBack()
	for _, args := range [][]string{
		{"ping", "--url", "http://127.0.0.1:1", "--timeout", "5s", "7:a"},
		{"ping"},
		{"tokens", "add", "alice", "laptop", "--expires", "1h"},
		{"tokens", "add"},
		{"--listen", "127.0.0.1:0", "--no-mcp", "--log-level", "debug", "--replica", "r1"},
		{},
		{"--replica", "r2"},
		{"computers", "revoke", "7:a", "--url", "http://127.0.0.1:1"},
		{"computers"},
	} {
		var want CLI
		fresh, err := NewParser(&want, kong.Exit(func(int) { t.Fatal("kong tried to exit") }))
		require.NoError(t, err)
		_, wantErr := fresh.Parse(args)

		reused := takeParser(t, kong.Exit(func(int) { t.Fatal("kong tried to exit") }))
		require.Same(t, p, reused, "the parser the line before gave back")
		_, err = reused.parser.Parse(args)
		if wantErr != nil {
			assert.EqualError(t, err, wantErr.Error(), "%q", args)
		} else {
			assert.NoError(t, err, "%q", args)
			assert.Equal(t, want, *reused.root, "%q", args)
		}
		reused.giveBack()
	}
}
