package computer

import (
	"errors"
	"weak"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
	"fakecraft/luapattern"
)

// gsubYields lets a string.gsub replacement function yield, as CC's Cobalt does, while gsub
// stays Go (a Lua gsub cost every call about 40 %). gopher-lua runs a function called from
// Go in a nested loop that a yield cannot leave (boundary.go), so the function runs in a
// helper coroutine (cfuncs.lua's gsub_helper) that gsub resumes once per match. When the
// function yields, gsub passes the yield on: it yields the coroutine that called it, with
// the same values, and its loop waits here. When coroutine.resume next resumes that
// coroutine, it resumes the helper instead, until the loop ends; then the coroutine is
// resumed with gsub's two results, as if the call had just returned.
//
// An error after the first yield (the function's, or gsub's own) ends the coroutine with
// that error. That is what raising it in the coroutine would do: gsub only switches when
// nothing but Lua calls lie between it and the coroutine's resume (canYield), and Lua code
// catches errors only with pcall/xpcall, which run in coroutines of their own (bios.lua).
// Inside the function coroutine.running() is the gsub's coroutine, not the helper, as in CC
// (luakit's Running).
type gsubYields struct {
	create   *lua.LFunction // coroutine.create as the computer has it
	resume   *lua.LFunction // gopher-lua's coroutine.resume
	helper   *lua.LFunction // cfuncs.lua's gsub_helper, a helper's body
	answered lua.LValue     // what a helper yields before the function's answer
	computer *lua.LState    // the computer's coroutine
	idle     []*lua.LState  // helpers between two calls, for the next gsub
	waiting  map[weak.Pointer[lua.LState]]*gsubWait
}

// maxIdleHelpers is how many helpers wait for the next gsub; a gsub whose replacement runs
// another gsub takes one each.
const maxIdleHelpers = 4

// gsubWait is one gsub with a function replacement, while it runs in steps.
type gsubWait struct {
	loop      gsubLoop
	fn        *lua.LFunction
	owner     *lua.LState // the coroutine the gsub runs in, for the helper (cfuncs.lua)
	where     string      // the gsub call's position, for its errors once suspended
	suspended bool        // its coroutine has yielded once: errors end the coroutine
	helper    *lua.LState // runs fn
	inCall    bool        // fn yielded and waits to be resumed
	running   bool        // its coroutine has been resumed and has not yielded again
}

type gsubOutcome int

const (
	gsubDone gsubOutcome = iota
	gsubYielded
	gsubFailed
)

// installGsub installs string.gsub over strGsub, with the helper's body and marker that
// cfuncs.lua shares in native; installCoroutine has set create and resume.
func (c *Computer) installGsub(L *lua.LState, native *lua.LTable) {
	c.gsubs.helper = native.RawGetString("gsub_helper").(*lua.LFunction)
	luakit.SetCallbackBody(L, c.gsubs.helper)
	c.gsubs.answered = native.RawGetString("gsub_answered")
	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("gsub", L.NewFunction(func(L *lua.LState) int { return strGsub(L, &c.gsubs) }))
}

// running reports whether th is suspended in a gsub whose replacement function runs.
func (y *gsubYields) running(th *lua.LState) bool {
	w := y.suspendedIn(th)
	return w != nil && w.running
}

// pushResume is coroutine.resume (arguments on L's stack) of th, suspended in a gsub.
func (y *gsubYields) pushResume(L, th *lua.LState) int {
	args := make([]lua.LValue, 0, L.GetTop()-1)
	for i := 2; i <= L.GetTop(); i++ {
		args = append(args, L.Get(i))
	}
	results := y.resumeThread(L, th, args)
	for _, v := range results {
		L.Push(v)
	}
	return len(results)
}

// notResumable is why th cannot be resumed from L, in CC's words (Cobalt's LuaThread.resume:
// "cannot resume " and the coroutine's status), or "". gopher-lua's resume checks only for
// the running coroutine; resuming one that waits on a coroutine it resumed (a "normal" one,
// such as the coroutine of a gsub whose replacement function runs) would re-enter that
// resume and overflow Go's stack.
func notResumable(L, th *lua.LState) string {
	if th.Dead {
		return "cannot resume dead coroutine"
	}
	if th == L || th == luakit.Running(L) {
		return "cannot resume running coroutine"
	}
	if resumedBy(L, th) {
		return "cannot resume normal coroutine"
	}
	return ""
}

// canYield reports whether gsub, running in L, may pass a yield on: L is a coroutine that
// coroutine.resume resumes (not the computer's own, which only the bios runs in) and only
// Lua calls lie between gsub and L's resume.
func (y *gsubYields) canYield(L *lua.LState) bool {
	return y != nil && L != L.G.MainThread && L != y.computer && !yieldCrossesGo(L)
}

// gsub runs string.gsub's loop with a function replacement (strGsub checked the
// arguments), yielding L when the function yields.
func (y *gsubYields) gsub(L *lua.LState, loop gsubLoop, fn *lua.LFunction) int {
	w := &gsubWait{loop: loop, fn: fn, owner: L}
	values, outcome := y.run(L, w, nil)
	switch outcome {
	case gsubDone:
		text, n := w.loop.results()
		L.Push(text)
		L.Push(n)
		return 2
	case gsubFailed:
		L.Error(values[0], 0)
	}
	w.where = luakit.CallerWhere(L) // the gsub call's position, which resuming L loses
	w.suspended = true
	y.wait(L, w)
	return L.Yield(values...)
}

// wait keeps w until L, suspended in it, is resumed. A coroutine that is never resumed
// again does not stay alive for it: entries of collected coroutines are dropped here.
func (y *gsubYields) wait(L *lua.LState, w *gsubWait) {
	if y.waiting == nil {
		y.waiting = map[weak.Pointer[lua.LState]]*gsubWait{}
	}
	for key := range y.waiting {
		if key.Value() == nil {
			delete(y.waiting, key)
		}
	}
	y.waiting[weak.Make(L)] = w
}

// suspendedIn is the gsub th is suspended in, or nil.
func (y *gsubYields) suspendedIn(th *lua.LState) *gsubWait {
	if len(y.waiting) == 0 {
		return nil
	}
	return y.waiting[weak.Make(th)]
}

// run carries w's loop on from where it stands until it ends (gsubDone), the function
// yields (gsubYielded, with the values to yield) or something fails (gsubFailed, with the
// error value). args resume a function that yielded. L is the running thread: the gsub's
// coroutine at first, then whoever resumes it.
func (y *gsubYields) run(L *lua.LState, w *gsubWait, args []lua.LValue) ([]lua.LValue, gsubOutcome) {
	g := &w.loop
	for {
		var results []lua.LValue
		if w.inCall {
			// The helper may itself be suspended in a gsub of the function's.
			w.inCall = false
			results = y.resumeThread(L, w.helper, args)
			if len(results) == 3 && results[0] == lua.LTrue && results[1] == y.answered {
				if msg := appendResult(&g.b, g.src[g.s:g.e], results[2]); msg != "" {
					y.release(w)
					return []lua.LValue{w.placed(L, msg)}, gsubFailed
				}
				g.next()
				continue
			}
		} else {
			found, err := g.find()
			if err != nil {
				y.release(w)
				return []lua.LValue{w.patternError(L, err)}, gsubFailed
			}
			if !found {
				y.release(w)
				return nil, gsubDone
			}
			if w.helper == nil {
				w.helper = y.take(L)
			}
			// The common case, without allocating: the helper answers at once.
			top := L.GetTop()
			L.Push(y.resume)
			L.Push(w.helper)
			L.Push(w.owner)
			L.Push(w.fn)
			if err := g.pushCaptures(L); err != nil {
				L.SetTop(top)
				y.release(w)
				return []lua.LValue{w.patternError(L, err)}, gsubFailed
			}
			L.Call(L.GetTop()-top-1, lua.MultRet)
			n := L.GetTop() - top
			if n == 3 && L.Get(top+1) == lua.LTrue && L.Get(top+2) == y.answered {
				msg := appendResult(&g.b, g.src[g.s:g.e], L.Get(top+3))
				L.SetTop(top)
				if msg != "" {
					y.release(w)
					return []lua.LValue{w.placed(L, msg)}, gsubFailed
				}
				g.next()
				continue
			}
			results = make([]lua.LValue, n)
			for i := range results {
				results[i] = L.Get(top + 1 + i)
			}
			L.SetTop(top)
		}
		if results[0] != lua.LTrue {
			w.helper = nil // it died with the function's error
			if len(results) < 2 {
				return []lua.LValue{lua.LNil}, gsubFailed
			}
			return results[1:2], gsubFailed
		}
		w.inCall = true
		return results[1:], gsubYielded
	}
}

// take is an idle helper, or a new one.
func (y *gsubYields) take(L *lua.LState) *lua.LState {
	if n := len(y.idle); n > 0 {
		h := y.idle[n-1]
		y.idle = y.idle[:n-1]
		return h
	}
	L.Push(y.create)
	L.Push(y.helper)
	L.Call(1, 1)
	h := L.Get(-1).(*lua.LState)
	L.Pop(1)
	// The function runs in the gsub's coroutine in CC: its debug hook fires there.
	h.ShareHooks()
	return h
}

// release keeps w's helper for the next gsub.
func (y *gsubYields) release(w *gsubWait) {
	if w.helper != nil && len(y.idle) < maxIdleHelpers {
		y.idle = append(y.idle, w.helper)
	}
	w.helper = nil
}

// resumeThread resumes th with args as coroutine.resume does and returns its results (true
// or false, then the values), first finishing a gsub that th is suspended in.
func (y *gsubYields) resumeThread(L, th *lua.LState, args []lua.LValue) []lua.LValue {
	if w := y.suspendedIn(th); w != nil {
		if w.running {
			return []lua.LValue{lua.LFalse, lua.LString("cannot resume normal coroutine")}
		}
		w.running = true
		values, outcome := y.run(L, w, args)
		w.running = false
		switch outcome {
		case gsubYielded:
			return append([]lua.LValue{lua.LTrue}, values...)
		case gsubFailed:
			delete(y.waiting, weak.Make(th))
			th.Dead = true
			return []lua.LValue{lua.LFalse, values[0]}
		}
		delete(y.waiting, weak.Make(th))
		text, n := w.loop.results()
		if _, ok := th.GetStack(0); !ok {
			// The gsub was a tail call of th's body: gopher-lua has already removed the body's
			// frame (resuming th now would crash it), and gsub's results are th's.
			th.Dead = true
			return []lua.LValue{lua.LTrue, text, n}
		}
		args = []lua.LValue{text, n}
	}
	top := L.GetTop()
	L.Push(y.resume)
	L.Push(th)
	for _, a := range args {
		L.Push(a)
	}
	L.Call(1+len(args), lua.MultRet)
	results := make([]lua.LValue, L.GetTop()-top)
	for i := range results {
		results[i] = L.Get(top + 1 + i)
	}
	L.SetTop(top)
	return results
}

// placed is msg placed at the gsub call, as luakit.RaiseMessage places it: until the
// coroutine first yields, L runs in the gsub call and the position is read from it.
func (w *gsubWait) placed(L *lua.LState, msg string) lua.LValue {
	if w.suspended {
		return lua.LString(w.where + msg)
	}
	return lua.LString(luakit.CallerWhere(L) + msg)
}

// patternError is the error value of a matcher error, as raisePattern raises it.
func (w *gsubWait) patternError(L *lua.LState, err error) lua.LValue {
	if errors.Is(err, luapattern.ErrStopped) {
		return lua.LString(abortMessage(L))
	}
	return w.placed(L, err.Error())
}
