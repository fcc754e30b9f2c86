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
// A Lua handler runs as a frame of the loop, so it may yield; a Go one is called at once. An
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
		ls.Push(handler)
		ls.Push(lv)
		if err := ls.PCall(1, 1, nil); err != nil {
			return errorInErrorHandling, true
		}
		return ls.Get(-1), true
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
