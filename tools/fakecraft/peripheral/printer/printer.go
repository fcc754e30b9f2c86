// Package printer is CC: Tweaked's printer peripheral: pages of 25x21 characters, each
// taking a sheet of paper and a unit of ink, written with write/setCursorPos and finished
// with endPage. Finished pages leave the output tray at once (as if a hopper took them):
// Go reads them (Pages), and a printer made with an output file appends each one to it.
package printer

import (
	"fmt"
	"os"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/ccstr"
	"fakecraft/computer"
	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// Page size in characters, and what a printer holds: one stack of ink (dye) and six of
// paper.
const (
	PageWidth  = 25
	PageHeight = 21
	MaxInk     = 64
	MaxPaper   = 6 * 64
)

// Page is one printed page.
type Page struct {
	Title string
	// Lines are the page's 21 rows, trailing spaces trimmed.
	Lines []string
}

// String is the page as text: its title, then its lines.
func (p Page) String() string {
	return "=== " + p.Title + " ===\n" + strings.Join(p.Lines, "\n") + "\n"
}

// Printer is one printer. It is safe for concurrent use.
type Printer struct {
	out     string // file each finished page is appended to; "" for none
	methods map[string]peripheral.Method

	mu       sync.Mutex
	ink      int
	paper    int
	page     *computer.Terminal // the page being printed, nil when none
	title    string
	printed  []Page
	writeErr error
}

// New returns a printer full of ink and paper. out, when not empty, is a host file each
// finished page is appended to.
func New(out string) *Printer {
	p := &Printer{out: out, ink: MaxInk, paper: MaxPaper}
	p.methods = p.methodTable()
	return p
}

// Types implements peripheral.Peripheral.
func (p *Printer) Types() []string { return []string{"printer"} }

// Methods implements peripheral.Peripheral.
func (p *Printer) Methods() map[string]peripheral.Method { return p.methods }

// Attach implements peripheral.Peripheral.
func (p *Printer) Attach(*peripheral.Access) {}

// Detach implements peripheral.Peripheral.
func (p *Printer) Detach(*peripheral.Access) {}

// Load sets the ink and paper (clamped to what a printer holds), as a player filling it.
func (p *Printer) Load(ink, paper int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ink, p.paper = min(max(ink, 0), MaxInk), min(max(paper, 0), MaxPaper)
}

// Pages returns the pages printed so far.
func (p *Printer) Pages() []Page {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Page(nil), p.printed...)
}

// Err is the first failure to append a page to the output file.
func (p *Printer) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writeErr
}

// finish takes the page being printed off the printer. Caller holds mu.
func (p *Printer) finish() {
	page := Page{Title: p.title}
	for y := 1; y <= PageHeight; y++ {
		var b strings.Builder
		for _, c := range p.page.Row(y) {
			b.WriteByte(c.Char)
		}
		page.Lines = append(page.Lines, strings.TrimRight(ccstr.Shown(b.String()), " "))
	}
	p.printed = append(p.printed, page)
	p.page = nil
	if p.out != "" && p.writeErr == nil {
		p.writeErr = appendFile(p.out, page.String())
	}
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("printer output: %w", err)
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("printer output: %w", werr)
	}
	return nil
}

// newPage starts a new page, finishing the one being printed, if the printer has ink and
// paper (CC's startNewPage). Caller holds mu.
func (p *Printer) newPage() bool {
	if p.ink == 0 || p.paper == 0 {
		return false
	}
	if p.page != nil {
		p.finish()
	}
	p.ink--
	p.paper--
	p.page = computer.NewSizedTerminal(PageWidth, PageHeight, true)
	p.title = ""
	return true
}

// current is the page being printed, or CC's error. Caller holds mu.
func (p *Printer) current(L *lua.LState) *computer.Terminal {
	if p.page == nil {
		luakit.RaiseMessage(L, "Page not started")
	}
	return p.page
}

// methodTable is CC's PrinterPeripheral.
func (p *Printer) methodTable() map[string]peripheral.Method {
	locked := func(fn func(L *lua.LState) int) peripheral.Method {
		return func(L *lua.LState, _ *peripheral.Access) int {
			p.mu.Lock()
			defer p.mu.Unlock()
			return fn(L)
		}
	}
	return map[string]peripheral.Method{
		"write": locked(func(L *lua.LState) int {
			text := coerce(L, 1)
			page := p.current(L)
			page.Write(text)
			return 0
		}),
		"getCursorPos": locked(func(L *lua.LState) int {
			x, y := p.current(L).CursorPos()
			L.Push(lua.LNumber(x))
			L.Push(lua.LNumber(y))
			return 2
		}),
		"setCursorPos": locked(func(L *lua.LState) int {
			x, y := luakit.CheckInt(L, 1), luakit.CheckInt(L, 2)
			p.current(L).SetCursorPos(x, y)
			return 0
		}),
		"getPageSize": locked(func(L *lua.LState) int {
			w, h := p.current(L).Size()
			L.Push(lua.LNumber(w))
			L.Push(lua.LNumber(h))
			return 2
		}),
		// newPage and endPage are main-thread methods in CC: they answer on the next tick.
		"newPage": func(L *lua.LState, a *peripheral.Access) int {
			return a.MainThread(L, func() []lua.LValue {
				p.mu.Lock()
				defer p.mu.Unlock()
				return []lua.LValue{lua.LBool(p.newPage())}
			})
		},
		"endPage": func(L *lua.LState, a *peripheral.Access) int {
			// CC checks for a page on the tick; a page another computer ends before it
			// comes answers false here, where CC's raises Page not started.
			func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				p.current(L)
			}()
			return a.MainThread(L, func() []lua.LValue {
				p.mu.Lock()
				defer p.mu.Unlock()
				if p.page == nil {
					return []lua.LValue{lua.LFalse}
				}
				p.finish()
				return []lua.LValue{lua.LTrue}
			})
		},
		"setPageTitle": locked(func(L *lua.LState) int {
			title := luakit.OptStrictString(L, 1, "")
			p.current(L)
			p.title = ccstr.Label(title)
			return 0
		}),
		"getInkLevel": locked(func(L *lua.LState) int {
			L.Push(lua.LNumber(p.ink))
			return 1
		}),
		"getPaperLevel": locked(func(L *lua.LState) int {
			L.Push(lua.LNumber(p.paper))
			return 1
		}),
	}
}

// coerce is argument n as CC's Coerced<String> takes it: any value, as tostring (without
// __tostring) writes it.
func coerce(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(v))
	case lua.LBool:
		if v {
			return "true"
		}
		return "false"
	case *lua.LNilType:
		return "nil"
	default:
		return fmt.Sprintf("%s: %p", v.Type().String(), v)
	}
}
