package lua

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"unsafe"
)

// objectString is how tostring shows a table, function, coroutine, userdata or channel: its
// type, then its address in hexadecimal digits without "0x". That is the shape of CC:
// Tweaked's Lua (Cobalt), which shows the type and the Java object's identity hash in hex
// (`table: 5f2a1c`); the address keeps each live object's text its own.
func objectString(kind string, p unsafe.Pointer) string {
	return kind + ": " + strconv.FormatUint(uint64(uintptr(p)), 16)
}

type LValueType int

const (
	LTNil LValueType = iota
	LTBool
	LTNumber
	LTString
	LTFunction
	LTUserData
	LTThread
	LTTable
	LTChannel
)

var lValueNames = [9]string{"nil", "boolean", "number", "string", "function", "userdata", "thread", "table", "channel"}

func (vt LValueType) String() string {
	return lValueNames[int(vt)]
}

type LValue interface {
	String() string
	Type() LValueType
}

// LVIsFalse returns true if a given LValue is a nil or false otherwise false.
func LVIsFalse(v LValue) bool { return v == LNil || v == LFalse }

// LVIsFalse returns false if a given LValue is a nil or false otherwise true.
func LVAsBool(v LValue) bool { return v != LNil && v != LFalse }

// LVAsString returns string representation of a given LValue
// if the LValue is a string or number, otherwise an empty string.
func LVAsString(v LValue) string {
	switch sn := v.(type) {
	case LString, LNumber:
		return sn.String()
	default:
		return ""
	}
}

// LVCanConvToString returns true if a given LValue is a string or number
// otherwise false.
func LVCanConvToString(v LValue) bool {
	switch v.(type) {
	case LString, LNumber:
		return true
	default:
		return false
	}
}

// LVAsNumber tries to convert a given LValue to a number.
func LVAsNumber(v LValue) LNumber {
	switch lv := v.(type) {
	case LNumber:
		return lv
	case LString:
		if num, err := parseNumber(string(lv)); err == nil {
			return num
		}
	}
	return LNumber(0)
}

type LNilType struct{}

func (nl *LNilType) String() string   { return "nil" }
func (nl *LNilType) Type() LValueType { return LTNil }

var LNil = LValue(&LNilType{})

type LBool bool

func (bl LBool) String() string {
	if bool(bl) {
		return "true"
	}
	return "false"
}
func (bl LBool) Type() LValueType { return LTBool }

var LTrue = LBool(true)
var LFalse = LBool(false)

type LString string

func (st LString) String() string   { return string(st) }
func (st LString) Type() LValueType { return LTString }

// fmt.Formatter interface
func (st LString) Format(f fmt.State, c rune) {
	switch c {
	case 'd', 'i':
		if nm, err := parseNumber(string(st)); err != nil {
			defaultFormat(nm, f, 'd')
		} else {
			defaultFormat(string(st), f, 's')
		}
	default:
		defaultFormat(string(st), f, c)
	}
}

func (nm LNumber) String() string {
	if isInteger(nm) {
		return fmt.Sprint(int64(nm))
	}
	return fmt.Sprint(float64(nm))
}

func (nm LNumber) Type() LValueType { return LTNumber }

// fmt.Formatter interface
func (nm LNumber) Format(f fmt.State, c rune) {
	switch c {
	case 'q', 's':
		defaultFormat(nm.String(), f, c)
	case 'b', 'c', 'd', 'o', 'x', 'X', 'U':
		defaultFormat(int64(nm), f, c)
	case 'e', 'E', 'f', 'F', 'g', 'G':
		defaultFormat(float64(nm), f, c)
	case 'i':
		defaultFormat(int64(nm), f, 'd')
	default:
		if isInteger(nm) {
			defaultFormat(int64(nm), f, c)
		} else {
			defaultFormat(float64(nm), f, c)
		}
	}
}

type LTable struct {
	Metatable LValue

	array   []LValue
	dict    map[LValue]LValue
	strdict map[string]LValue

	// The layout Cobalt would give the table's keys, for the traversal order (cobaltorder.go):
	// its array part's size, its nodes' keys (nil: a free node) and their chains, and the
	// node below which free nodes are looked for.
	arrayPart int
	nodes     []LValue
	chain     []int32
	lastFree  int
}

func (tb *LTable) String() string   { return objectString("table", unsafe.Pointer(tb)) }
func (tb *LTable) Type() LValueType { return LTTable }

type LFunction struct {
	IsG       bool
	Env       *LTable
	Proto     *FunctionProto
	GFunction LGFunction
	Upvalues  []*Upvalue
	// Hidden marks a Go function that the embedder's compiler calls with one value in code
	// it rewrote (fakecraft's operand of `..`), a call the source does not make: debug hooks
	// see no call or return of it, and a runtime error names what it returned as it names
	// that value (objname.go).
	Hidden bool
}
type LGFunction func(*LState) int

func (fn *LFunction) String() string   { return objectString("function", unsafe.Pointer(fn)) }
func (fn *LFunction) Type() LValueType { return LTFunction }

type Global struct {
	MainThread    *LState
	CurrentThread *LState
	Registry      *LTable
	Global        *LTable

	builtinMts map[int]LValue
	tempFiles  []*os.File
	gccount    int32

	argErrors  ArgErrorWording
	argNumbers ArgNumberReader
	argInts    ArgIntConverter

	standInSource string // SetStandInSource

	goCalls int // Lua calls from Go nested on the Go stack now (Options.GoCallDepth)
}

type LState struct {
	G       *Global
	Parent  *LState
	Env     *LTable
	Panic   func(*LState)
	Dead    bool
	Options Options

	stop          int32
	reg           *registry
	stack         callFrameStack
	alloc         *allocator
	currentFrame  *callFrame
	wrapped       bool
	uvcache       *Upvalue
	hasErrorFunc  bool
	mainLoop      func(*LState, *callFrame)
	ctx           context.Context
	ctxCancelFn   context.CancelFunc
	hooks         *hookState                   // debug.sethook's hook, nil when none (hook.go)
	inHook        bool                         // a hook runs: hooks are off
	sharesHooks   bool                         // ShareHooks: its resumer's hook is its own (hook.go)
	inResumerHook bool                         // hooks are off because its resumer is in a hook (takeHooks)
	handOffArgs   int                          // HandOff's argument count, for callGFunction
	handedOff     bool                         // callGFunction made the Go function's frame its hand-off's (vm.go)
	errorHandler  LValue                       // SetErrorHandler's handler, nil when none (errhandler.go)
	errorMessage  func(*LState, LValue) LValue // SetErrorHandler's: the error as the handler receives it
	errorHandling uint8                        // where the error handler is: handlerIdle, handlerRunning, handlerReturned
	errorResult   LValue                       // the error handler's result, once it returned
}

func (ls *LState) String() string   { return objectString("thread", unsafe.Pointer(ls)) }
func (ls *LState) Type() LValueType { return LTThread }

type LUserData struct {
	Value     interface{}
	Env       *LTable
	Metatable LValue
}

func (ud *LUserData) String() string   { return objectString("userdata", unsafe.Pointer(ud)) }
func (ud *LUserData) Type() LValueType { return LTUserData }

type LChannel chan LValue

func (ch LChannel) String() string {
	return objectString("channel", reflect.ValueOf(ch).UnsafePointer())
}
func (ch LChannel) Type() LValueType { return LTChannel }

// WithoutNegativeZero is n, a negative zero made positive. CC's Cobalt has no negative
// zero: each number it computes goes through LuaDouble.valueOf, which makes a whole value
// that fits an int (-0.0 among them) a LuaInteger, so 1/(0 * -1) is inf there and
// string.format("%f", -0.0) is 0.000000. Adding +0 turns -0 into +0 and leaves every other
// number as it was (Go does not fold a float's + 0 away).
func WithoutNegativeZero(n LNumber) LNumber { return n + 0 }
