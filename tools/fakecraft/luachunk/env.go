package luachunk

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// envName is Lua 5.2's name for a chunk's environment.
const envName = "_ENV"

// mentionsEnv says whether src may use _ENV; chunks that do not are compiled as they are.
func mentionsEnv(src string) bool { return strings.Contains(src, envName) }

// resolveEnv makes _ENV a real upvalue of the chunk, which wrapChunk declares. Globals keep
// compiling to gopher-lua's global access on the function's environment (the same table),
// except where the chunk binds _ENV itself (`local _ENV = t`, a parameter named _ENV, or an
// assignment to _ENV), where they become fields of that binding, as in Lua 5.2.
func resolveEnv(chunk []ast.Stmt) {
	r := &envResolver{}
	r.assigned = assignsHiddenEnv(chunk)
	r.push()
	r.declareHidden()
	r.block(chunk)
}

// assignsHiddenEnv says whether the chunk assigns the _ENV it gets (not a local of its own)
// anywhere; only then must its globals follow _ENV instead of the function environment.
func assignsHiddenEnv(chunk []ast.Stmt) bool {
	r := &envResolver{probe: true}
	r.push()
	r.declareHidden()
	r.block(chunk)
	return r.hiddenAssigned
}

// binding is one local name in scope; hidden marks the _ENV wrapChunk declares.
type binding struct {
	name   string
	hidden bool
}

// envResolver walks a chunk with its local scopes, rewriting global names to _ENV fields
// where the innermost _ENV binding requires it.
type envResolver struct {
	scopes         [][]binding
	assigned       bool // the hidden _ENV is assigned somewhere: route all globals through it
	probe          bool // only look for assignments to the hidden _ENV
	hiddenAssigned bool
}

func (r *envResolver) push() { r.scopes = append(r.scopes, nil) }
func (r *envResolver) pop()  { r.scopes = r.scopes[:len(r.scopes)-1] }

func (r *envResolver) declare(name string) {
	top := len(r.scopes) - 1
	r.scopes[top] = append(r.scopes[top], binding{name: name})
}

func (r *envResolver) declareHidden() {
	top := len(r.scopes) - 1
	r.scopes[top] = append(r.scopes[top], binding{name: envName, hidden: true})
}

// lookup returns the innermost binding of name.
func (r *envResolver) lookup(name string) (binding, bool) {
	for s := len(r.scopes) - 1; s >= 0; s-- {
		for i := len(r.scopes[s]) - 1; i >= 0; i-- {
			if r.scopes[s][i].name == name {
				return r.scopes[s][i], true
			}
		}
	}
	return binding{}, false
}

// global rewrites a free name to _ENV.name when the innermost _ENV is one globals must
// follow: a local of the chunk's own, or the hidden one when the chunk assigns it.
func (r *envResolver) global(e *ast.IdentExpr) ast.Expr {
	if _, ok := r.lookup(e.Value); ok {
		return e
	}
	env, _ := r.lookup(envName)
	if r.probe || (env.hidden && !r.assigned) {
		return e
	}
	envRef := &ast.IdentExpr{Value: envName}
	key := &ast.StringExpr{Value: e.Value}
	out := &ast.AttrGetExpr{Object: envRef, Key: key}
	for _, n := range []ast.Expr{envRef, key, out} {
		setLines(n, e.Line(), e.LastLine())
	}
	out.SetMark(e.MarkLine(), e.Column()) // at the name, as Cobalt places a global's GETTABLE
	return out
}

func (r *envResolver) block(stmts []ast.Stmt) {
	for _, s := range stmts {
		r.stmt(s)
	}
}

// scoped walks stmts in a scope of their own that starts with locals.
func (r *envResolver) scoped(stmts []ast.Stmt, locals ...string) {
	r.push()
	for _, n := range locals {
		r.declare(n)
	}
	r.block(stmts)
	r.pop()
}

func (r *envResolver) exprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = r.expr(e)
	}
}

func (r *envResolver) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		r.exprs(s.Rhs)
		for i, lhs := range s.Lhs {
			if id, ok := lhs.(*ast.IdentExpr); ok && id.Value == envName {
				if b, _ := r.lookup(envName); b.hidden {
					r.hiddenAssigned = true
				}
			}
			s.Lhs[i] = r.expr(lhs)
		}
	case *ast.LocalAssignStmt:
		if len(s.Names) == 1 && len(s.Exprs) == 1 {
			if _, ok := s.Exprs[0].(*ast.FunctionExpr); ok {
				r.declare(s.Names[0]) // local function f: f is in scope in its body
				r.exprs(s.Exprs)
				return
			}
		}
		r.exprs(s.Exprs)
		for _, n := range s.Names {
			r.declare(n)
		}
	case *ast.RepeatStmt:
		r.push()
		r.block(s.Stmts)
		s.Condition = r.expr(s.Condition) // sees the body's locals
		r.pop()
	case *ast.NumberForStmt:
		rewriteStatementParts(s, r.expr, func(body []ast.Stmt) { r.scoped(body, s.Name) })
	case *ast.GenericForStmt:
		rewriteStatementParts(s, r.expr, func(body []ast.Stmt) { r.scoped(body, s.Names...) })
	default:
		rewriteStatementParts(s, r.expr, func(body []ast.Stmt) { r.scoped(body) })
	}
}

func (r *envResolver) expr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return r.global(e)
	case *ast.FunctionExpr:
		r.scoped(e.Stmts, e.ParList.Names...)
	default:
		rewriteSubexpressions(e, r.expr)
	}
	return e
}
