package lua

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

/* checkType {{{ */

func (ls *LState) CheckAny(n int) LValue {
	if n > ls.GetTop() {
		ls.ArgError(n, "value expected")
	}
	return ls.Get(n)
}

// CheckInt is argument n as a number truncated to an integer; a string holding a number
// converts (read by the state's ArgNumberReader), as PUC Lua's luaL_checkinteger does.
// The number becomes an int by the state's ArgIntConverter when one is set.
func (ls *LState) CheckInt(n int) int {
	f := float64(ls.CheckNumber(n))
	if convert := ls.G.argInts; convert != nil {
		return convert(f)
	}
	return int(f)
}

// CheckInt64 is CheckInt as an int64.
func (ls *LState) CheckInt64(n int) int64 {
	return int64(ls.CheckNumber(n))
}

// CheckNumber is argument n as a number; a string holding a number converts (read by the
// state's ArgNumberReader), as PUC Lua's luaL_checknumber does.
func (ls *LState) CheckNumber(n int) LNumber {
	if num, ok := ls.argNumber(ls.Get(n)); ok {
		return num
	}
	ls.TypeError(n, LTNumber)
	return 0
}

// argNumber is v as a number argument: a number, or a string the state's ArgNumberReader
// (gopher-lua's parseNumber when none is set) reads as one.
func (ls *LState) argNumber(v LValue) (LNumber, bool) {
	switch lv := v.(type) {
	case LNumber:
		return lv, true
	case LString:
		if read := ls.G.argNumbers; read != nil {
			f, ok := read(string(lv))
			return LNumber(f), ok
		}
		num, err := parseNumber(string(lv))
		return num, err == nil
	}
	return 0, false
}

// FramesLeft is how many more call frames the running coroutine may push before its calls
// fail with "stack overflow" (Options.CallStackSize, fakecraft's fork): an embedder's Go
// code that stands in for a recursive Lua function (CC's JSON reader) stops where it would.
func (ls *LState) FramesLeft() int {
	return ls.Options.CallStackSize - ls.stack.Sp()
}

// forNumber is v, a numeric for's initial value, limit or step, as a number (a string the
// state's ArgNumberReader reads as one too); else the error msg, placed at the loop.
func (ls *LState) forNumber(v LValue, msg string) LNumber {
	n, ok := ls.argNumber(v)
	if !ok {
		ls.RaiseError("%s", msg)
	}
	return n
}

// ArgNumberReader reads a string argument as a number for the Check and Opt functions
// (ok false: not a number).
type ArgNumberReader func(s string) (f float64, ok bool)

// SetArgNumberReader makes every thread of ls's state read numeric string arguments with
// read, as an embedding VM whose numerals are read otherwise would (nil: gopher-lua's own
// parseNumber).
func (ls *LState) SetArgNumberReader(read ArgNumberReader) {
	ls.G.argNumbers = read
}

// SetStandInSource names the source (a chunk name's display form, "[C]" for the chunk name
// "=[C]") of Lua code that stands in for Go functions in every thread of ls's state: the VM
// places an error raised in it (RaiseError, a runtime error) as one raised in a Go function,
// at the Lua code nearest below it in the coroutine, and in it only when there is none; and a
// tail call of it from other code is an ordinary call, as a Go function's is, so the caller's
// frame stays. "" (the default): none does.
func (ls *LState) SetStandInSource(source string) {
	ls.G.standInSource = source
}

// ArgIntConverter makes a number argument an int for CheckInt and OptInt.
type ArgIntConverter func(f float64) int

// SetArgIntConverter makes every thread of ls's state convert number arguments to ints with
// convert, as an embedding VM whose integers are narrower would (nil: Go's int(f), whose
// value past 64 bits is the platform's).
func (ls *LState) SetArgIntConverter(convert ArgIntConverter) {
	ls.G.argInts = convert
}

func (ls *LState) CheckString(n int) string {
	v := ls.Get(n)
	if lv, ok := v.(LString); ok {
		return string(lv)
	} else if LVCanConvToString(v) {
		return ls.ToString(n)
	}
	ls.TypeError(n, LTString)
	return ""
}

func (ls *LState) CheckBool(n int) bool {
	v := ls.Get(n)
	if lv, ok := v.(LBool); ok {
		return bool(lv)
	}
	ls.TypeError(n, LTBool)
	return false
}

func (ls *LState) CheckTable(n int) *LTable {
	v := ls.Get(n)
	if lv, ok := v.(*LTable); ok {
		return lv
	}
	ls.TypeError(n, LTTable)
	return nil
}

func (ls *LState) CheckFunction(n int) *LFunction {
	v := ls.Get(n)
	if lv, ok := v.(*LFunction); ok {
		return lv
	}
	ls.TypeError(n, LTFunction)
	return nil
}

func (ls *LState) CheckUserData(n int) *LUserData {
	v := ls.Get(n)
	if lv, ok := v.(*LUserData); ok {
		return lv
	}
	ls.TypeError(n, LTUserData)
	return nil
}

func (ls *LState) CheckThread(n int) *LState {
	v := ls.Get(n)
	if lv, ok := v.(*LState); ok {
		return lv
	}
	ls.TypeError(n, LTThread)
	return nil
}

func (ls *LState) CheckType(n int, typ LValueType) {
	v := ls.Get(n)
	if v.Type() != typ {
		ls.TypeError(n, typ)
	}
}

func (ls *LState) CheckTypes(n int, typs ...LValueType) {
	vt := ls.Get(n).Type()
	for _, typ := range typs {
		if vt == typ {
			return
		}
	}
	buf := []string{}
	for _, typ := range typs {
		buf = append(buf, typ.String())
	}
	ls.typeError(n, strings.Join(buf, " or "))
}

func (ls *LState) CheckOption(n int, options []string) int {
	str := ls.CheckString(n)
	for i, v := range options {
		if v == str {
			return i
		}
	}
	ls.ArgError(n, fmt.Sprintf("invalid option: %s (must be one of %s)", str, strings.Join(options, ",")))
	return 0
}

/* }}} */

/* optType {{{ */

// OptInt is CheckInt, or d when argument n is nil or absent.
func (ls *LState) OptInt(n int, d int) int {
	if ls.Get(n) == LNil {
		return d
	}
	return ls.CheckInt(n)
}

// OptInt64 is CheckInt64, or d when argument n is nil or absent.
func (ls *LState) OptInt64(n int, d int64) int64 {
	if ls.Get(n) == LNil {
		return d
	}
	return ls.CheckInt64(n)
}

// OptNumber is CheckNumber, or d when argument n is nil or absent.
func (ls *LState) OptNumber(n int, d LNumber) LNumber {
	if ls.Get(n) == LNil {
		return d
	}
	return ls.CheckNumber(n)
}

func (ls *LState) OptString(n int, d string) string {
	v := ls.Get(n)
	if v == LNil {
		return d
	}
	if lv, ok := v.(LString); ok {
		return string(lv)
	}
	ls.TypeError(n, LTString)
	return ""
}

func (ls *LState) OptBool(n int, d bool) bool {
	v := ls.Get(n)
	if v == LNil {
		return d
	}
	if lv, ok := v.(LBool); ok {
		return bool(lv)
	}
	ls.TypeError(n, LTBool)
	return false
}

func (ls *LState) OptTable(n int, d *LTable) *LTable {
	v := ls.Get(n)
	if v == LNil {
		return d
	}
	if lv, ok := v.(*LTable); ok {
		return lv
	}
	ls.TypeError(n, LTTable)
	return nil
}

func (ls *LState) OptFunction(n int, d *LFunction) *LFunction {
	v := ls.Get(n)
	if v == LNil {
		return d
	}
	if lv, ok := v.(*LFunction); ok {
		return lv
	}
	ls.TypeError(n, LTFunction)
	return nil
}

func (ls *LState) OptUserData(n int, d *LUserData) *LUserData {
	v := ls.Get(n)
	if v == LNil {
		return d
	}
	if lv, ok := v.(*LUserData); ok {
		return lv
	}
	ls.TypeError(n, LTUserData)
	return nil
}

/* }}} */

/* error operations {{{ */

// ArgErrorWording words the argument errors of the library's checks (ArgError, TypeError and
// the Check and Opt functions); see SetArgErrorWording.
type ArgErrorWording interface {
	// BadArgument is the message for argument n refused for reason ("value expected").
	BadArgument(ls *LState, n int, reason string) string
	// WrongType is the message for argument n, which is not of the expected type(s)
	// ("table", "nil or table").
	WrongType(ls *LState, n int, expected string) string
}

// SetArgErrorWording makes every thread of ls's state word its argument errors with w, as an
// embedding VM whose library words them otherwise would (nil: gopher-lua's own
// "bad argument #n to f (...)"). Where the error is raised does not change.
func (ls *LState) SetArgErrorWording(w ArgErrorWording) {
	ls.G.argErrors = w
}

func (ls *LState) ArgError(n int, message string) {
	if w := ls.G.argErrors; w != nil {
		ls.RaiseError("%s", w.BadArgument(ls, n, message))
		return
	}
	ls.RaiseError("bad argument #%v to %v (%v)", n, ls.rawFrameFuncName(ls.currentFrame), message)
}

func (ls *LState) TypeError(n int, typ LValueType) {
	ls.typeError(n, typ.String())
}

// typeError is TypeError for a list of types ("nil or table").
func (ls *LState) typeError(n int, expected string) {
	if w := ls.G.argErrors; w != nil {
		ls.RaiseError("%s", w.WrongType(ls, n, expected))
		return
	}
	ls.RaiseError("bad argument #%v to %v (%v expected, got %v)", n, ls.rawFrameFuncName(ls.currentFrame), expected, ls.Get(n).Type().String())
}

/* }}} */

/* debug operations {{{ */

func (ls *LState) Where(level int) string {
	return ls.where(level, false)
}

/* }}} */

/* table operations {{{ */

func (ls *LState) FindTable(obj *LTable, n string, size int) LValue {
	names := strings.Split(n, ".")
	curobj := obj
	for _, name := range names {
		if curobj.Type() != LTTable {
			return LNil
		}
		nextobj := ls.RawGet(curobj, LString(name))
		if nextobj == LNil {
			tb := ls.CreateTable(0, size)
			ls.RawSet(curobj, LString(name), tb)
			curobj = tb
		} else if nextobj.Type() != LTTable {
			return LNil
		} else {
			curobj = nextobj.(*LTable)
		}
	}
	return curobj
}

/* }}} */

/* register operations {{{ */

func (ls *LState) RegisterModule(name string, funcs map[string]LGFunction) LValue {
	tb := ls.FindTable(ls.Get(RegistryIndex).(*LTable), "_LOADED", 1)
	mod := ls.GetField(tb, name)
	if mod.Type() != LTTable {
		newmod := ls.FindTable(ls.Get(GlobalsIndex).(*LTable), name, len(funcs))
		if newmodtb, ok := newmod.(*LTable); !ok {
			ls.RaiseError("name conflict for module(%v)", name)
		} else {
			ls.SetFuncs(newmodtb, funcs)
			ls.SetField(tb, name, newmodtb)
			return newmodtb
		}
	}
	return mod
}

// SetFuncs sets each of funcs in tb under its name, in the names' byte order, so that the
// table walks its keys in the same order on every run (cobaltorder.go): upstream set them as
// Go ranges over the map, in an order that changes from run to run.
func (ls *LState) SetFuncs(tb *LTable, funcs map[string]LGFunction, upvalues ...LValue) *LTable {
	names := make([]string, 0, len(funcs))
	for fname := range funcs {
		names = append(names, fname)
	}
	sort.Strings(names)
	for _, fname := range names {
		tb.RawSetString(fname, ls.NewClosure(funcs[fname], upvalues...))
	}
	return tb
}

/* }}} */

/* metatable operations {{{ */

func (ls *LState) NewTypeMetatable(typ string) *LTable {
	regtable := ls.Get(RegistryIndex)
	mt := ls.GetField(regtable, typ)
	if tb, ok := mt.(*LTable); ok {
		return tb
	}
	mtnew := ls.NewTable()
	ls.SetField(regtable, typ, mtnew)
	return mtnew
}

func (ls *LState) GetMetaField(obj LValue, event string) LValue {
	return ls.metaOp1(obj, event)
}

func (ls *LState) GetTypeMetatable(typ string) LValue {
	return ls.GetField(ls.Get(RegistryIndex), typ)
}

func (ls *LState) CallMeta(obj LValue, event string) LValue {
	op := ls.metaOp1(obj, event)
	if op.Type() == LTFunction {
		ls.reg.Push(op)
		ls.reg.Push(obj)
		ls.Call(1, 1)
		return ls.reg.Pop()
	}
	return LNil
}

/* }}} */

/* load and function call operations {{{ */

func (ls *LState) LoadFile(path string) (*LFunction, error) {
	var file *os.File
	var err error
	if len(path) == 0 {
		file = os.Stdin
	} else {
		file, err = os.Open(path)
		defer file.Close()
		if err != nil {
			return nil, newApiErrorE(ApiErrorFile, err)
		}
	}

	reader := bufio.NewReader(file)
	// get the first character.
	c, err := reader.ReadByte()
	if err != nil && err != io.EOF {
		return nil, newApiErrorE(ApiErrorFile, err)
	}
	if c == byte('#') {
		// Unix exec. file?
		// skip first line
		_, err, _ = readBufioLine(reader)
		if err != nil {
			return nil, newApiErrorE(ApiErrorFile, err)
		}
	}

	if err != io.EOF {
		// if the file is not empty,
		// unread the first character of the file or newline character(readBufioLine's last byte).
		err = reader.UnreadByte()
		if err != nil {
			return nil, newApiErrorE(ApiErrorFile, err)
		}
	}

	return ls.Load(reader, path)
}

func (ls *LState) LoadString(source string) (*LFunction, error) {
	return ls.Load(strings.NewReader(source), "<string>")
}

func (ls *LState) DoFile(path string) error {
	if fn, err := ls.LoadFile(path); err != nil {
		return err
	} else {
		ls.Push(fn)
		return ls.PCall(0, MultRet, nil)
	}
}

func (ls *LState) DoString(source string) error {
	if fn, err := ls.LoadString(source); err != nil {
		return err
	} else {
		ls.Push(fn)
		return ls.PCall(0, MultRet, nil)
	}
}

/* }}} */

/* GopherLua original APIs {{{ */

// ToStringMeta returns string representation of given LValue.
// This method calls the `__tostring` meta method if defined.
func (ls *LState) ToStringMeta(lv LValue) LValue {
	if fn, ok := ls.metaOp1(lv, "__tostring").(*LFunction); ok {
		ls.Push(fn)
		ls.Push(lv)
		ls.Call(1, 1)
		return ls.reg.Pop()
	} else {
		return LString(lv.String())
	}
}

// Set a module loader to the package.preload table.
func (ls *LState) PreloadModule(name string, loader LGFunction) {
	preload := ls.GetField(ls.GetField(ls.Get(EnvironIndex), "package"), "preload")
	if _, ok := preload.(*LTable); !ok {
		ls.RaiseError("package.preload must be a table")
	}
	ls.SetField(preload, name, ls.NewFunction(loader))
}

// Checks whether the given index is an LChannel and returns this channel.
func (ls *LState) CheckChannel(n int) chan LValue {
	v := ls.Get(n)
	if ch, ok := v.(LChannel); ok {
		return (chan LValue)(ch)
	}
	ls.TypeError(n, LTChannel)
	return nil
}

// If the given index is a LChannel, returns this channel. If this argument is absent or is nil, returns ch. Otherwise, raises an error.
func (ls *LState) OptChannel(n int, ch chan LValue) chan LValue {
	v := ls.Get(n)
	if v == LNil {
		return ch
	}
	if ch, ok := v.(LChannel); ok {
		return (chan LValue)(ch)
	}
	ls.TypeError(n, LTChannel)
	return nil
}

/* }}} */

//
