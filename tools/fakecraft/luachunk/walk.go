package luachunk

import "github.com/yuin/gopher-lua/ast"

// The rewrites (env.go, concat.go, forlist.go, assign.go) descend through a chunk alike;
// that descent is here. Each handles itself only the statements where its own rule lives
// (scopes for _ENV, bindings and whole loops for `..`, generic fors and the locals that hide
// pairs/ipairs/next, the split of a multiple assignment) and leaves the rest to
// rewriteStatementParts.

// setLines places a node a rewrite makes on the source lines line to last, where errors in
// it are reported.
func setLines(n ast.PositionHolder, line, last int) {
	n.SetLine(line)
	n.SetLastLine(last)
}

// rewriteStatementParts replaces each expression of s with what expr makes of it and hands
// each block of s to block, in the order Lua runs them. Which scope a block opens is block's
// concern.
func rewriteStatementParts(s ast.Stmt, expr func(ast.Expr) ast.Expr, block func([]ast.Stmt)) {
	exprs := func(es []ast.Expr) {
		for i, e := range es {
			es[i] = expr(e)
		}
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		exprs(s.Lhs)
		exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		exprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = expr(s.Expr)
	case *ast.DoBlockStmt:
		block(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = expr(s.Condition)
		block(s.Stmts)
	case *ast.RepeatStmt:
		block(s.Stmts)
		s.Condition = expr(s.Condition)
	case *ast.IfStmt:
		s.Condition = expr(s.Condition)
		block(s.Then)
		block(s.Else)
	case *ast.NumberForStmt:
		s.Init = expr(s.Init)
		s.Limit = expr(s.Limit)
		if s.Step != nil {
			s.Step = expr(s.Step)
		}
		block(s.Stmts)
	case *ast.GenericForStmt:
		exprs(s.Exprs)
		block(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name.Func != nil {
			s.Name.Func = expr(s.Name.Func)
		}
		if s.Name.Receiver != nil {
			s.Name.Receiver = expr(s.Name.Receiver)
		}
		expr(s.Func) // a function expression is rewritten in place, never replaced
	case *ast.ReturnStmt:
		exprs(s.Exprs)
	}
}

// rewriteSubexpressions replaces each direct subexpression of e with what rewrite makes of
// it, in the order Lua evaluates them. A function's body is a block, not a subexpression:
// each rewrite walks it with its own statement rules.
func rewriteSubexpressions(e ast.Expr, rewrite func(ast.Expr) ast.Expr) {
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		e.Object = rewrite(e.Object)
		e.Key = rewrite(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			if f.Key != nil { // nil for a positional field
				f.Key = rewrite(f.Key)
			}
			f.Value = rewrite(f.Value)
		}
	case *ast.FuncCallExpr:
		if e.Func != nil { // nil for a method call, which has a Receiver
			e.Func = rewrite(e.Func)
		}
		if e.Receiver != nil {
			e.Receiver = rewrite(e.Receiver)
		}
		for i, arg := range e.Args {
			e.Args[i] = rewrite(arg)
		}
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = rewrite(e.Lhs), rewrite(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = rewrite(e.Lhs), rewrite(e.Rhs)
	case *ast.StringConcatOpExpr:
		e.Lhs, e.Rhs = rewrite(e.Lhs), rewrite(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = rewrite(e.Lhs), rewrite(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = rewrite(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = rewrite(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = rewrite(e.Expr)
	}
}
