package lua

// A coroutine's error handler: xpcall's handler as C Lua and CC: Tweaked's Cobalt run it, at
// the point the error was raised, over the frames of the error, before they are unwound, so
// that debug.traceback and debug.getinfo in it see where the error happened. An embedder
// that makes xpcall a coroutine (fakecraft: so that code under it may yield) gives that
// coroutine the handler; the coroutine then dies of the handler's result.

// Where a coroutine's error handler is (LState.errorHandling).
const (
	handlerIdle     uint8 = iota // no error yet
	handlerRunning               // the handler runs over the frames of the error
	handlerReturned              // the handler returned: the coroutine dies of errorResult
)

// errorInErrorHandling is what a coroutine dies of when its error handler fails, as in Lua.
const errorInErrorHandling = LString("error in error handling")

// SetErrorHandler gives the coroutine ls an error handler: an error that would end it (one no
// pcall inside it catches) is first passed to handler, called at the point it was raised, on
// top of the frames that raised it, and the coroutine's error is the handler's first result.
// A Lua handler runs as a frame of the loop, so it may yield; a Go one is called at once,
// its call and return hooks run as frames of the loop when it has them (hookGoHandler). An
// error in the handler, or a handler that cannot be called, ends the coroutine with "error
// in error handling" (its own errors go to no handler), as Cobalt's ProtectedCall does. When
// the error is a stack overflow, the stack grows for the handler, as Cobalt's does.
// message, when not nil, turns the error's value into the one the handler receives (an
// embedder's placing of an error it raised without a position). With a nil handler and a
// message, no handler runs and the coroutine dies of message's result.
func (ls *LState) SetErrorHandler(handler LValue, message func(L *LState, err LValue) LValue) {
	ls.errorHandler = handler
	ls.errorMessage = message
}

// handleError passes lv, the error that ends the coroutine ls, to its error handler, from
// runThread's recover: ls's frames are those of the error still. It answers the coroutine's
// error and true, or false when the handler, a Lua function, was pushed as a frame to run
// (its return ends the coroutine: handlerReturned).
func (ls *LState) handleError(lv LValue) (result LValue, done bool) {
	if ls.errorHandling != handlerIdle {
		return errorInErrorHandling, true
	}
	ls.errorHandling = handlerRunning
	defer func() {
		if rcv := recover(); rcv != nil {
			// Pushing the handler failed (the registers are full), or a Go handler failed.
			result, done = errorInErrorHandling, true
		}
	}()
	if ls.errorMessage != nil {
		lv = ls.errorMessage(ls, lv)
	}
	ls.stack.GrowForError()
	handler := ls.errorHandler
	fn, meta := ls.metaCall(handler)
	if fn == nil {
		return errorInErrorHandling, true
	}
	if fn.IsG {
		if ls.hooksGoCall() {
			return ls.hookGoHandler(fn, lv)
		}
		result, _ = ls.callGoHandler(lv)
		return result, true
	}
	base := ls.reg.Top()
	ls.reg.Push(handler)
	ls.reg.Push(lv)
	ls.pushCallFrame(callFrame{
		Fn:         fn,
		Pc:         0,
		Base:       base,
		LocalBase:  base + 1,
		ReturnBase: base,
		NArgs:      1,
		NRet:       1,
		Parent:     ls.currentFrame,
		TailCall:   0,
		finish:     finishErrorHandler,
	}, handler, meta)
	return nil, false
}

// callGoHandler calls the coroutine's error handler, a Go function, at once with the error
// lv and answers its first result, or "error in error handling" and false when it fails.
func (ls *LState) callGoHandler(lv LValue) (LValue, bool) {
	top := ls.GetTop()
	ls.Push(ls.errorHandler)
	ls.Push(lv)
	if err := ls.PCall(1, 1, nil); err != nil {
		return errorInErrorHandling, false
	}
	result := ls.Get(-1)
	ls.SetTop(top)
	return result, true
}

// Which event of a Go error handler a hook frame over it is for (its finishArg, with
// finishGoHandlerHook).
const (
	handlerHookCall   = iota // the handler's call event: the handler runs when the hook returns
	handlerHookReturn        // its return event: the coroutine dies of errorResult when the hook returns
)

// hookGoHandler runs fn, the coroutine's Go error handler, for the error lv, firing its call
// and return events as Cobalt's Dispatch fires a Java handler's: over a frame of fn's own on
// the frames of the error, named as the failing instruction names it (hooksGoCall said
// they are due). A Lua hook is pushed as a frame of the loop (done false), so that it may
// yield: the handler is called when the call event's hook returns, and the coroutine dies
// of its result when the return event's does (goHandlerHookReturned). A Go hook is called
// at once, and the handler's result answered (done true).
func (ls *LState) hookGoHandler(fn *LFunction, lv LValue) (result LValue, done bool) {
	h := ls.hooks
	var ok bool
	if hook, isLua := h.fn.(*LFunction); !isLua || hook.IsG {
		ls.hookGoAtOnce(fn, "call")
		if result, ok = ls.callGoHandler(lv); ok {
			ls.hookGoAtOnce(fn, "return")
		}
		return result, true
	}
	if h.mask&hookMaskCall != 0 {
		ls.errorResult = lv
		ls.pushGoHandlerHook(fn, handlerHookCall)
		return nil, false
	}
	if ls.errorResult, ok = ls.callGoHandler(lv); !ok {
		return ls.errorResult, true // no return event for a handler that failed
	}
	ls.pushGoHandlerHook(fn, handlerHookReturn)
	return nil, false
}

// pushGoHandlerHook pushes a frame of fn, the Go error handler, that holds nothing, over the
// frames of the error, and the coroutine's Lua hook over it, for the event of stage.
func (ls *LState) pushGoHandlerHook(fn *LFunction, stage int32) {
	event := LString("call")
	if stage == handlerHookReturn {
		event = "return"
	}
	ls.inHook = true
	base := ls.reg.Top()
	ls.pushCallFrame(callFrame{
		Fn:         fn,
		Base:       base,
		LocalBase:  base,
		ReturnBase: base,
		Parent:     ls.currentFrame,
		hooked:     true,
	}, fn, false)
	goFrame := ls.currentFrame
	hook := ls.hooks.fn
	ls.reg.Push(hook)
	ls.reg.Push(event)
	ls.pushCallFrame(callFrame{
		Fn:         hook.(*LFunction),
		Base:       base,
		LocalBase:  base + 1,
		ReturnBase: base,
		NArgs:      1,
		Parent:     goFrame,
		finish:     finishGoHandlerHook,
		finishArg:  stage,
	}, hook, false)
}

// goHandlerHookReturned goes on once the hook over the Go error handler (pushGoHandlerHook),
// the frame hookFrame, returned: the hook's and the handler's frames go, then the handler
// runs after its call event, and its return event follows if the hook still wants it. It
// answers true when the coroutine is to die of errorResult (handlerReturned), false when
// another hook was pushed to run.
func (ls *LState) goHandlerHookReturned(hookFrame *callFrame) bool {
	goFrame := hookFrame.Parent
	ls.stack.Pop()
	ls.stack.Pop()
	ls.reg.SetTop(hookFrame.Base)
	ls.currentFrame = ls.stack.Last()
	ls.inHook = false
	if hookFrame.finishArg == handlerHookCall {
		var ok bool
		ls.errorResult, ok = ls.callGoHandler(ls.errorResult)
		if h := ls.hooks; ok && h != nil && h.mask&hookMaskReturn != 0 {
			if hook, ok := h.fn.(*LFunction); ok && !hook.IsG {
				ls.pushGoHandlerHook(goFrame.Fn, handlerHookReturn)
				return false
			}
			ls.hookGoAtOnce(goFrame.Fn, "return")
		}
	}
	ls.errorHandling = handlerReturned
	return true
}

// handlerReturned takes the result of the error handler's frame, which returns nret values
// from register ra: the coroutine dies of the first (runThread).
func (ls *LState) handlerReturned(ra, nret int) {
	ls.errorResult = LNil
	if nret > 0 {
		ls.errorResult = ls.reg.Get(ra)
	}
	ls.errorHandling = handlerReturned
}

// ErrorHandler is the coroutine ls's error handler (SetErrorHandler) and whether it has one.
func (ls *LState) ErrorHandler() (LValue, bool) {
	return ls.errorHandler, ls.errorHandler != nil
}
