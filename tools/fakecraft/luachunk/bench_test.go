package luachunk

import (
	"io/fs"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"fakecraft/romfs"
)

// romSource is a real chunk of typical size: the ROM's io library.
func romSource(b *testing.B) string {
	b.Helper()
	data, err := fs.ReadFile(romfs.ROM(), "apis/io.lua")
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// BenchmarkCompileStock is gopher-lua's own parse and compile, the cost before any rewrite.
func BenchmarkCompileStock(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		stmts, err := parse.Parse(strings.NewReader(src), "io")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := lua.Compile(stmts, "io"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileNoRewrite is Compile on a chunk that needs neither the escape pass nor the
// _ENV rewrite: their checks, and the concatenation rewrite (io.lua concatenates variables).
func BenchmarkCompileNoRewrite(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		if _, err := Compile(src, "io"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileEscapes adds the escape pass (the source gets a \x escape).
func BenchmarkCompileEscapes(b *testing.B) {
	src := romSource(b) + "\nlocal _ = \"\\x41\"\n"
	for b.Loop() {
		if _, err := Compile(src, "io"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileEnv adds the _ENV rewrite (the source mentions _ENV).
func BenchmarkCompileEnv(b *testing.B) {
	src := romSource(b) + "\nlocal _ = _ENV\n"
	for b.Loop() {
		if _, err := Compile(src, "io"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEscapePassOnly and BenchmarkEnvRewriteOnly are the passes alone.
func BenchmarkEscapePassOnly(b *testing.B) {
	src := romSource(b) + "\nlocal _ = \"\\x41\"\n"
	for b.Loop() {
		_, _ = rewriteEscapes(src)
	}
}

func BenchmarkEnvRewriteOnly(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		b.StopTimer()
		stmts, err := parse.Parse(strings.NewReader(src), "io")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		resolveEnv(stmts)
	}
}

// BenchmarkConcatRewriteOnly is the concatenation rewrite alone (io.lua has 26 `..`).
func BenchmarkConcatRewriteOnly(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		b.StopTimer()
		stmts, err := parse.Parse(strings.NewReader(src), "io")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rewriteConcat(stmts)
	}
}

// BenchmarkAssignRewriteOnly is the multiple-assignment walk alone (it runs on every chunk).
func BenchmarkAssignRewriteOnly(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		b.StopTimer()
		stmts, err := parse.Parse(strings.NewReader(src), "io")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		fixAssignments(stmts)
	}
}

// BenchmarkForRewriteOnly is the generic for walk alone (it runs on every chunk holding
// "for" and "in").
func BenchmarkForRewriteOnly(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		b.StopTimer()
		stmts, err := parse.Parse(strings.NewReader(src), "io")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rewriteGenericFors(stmts)
	}
}

// BenchmarkNumeralsPass is the numerals pass alone on a chunk with nothing to rewrite, the
// cost every compile pays (compare BenchmarkCompileStock).
func BenchmarkNumeralsPass(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		if out, malformed := rewriteNumerals(src); malformed || len(out) != len(src) {
			b.Fatal("io.lua has no numeral to rewrite")
		}
	}
}

// BenchmarkNestingCheckOnly is the checker's read of a chunk that compiled, for nesting
// past Cobalt's 200 syntax levels (tooDeepError): every chunk of 200 bytes or more.
func BenchmarkNestingCheckOnly(b *testing.B) {
	src := romSource(b)
	for b.Loop() {
		if se := tooDeepError(src, "io"); se != nil {
			b.Fatal(se)
		}
	}
}
