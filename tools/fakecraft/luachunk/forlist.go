package luachunk

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// mayLoopOver says whether src may hold a generic for.
func mayLoopOver(src string) bool { return strings.Contains(src, "for") && strings.Contains(src, "in") }

// forListNames are the hidden locals hoistForList declares (names the lexer cannot make).
var forListNames = []string{"(for list 1)", "(for list 2)", "(for list 3)"}

// needsHoist says whether gopher-lua v1.1.2 would miscompile the generic for s. It compiles
// the list into the loop's three hidden registers after declaring them, which goes wrong in
// two ways:
//   - a concatenation evaluated into the generator register whose first operand is a call
//     loses the call's result to the next operand (`for l in (tostring(s) .. "\n"):gmatch(p)`
//     crashes the VM);
//   - with fewer than three names and three values, the control register is not set to nil,
//     so `for k, v in next, t` starts from whatever the register held (`next, { "x" }`
//     starts after "x" and sees nothing).
func needsHoist(s *ast.GenericForStmt) bool {
	if len(s.Exprs) == 0 {
		return false
	}
	if concatAtBase(s.Exprs[0]) {
		return true
	}
	last := s.Exprs[len(s.Exprs)-1]
	return len(s.Names) < 3 && len(s.Exprs) < 3 && !multipleValues(last)
}

// multipleValues says whether e, last in a list, may give several values.
func multipleValues(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.FuncCallExpr:
		return !e.AdjustRet
	case *ast.Comma3Expr:
		return !e.AdjustRet
	}
	return false
}

// concatAtBase says whether e, a generic for's first expression, evaluates a concatenation
// into its own register: the chain itself, or the receiver, function or indexed object of
// what e is, or an operand of an operator.
func concatAtBase(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		return true
	case *ast.FuncCallExpr:
		if e.Func != nil {
			return concatAtBase(e.Func)
		}
		return concatAtBase(e.Receiver)
	case *ast.AttrGetExpr:
		return concatAtBase(e.Object)
	case *ast.LogicalOpExpr:
		return concatAtBase(e.Lhs) || concatAtBase(e.Rhs)
	case *ast.RelationalOpExpr:
		return concatAtBase(e.Lhs)
	case *ast.ArithmeticOpExpr:
		return concatAtBase(e.Lhs)
	case *ast.UnaryMinusOpExpr:
		return concatAtBase(e.Expr)
	case *ast.UnaryNotOpExpr:
		return concatAtBase(e.Expr)
	case *ast.UnaryLenOpExpr:
		return concatAtBase(e.Expr)
	}
	return false
}

// hoistForList turns `for names in list do ... end` into
// `do local (for list 1..3) = list; for names in (for list 1..3) do ... end end`, which is
// what a generic for means (its list is evaluated once, to three values) and which gopher-lua
// compiles right whatever the list holds.
func hoistForList(s *ast.GenericForStmt) ast.Stmt {
	decl := &ast.LocalAssignStmt{Names: forListNames, Exprs: s.Exprs}
	refs := make([]ast.Expr, len(forListNames))
	for i, name := range forListNames {
		ref := &ast.IdentExpr{Value: name}
		ref.SetLine(s.Line())
		ref.SetLastLine(s.Line())
		refs[i] = ref
	}
	s.Exprs = refs
	do := &ast.DoBlockStmt{Stmts: []ast.Stmt{decl, s}}
	for _, n := range []ast.Stmt{decl, do} {
		n.SetLine(s.Line())
		n.SetLastLine(s.LastLine())
	}
	return do
}
