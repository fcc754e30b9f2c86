package luachunk

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// gopher-lua runs a generic for's iterator from its OP_TFORLOOP instruction in a nested
// interpreter loop, so an iterator that yields (one that waits for an event) raises
// "attempt to yield across metamethod/C-call boundary"; CC lets it yield. Such a loop is
// compiled as what the Lua 5.2 manual says it means, with an ordinary call:
//
//	for v1, ..., vn in list do body end
//
// becomes
//
//	do
//	  local (for generator), (for state), (for control) = list
//	  while true do
//	    local v1, ..., vn = (for generator)((for state), (for control))
//	    if v1 == nil then break end
//	    (for control) = v1
//	    body
//	  end
//	end
//
// The hidden names are Lua's own for these values (debug.getlocal shows them); the lexer
// cannot make them, so no chunk can reach them, and each loop's hide an outer loop's. The
// loop variables are locals of the while's body, so each iteration has fresh ones for the
// closures made in it, and `break`, `goto` and `return` in body act as in the for.
//
// The ordinary call made loops over pairs about 50 % slower, so loops over the standard
// iterators keep gopher-lua's instruction: a list that starts with a call of the global
// pairs or ipairs, or with the global next (standardIterator). next and ipairs' iterator
// are Go and never yield; an iterator __pairs returns that is a Lua function runs as a
// frame of the VM's loop, as any Lua iterator of that instruction, and may yield too (the
// fork's finishForStep). Those whose list gopher-lua miscompiles get it hoisted
// (needsHoist).

// mayLoopOver says whether src may hold a generic for.
func mayLoopOver(src string) bool { return strings.Contains(src, "for") && strings.Contains(src, "in") }

// forNames are a generic for's hidden locals: its iterator function, state and control.
var forNames = []string{"(for generator)", "(for state)", "(for control)"}

// rewriteGenericFors rewrites every generic for of the chunk, inner ones first.
func rewriteGenericFors(chunk []ast.Stmt) {
	(&forRewriter{}).block(chunk)
}

// forRewriter walks statements and the functions inside expressions, with the locals in
// scope that hide a standard iterator's global.
type forRewriter struct {
	hidden map[string]int // standard iterator name -> locals of that name in scope
}

// standardIterators are the globals whose loops keep gopher-lua's instruction.
var standardIterators = map[string]bool{"pairs": true, "ipairs": true, "next": true}

func (r *forRewriter) block(stmts []ast.Stmt) { r.scoped(stmts) }

// scoped walks stmts in a scope of their own that starts with locals.
func (r *forRewriter) scoped(stmts []ast.Stmt, locals ...string) {
	var declared []string
	declare := func(names []string) {
		for _, n := range names {
			if standardIterators[n] {
				if r.hidden == nil {
					r.hidden = map[string]int{}
				}
				r.hidden[n]++
				declared = append(declared, n)
			}
		}
	}
	declare(locals)
	for i, s := range stmts {
		switch s := s.(type) {
		case *ast.LocalAssignStmt:
			if len(s.Names) == 1 && len(s.Exprs) == 1 {
				if _, ok := s.Exprs[0].(*ast.FunctionExpr); ok {
					declare(s.Names) // local function f: f is in scope in its body
				}
			}
			rewriteStatementParts(s, r.expr, r.block)
			declare(s.Names) // counted twice for a local function: undone twice below
		case *ast.NumberForStmt:
			rewriteStatementParts(s, r.expr, func(body []ast.Stmt) { r.scoped(body, s.Name) })
		case *ast.GenericForStmt:
			rewriteStatementParts(s, r.expr, func(body []ast.Stmt) { r.scoped(body, s.Names...) })
			switch {
			case !r.standardIterator(s):
				stmts[i] = callingFor(s)
			case needsHoist(s):
				stmts[i] = hoistForList(s)
			}
		default:
			rewriteStatementParts(s, r.expr, r.block)
		}
	}
	for _, n := range declared {
		r.hidden[n]--
	}
}

// standardIterator says whether s's list starts with a call of the global pairs or ipairs
// or with the global next, whose iterators are gopher-lua's Go functions. A program that
// assigns another function to one of those globals loses only the yield in its loops.
func (r *forRewriter) standardIterator(s *ast.GenericForStmt) bool {
	first := s.Exprs[0]
	if call, ok := first.(*ast.FuncCallExpr); ok && call.Func != nil {
		if id, ok := call.Func.(*ast.IdentExpr); ok && id.Value != "next" {
			return standardIterators[id.Value] && r.hidden[id.Value] == 0
		}
		return false
	}
	id, ok := first.(*ast.IdentExpr)
	return ok && id.Value == "next" && r.hidden["next"] == 0
}

// expr looks for function bodies; expressions themselves are left as they are.
func (r *forRewriter) expr(e ast.Expr) ast.Expr {
	if fn, ok := e.(*ast.FunctionExpr); ok {
		r.scoped(fn.Stmts, fn.ParList.Names...)
	} else {
		rewriteSubexpressions(e, r.expr)
	}
	return e
}

// callingFor is the block that replaces s, whose parts are already rewritten. The nodes of
// each step (the iterator's call, the test, the control's update) are on the line of the
// expression list's first token, where Lua 5.2 and Cobalt put the iterator's call
// (forlist's OP_TFORCALL) and so place its errors, the loop's setup on the for's line; the
// body keeps its own lines.
func callingFor(s *ast.GenericForStmt) ast.Stmt {
	line, iterLine := s.Line(), s.Exprs[0].Line()
	at := func(n ast.PositionHolder) { setLines(n, line, line) }
	atStep := func(n ast.PositionHolder) { setLines(n, iterLine, iterLine) }
	ref := func(name string) *ast.IdentExpr {
		id := &ast.IdentExpr{Value: name}
		atStep(id)
		return id
	}
	gen, state, control := forNames[0], forNames[1], forNames[2]

	list := &ast.LocalAssignStmt{Names: forNames, Exprs: s.Exprs}
	at(list)
	call := &ast.FuncCallExpr{Func: ref(gen), Args: []ast.Expr{ref(state), ref(control)}}
	atStep(call)
	call.SetColumn(ast.StartColumn(s.Exprs[0])) // where Cobalt marks the iterator's error
	vars := &ast.LocalAssignStmt{Names: s.Names, Exprs: []ast.Expr{call}}
	atStep(vars)
	isNil := &ast.RelationalOpExpr{Operator: "==", Lhs: ref(s.Names[0]), Rhs: &ast.NilExpr{}}
	atStep(isNil)
	atStep(isNil.Rhs)
	brk := &ast.BreakStmt{}
	atStep(brk)
	end := &ast.IfStmt{Condition: isNil, Then: []ast.Stmt{brk}}
	atStep(end)
	step := &ast.AssignStmt{Lhs: []ast.Expr{ref(control)}, Rhs: []ast.Expr{ref(s.Names[0])}}
	atStep(step)

	cond := &ast.TrueExpr{}
	at(cond)
	body := append([]ast.Stmt{vars, end, step}, s.Stmts...)
	loop := &ast.WhileStmt{Condition: cond, Stmts: body}
	setLines(loop, line, s.LastLine())
	do := &ast.DoBlockStmt{Stmts: []ast.Stmt{list, loop}}
	setLines(do, line, s.LastLine())
	return do
}

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
		setLines(ref, s.Line(), s.Line())
		refs[i] = ref
	}
	s.Exprs = refs
	do := &ast.DoBlockStmt{Stmts: []ast.Stmt{decl, s}}
	for _, n := range []ast.Stmt{decl, do} {
		setLines(n, s.Line(), s.LastLine())
	}
	return do
}
