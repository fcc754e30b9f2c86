package lua

import "strings"

// Debug hooks (debug.sethook), per coroutine as in Lua. The VM's loop checks L.hooks before
// every instruction, one branch while no hook is set. A Lua hook runs as a frame of the loop
// whose return is dropped (finishHook), after which the interrupted instruction runs without
// firing the events it already fired; so a hook may yield, and the resume carries on. Hooks
// are off while a hook runs. A Go hook is called at once.

// Events of a hook's mask.
const (
	hookMaskCall uint8 = 1 << iota
	hookMaskReturn
	hookMaskLine
)

// hookState is a coroutine's hook and where its events stand.
type hookState struct {
	fn       LValue
	mask     uint8
	count    int // a count event every count instructions, 0 for none
	left     int // instructions until the next count event
	done     uint8
	goReturn *LFunction // a Go function called by OP_CALL that returned: its return event is due
	oldFrame *callFrame // the frame and pc of the last instruction traced, for line events
	oldPc    int
}

// Events already fired for the instruction about to run (done), so that it runs once the
// hooks it interrupted for have returned.
const (
	doneGoReturn uint8 = 1 << iota
	doneCall
	doneCount
	doneLine
	doneReturn
	doneGoCall
)

// ShareHooks makes ls, a coroutine in which an embedder's Lua stand-in for a C function runs
// a function for its resumer (a pcall that can yield runs its function so), share its
// resumer's hook, as Lua's pcall runs the function in the caller's coroutine: ls takes the
// hook, and where its events stand, each time it is resumed, and hands them back when it
// yields or ends; debug.sethook and debug.gethook naming the resumer there mean ls. It
// starts with hooks off when its resumer is in a hook. Call it before the first resume.
func (ls *LState) ShareHooks() {
	ls.sharesHooks = true
}

// takeHooks gives ls, a coroutine that shares its resumer's hooks, the resumer's. Hooks are
// off in ls while its resumer is in a hook, unless ls is in one of its own (it yielded there).
func (ls *LState) takeHooks(resumer *LState) {
	ls.hooks = resumer.hooks
	if resumer.inHook && !ls.inHook {
		ls.inHook, ls.inResumerHook = true, true
	}
}

// handHooksBack gives ls's hook back to its resumer when ls yields or ends. An instruction
// that an error ended leaves no events behind it.
func (ls *LState) handHooksBack(resumer *LState) {
	resumer.hooks = ls.hooks
	if ls.inResumerHook {
		ls.inHook, ls.inResumerHook = false, false
	}
	if h := ls.hooks; h != nil && ls.Dead {
		h.done = 0
		h.goReturn = nil
	}
}

// hookHolder is the coroutine whose hook is th's when ls runs: ls itself when th resumed it,
// directly or through others, and each of them shares its resumer's hooks; else th.
func (ls *LState) hookHolder(th *LState) *LState {
	for t := ls; t.sharesHooks && t.Parent != nil; t = t.Parent {
		if t.Parent == th {
			return ls
		}
	}
	return th
}

// standsIn reports whether fn is Lua code standing in for a Go function (SetStandInSource).
func (ls *LState) standsIn(fn *LFunction) bool {
	return !fn.IsG && ls.G.standInSource != "" && fn.Proto.SourceName == ls.G.standInSource
}

// SetHook sets the running coroutine's hook: fn is called with the event's name ("call",
// "tail call", "return", "line" with the line, "count") for the events of mask (any of
// 'c', 'r', 'l') and, when count > 0, every count instructions. A nil fn, or no event,
// removes it.
func (ls *LState) SetHook(fn LValue, mask string, count int) {
	var m uint8
	if strings.ContainsRune(mask, 'c') {
		m |= hookMaskCall
	}
	if strings.ContainsRune(mask, 'r') {
		m |= hookMaskReturn
	}
	if strings.ContainsRune(mask, 'l') {
		m |= hookMaskLine
	}
	if count < 0 {
		count = 0
	}
	if fn == nil || fn == LNil || (m == 0 && count == 0) {
		ls.hooks = nil
		return
	}
	ls.hooks = &hookState{fn: fn, mask: m, count: count, left: count, oldPc: -1}
}

// GetHook returns the coroutine's hook, its mask and count (nil, "", 0 when none).
func (ls *LState) GetHook() (LValue, string, int) {
	h := ls.hooks
	if h == nil {
		return LNil, "", 0
	}
	mask := ""
	if h.mask&hookMaskCall != 0 {
		mask += "c"
	}
	if h.mask&hookMaskReturn != 0 {
		mask += "r"
	}
	if h.mask&hookMaskLine != 0 {
		mask += "l"
	}
	return h.fn, mask, h.count
}

// hookDispatch fires the hooks due before the instruction at cf.Pc. It returns true when it
// pushed a hook's frame: the loop goes on in it, and comes back to the instruction when it
// returns.
func (ls *LState) hookDispatch(cf *callFrame) bool {
	h := ls.hooks
	if ls.inHook {
		return false
	}
	if ls.standsIn(cf.Fn) {
		return ls.hookStandIn(cf)
	}
	for {
		event, line, goFn := h.next(ls, cf)
		if event == "" {
			h.done = 0
			return false
		}
		var pushed bool
		if goFn != nil {
			pushed = ls.callGoHook(cf, goFn, event)
		} else {
			pushed = ls.callHook(cf, event, line)
		}
		if pushed {
			return true
		}
		if ls.hooks != h { // the hook changed the hook
			return false
		}
	}
}

// hookStandIn fires the hooks due before the instruction at cf.Pc of a stand-in for a Go
// function: a Go function's events only, its call as it starts and its return as it
// returns, when Lua code called it or a stand-in called it back (callsBack); its own
// instructions fire none (no line, no count), as a C function's in Lua. A Go function it
// calls back fires its call and return, as one a Java function calls through Cobalt's
// Dispatch does. It leaves the events of other frames (h.done) alone: a coroutine that
// shares this one's hooks may have yielded inside a hook, and resumes with them.
func (ls *LState) hookStandIn(cf *callFrame) bool {
	h := ls.hooks
	if goFn := h.goReturn; goFn != nil {
		h.goReturn = nil
		if ls.callGoHook(cf, goFn, "return") {
			return true
		}
		if ls.hooks != h { // the hook changed the hook
			return false
		}
	}
	op := int(cf.Fn.Proto.Code[cf.Pc] >> 26)
	if (op == OP_CALL || op == OP_TAILCALL) && h.mask&hookMaskCall != 0 {
		return ls.hookCallBack(cf)
	}
	if p := cf.Parent; p == nil || p.Fn.IsG || ls.standsIn(p.Fn) && !callsBack(p.Fn, p.Pc-1) {
		return false
	}
	if !cf.hooked {
		cf.hooked = true
		if cf.Pc == 0 && cf.TailCall == 0 && h.mask&hookMaskCall != 0 {
			return ls.callHook(cf, "call", -1)
		}
	}
	if op != OP_RETURN || h.mask&hookMaskReturn == 0 {
		return false
	}
	if h.done&doneReturn != 0 {
		h.done &^= doneReturn
		return false
	}
	h.done |= doneReturn
	if ls.callHook(cf, "return", -1) {
		return true
	}
	h.done &^= doneReturn
	return false
}

// hookCallBack fires the call event of a Go function that the instruction at cf.Pc, a
// stand-in's call, calls back (callsBack), over a frame of its own (callGoHook).
func (ls *LState) hookCallBack(cf *callFrame) bool {
	h := ls.hooks
	inst := cf.Fn.Proto.Code[cf.Pc]
	fn, _ := ls.metaCall(ls.reg.Get(cf.LocalBase + int(inst>>18)&0xff))
	if fn == nil || !fn.IsG || !callsBack(cf.Fn, cf.Pc) {
		return false
	}
	if h.done&doneGoCall != 0 {
		// Fired already: the hook returned and the call runs.
		h.done &^= doneGoCall
		return false
	}
	h.done |= doneGoCall
	if ls.callGoHook(cf, fn, "call") {
		return true
	}
	h.done &^= doneGoCall
	return false
}

// callsBack reports whether the call instruction at pc of fn, a stand-in for a Go function,
// calls a function the stand-in was given (pcall's function, table.sort's comparator, a
// __pairs), where a Go function Cobalt has in Java would call it through Dispatch, firing
// its events: one the stand-in holds in a local of its own, or one a call returned
// (cfuncs.lua's same(f)(...)). The library functions it keeps in upvalues for its own
// workings, and a loop's iterator (a hidden local, luachunk's generic for), fire none.
func callsBack(fn *LFunction, pc int) bool {
	proto := fn.Proto
	setPc := findSetRegister(proto, pc, opGetArgA(proto.Code[pc]))
	if setPc < 0 {
		return false
	}
	switch inst := proto.Code[setPc]; opGetOpCode(inst) {
	case OP_MOVE, OP_MOVEN:
		local, found := activeLocal(proto, opGetArgB(inst), pc)
		return found && !strings.HasPrefix(local, "(")
	case OP_CALL:
		return true
	}
	return false
}

// next is the next event due before the instruction at cf.Pc that has not fired yet, and
// marks it fired; "" when none is left. goFn is the Go function an event is of (its call by
// the instruction at cf.Pc, or its return from the one before), nil for cf's own events.
func (h *hookState) next(ls *LState, cf *callFrame) (event string, line int, goFn *LFunction) {
	if h.goReturn != nil && h.done&doneGoReturn == 0 {
		h.done |= doneGoReturn
		goFn, h.goReturn = h.goReturn, nil
		if h.mask&hookMaskReturn != 0 {
			return "return", -1, goFn
		}
	}
	if !cf.hooked {
		cf.hooked = true
		if cf.Pc == 0 && h.mask&hookMaskCall != 0 && h.done&doneCall == 0 {
			h.done |= doneCall
			if cf.TailCall > 0 {
				return "tail call", -1, nil
			}
			return "call", -1, nil
		}
	}
	if h.count > 0 && h.done&doneCount == 0 {
		h.done |= doneCount
		h.left--
		if h.left <= 0 {
			h.left = h.count
			return "count", -1, nil
		}
	}
	proto := cf.Fn.Proto
	if h.mask&hookMaskLine != 0 && h.done&doneLine == 0 {
		h.done |= doneLine
		pc, oldPc := cf.Pc, h.oldPc
		if cf != h.oldFrame {
			// Come back from a call: the instruction that made it was the last one here.
			oldPc = pc - 1
		}
		h.oldFrame, h.oldPc = cf, pc
		if pc == 0 || pc <= oldPc || proto.DbgSourcePositions[pc] != proto.DbgSourcePositions[oldPc] {
			return "line", proto.DbgSourcePositions[pc], nil
		}
	}
	inst := proto.Code[cf.Pc]
	op := int(inst >> 26)
	if op == OP_RETURN && h.mask&hookMaskReturn != 0 && h.done&doneReturn == 0 {
		h.done |= doneReturn
		return "return", -1, nil
	}
	if (op == OP_CALL || op == OP_TAILCALL) && h.mask&hookMaskCall != 0 && h.done&doneGoCall == 0 {
		h.done |= doneGoCall
		// A Go function's call event fires before the instruction that calls it, over a frame
		// of its own (callGoHook); a Lua function's fires as it starts.
		if fn, _ := ls.metaCall(ls.reg.Get(cf.LocalBase + int(inst>>18)&0xff)); fn != nil && fn.IsG && !fn.Hidden {
			return "call", -1, fn
		}
	}
	return "", 0, nil
}

// callHook calls the hook for event before the instruction at cf.Pc, as if that instruction
// had started (debug.getinfo's currentline and errors point at it). A Lua hook is pushed as
// a frame of the loop (true); its return runs finishOp's finishHook.
func (ls *LState) callHook(cf *callFrame, event string, line int) bool {
	fn := ls.hooks.fn
	cf.Pc++
	ls.inHook = true
	base := ls.reg.Top()
	ls.reg.Push(fn)
	ls.reg.Push(LString(event))
	nargs := 1
	if line >= 0 {
		ls.reg.Push(LNumber(line))
		nargs = 2
	}
	if lf, ok := fn.(*LFunction); ok && !lf.IsG {
		ls.pushCallFrame(callFrame{
			Fn:         lf,
			Pc:         0,
			Base:       base,
			LocalBase:  base + 1,
			ReturnBase: base,
			NArgs:      nargs,
			NRet:       0,
			Parent:     cf,
			TailCall:   0,
			finish:     finishHook,
		}, fn, false)
		return true
	}
	ls.Call(nargs, 0)
	ls.reg.SetTop(base)
	ls.inHook = false
	cf.Pc--
	return false
}

// Flags of a hook frame's finishArg (finishHook).
const (
	hookOverGoFrame = 1 << iota // a Go function's frame lies under the hook's: popped with it
	hookPcKept                  // the interrupted frame's pc was not advanced for the hook
)

// callGoHook calls the hook for event, a Go function's call by the instruction at cf.Pc or
// its return from the one before it, over a frame of that function's own, as Cobalt calls
// a Java function in a frame of its own: debug.getinfo(2) in the hook is the Go function,
// named as cf's call instruction names it, and cf's current line is the call's. The frame
// holds nothing (the function has not started, or has returned); it goes with the hook's.
// A Lua hook is pushed as a frame of the loop (true), so it may yield, as callHook's.
func (ls *LState) callGoHook(cf *callFrame, goFn *LFunction, event string) bool {
	flags := int32(hookOverGoFrame)
	if event == "call" {
		cf.Pc++ // as callHook: the call instruction counts as started
	} else {
		flags |= hookPcKept // past the call instruction already
	}
	ls.inHook = true
	base := ls.reg.Top()
	ls.pushCallFrame(callFrame{
		Fn:         goFn,
		Base:       base,
		LocalBase:  base,
		ReturnBase: base,
		Parent:     cf,
		hooked:     true,
	}, goFn, false)
	goFrame := ls.currentFrame
	fn := ls.hooks.fn
	ls.reg.Push(fn)
	ls.reg.Push(LString(event))
	if lf, ok := fn.(*LFunction); ok && !lf.IsG {
		ls.pushCallFrame(callFrame{
			Fn:         lf,
			Base:       base,
			LocalBase:  base + 1,
			ReturnBase: base,
			NArgs:      1,
			Parent:     goFrame,
			finish:     finishHook,
			finishArg:  flags,
		}, fn, false)
		return true
	}
	ls.Call(1, 0)
	ls.reg.SetTop(base)
	ls.stack.Pop()
	ls.currentFrame = cf
	ls.inHook = false
	if flags&hookPcKept == 0 {
		cf.Pc--
	}
	return false
}

// keepsGoTailCaller reports whether cf's tail call of a Go function, made while a hook is
// set, is made as an ordinary call, so that cf stays, as Cobalt's tail call of a Java
// function leaves its caller: the Go function's return event comes, then cf's (a
// stand-in's, when Lua code called it: hookStandIn). A stand-in that a stand-in's own
// workings called may leave by it, the Go function returning into a call that fires
// nothing; one a stand-in calls back may not: the Go function would return into the call
// back as the function called back (pcall(w) of a coroutine.wrap function, whose tail call
// of unpack returned into pcall's call of w).
func (ls *LState) keepsGoTailCaller(cf *callFrame) bool {
	if !ls.standsIn(cf.Fn) {
		return true
	}
	p := cf.Parent
	return p != nil && (!ls.standsIn(p.Fn) || callsBack(p.Fn, p.Pc-1))
}

// CallFiringHooks is Call(nargs, nret), where the function called is a Go function that a
// Go function calls for Lua code, as Cobalt's Java function calls it through Dispatch,
// firing its call and return events over a frame of its own (unnamed: its caller is Go).
// The hook runs at once, so it cannot yield there: call it only where nothing may yield (a
// Lua function called instead would run its hooks in a nested loop all the same).
func (ls *LState) CallFiringHooks(nargs, nret int) {
	fn, ok := ls.Get(-nargs - 1).(*LFunction)
	if !ok || !fn.IsG || ls.hooks == nil {
		ls.Call(nargs, nret)
		return
	}
	ls.hookGoAtOnce(fn, "call")
	ls.Call(nargs, nret)
	ls.hookGoAtOnce(fn, "return")
}

// hookGoAtOnce calls the hook for event ("call" or "return") of fn, a Go function that Go
// calls (xpcall's Go handler, CallFiringHooks), at once, over a frame of fn's own as
// callGoHook's, named as the running frame's current instruction names it. Nothing fires
// while no hook is set, one runs, or the hook does not want event.
func (ls *LState) hookGoAtOnce(fn *LFunction, event string) {
	h := ls.hooks
	if h == nil || ls.inHook {
		return
	}
	if event == "call" && h.mask&hookMaskCall == 0 || event == "return" && h.mask&hookMaskReturn == 0 {
		return
	}
	caller := ls.currentFrame
	base := ls.reg.Top()
	ls.inHook = true
	ls.pushCallFrame(callFrame{
		Fn:         fn,
		Base:       base,
		LocalBase:  base,
		ReturnBase: base,
		Parent:     caller,
		hooked:     true,
	}, fn, false)
	ls.reg.Push(h.fn)
	ls.reg.Push(LString(event))
	ls.Call(1, 0)
	ls.reg.SetTop(base)
	ls.stack.Pop()
	ls.currentFrame = caller
	ls.inHook = false
}

// hooksGoCall reports whether the running hook wants the call or return event of a Go
// function that Go calls for an instruction or an error (a metamethod, xpcall's handler):
// one is set, with either event, and no hook runs.
func (ls *LState) hooksGoCall() bool {
	h := ls.hooks
	return h != nil && !ls.inHook && h.mask&(hookMaskCall|hookMaskReturn) != 0
}

// Which event of a Go metamethod a hook frame over it is for (its finishArg, with
// finishGoMetaHook).
const (
	metaHookCall   = iota // the call event: the metamethod is called when the hook returns
	metaHookReturn        // the return event: the instruction is finished when the hook returns
)

// callGoMetaHooked calls fn, a Go metamethod the current instruction runs (callMeta, its
// function and nargs arguments pushed at base), firing its call and return events as
// Cobalt's Dispatch fires a Java metamethod's, over a frame of fn's own named by the
// instruction (hooksGoCall said they are due). A Lua hook is pushed as a frame of the loop,
// so it may yield as Cobalt's may: the metamethod is called when the call event's hook
// returns, and the instruction is finished (finishOp's finish, with arg) when the return
// event's does (goMetaHookReturned). A Go hook is called at once.
func (ls *LState) callGoMetaHooked(fn *LFunction, finish uint8, arg, nargs, base int) {
	h := ls.hooks
	if hook, isLua := h.fn.(*LFunction); !isLua || hook.IsG {
		ls.hookGoAtOnce(fn, "call")
		ls.Call(nargs, 1)
		ls.hookGoAtOnce(fn, "return")
		finishOp(ls, finish, arg, base)
		return
	}
	if h.mask&hookMaskCall != 0 {
		ls.pushGoMetaHook(fn, finish, arg, nargs, base, metaHookCall)
		return
	}
	ls.Call(nargs, 1)
	ls.pushGoMetaHook(fn, finish, arg, 0, base, metaHookReturn)
}

// pushGoMetaHook pushes a frame of fn, the Go metamethod, over the instruction's frame, and
// the coroutine's Lua hook over it, for the event of stage. fn's frame holds what the
// metamethod is called with (its nargs arguments from base+1), or its result at base once
// it returned, and what finishes the instruction (its finish and finishArg).
func (ls *LState) pushGoMetaHook(fn *LFunction, finish uint8, arg, nargs, base int, stage int32) {
	event := LString("call")
	if stage == metaHookReturn {
		event = "return"
	}
	ls.inHook = true
	ls.pushCallFrame(callFrame{
		Fn:         fn,
		Base:       base,
		LocalBase:  base + 1,
		ReturnBase: base,
		NArgs:      nargs,
		Parent:     ls.currentFrame,
		hooked:     true,
		finish:     finish,
		finishArg:  int32(arg),
	}, fn, false)
	goFrame := ls.currentFrame
	hookBase := ls.reg.Top()
	hook := ls.hooks.fn
	ls.reg.Push(hook)
	ls.reg.Push(event)
	ls.pushCallFrame(callFrame{
		Fn:         hook.(*LFunction),
		Base:       hookBase,
		LocalBase:  hookBase + 1,
		ReturnBase: hookBase,
		NArgs:      1,
		Parent:     goFrame,
		finish:     finishGoMetaHook,
		finishArg:  stage,
	}, hook, false)
}

// goMetaHookReturned goes on once the hook over a Go metamethod (pushGoMetaHook), the frame
// hookFrame, returned: the hook's and the metamethod's frames go; after the call event the
// metamethod is called, and its return event follows if the hook still wants it; then the
// instruction is finished with its result.
func (ls *LState) goMetaHookReturned(hookFrame *callFrame) {
	goFrame := hookFrame.Parent
	ls.stack.Pop()
	ls.stack.Pop()
	ls.currentFrame = ls.stack.Last()
	ls.inHook = false
	finish, arg, base := goFrame.finish, int(goFrame.finishArg), goFrame.Base
	if hookFrame.finishArg == metaHookCall {
		ls.reg.SetTop(goFrame.LocalBase + goFrame.NArgs)
		ls.Call(goFrame.NArgs, 1)
		if h := ls.hooks; h != nil && h.mask&hookMaskReturn != 0 {
			if hook, ok := h.fn.(*LFunction); ok && !hook.IsG {
				ls.pushGoMetaHook(goFrame.Fn, finish, arg, 0, base, metaHookReturn)
				return
			}
			ls.hookGoAtOnce(goFrame.Fn, "return")
		}
	}
	ls.reg.SetTop(base + 1)
	finishOp(ls, finish, arg, base)
}

// hookGoReturned notes that fn, a Go function called by OP_CALL, returned: its return event
// fires before the next instruction (callGoHook). A stand-in's own calls fire none, its
// calls back do (hookStandIn).
func (ls *LState) hookGoReturned(fn *LFunction) {
	h, cf := ls.hooks, ls.currentFrame
	if h == nil || ls.inHook || h.mask&hookMaskReturn == 0 || fn.Hidden {
		return
	}
	if cf == nil || !ls.standsIn(cf.Fn) || callsBack(cf.Fn, cf.Pc-1) {
		h.goReturn = fn
	}
}

func debugSetHook(L *LState) int {
	th := L
	arg := 1
	if t, ok := L.Get(1).(*LState); ok {
		th = L.hookHolder(t)
		arg = 2
	}
	fn := L.Get(arg)
	if fn == LNil {
		th.SetHook(nil, "", 0)
		return 0
	}
	L.CheckTypes(arg, LTFunction)
	th.SetHook(fn, L.OptString(arg+1, ""), L.OptInt(arg+2, 0))
	return 0
}

func debugGetHook(L *LState) int {
	th := L
	if t, ok := L.Get(1).(*LState); ok {
		th = L.hookHolder(t)
	}
	fn, mask, count := th.GetHook()
	L.Push(fn)
	L.Push(LString(mask))
	L.Push(LNumber(count))
	return 3
}
