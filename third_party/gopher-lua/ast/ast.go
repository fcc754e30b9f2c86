package ast

type PositionHolder interface {
	Line() int
	SetLine(int)
	LastLine() int
	SetLastLine(int)
	Column() int
	SetColumn(int)
}

type Node struct {
	line     int
	lastline int
	column   int
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
