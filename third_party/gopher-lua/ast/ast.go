package ast

type PositionHolder interface {
	Line() int
	SetLine(int)
	LastLine() int
	SetLastLine(int)
	Column() int
	SetColumn(int)
	MarkLine() int
	SetMark(line, column int)
}

type Node struct {
	line     int
	lastline int
	column   int
	markLine int
}

// Column is the column (1-based, in bytes) of the token an error of this node is placed at,
// as Cobalt places it: a call's '(' (or '{', or its string), an index's '.' or '[', an
// operator, a name; 0 where the parser did not say (fakecraft's fork).
func (self *Node) Column() int {
	return self.column
}

func (self *Node) SetColumn(column int) {
	self.column = column
}

// MarkLine is the line of the token Column is on, which Cobalt gives the instruction that
// raises this node's error (so its message names that line): the node's own line unless
// SetMark said otherwise, as for an operator or a call's '(' on a later line than the
// expression's start (fakecraft's fork).
func (self *Node) MarkLine() int {
	if self.markLine > 0 {
		return self.markLine
	}
	return self.line
}

// SetMark places this node's error at the token at line and column.
func (self *Node) SetMark(line, column int) {
	self.markLine = line
	self.column = column
}

func (self *Node) Line() int {
	return self.line
}

func (self *Node) SetLine(line int) {
	self.line = line
}

func (self *Node) LastLine() int {
	return self.lastline
}

func (self *Node) SetLastLine(line int) {
	self.lastline = line
}

// StartColumn is the column of expr's first token where the parser knows it: a name, and a
// chain of indexes and calls that starts with one (`pairs(t)`, `obj:items()`); 0 otherwise
// (a parenthesised expression's "(" is not kept). Cobalt places the error of a generic
// for's iterator call there, at the first token after `in` (fakecraft's fork).
func StartColumn(expr Expr) int {
	switch ex := expr.(type) {
	case *IdentExpr:
		return ex.Column()
	case *AttrGetExpr:
		return StartColumn(ex.Object)
	case *FuncCallExpr:
		if ex.Func != nil {
			return StartColumn(ex.Func)
		}
		return StartColumn(ex.Receiver)
	}
	return 0
}
