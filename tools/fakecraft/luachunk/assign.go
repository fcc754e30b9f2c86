package luachunk

import (
	"strconv"

	"github.com/yuin/gopher-lua/ast"
)

// gopher-lua compiles the values of a multiple assignment straight into the registers of
// the local variables it assigns, one after another, so a value read after its variable was
// assigned sees the new value: `a, b = b, a` leaves both 2 (gopher-lua issue #440). Lua
// evaluates every value (and every table and key on the left) before it assigns any. The
// rewrite below restores that order from outside the VM:
//
//	a, t[k] = e1, e2
//
// becomes
//
//	do
//	  local (*temporary 1), (*temporary 2) = t, k
//	  local (*temporary 3), (*temporary 4) = e1, e2
//	  (*temporary 1)[(*temporary 2)] = (*temporary 4)
//	  a = (*temporary 3)
//	end
//
// assigning right to left as C Lua does. The temporaries' names cannot be written in Lua,
// so they never hide a name of the program's.

// temporaryName is the prefix of the rewrite's locals (Lua's debug names its unnamed
// registers "(*temporary)").
const temporaryName = "(*temporary"

// fixAssignments rewrites every multiple assignment in the chunk.
func fixAssignments(stmts []ast.Stmt) {
	(&assignFixer{}).block(stmts)
}

// assignFixer walks statements and the functions inside expressions.
type assignFixer struct {
	n int // temporaries made so far, for unique names
}

func (f *assignFixer) temporary(line int) *ast.IdentExpr {
	f.n++
	id := &ast.IdentExpr{Value: temporaryName + " " + strconv.Itoa(f.n) + ")"}
	setLines(id, line, line)
	return id
}

func (f *assignFixer) block(stmts []ast.Stmt) {
	for i, s := range stmts {
		f.stmt(s)
		if a, ok := s.(*ast.AssignStmt); ok && len(a.Lhs) > 1 {
			stmts[i] = f.split(a)
		}
	}
}

// split is the do-block that replaces the multiple assignment a.
func (f *assignFixer) split(a *ast.AssignStmt) ast.Stmt {
	line, last := a.Line(), a.LastLine()
	var places []string // the left side's tables and keys, evaluated first
	var placeExprs []ast.Expr
	targets := make([]ast.Expr, len(a.Lhs))
	for i, lhs := range a.Lhs {
		get, ok := lhs.(*ast.AttrGetExpr)
		if !ok {
			targets[i] = lhs
			continue
		}
		obj := f.temporary(get.Line())
		places, placeExprs = append(places, obj.Value), append(placeExprs, get.Object)
		key := get.Key
		if _, constant := key.(*ast.StringExpr); !constant {
			k := f.temporary(get.Line())
			places, placeExprs = append(places, k.Value), append(placeExprs, key)
			key = k
		}
		target := &ast.AttrGetExpr{Object: obj, Key: key}
		setLines(target, get.Line(), get.LastLine())
		target.SetMark(get.MarkLine(), get.Column()) // its error's mark stays under the program's "." or "["
		targets[i] = target
	}
	values := make([]*ast.IdentExpr, len(a.Lhs))
	names := make([]string, len(a.Lhs))
	for i := range values {
		values[i] = f.temporary(line)
		names[i] = values[i].Value
	}

	var body []ast.Stmt
	if len(places) > 0 {
		decl := &ast.LocalAssignStmt{Names: places, Exprs: placeExprs}
		setLines(decl, line, last)
		body = append(body, decl)
	}
	decl := &ast.LocalAssignStmt{Names: names, Exprs: a.Rhs}
	setLines(decl, line, last)
	body = append(body, decl)
	for i := len(targets) - 1; i >= 0; i-- {
		one := &ast.AssignStmt{Lhs: []ast.Expr{targets[i]}, Rhs: []ast.Expr{values[i]}}
		setLines(one, targets[i].Line(), targets[i].LastLine())
		body = append(body, one)
	}
	do := &ast.DoBlockStmt{Stmts: body}
	setLines(do, line, last)
	return do
}

func (f *assignFixer) stmt(s ast.Stmt) {
	rewriteStatementParts(s, f.expr, f.block)
}

// expr looks for function bodies; expressions themselves are left as they are.
func (f *assignFixer) expr(e ast.Expr) ast.Expr {
	if fn, ok := e.(*ast.FunctionExpr); ok {
		f.block(fn.Stmts)
	} else {
		rewriteSubexpressions(e, f.expr)
	}
	return e
}
