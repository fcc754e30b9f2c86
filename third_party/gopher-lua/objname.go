package lua

// Errors about an operand of the wrong type, worded as CC: Tweaked's Lua (Cobalt 0.9) words
// them, which is Lua 5.2's wording: "attempt to index local 'x' (a nil value)" when the
// register holding the operand has a name at the failing instruction, else "attempt to index
// a nil value". The name comes from the function's debug information and from the last
// instruction before this one that set the register (Lua 5.2's getobjname and findsetreg,
// written here for gopher-lua's Lua 5.1 instruction set).

import "strings"

// noRegister stands for an operand that is not in a register of the running Lua function: a
// constant, a value met along an __index chain, or one a Go function handed over.
const noRegister = -1

// operandError raises the error for operand, which the running instruction could not verb
// ("index", "call", "perform arithmetic on", "concatenate", "get length of"); reg is the
// register (relative to the frame's base) it was read from, or noRegister.
func (ls *LState) operandError(operand LValue, verb string, reg int) {
	if kind, name, ok := ls.objectName(ls.currentFrame, reg); ok {
		ls.RaiseError("attempt to %s %s '%s' (a %s value)", verb, kind, name, errorTypeName(operand))
		return
	}
	ls.RaiseError("attempt to %s a %s value", verb, errorTypeName(operand))
}

// compareError raises the error for an order comparison of two values that cannot be compared.
func (ls *LState) compareError(lhs, rhs LValue) {
	lt, rt := errorTypeName(lhs), errorTypeName(rhs)
	if lt == rt {
		ls.RaiseError("attempt to compare two %s values", lt)
		return
	}
	ls.RaiseError("attempt to compare %s with %s", lt, rt)
}

// arithError raises the error for an arithmetic operation of lhs and rhs (strings already
// converted to numbers where they convert): the left operand is blamed unless it is a number.
func (ls *LState) arithError(lhs, rhs LValue) {
	blamed, operand := lhs, 0
	if _, ok := lhs.(LNumber); ok {
		blamed, operand = rhs, 1
	}
	reg := noRegister
	if inst, ok := ls.runningInstruction(); ok {
		switch opGetOpCode(inst) {
		case OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_POW:
			reg = registerOf([2]int{opGetArgB(inst), opGetArgC(inst)}[operand])
		case OP_UNM:
			reg = registerOf(opGetArgB(inst))
		}
	}
	ls.operandError(blamed, "perform arithmetic on", reg)
}

// indexedRegister is the register of the value the running instruction indexes, or
// noRegister when no instruction of a Lua function is indexing (a Go function's GetField).
func (ls *LState) indexedRegister() int {
	inst, ok := ls.runningInstruction()
	if !ok {
		return noRegister
	}
	switch opGetOpCode(inst) {
	case OP_GETTABLE, OP_GETTABLEKS, OP_SELF:
		return opGetArgB(inst)
	case OP_SETTABLE, OP_SETTABLEKS:
		return opGetArgA(inst)
	}
	return noRegister
}

// runningInstruction is the instruction the current frame is running, when it is a Lua
// function's.
func (ls *LState) runningInstruction() (uint32, bool) {
	cf := ls.currentFrame
	if cf == nil || cf.Fn == nil || cf.Fn.IsG || cf.Pc < 1 || cf.Pc > len(cf.Fn.Proto.Code) {
		return 0, false
	}
	return cf.Fn.Proto.Code[cf.Pc-1], true
}

// registerOf is an RK operand's register, or noRegister for a constant.
func registerOf(rk int) int {
	if opIsK(rk) {
		return noRegister
	}
	return rk
}

// errorTypeName is a value's type as errors name it: a table's or userdata's __name when its
// metatable has a string there, as Cobalt does.
func errorTypeName(v LValue) string {
	var mt LValue = LNil
	switch o := v.(type) {
	case *LTable:
		mt = o.Metatable
	case *LUserData:
		mt = o.Metatable
	}
	if mtt, ok := mt.(*LTable); ok {
		if name, ok := mtt.RawGetString("__name").(LString); ok {
			return string(name)
		}
	}
	return v.Type().String()
}

// objectName is what the register reg of frame cf holds at the running instruction: a
// local's name, or where the value was last loaded from (a global, a field, an upvalue, a
// method).
func (ls *LState) objectName(cf *callFrame, reg int) (kind, name string, ok bool) {
	if reg == noRegister || cf == nil || cf.Fn == nil || cf.Fn.IsG || cf.Pc < 1 {
		return "", "", false
	}
	return ls.objectNameAt(cf, reg, cf.Pc-1)
}

// objectNameAt is objectName at the instruction pc of cf's function.
func (ls *LState) objectNameAt(cf *callFrame, reg, pc int) (kind, name string, ok bool) {
	fn := cf.Fn
	if reg >= int(fn.Proto.NumUsedRegisters) {
		return "", "", false
	}
	// A local whose name Lua code cannot write (an embedder's temporary, "(*temporary 1)",
	// as C Lua's unnamed registers read "(*temporary)") is named by what it was loaded from:
	// fakecraft's rewrite of a multiple assignment copies `t` of `a, t.x = …` into one, where
	// Cobalt indexes the local `t` itself (or a register it loaded the global `t` into).
	if local, found := activeLocal(fn.Proto, reg, pc); found && !strings.HasPrefix(local, "(") {
		return "local", local, true
	}
	setPc := findSetRegister(fn.Proto, pc, reg)
	if setPc < 0 {
		return "", "", false
	}
	proto := fn.Proto
	inst := proto.Code[setPc]
	switch opGetOpCode(inst) {
	case OP_MOVE:
		if b := opGetArgB(inst); b < opGetArgA(inst) {
			return ls.objectNameAt(cf, b, pc)
		}
	case OP_CALL:
		// A call the embedder's compiler made of a hidden function, with one value (fakecraft's
		// operand of `..`): the result is named as that value was where it was passed.
		if a := opGetArgA(inst); reg == a && opGetArgB(inst) == 2 && ls.callsHidden(cf, a, setPc) {
			return ls.objectNameAt(cf, a+1, setPc)
		}
	case OP_GETGLOBAL:
		return "global", constantName(proto, opGetArgBx(inst)), true
	case OP_GETTABLE, OP_GETTABLEKS:
		kind := "field"
		if table, found := activeLocal(fn.Proto, opGetArgB(inst), pc); found && table == "_ENV" {
			kind = "global"
		}
		key := "?"
		if c := opGetArgC(inst); opIsK(c) {
			key = constantName(proto, opIndexK(c))
		}
		return kind, key, true
	case OP_GETUPVAL:
		name := "?"
		if b := opGetArgB(inst); b < len(proto.DbgUpvalues) {
			name = proto.DbgUpvalues[b]
		}
		return "upvalue", name, true
	case OP_SELF:
		key := "?"
		if c := opGetArgC(inst); opIsK(c) {
			key = constantName(proto, opIndexK(c))
		}
		return "method", key, true
	}
	return "", "", false
}

// callsHidden reports whether the function the call at callPc of cf's function calls, from
// register a, was loaded by the instruction before it that set a from an upvalue holding a
// Hidden Go function.
func (ls *LState) callsHidden(cf *callFrame, a, callPc int) bool {
	setPc := findSetRegister(cf.Fn.Proto, callPc, a)
	if setPc < 0 {
		return false
	}
	inst := cf.Fn.Proto.Code[setPc]
	if opGetOpCode(inst) != OP_GETUPVAL {
		return false
	}
	b := opGetArgB(inst)
	if b >= len(cf.Fn.Upvalues) {
		return false
	}
	fn, ok := cf.Fn.Upvalues[b].Value().(*LFunction)
	return ok && fn.Hidden
}

// constantName is constant k's text when it is a string, else "?".
func constantName(proto *FunctionProto, k int) string {
	if k < len(proto.Constants) {
		if s, ok := proto.Constants[k].(LString); ok {
			return string(s)
		}
	}
	return "?"
}

// findSetRegister is the last instruction before lastPc that set register reg, or -1 when
// there is none or it might not have run (it comes before the target of a forward jump that
// reaches no further than lastPc: the value may come from either path).
func findSetRegister(proto *FunctionProto, lastPc, reg int) int {
	setPc, jumpTarget := -1, 0
	filter := func(pc int) int {
		if pc < jumpTarget {
			return -1
		}
		return pc
	}
	for pc := 0; pc < lastPc; pc++ {
		inst := proto.Code[pc]
		op, a := opGetOpCode(inst), opGetArgA(inst)
		switch op {
		case OP_CLOSURE:
			if reg == a {
				setPc = filter(pc)
			}
			// The MOVE or GETUPVAL after it for each of the closure's upvalues set no register.
			pc += int(proto.FunctionPrototypes[opGetArgBx(inst)].NumUpvalues)
		case OP_LOADNIL:
			if a <= reg && reg <= opGetArgB(inst) {
				setPc = filter(pc)
			}
		case OP_TFORLOOP:
			if reg >= a+2 {
				setPc = filter(pc)
			}
		case OP_CALL, OP_TAILCALL:
			if reg >= a {
				setPc = filter(pc)
			}
		case OP_SELF:
			if reg == a || reg == a+1 {
				setPc = filter(pc)
			}
		case OP_JMP:
			if dest := pc + 1 + opGetArgSbx(inst); pc < dest && dest <= lastPc && dest > jumpTarget {
				jumpTarget = dest
			}
		default:
			if opProps[op].SetRegA && reg == a {
				setPc = filter(pc)
			}
		}
	}
	return setPc
}

// indexError raises the error for indexing obj, the step'th value along an __index or
// __newindex chain: only the first is the instruction's operand.
func (ls *LState) indexError(obj LValue, step int) {
	reg := noRegister
	if step == 0 {
		reg = ls.indexedRegister()
	}
	ls.operandError(obj, "index", reg)
}

// concatError raises the error for concatenating lhs, from the stack slot lhsSlot, and rhs,
// the slot after it: the right operand is blamed when the left one is a string or a number.
func (ls *LState) concatError(lhs, rhs LValue, lhsSlot int) {
	blamed, slot := lhs, lhsSlot
	if LVCanConvToString(lhs) {
		blamed, slot = rhs, lhsSlot+1
	}
	reg := noRegister
	if inst, ok := ls.runningInstruction(); ok && opGetOpCode(inst) == OP_CONCAT {
		reg = slot - ls.currentFrame.LocalBase
	}
	ls.operandError(blamed, "concatenate", reg)
}

// activeLocal is the name of the local in register reg at instruction pc, if one is active
// there: locals take registers in the order they were declared, and a local is active from
// its StartPc up to, not including, its EndPc (Lua's rule; LFunction.LocalName, which
// debug.getlocal uses, is given the pc after the running instruction).
func activeLocal(proto *FunctionProto, reg, pc int) (string, bool) {
	for _, local := range proto.DbgLocals {
		if local.StartPc > pc {
			break
		}
		if pc < local.EndPc {
			if reg == 0 {
				return local.Name, true
			}
			reg--
		}
	}
	return "", false
}

// metamethodOf names the metamethod an instruction calls when it runs one (Lua 5.2's
// getfuncname, as Cobalt maps its opcodes): "" for an instruction that calls none.
var metamethodOf = map[int]string{
	OP_GETGLOBAL: "__index", OP_GETTABLE: "__index", OP_GETTABLEKS: "__index", OP_SELF: "__index",
	OP_SETGLOBAL: "__newindex", OP_SETTABLE: "__newindex", OP_SETTABLEKS: "__newindex",
	OP_ADD: "__add", OP_SUB: "__sub", OP_MUL: "__mul", OP_DIV: "__div", OP_MOD: "__mod",
	OP_POW: "__pow", OP_UNM: "__unm", OP_LEN: "__len", OP_CONCAT: "__concat",
	OP_EQ: "__eq", OP_LT: "__lt", OP_LE: "__le",
}

// FuncName is how the code that called callee's function names it, Lua 5.2's getfuncname
// as CC: Tweaked's Cobalt writes it for its tracebacks: the kind ("global", "local",
// "method", "field", "upvalue", "metamethod", "hook") and the name. caller is the frame that
// called: callee's parent, or, for an embedder that runs a call in a coroutine of its own,
// the frame that made the call in another one. ok is false when the call gives no name: the
// caller is a Go function (a Go function's Call), a stand-in for one, or absent, callee was
// reached by a tail call, or the instruction names nothing (a generic for's iterator, a
// call's result called).
func (ls *LState) FuncName(callee, caller *Debug) (kind, name string, ok bool) {
	if callee == nil || callee.frame == nil || caller == nil || caller.frame == nil {
		return "", "", false
	}
	cf, parent := callee.frame, caller.frame
	switch {
	case cf.finish == finishHook, cf.finish == finishGoHandlerHook, cf.finish == finishGoMetaHook:
		return "hook", "?", true
	case cf.TailCall > 0 && !ls.standsIn(cf.Fn), cf.finish == finishForStep, ls.standsIn(parent.Fn):
		// Nor is a function named that a stand-in for a Go function calls: in Cobalt a Java
		// function calls it (table.sort's comparator, pcall's function). A stand-in's tail
		// calls are its own workings (Lua code's tail call of it is an ordinary call): it is
		// named as the Lua code that called it names it.
		return "", "", false
	}
	return ls.calledName(parent)
}

// CalledName is how the Lua code of frame caller names the function its current call
// instruction calls, FuncName's answer without the callee's frame: for a frame that is not
// there (the Go function the top frame of a suspended coroutine called and yielded from,
// which Cobalt keeps, so that its tracebacks list it) or that stands for a Go function an
// embedder writes in Lua (whose own tail calls do not make it a tail call). ok is false when
// caller is no Lua frame, or its instruction names nothing.
func (ls *LState) CalledName(caller *Debug) (kind, name string, ok bool) {
	if caller == nil || caller.frame == nil {
		return "", "", false
	}
	return ls.calledName(caller.frame)
}

// calledName is how the current instruction of parent names the function it calls.
func (ls *LState) calledName(parent *callFrame) (kind, name string, ok bool) {
	if parent.Fn == nil || parent.Fn.IsG || parent.Pc < 1 || parent.Pc > len(parent.Fn.Proto.Code) {
		return "", "", false
	}
	inst := parent.Fn.Proto.Code[parent.Pc-1]
	switch op := opGetOpCode(inst); op {
	case OP_CALL, OP_TAILCALL:
		return ls.objectName(parent, opGetArgA(inst))
	default:
		if metamethod := metamethodOf[op]; metamethod != "" {
			return "metamethod", metamethod, true
		}
	}
	return "", "", false
}
