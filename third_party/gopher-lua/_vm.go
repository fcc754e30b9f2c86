package lua

import (
	"fmt"
	"math"
	"strings"
)

func mainLoop(L *LState, baseframe *callFrame) {
	var inst uint32
	var cf *callFrame

	if L.stack.IsEmpty() {
		return
	}

	L.currentFrame = L.stack.Last()
	if L.currentFrame.Fn.IsG {
		callGFunction(L, false)
		return
	}

	for {
		cf = L.currentFrame
		if L.hooks != nil && L.hookDispatch(cf) {
			continue
		}
		inst = cf.Fn.Proto.Code[cf.Pc]
		cf.Pc++
		if jumpTable[int(inst>>26)](L, inst, baseframe) == 1 {
			return
		}
	}
}

func mainLoopWithContext(L *LState, baseframe *callFrame) {
	var inst uint32
	var cf *callFrame

	if L.stack.IsEmpty() {
		return
	}

	L.currentFrame = L.stack.Last()
	if L.currentFrame.Fn.IsG {
		callGFunction(L, false)
		return
	}

	for {
		cf = L.currentFrame
		if L.hooks != nil && L.hookDispatch(cf) {
			continue
		}
		inst = cf.Fn.Proto.Code[cf.Pc]
		cf.Pc++
		select {
		case <-L.ctx.Done():
			L.RaiseError(L.ctx.Err().Error())
			return
		default:
			if jumpTable[int(inst>>26)](L, inst, baseframe) == 1 {
				return
			}
		}
	}
}

// regv is the first target register to copy the return values to.
// It can be reg.top, indicating that the copied values are going into new registers, or it can be below reg.top
// Indicating that the values should be within the existing registers.
// b is the available number of return values + 1.
// n is the desired number of return values.
// If n more than the available return values then the extra values are set to nil.
// When this function returns the top of the registry will be set to regv+n.
func copyReturnValues(L *LState, regv, start, n, b int) { // +inline-start
	if b == 1 {
		// +inline-call L.reg.FillNil  regv n
	} else {
		// +inline-call L.reg.CopyRange regv start -1 n
		if b > 1 && n > (b-1) {
			// +inline-call L.reg.FillNil  regv+b-1 n-(b-1)
		}
	}
} // +inline-end

func switchToParentThread(L *LState, nargs int, haserror bool, kill bool) {
	parent := L.Parent
	if parent == nil {
		L.RaiseError("can not yield from outside of a coroutine")
	}
	L.G.CurrentThread = parent
	L.Parent = nil
	if !L.wrapped {
		if haserror {
			parent.Push(LFalse)
		} else {
			parent.Push(LTrue)
		}
	}
	L.XMoveTo(parent, nargs)
	L.stack.Pop()
	offset := L.currentFrame.LocalBase - L.currentFrame.ReturnBase
	L.currentFrame = L.stack.Last()
	L.reg.SetTop(L.reg.Top() - offset) // remove 'yield' function(including tailcalled functions)
	if kill {
		L.kill()
	}
}

func callGFunction(L *LState, tailcall bool) bool {
	frame := L.currentFrame
	gfnret := frame.Fn.GFunction(L)
	if gfnret == handOffResult {
		L.enterHandOff(frame, tailcall)
		return false
	}
	if gfnret < 0 {
		if tailcall {
			// A yield in a tail call leaves the calling frame in place: the resume goes on at
			// the OP_RETURN that follows every OP_TAILCALL, which returns the resumed values
			// from R(A), where they land. Had the yield taken its caller's place first, a
			// coroutine whose body ended in `return coroutine.yield(x)` would be left with no
			// frame at all, and its resume crashed (upstream's bug).
			frame.ReturnBase = frame.Base
		}
		switchToParentThread(L, L.GetTop(), false, false)
		return true
	}
	if tailcall {
		L.currentFrame = L.RemoveCallerFrame()
	}

	wantret := frame.NRet
	if wantret == MultRet {
		wantret = gfnret
	}

	if tailcall && L.Parent != nil && L.stack.Sp() == 1 {
		switchToParentThread(L, wantret, false, true)
		return true
	}

	// +inline-call L.reg.CopyRange frame.ReturnBase L.reg.Top()-gfnret -1 wantret
	L.stack.Pop()
	L.currentFrame = L.stack.Last()
	return false
}

func threadRun(L *LState) {
	if L.stack.IsEmpty() {
		return
	}
	resumer := L.Parent
	if L.sharesHooks && resumer != nil {
		L.takeHooks(resumer)
	}
	for !runThread(L) {
		// An error handler was pushed over the frames of the error (errhandler.go): run it.
	}
	if L.sharesHooks && resumer != nil {
		L.handHooksBack(resumer)
	}
}

// runThread runs the coroutine L until it yields, returns or dies of an error (true), or
// until an error it raised is to be handled by a Lua error handler pushed as a frame over
// the frames of the error (false: run it).
func runThread(L *LState) (done bool) {
	defer func() {
		if rcv := recover(); rcv != nil {
			var lv LValue
			if v, ok := rcv.(*ApiError); ok {
				lv = v.Object
			} else {
				lv = LString(fmt.Sprint(rcv))
			}
			if L.Parent == nil {
				panic(rcv)
			}
			done = true
			if L.errorHandler != nil {
				if lv, done = L.handleError(lv); !done {
					return
				}
			} else if L.errorMessage != nil {
				lv = L.errorMessage(L, lv)
			}
			threadFailed(L, lv)
		}
	}()
	L.mainLoop(L, nil)
	if L.errorHandling == handlerReturned {
		threadFailed(L, L.errorResult)
	}
	return true
}

// threadFailed ends the coroutine L, run by its parent, with the error lv.
func threadFailed(L *LState, lv LValue) {
	if L.wrapped {
		L.Push(lv)
		L.Parent.Panic(L)
		return
	}
	// The frames of the error stay on the dead coroutine's stack, as in Lua 5.2 and Cobalt,
	// so that debug.getinfo and debug.traceback still read where it failed (CC's
	// cc.internal.exception marks the line and column there); switchToParentThread would
	// pop the top one, the function that raised the error.
	L.SetTop(0)
	L.Push(lv)
	L.G.CurrentThread = L.Parent
	L.Parent.Push(LFalse)
	L.XMoveTo(L.Parent, 1)
	L.Parent = nil
	L.kill()
}

type instFunc func(*LState, uint32, *callFrame) int

var jumpTable [opCodeMax + 1]instFunc

func init() {
	jumpTable = [opCodeMax + 1]instFunc{
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_MOVE
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			v := reg.Get(lbase + B)
			// +inline-call reg.Set RA v
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_MOVEN
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			v := reg.Get(lbase + B)
			// +inline-call reg.Set lbase+A v
			code := cf.Fn.Proto.Code
			pc := cf.Pc
			for i := 0; i < C; i++ {
				inst = code[pc]
				pc++
				A = int(inst>>18) & 0xff //GETA
				B = int(inst & 0x1ff)    //GETB
				v := reg.Get(lbase + B)
				// +inline-call reg.Set lbase+A v
			}
			cf.Pc = pc
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_LOADK
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			Bx := int(inst & 0x3ffff) //GETBX
			v := cf.Fn.Proto.Constants[Bx]
			// +inline-call reg.Set RA v
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_LOADBOOL
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			if B != 0 {
				// +inline-call reg.Set RA LTrue
			} else {
				// +inline-call reg.Set RA LFalse
			}
			if C != 0 {
				cf.Pc++
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_LOADNIL
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			for i := RA; i <= lbase+B; i++ {
				// +inline-call reg.Set i LNil
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_GETUPVAL
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			v := cf.Fn.Upvalues[B].Value()
			// +inline-call reg.Set RA v
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_GETGLOBAL
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			Bx := int(inst & 0x3ffff) //GETBX
			//reg.Set(RA, L.getField(cf.Fn.Env, cf.Fn.Proto.Constants[Bx]))
			key := cf.Fn.Proto.stringConstants[Bx]
			v, mm, holder := L.indexString(cf.Fn.Env, key)
			if mm != nil {
				L.callMeta(mm, finishStore, 0, 2, holder, LString(key), nil)
				return 0
			}
			// +inline-call reg.Set RA v
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_GETTABLE
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			key := L.rkValue(C)
			v, mm, holder := L.index(reg.Get(lbase+B), key)
			if mm != nil {
				L.callMeta(mm, finishStore, 0, 2, holder, key, nil)
				return 0
			}
			// +inline-call reg.Set RA v
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_GETTABLEKS
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			key := L.rkString(C)
			v, mm, holder := L.indexString(reg.Get(lbase+B), key)
			if mm != nil {
				L.callMeta(mm, finishStore, 0, 2, holder, LString(key), nil)
				return 0
			}
			// +inline-call reg.Set RA v
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_SETGLOBAL
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			Bx := int(inst & 0x3ffff) //GETBX
			//L.setField(cf.Fn.Env, cf.Fn.Proto.Constants[Bx], reg.Get(RA))
			key, value := cf.Fn.Proto.stringConstants[Bx], reg.Get(RA)
			if mm, holder := L.newIndexString(cf.Fn.Env, key, value); mm != nil {
				L.callMeta(mm, finishDrop, 0, 3, holder, LString(key), value)
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_SETUPVAL
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			cf.Fn.Upvalues[B].SetValue(reg.Get(RA))
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_SETTABLE
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			key, value := L.rkValue(B), L.rkValue(C)
			if mm, holder := L.newIndex(reg.Get(RA), key, value); mm != nil {
				L.callMeta(mm, finishDrop, 0, 3, holder, key, value)
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_SETTABLEKS
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			key, value := L.rkString(B), L.rkValue(C)
			if mm, holder := L.newIndexString(reg.Get(RA), key, value); mm != nil {
				L.callMeta(mm, finishDrop, 0, 3, holder, LString(key), value)
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_NEWTABLE
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			v := newLTable(B, C)
			v.SizeAsCobalt(fb2Int(B), fb2Int(C))
			// +inline-call reg.Set RA v
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_SELF
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			selfobj := reg.Get(lbase + B)
			key := L.rkString(C)
			v, mm, holder := L.indexString(selfobj, key)
			// +inline-call reg.Set RA+1 selfobj
			if mm != nil {
				L.callMeta(mm, finishStore, 0, 2, holder, LString(key), nil)
				return 0
			}
			// +inline-call reg.Set RA v
			return 0
		},
		opArith, // OP_ADD
		opArith, // OP_SUB
		opArith, // OP_MUL
		opArith, // OP_DIV
		opArith, // OP_MOD
		opArith, // OP_POW
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_UNM
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			unaryv := L.rkValue(B)
			if nm, ok := unaryv.(LNumber); ok {
				v := WithoutNegativeZero(-nm)
				// +inline-call reg.Set RA v
			} else {
				op := L.metaOp1(unaryv, "__unm")
				if op.Type() == LTFunction {
					L.callMeta(op, finishStore, 0, 1, unaryv, nil, nil)
				} else if str, ok1 := unaryv.(LString); ok1 {
					if num, ok := L.argNumber(str); ok {
						v := WithoutNegativeZero(-num)
						// +inline-call reg.Set RA v
					} else {
						L.arithError(unaryv, unaryv) // the one operand is blamed
					}
				} else {
					L.arithError(unaryv, unaryv)
				}
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_NOT
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			if LVIsFalse(reg.Get(lbase + B)) {
				// +inline-call reg.Set RA LTrue
			} else {
				// +inline-call reg.Set RA LFalse
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_LEN
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			switch lv := L.rkValue(B).(type) {
			case LString:
				// +inline-call reg.SetNumber RA LNumber(len(lv))
			default:
				op := L.metaOp1(lv, "__len")
				if op.Type() == LTFunction {
					L.callMeta(op, finishStore, 0, 1, lv, nil, nil)
				} else if lv.Type() == LTTable {
					// +inline-call reg.SetNumber RA LNumber(lv.(*LTable).Len())
				} else {
					L.operandError(lv, "get length of", registerOf(B))
				}
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_CONCAT
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			RC := lbase + C
			RB := lbase + B
			if v, done := concatFrom(L, RB, RC); done {
				// +inline-call reg.Set RA v
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_JMP
			cf := L.currentFrame
			Sbx := int(inst&0x3ffff) - opMaxArgSbx //GETSBX
			cf.Pc += Sbx
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_EQ
			cf := L.currentFrame
			A := int(inst>>18) & 0xff //GETA
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			lhs, rhs := L.rkValue(B), L.rkValue(C)
			if lt := lhs.Type(); (lt == LTTable || lt == LTUserData) && lhs != rhs && lt == rhs.Type() {
				if mm := comparisonMeta(L, lhs, rhs, "__eq"); mm != nil {
					L.callMeta(mm, finishCond, 0, 2, lhs, rhs, nil)
					return 0
				}
			}
			ret := equals(L, lhs, rhs, true)
			v := 1
			if ret {
				v = 0
			}
			if v == A {
				cf.Pc++
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_LT
			cf := L.currentFrame
			A := int(inst>>18) & 0xff //GETA
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			lhs, rhs := L.rkValue(B), L.rkValue(C)
			var ret bool
			if v1, ok1 := lhs.(LNumber); ok1 {
				if v2, ok2 := rhs.(LNumber); ok2 {
					ret = v1 < v2
				} else {
					L.compareError(lhs, rhs)
				}
			} else if lhs.Type() != rhs.Type() {
				L.compareError(lhs, rhs)
			} else if lhs.Type() == LTString {
				ret = strCmp(string(lhs.(LString)), string(rhs.(LString))) < 0
			} else if mm := comparisonMeta(L, lhs, rhs, "__lt"); mm != nil {
				L.callMeta(mm, finishCond, 0, 2, lhs, rhs, nil)
				return 0
			} else {
				L.compareError(lhs, rhs)
			}
			v := 1
			if ret {
				v = 0
			}
			if v == A {
				cf.Pc++
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_LE
			cf := L.currentFrame
			A := int(inst>>18) & 0xff //GETA
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			lhs := L.rkValue(B)
			rhs := L.rkValue(C)
			ret := false

			if v1, ok1 := lhs.(LNumber); ok1 {
				if v2, ok2 := rhs.(LNumber); ok2 {
					ret = v1 <= v2
				} else {
					L.compareError(lhs, rhs)
				}
			} else {
				if lhs.Type() != rhs.Type() {
					L.compareError(lhs, rhs)
				}
				switch lhs.Type() {
				case LTString:
					ret = strCmp(string(lhs.(LString)), string(rhs.(LString))) <= 0
				default:
					// Lua 5.1: a <= b is __le(a, b), or else not __lt(b, a).
					if mm := comparisonMeta(L, lhs, rhs, "__le"); mm != nil {
						L.callMeta(mm, finishCond, 0, 2, lhs, rhs, nil)
						return 0
					}
					if mm := comparisonMeta(L, rhs, lhs, "__lt"); mm != nil {
						L.callMeta(mm, finishCondNot, 0, 2, rhs, lhs, nil)
						return 0
					}
					L.compareError(rhs, lhs)
				}
			}

			v := 1
			if ret {
				v = 0
			}
			if v == A {
				cf.Pc++
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_TEST
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			C := int(inst>>9) & 0x1ff //GETC
			if LVAsBool(reg.Get(RA)) == (C == 0) {
				cf.Pc++
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_TESTSET
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			if value := reg.Get(lbase + B); LVAsBool(value) != (C == 0) {
				// +inline-call reg.Set RA value
			} else {
				cf.Pc++
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_CALL
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			nargs := B - 1
			if B == 0 {
				nargs = reg.Top() - (RA + 1)
			}
			lv := reg.Get(RA)
			nret := C - 1
			var callable *LFunction
			var meta bool
			if fn, ok := lv.(*LFunction); ok {
				callable = fn
				meta = false
			} else {
				callable, meta = L.metaCall(lv)
			}
			if callable == nil {
				L.operandError(lv, "call", A)
			}
			// +inline-call L.pushCallFrame callFrame{Fn:callable,Pc:0,Base:RA,LocalBase:RA+1,ReturnBase:RA,NArgs:nargs,NRet:nret,Parent:cf,TailCall:0} lv meta
			if callable.IsG {
				if callGFunction(L, false) {
					return 1
				}
				if L.handedOff {
					L.handedOff = false
					return 0
				}
				if L.hooks != nil {
					L.hookGoReturned(callable)
				}
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_TAILCALL
			reg := L.reg
			cf := L.currentFrame
			if cf.finish != 0 {
				// The frame of a metamethod or hook must return to finishOp: its tail call is
				// an ordinary call (C = 0: all results), whose results the OP_RETURN after it
				// returns.
				return jumpTable[OP_CALL](L, inst&^(0x1ff<<9), baseframe)
			}
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			nargs := B - 1
			if B == 0 {
				nargs = reg.Top() - (RA + 1)
			}
			lv := reg.Get(RA)
			var callable *LFunction
			var meta bool
			if fn, ok := lv.(*LFunction); ok {
				callable = fn
				meta = false
			} else {
				callable, meta = L.metaCall(lv)
			}
			if callable == nil {
				L.operandError(lv, "call", A)
			}
			if !callable.IsG && L.G.standInSource != "" && callable.Proto.SourceName == L.G.standInSource && cf.Fn.Proto.SourceName != L.G.standInSource {
				// A stand-in for a Go function is called as a Go function is (below): the
				// calling frame stays, as Cobalt's tail call of a Java function leaves it.
				return jumpTable[OP_CALL](L, inst&^(0x1ff<<9), baseframe)
			}
			if L.hooks != nil && callable.IsG && L.keepsGoTailCaller(cf) {
				// Nor does a tail call of a Go function leave its caller while a hook is set, as
				// Cobalt's tail call of a Java function leaves it (hook.go).
				return jumpTable[OP_CALL](L, inst&^(0x1ff<<9), baseframe)
			}
			// +inline-call L.closeUpvalues lbase
			if callable.IsG {
				luaframe := cf
				L.pushCallFrame(callFrame{
					Fn:         callable,
					Pc:         0,
					Base:       RA,
					LocalBase:  RA + 1,
					ReturnBase: cf.ReturnBase,
					NArgs:      nargs,
					NRet:       cf.NRet,
					Parent:     cf,
					TailCall:   0,
				}, lv, meta)
				if callGFunction(L, true) {
					return 1
				}
				if L.handedOff {
					L.handedOff = false
					return 0
				}
				if L.hooks != nil {
					L.hookGoReturned(callable)
				}
				if L.currentFrame == nil || L.currentFrame.Fn.IsG || luaframe == baseframe {
					return 1
				}
			} else {
				base := cf.Base
				cf.Fn = callable
				cf.Pc = 0
				cf.Base = RA
				cf.LocalBase = RA + 1
				cf.NArgs = nargs
				cf.TailCall++
				cf.hooked = false // its call event ("tail call") is due
				lbase := cf.LocalBase
				if meta {
					cf.NArgs++
					L.reg.Insert(lv, cf.LocalBase)
				}
				// +inline-call L.initCallFrame cf
				// +inline-call L.reg.CopyRange base RA -1 reg.Top()-RA-1
				cf.Base = base
				cf.LocalBase = base + (cf.LocalBase - lbase + 1)
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_RETURN
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			// +inline-call L.closeUpvalues lbase
			nret := B - 1
			if B == 0 {
				nret = reg.Top() - RA
			}
			n := cf.NRet
			if cf.NRet == MultRet {
				n = nret
			}

			if L.Parent != nil && L.stack.Sp() == 1 {
				// +inline-call copyReturnValues L reg.Top() RA n B
				switchToParentThread(L, n, false, true)
				return 1
			}
			finish := cf.finish
			if finish >= finishErrorHandler {
				if finish == finishErrorHandler {
					// The error handler returned: the coroutine dies of its first result.
					L.handlerReturned(RA, nret)
					return 1
				}
				if finish == finishGoMetaHook {
					// A hook over a Go metamethod returned (hook.go).
					L.goMetaHookReturned(cf)
					return 0
				}
				// A hook over a Go error handler returned (errhandler.go).
				if L.goHandlerHookReturned(cf) {
					return 1
				}
				return 0
			}
			islast := baseframe == L.stack.Pop() || L.stack.IsEmpty()
			// +inline-call copyReturnValues L cf.ReturnBase RA n B
			if finish == finishHook && cf.finishArg&hookOverGoFrame != 0 {
				// The Go function's frame the hook saw goes with it (callGoHook).
				L.stack.Pop()
			}
			L.currentFrame = L.stack.Last()
			if islast || L.currentFrame == nil || L.currentFrame.Fn.IsG {
				return 1
			}
			if finish != 0 {
				finishOp(L, finish, int(cf.finishArg), cf.ReturnBase)
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_FORLOOP
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			if init, ok1 := reg.Get(RA).(LNumber); ok1 {
				if limit, ok2 := reg.Get(RA + 1).(LNumber); ok2 {
					if step, ok3 := reg.Get(RA + 2).(LNumber); ok3 {
						init += step
						v := LNumber(init)
						// +inline-call reg.SetNumber RA v
						if (step > 0 && init <= limit) || (step <= 0 && init >= limit) {
							Sbx := int(inst&0x3ffff) - opMaxArgSbx //GETSBX
							cf.Pc += Sbx
							// +inline-call reg.SetNumber RA+3 v
						} else {
							// +inline-call reg.SetTop RA+1
						}
					} else {
						L.RaiseError("'for' step must be a number")
					}
				} else {
					L.RaiseError("'for' limit must be a number")
				}
			} else {
				L.RaiseError("'for' initial value must be a number")
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_FORPREP
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			Sbx := int(inst&0x3ffff) - opMaxArgSbx //GETSBX
			// As Cobalt's OP_FORPREP: the initial value, the limit and the step, in that order,
			// are each a number or a string that reads as one (fakecraft's fork).
			init := L.forNumber(reg.Get(RA), "'for' initial value must be a number")
			limit := L.forNumber(reg.Get(RA+1), "'for' limit must be a number")
			step := L.forNumber(reg.Get(RA+2), "'for' step must be a number")
			// +inline-call reg.SetNumber RA LNumber(init-step)
			// +inline-call reg.SetNumber RA+1 limit
			// +inline-call reg.SetNumber RA+2 step
			cf.Pc += Sbx
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_TFORLOOP
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			C := int(inst>>9) & 0x1ff //GETC
			nret := C
			// +inline-call reg.SetTop RA+3+2
			// +inline-call reg.Set RA+3+2 reg.Get(RA+2)
			// +inline-call reg.Set RA+3+1 reg.Get(RA+1)
			// +inline-call reg.Set RA+3 reg.Get(RA)
			if fn, ok := reg.Get(RA).(*LFunction); ok && !fn.IsG {
				// A Lua iterator runs as a frame of this loop, so it may yield; its return
				// finishes the step (finishOp, forStep).
				L.pushCallFrame(callFrame{
					Fn:         fn,
					Pc:         0,
					Base:       RA + 3,
					LocalBase:  RA + 4,
					ReturnBase: RA + 3,
					NArgs:      2,
					NRet:       nret,
					Parent:     cf,
					TailCall:   0,
					finish:     finishForStep,
				}, fn, false)
				return 0
			}
			L.callR(2, nret, RA+3)
			forStep(L, cf, RA)
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_SETLIST
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff)    //GETB
			C := int(inst>>9) & 0x1ff //GETC
			if C == 0 {
				C = int(cf.Fn.Proto.Code[cf.Pc])
				cf.Pc++
			}
			offset := (C - 1) * FieldsPerFlush
			table := reg.Get(RA).(*LTable)
			nelem := B
			if B == 0 {
				nelem = reg.Top() - RA - 1
			}
			table.presizeArray(offset + nelem)
			for i := 1; i <= nelem; i++ {
				table.RawSetInt(offset+i, reg.Get(RA+i))
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_CLOSE
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			// +inline-call L.closeUpvalues RA
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_CLOSURE
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			Bx := int(inst & 0x3ffff) //GETBX
			proto := cf.Fn.Proto.FunctionPrototypes[Bx]
			closure := newLFunctionL(proto, cf.Fn.Env, int(proto.NumUpvalues))
			// +inline-call reg.Set RA closure
			for i := 0; i < int(proto.NumUpvalues); i++ {
				inst = cf.Fn.Proto.Code[cf.Pc]
				cf.Pc++
				B := opGetArgB(inst)
				switch opGetOpCode(inst) {
				case OP_MOVE:
					closure.Upvalues[i] = L.findUpvalue(lbase + B)
				case OP_GETUPVAL:
					closure.Upvalues[i] = cf.Fn.Upvalues[B]
				}
			}
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_VARARG
			reg := L.reg
			cf := L.currentFrame
			lbase := cf.LocalBase
			A := int(inst>>18) & 0xff //GETA
			RA := lbase + A
			B := int(inst & 0x1ff) //GETB
			nparams := int(cf.Fn.Proto.NumParameters)
			nvarargs := cf.NArgs - nparams
			if nvarargs < 0 {
				nvarargs = 0
			}
			nwant := B - 1
			if B == 0 {
				nwant = nvarargs
			}
			// +inline-call reg.CopyRange RA cf.Base+nparams+1 cf.LocalBase nwant
			return 0
		},
		func(L *LState, inst uint32, baseframe *callFrame) int { //OP_NOP
			return 0
		},
	}
}

func opArith(L *LState, inst uint32, baseframe *callFrame) int { //OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_POW
	reg := L.reg
	cf := L.currentFrame
	lbase := cf.LocalBase
	A := int(inst>>18) & 0xff //GETA
	RA := lbase + A
	opcode := int(inst >> 26) //GETOPCODE
	B := int(inst & 0x1ff)    //GETB
	C := int(inst>>9) & 0x1ff //GETC
	lhs := L.rkValue(B)
	rhs := L.rkValue(C)
	v1, ok1 := lhs.(LNumber)
	v2, ok2 := rhs.(LNumber)
	if ok1 && ok2 {
		v := numberArith(L, opcode, LNumber(v1), LNumber(v2))
		// +inline-call reg.SetNumber RA v
	} else if v, done := objectArithVM(L, opcode, lhs, rhs); done {
		// +inline-call reg.Set RA v
	}
	return 0
}

func luaModulo(lhs, rhs LNumber) LNumber {
	flhs := float64(lhs)
	frhs := float64(rhs)
	v := math.Mod(flhs, frhs)
	if frhs > 0 && v < 0 || frhs < 0 && v > 0 {
		v += frhs
	}
	return WithoutNegativeZero(LNumber(v)) // math.Mod(-1, 1) is -0
}

func numberArith(L *LState, opcode int, lhs, rhs LNumber) LNumber {
	switch opcode {
	case OP_ADD:
		return lhs + rhs
	case OP_SUB:
		return lhs - rhs
	// Only *, /, % and ^ make a negative zero of operands that are not one (0 * -1,
	// -1e-300 * 1e-300); + and - need one.
	case OP_MUL:
		return WithoutNegativeZero(lhs * rhs)
	case OP_DIV:
		return WithoutNegativeZero(lhs / rhs)
	case OP_MOD:
		return luaModulo(lhs, rhs)
	case OP_POW:
		flhs := float64(lhs)
		frhs := float64(rhs)
		return WithoutNegativeZero(LNumber(math.Pow(flhs, frhs)))
	}
	panic("should not reach here")
}

var arithEvents = [...]string{OP_ADD: "__add", OP_SUB: "__sub", OP_MUL: "__mul", OP_DIV: "__div", OP_MOD: "__mod", OP_POW: "__pow"}

// objectArithVM is objectArith for the VM: a Lua metamethod runs as a frame of the loop and
// returns done false; finishOp stores its result. So does a Go one whose call and return a
// hook wants (callMeta).
func objectArithVM(L *LState, opcode int, lhs, rhs LValue) (LValue, bool) {
	op := L.metaOp2(lhs, rhs, arithEvents[opcode])
	if fn, ok := op.(*LFunction); ok && (!fn.IsG || L.hooks != nil && L.hooksGoCall()) {
		L.callMeta(fn, finishStore, 0, 2, lhs, rhs, nil)
		return nil, false
	}
	return objectArith(L, opcode, lhs, rhs), true
}

func objectArith(L *LState, opcode int, lhs, rhs LValue) LValue {
	event := ""
	switch opcode {
	case OP_ADD:
		event = "__add"
	case OP_SUB:
		event = "__sub"
	case OP_MUL:
		event = "__mul"
	case OP_DIV:
		event = "__div"
	case OP_MOD:
		event = "__mod"
	case OP_POW:
		event = "__pow"
	}
	op := L.metaOp2(lhs, rhs, event)
	if _, ok := op.(*LFunction); ok {
		L.reg.Push(op)
		L.reg.Push(lhs)
		L.reg.Push(rhs)
		L.Call(2, 1)
		return L.reg.Pop()
	}
	// A string operand is read as the state's ArgNumberReader reads a string argument
	// (fakecraft's: as Cobalt's tonumber, so "010" + 0 is 10 and "inf" + 0 an error, where
	// gopher-lua's parseNumber read 8 and inf).
	if str, ok := lhs.(LString); ok {
		if lnum, ok := L.argNumber(str); ok {
			lhs = lnum
		}
	}
	if str, ok := rhs.(LString); ok {
		if rnum, ok := L.argNumber(str); ok {
			rhs = rnum
		}
	}
	if v1, ok1 := lhs.(LNumber); ok1 {
		if v2, ok2 := rhs.(LNumber); ok2 {
			return numberArith(L, opcode, LNumber(v1), LNumber(v2))
		}
	}
	L.arithError(lhs, rhs)

	return LNil
}

func stringConcat(L *LState, total, last int) LValue {
	rhs := L.reg.Get(last)
	total--
	for i := last - 1; total > 0; {
		lhs := L.reg.Get(i)
		if !(LVCanConvToString(lhs) && LVCanConvToString(rhs)) {
			op := L.metaOp2(lhs, rhs, "__concat")
			if op.Type() == LTFunction {
				L.reg.Push(op)
				L.reg.Push(lhs)
				L.reg.Push(rhs)
				L.Call(2, 1)
				rhs = L.reg.Pop()
				total--
				i--
			} else {
				L.concatError(lhs, rhs, i)
				return LNil
			}
		} else {
			buf := make([]string, total+1)
			buf[total] = LVAsString(rhs)
			for total > 0 {
				lhs = L.reg.Get(i)
				if !LVCanConvToString(lhs) {
					break
				}
				buf[total-1] = LVAsString(lhs)
				i--
				total--
			}
			rhs = LString(strings.Join(buf, ""))
		}
	}
	return rhs
}

// concatFrom concatenates registers first to last for OP_CONCAT, right to left as
// stringConcat does, and returns the result with done true. A Lua __concat metamethod runs as
// a frame of the loop instead (done false); its return stores its result in the register of
// its left operand, and finishOp goes on from there (the operands are the instruction's
// temporaries, free to overwrite). So does a Go one whose call and return a hook wants
// (callMeta).
func concatFrom(L *LState, first, last int) (LValue, bool) {
	rhs := L.reg.Get(last)
	for i := last - 1; i >= first; {
		lhs := L.reg.Get(i)
		if !(LVCanConvToString(lhs) && LVCanConvToString(rhs)) {
			op := L.metaOp2(lhs, rhs, "__concat")
			if op.Type() != LTFunction {
				L.concatError(lhs, rhs, i)
				return LNil, true
			}
			if fn := op.(*LFunction); !fn.IsG || L.hooks != nil && L.hooksGoCall() {
				L.callMeta(fn, finishConcat, i, 2, lhs, rhs, nil)
				return nil, false
			}
			L.reg.Push(op)
			L.reg.Push(lhs)
			L.reg.Push(rhs)
			L.Call(2, 1)
			rhs = L.reg.Pop()
			i--
			continue
		}
		total := i - first + 1
		buf := make([]string, total+1)
		buf[total] = LVAsString(rhs)
		for i >= first {
			lhs = L.reg.Get(i)
			if !LVCanConvToString(lhs) {
				break
			}
			buf[i-first] = LVAsString(lhs)
			i--
		}
		rhs = LString(strings.Join(buf[i-first+1:], ""))
	}
	return rhs, true
}

// What the return of a frame called from an instruction (callMeta) finishes in it.
const (
	finishNone          uint8 = iota
	finishStore               // arithmetic, unary minus, #, indexing, self: R(A) = the result
	finishDrop                // __newindex: nothing
	finishCond                // __eq, __lt, __le: the conditional jump on the result
	finishCondNot             // a <= b through not __lt(b, a): the jump on the negated result
	finishConcat              // __concat: the result replaces the left operand, the concatenation goes on
	finishHook                // a debug hook: results dropped, the interrupted instruction runs next
	finishForStep             // a generic for's Lua iterator: its results in place, the loop goes on (forStep)
	finishErrorHandler        // a coroutine's error handler: the coroutine dies of its result (errhandler.go)
	finishGoHandlerHook       // a debug hook over a Go error handler: the handler's call or return goes on (errhandler.go)
	finishGoMetaHook          // a debug hook over a Go metamethod: its call or the instruction goes on (hook.go)
)

// callMeta calls the metamethod mm with nargs of a, b, c for the current instruction, C Lua
// 5.2's way: a Lua function runs as a frame of this loop (so it may yield: no Go lies
// between it and the coroutine's resume), and its OP_RETURN finishes the instruction through
// finishOp; a Go function (or a callable object) is called at once and finished here, but
// for a Go function whose call and return a hook wants (callGoMetaHooked).
func (ls *LState) callMeta(mm LValue, finish uint8, arg int, nargs int, a, b, c LValue) {
	base := ls.reg.Top()
	ls.reg.Push(mm)
	ls.reg.Push(a)
	if nargs > 1 {
		ls.reg.Push(b)
	}
	if nargs > 2 {
		ls.reg.Push(c)
	}
	if fn, ok := mm.(*LFunction); ok && !fn.IsG {
		ls.pushCallFrame(callFrame{
			Fn:         fn,
			Pc:         0,
			Base:       base,
			LocalBase:  base + 1,
			ReturnBase: base,
			NArgs:      nargs,
			NRet:       1,
			Parent:     ls.currentFrame,
			TailCall:   0,
			finish:     finish,
			finishArg:  int32(arg),
		}, mm, false)
		return
	}
	if fn, ok := mm.(*LFunction); ok && ls.hooks != nil && ls.hooksGoCall() {
		ls.callGoMetaHooked(fn, finish, arg, nargs, base)
		return
	}
	ls.Call(nargs, 1)
	finishOp(ls, finish, arg, base)
}

// finishOp finishes the current frame's instruction (the one before Pc) once the frame it
// called through callMeta returned its result at base.
func finishOp(L *LState, finish uint8, arg int, base int) {
	cf := L.currentFrame
	if finish == finishForStep {
		// The iterator's results are in place from R(A+3) on.
		inst := cf.Fn.Proto.Code[cf.Pc-1]
		forStep(L, cf, cf.LocalBase+int(inst>>18)&0xff)
		return
	}
	if finish == finishHook {
		// The hook's results were dropped; the instruction it interrupted runs next, without
		// the events it fired (hook.go).
		L.reg.SetTop(base)
		if arg&hookPcKept == 0 {
			cf.Pc--
		}
		L.inHook = false
		return
	}
	result := L.reg.Get(base)
	L.reg.SetTop(base)
	inst := cf.Fn.Proto.Code[cf.Pc-1]
	A := int(inst>>18) & 0xff //GETA
	switch finish {
	case finishStore:
		L.reg.Set(cf.LocalBase+A, result)
	case finishCond, finishCondNot:
		ret := LVAsBool(result)
		if finish == finishCondNot {
			ret = !ret
		}
		v := 1
		if ret {
			v = 0
		}
		if v == A {
			cf.Pc++
		}
	case finishConcat:
		L.reg.Set(arg, result)
		if v, done := concatFrom(L, cf.LocalBase+int(inst&0x1ff), arg); done {
			L.reg.Set(cf.LocalBase+A, v)
		}
	}
}

// forStep ends a generic for's step once its iterator (called by the OP_TFORLOOP before
// cf.Pc) has put its results from R(A+3) on, RA being R(A): the loop goes on into its body
// with the control variable set to the first result unless that is nil.
func forStep(L *LState, cf *callFrame, RA int) {
	if value := L.reg.Get(RA + 3); value != LNil {
		L.reg.Set(RA+2, value)
		pc := cf.Fn.Proto.Code[cf.Pc]
		cf.Pc += int(pc&0x3ffff) - opMaxArgSbx
	}
	cf.Pc++
}

// comparisonMeta is the function both operands share for event (Lua 5.1's rule), or nil.
func comparisonMeta(L *LState, lhs, rhs LValue, event string) LValue {
	m1 := L.metaOp1(lhs, event)
	if m1.Type() == LTFunction && m1 == L.metaOp1(rhs, event) {
		return m1
	}
	return nil
}

func lessThan(L *LState, lhs, rhs LValue) bool {
	// optimization for numbers
	if v1, ok1 := lhs.(LNumber); ok1 {
		if v2, ok2 := rhs.(LNumber); ok2 {
			return v1 < v2
		}
		L.compareError(lhs, rhs)
	}
	if lhs.Type() != rhs.Type() {
		L.compareError(lhs, rhs)
		return false
	}
	ret := false
	switch lhs.Type() {
	case LTString:
		ret = strCmp(string(lhs.(LString)), string(rhs.(LString))) < 0
	default:
		ret = objectRationalWithError(L, lhs, rhs, "__lt")
	}
	return ret
}

func equals(L *LState, lhs, rhs LValue, raw bool) bool {
	lt := lhs.Type()
	if lt != rhs.Type() {
		return false
	}

	ret := false
	switch lt {
	case LTNil:
		ret = true
	case LTNumber:
		v1, _ := lhs.(LNumber)
		v2, _ := rhs.(LNumber)
		ret = v1 == v2
	case LTBool:
		ret = bool(lhs.(LBool)) == bool(rhs.(LBool))
	case LTString:
		ret = string(lhs.(LString)) == string(rhs.(LString))
	case LTUserData, LTTable:
		if lhs == rhs {
			ret = true
		} else if !raw {
			switch objectRational(L, lhs, rhs, "__eq") {
			case 1:
				ret = true
			default:
				ret = false
			}
		}
	default:
		ret = lhs == rhs
	}
	return ret
}

func objectRationalWithError(L *LState, lhs, rhs LValue, event string) bool {
	switch objectRational(L, lhs, rhs, event) {
	case 1:
		return true
	case 0:
		return false
	}
	L.compareError(lhs, rhs)
	return false
}

func objectRational(L *LState, lhs, rhs LValue, event string) int {
	m1 := L.metaOp1(lhs, event)
	m2 := L.metaOp1(rhs, event)
	if m1.Type() == LTFunction && m1 == m2 {
		L.reg.Push(m1)
		L.reg.Push(lhs)
		L.reg.Push(rhs)
		L.Call(2, 1)
		if LVAsBool(L.reg.Pop()) {
			return 1
		}
		return 0
	}
	return -1
}
