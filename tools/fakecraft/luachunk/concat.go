package luachunk

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"fakecraft/ccformat"
)

// concatName is the hidden local (an upvalue of every function of the chunk) holding
// concatOperand. The lexer cannot produce the name, so no chunk can shadow or reach it.
const concatName = "(concat operand)"

// mayConcat says whether src may hold a `..`; chunks that do not are compiled as they are.
func mayConcat(src string) bool { return strings.Contains(src, "..") }

// concatOperand is what `..` does to an operand before concatenating, as CC: Tweaked does:
// a number becomes CC's text for it (%.14g, nan, inf); anything else passes unchanged, so
// strings, errors and __concat metamethods behave as gopher-lua's OP_CONCAT makes them.
func concatOperand(L *lua.LState) int {
	if n, ok := L.Get(1).(lua.LNumber); ok {
		L.Push(lua.LString(ccformat.FormatNumber(float64(n))))
		return 1
	}
	L.SetTop(1)
	return 1
}

// rewriteConcat makes `..` format numbers as CC does. gopher-lua's OP_CONCAT turns a number
// into text with Go's formatting (1/3 gives 0.3333333333333333, CC 0.33333333333333), and
// nothing outside the VM can replace it; so each operand that may be a number is routed
// through concatName first. Operands that cannot be numbers are left alone: string
// literals, nested concatenations, tables, functions, booleans, nil, comparisons, `not`,
// `#` (a length is a whole number, printed alike), calls of tostring, and the variable of a
// numeric for that counts in whole steps (wholeLoop). A number literal is
// turned into its text at compile time. It reports whether any operand was routed, i.e.
// whether the chunk needs concatName.
func rewriteConcat(chunk []ast.Stmt) bool {
	w := &concatRewriter{wholeLoops: map[string]int{}}
	w.block(chunk)
	return w.routed
}

// concatRewriter walks a chunk rewriting concatenation operands in place.
type concatRewriter struct {
	routed bool
	// wholeLoops counts, by name, the enclosing numeric fors whose variable is always a
	// whole number (wholeLoop): gopher-lua prints those as CC does, so they need no routing.
	wholeLoops map[string]int
	// probe set: rewrite nothing, only note in bound the names the walk binds or assigns.
	probe bool
	bound map[string]bool
}

func (w *concatRewriter) block(stmts []ast.Stmt) {
	for i, s := range stmts {
		stmts[i] = w.stmt(s)
	}
}

// stmt rewrites s in place, or returns what replaces it.
func (w *concatRewriter) stmt(s ast.Stmt) ast.Stmt {
	body := w.block
	switch s := s.(type) {
	case *ast.AssignStmt:
		for _, lhs := range s.Lhs {
			if id, ok := lhs.(*ast.IdentExpr); ok {
				w.bind(id.Value)
			}
		}
	case *ast.LocalAssignStmt:
		w.bind(s.Names...)
	case *ast.NumberForStmt:
		w.bind(s.Name)
		if !w.probe && w.wholeLoop(s) {
			body = func(stmts []ast.Stmt) {
				w.wholeLoops[s.Name]++
				w.block(stmts)
				w.wholeLoops[s.Name]--
			}
		}
	case *ast.GenericForStmt:
		w.bind(s.Names...)
	case *ast.FuncDefStmt:
		if id, ok := s.Name.Func.(*ast.IdentExpr); ok {
			w.bind(id.Value)
		}
	}
	rewriteStatementParts(s, w.expr, body)
	return s
}

func (w *concatRewriter) function(f *ast.FunctionExpr) {
	w.bind(f.ParList.Names...)
	w.block(f.Stmts)
}

// bind notes names bound or assigned, when probing.
func (w *concatRewriter) bind(names ...string) {
	if w.probe {
		for _, n := range names {
			w.bound[n] = true
		}
	}
}

// largestWholeStep bounds a whole loop's start and step, so that its variable cannot
// reach 2^63 (where gopher-lua's printing of whole numbers stops matching CC's) in any
// number of iterations a computer could run.
const largestWholeStep = 1 << 20

// wholeLoop says whether s's variable is always a whole number below 2^63: its start and
// step are whole literals of at most largestWholeStep, and its body never binds or assigns
// the name (so every use of it there is the loop's variable).
func (w *concatRewriter) wholeLoop(s *ast.NumberForStmt) bool {
	if !wholeLiteral(s.Init) || (s.Step != nil && !wholeLiteral(s.Step)) {
		return false
	}
	p := &concatRewriter{probe: true, bound: map[string]bool{}}
	p.block(s.Stmts)
	return !p.bound[s.Name]
}

// wholeLiteral says whether e is a whole number literal (or its negation) of at most
// largestWholeStep.
func wholeLiteral(e ast.Expr) bool {
	if m, ok := e.(*ast.UnaryMinusOpExpr); ok {
		e = m.Expr
	}
	n, ok := e.(*ast.NumberExpr)
	if !ok {
		return false
	}
	f := float64(lua.LVAsNumber(lua.LString(n.Value)))
	return f == math.Trunc(f) && math.Abs(f) <= largestWholeStep
}

func (w *concatRewriter) expr(e ast.Expr) ast.Expr {
	if f, ok := e.(*ast.FunctionExpr); ok {
		w.function(f)
		return e
	}
	rewriteSubexpressions(e, w.expr)
	if c, ok := e.(*ast.StringConcatOpExpr); ok {
		// A chain a .. b .. c nests to the right and compiles to one OP_CONCAT; its inner
		// links pass operand unchanged, so each operand is routed once.
		c.Lhs, c.Rhs = w.operand(c.Lhs), w.operand(c.Rhs)
	}
	return e
}

// operand is e as a concatenation operand: folded to a string when it is a number
// literal, routed through concatName when it may be a number, else unchanged.
func (w *concatRewriter) operand(e ast.Expr) ast.Expr {
	if w.probe {
		return e
	}
	switch x := e.(type) {
	case *ast.IdentExpr:
		if w.wholeLoops[x.Value] > 0 {
			return e
		}
	case *ast.StringExpr, *ast.StringConcatOpExpr, *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr,
		*ast.TableExpr, *ast.FunctionExpr, *ast.RelationalOpExpr, *ast.UnaryNotOpExpr,
		*ast.UnaryLenOpExpr:
		return e
	case *ast.NumberExpr:
		return numberText(e, x.Value, false)
	case *ast.UnaryMinusOpExpr:
		if n, ok := x.Expr.(*ast.NumberExpr); ok {
			return numberText(e, n.Value, true)
		}
	case *ast.FuncCallExpr:
		if id, ok := x.Func.(*ast.IdentExpr); ok && id.Value == "tostring" {
			return e
		}
	}
	w.routed = true
	fn := &ast.IdentExpr{Value: concatName}
	call := &ast.FuncCallExpr{Func: fn, Args: []ast.Expr{e}}
	for _, n := range []ast.Expr{fn, call} {
		setLines(n, e.Line(), e.LastLine())
	}
	return call
}

// numberText is the string literal CC's `..` makes of the number literal text (negated
// when negative), as gopher-lua's compiler reads the literal.
func numberText(at ast.Expr, literal string, negative bool) ast.Expr {
	n := lua.LVAsNumber(lua.LString(literal))
	if negative {
		n = -n
	}
	s := &ast.StringExpr{Value: ccformat.FormatNumber(float64(n))}
	setLines(s, at.Line(), at.LastLine())
	return s
}
