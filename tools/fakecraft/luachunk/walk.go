package luachunk

import "github.com/yuin/gopher-lua/ast"

// The rewrites (env.go, concat.go, assign.go) differ in what they do at statements, where
// scopes and bindings are, but descend through expressions alike; that descent is here.

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
