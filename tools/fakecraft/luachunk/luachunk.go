// Package luachunk compiles CC: Tweaked Lua for gopher-lua. gopher-lua speaks Lua 5.1 with
// a few 5.2 pieces; CC's Cobalt speaks 5.2 with some 5.3. Where the difference is decided
// before the VM runs, it is closed here: passes over the source text for the numerals and the
// string escapes gopher-lua's lexer reads differently (numerals.go, escapes.go), AST rewrites
// for _ENV, for how `..` formats numbers (concat.go) and for generic fors, whose iterator
// gopher-lua calls where it cannot yield (forlist.go), and one that gives multiple
// assignments Lua's order (assign.go). The escape pass and the _ENV, `..` and for rewrites run
// only on chunks that can need them; the numerals pass reads every chunk but copies only one
// holding a numeral gopher-lua would misread.
package luachunk

import (
	"fmt"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Chunk is a compiled chunk.
type Chunk struct {
	// Proto is the compiled function.
	Proto *lua.FunctionProto
	// Wrapped says Proto is the outer chunk of wrapChunk: call it with the environment and
	// concatOperand to get the chunk's function.
	Wrapped bool
}

// Compile parses and compiles src under name, the display name errors show.
// A chunk that does not compile gives a *SyntaxError worded as Lua's, where the checker
// (syntax.go) finds the error; else gopher-lua's own error.
func Compile(src, name string) (Chunk, error) {
	original := src
	src, malformed := rewriteNumerals(src)
	if malformed {
		return Chunk{}, luaSyntaxError(original, name, fmt.Errorf("%s: malformed number", name))
	}
	if needsEscapePass(src) {
		src, malformed = rewriteEscapes(src)
		if malformed {
			return Chunk{}, luaSyntaxError(original, name, fmt.Errorf("%s: malformed escape sequence", name))
		}
	}
	stmts, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return Chunk{}, luaSyntaxError(original, name, err)
	}
	if se := tooDeepError(original, name); se != nil {
		return Chunk{}, se
	}
	env := mentionsEnv(src)
	if env {
		resolveEnv(stmts)
	}
	// After resolveEnv, which would take the hidden names for globals.
	concat := false
	if mayConcat(src) {
		concat = rewriteConcat(stmts)
	}
	if mayLoopOver(src) {
		rewriteGenericFors(stmts)
	}
	if env || concat {
		stmts = wrapChunk(stmts)
	}
	fixAssignments(stmts)
	proto, err := lua.Compile(stmts, name)
	if err != nil {
		return Chunk{}, luaSyntaxError(original, name, err)
	}
	return Chunk{Proto: proto, Wrapped: env || concat}, nil
}

// wrapChunk makes the chunk the body of a function returned by an outer chunk that declares
// `local _ENV, (concat operand) = ...`, so that both are upvalues of everything in it; Load
// runs the outer chunk with the environment table and concatOperand to get the chunk
// itself.
func wrapChunk(chunk []ast.Stmt) []ast.Stmt {
	inner := &ast.FunctionExpr{ParList: &ast.ParList{HasVargs: true}, Stmts: chunk}
	if len(chunk) > 0 {
		inner.SetLine(0)
		inner.SetLastLine(chunk[len(chunk)-1].LastLine())
	}
	decl := &ast.LocalAssignStmt{Names: []string{envName, concatName}, Exprs: []ast.Expr{&ast.Comma3Expr{}}}
	ret := &ast.ReturnStmt{Exprs: []ast.Expr{inner}}
	return []ast.Stmt{decl, ret}
}

// chunks holds compiled chunks by chunk name with the source each was compiled from: every
// computer loads the ROM and bios at boot, and every computer of a process (a test's, a
// world's) the same files of its disk (a client's libraries, daemons and programs) at each
// boot. gopher-lua's prototypes are immutable once compiled, so computers share them. An entry
// serves only the very source it holds: a file changed is compiled again and replaces it.
var chunks = chunkCache{byName: map[string]cached{}, maxBytes: chunkCacheMaxBytes}

// chunkCacheMaxBytes bounds the source chunks holds (and so the prototypes compiled from it):
// a process whose computers load more than that, under more names, compiles what does not fit
// each time, as without the cache.
const chunkCacheMaxBytes = 32 << 20

type chunkCache struct {
	mu       sync.Mutex
	byName   map[string]cached // guarded by mu
	bytes    int               // guarded by mu: the sum of len(src) over byName
	maxBytes int               // the most bytes may be
}

type cached struct {
	src   string
	chunk Chunk
}

// get returns the chunk compiled from src under chunkName, if the cache holds it.
func (c *chunkCache) get(chunkName, src string) (Chunk, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byName[chunkName]
	if !ok || e.src != src {
		return Chunk{}, false
	}
	return e.chunk, true
}

// put keeps chunk, compiled from src, under chunkName, in place of what it held there, unless
// the cache would grow past maxBytes.
func (c *chunkCache) put(chunkName, src string, chunk Chunk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.byName[chunkName]; ok {
		delete(c.byName, chunkName)
		c.bytes -= len(old.src)
	}
	if c.bytes+len(src) > c.maxBytes {
		return
	}
	c.byName[chunkName] = cached{src: src, chunk: chunk}
	c.bytes += len(src)
}

// cacheable says whether a chunk name is a file's ("@/path", the ROM's and a disk's files;
// "@bios.lua"), or fakecraft's own bios piece: a source loaded under such a name is loaded
// again under it, where a chunk named by its text or "=name" is most often made once (load of
// a string a program built).
func cacheable(chunkName string) bool {
	return strings.HasPrefix(chunkName, "@") || chunkName == "=[C]"
}

// compileNamed is Compile under a Lua chunk name, sharing the result for file chunks with the
// same source and remembering the name for debug.getinfo (Source).
func compileNamed(src, chunkName string) (Chunk, error) {
	shared := cacheable(chunkName)
	if shared {
		if c, ok := chunks.get(chunkName, src); ok {
			return c, nil
		}
	}
	c, err := Compile(src, DisplayName(chunkName))
	if err != nil {
		return c, err
	}
	if "@"+c.Proto.SourceName != chunkName {
		rememberName(c.Proto, chunkName)
	}
	if shared {
		chunks.put(chunkName, src, c)
	}
	return c, nil
}

// Load compiles src under the Lua chunk name chunkName ("@/path", "=name" or source text)
// and returns its function with env as its environment (and _ENV).
func Load(L *lua.LState, src, chunkName string, env *lua.LTable) (*lua.LFunction, error) {
	c, err := compileNamed(src, chunkName)
	if err != nil {
		return nil, err
	}
	fn := L.NewFunctionFromProto(c.Proto)
	fn.Env = env
	if !c.Wrapped {
		return fn, nil
	}
	L.Push(fn)
	L.Push(env)
	operand := L.NewFunction(concatOperand)
	operand.Hidden = true // the source calls no function there: a hook sees none, an error names the operand
	L.Push(operand)
	L.Call(2, 1)
	inner := L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	return inner, nil
}

func init() {
	// Lua 5.1's implicit `arg` table in vararg functions is gone in 5.2 (CC): with it, the
	// function wrapChunk makes would hide a program's global `arg`.
	lua.CompatVarArg = false
}
