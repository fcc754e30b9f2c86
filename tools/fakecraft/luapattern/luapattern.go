// Package luapattern is Lua 5.2's pattern matching (string.find, match, gmatch, gsub), as
// CC: Tweaked's Cobalt has it: every class including %g, the %f frontier, %b, position
// captures and back references. Unlike gopher-lua's matcher it can be interrupted: a
// matcher polls a stop function, so "Too long without yielding" reaches a runaway pattern.
package luapattern

import (
	"errors"
)

// MaxCaptures is how many captures one pattern may have (LUA_MAXCAPTURES).
const MaxCaptures = 32

// maxDepth bounds the matcher's recursion (MAXCCALLS).
const maxDepth = 200

// pollEvery is how many matcher steps run between two polls of the stop function.
const pollEvery = 4096

// Capture lengths with a special meaning.
const (
	capUnfinished = -1
	capPosition   = -2
)

// Error is a malformed pattern, with Lua's message.
type Error string

func (e Error) Error() string { return string(e) }

// ErrStopped is returned when the stop function asked the matcher to stop.
var ErrStopped = errors.New("pattern matching stopped")

type capture struct {
	start, len int
}

// Matcher matches one pattern against one subject.
type Matcher struct {
	src, pat string
	level    int
	capture  [MaxCaptures]capture
	depth    int
	steps    int
	stop     func() bool
}

// New prepares matching pat against src; stop (may be nil) is polled now and then and
// ends the match with ErrStopped when it returns true.
func New(src, pat string, stop func() bool) *Matcher {
	return &Matcher{src: src, pat: pat, stop: stop}
}

// Match tries the pattern at src[s:], the pattern starting at p (0, or 1 after a '^').
// It returns the end of the match, or -1.
func (m *Matcher) Match(s, p int) (end int, err error) {
	m.level = 0
	m.depth = 0
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			end, err = -1, e
		}
	}()
	return m.match(s, p), nil
}

// Level is the number of captures of the last match.
func (m *Matcher) Level() int { return m.level }

// Capture returns capture i of the last match: its text, or for a position capture its
// 1-based position with isPos set. With no captures, capture 0 is the whole match [s, e).
func (m *Matcher) Capture(i, s, e int) (text string, pos int, isPos bool, err error) {
	if i >= m.level {
		if i == 0 {
			return m.src[s:e], 0, false, nil
		}
		return "", 0, false, Error("invalid capture index")
	}
	c := m.capture[i]
	switch c.len {
	case capUnfinished:
		return "", 0, false, Error("unfinished capture")
	case capPosition:
		return "", c.start + 1, true, nil
	}
	return m.src[c.start : c.start+c.len], 0, false, nil
}

func (m *Matcher) fail(msg string) { panic(Error(msg)) }

func (m *Matcher) poll() {
	m.steps++
	if m.steps%pollEvery == 0 && m.stop != nil && m.stop() {
		panic(ErrStopped)
	}
}

// classEnd returns the index after the single-character class at p.
func (m *Matcher) classEnd(p int) int {
	pat := m.pat
	c := pat[p]
	p++
	if c == '%' {
		if p >= len(pat) {
			m.fail("malformed pattern (ends with '%')")
		}
		return p + 1
	}
	if c == '[' {
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		for {
			if p >= len(pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := pat[p]
			p++
			if c == '%' {
				if p >= len(pat) {
					m.fail("malformed pattern (missing ']')")
				}
				p++
			}
			if p < len(pat) && pat[p] == ']' {
				return p + 1
			}
			if p >= len(pat) {
				m.fail("malformed pattern (missing ']')")
			}
		}
	}
	return p
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// classMatches is %x for a class letter cl (C locale).
func classMatches(c byte, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = isDigit(c)
	case 'g':
		res = c > 32 && c < 127
	case 'l':
		res = 'a' <= c && c <= 'z'
	case 'p':
		res = c > 32 && c < 127 && !isAlpha(c) && !isDigit(c)
	case 's':
		res = c == ' ' || '\t' <= c && c <= '\r'
	case 'u':
		res = 'A' <= c && c <= 'Z'
	case 'w':
		res = isAlpha(c) || isDigit(c)
	case 'x':
		res = isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if 'A' <= cl && cl <= 'Z' {
		return !res
	}
	return res
}

// setMatches tests c against the set [p, ec) where p is at '[' and ec-1 at ']'.
func (m *Matcher) setMatches(c byte, p, ec int) bool {
	pat := m.pat
	sig := true
	p++
	if pat[p] == '^' {
		sig = false
		p++
	}
	ec-- // at ']'
	for p < ec {
		if pat[p] == '%' {
			p++
			if classMatches(c, pat[p]) {
				return sig
			}
			p++
		} else if p+2 < ec && pat[p+1] == '-' {
			if pat[p] <= c && c <= pat[p+2] {
				return sig
			}
			p += 3
		} else {
			if pat[p] == c {
				return sig
			}
			p++
		}
	}
	return !sig
}

func (m *Matcher) singleMatches(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return classMatches(c, m.pat[p+1])
	case '[':
		return m.setMatches(c, p, ep)
	}
	return m.pat[p] == c
}

func (m *Matcher) match(s, p int) int {
	m.depth++
	if m.depth > maxDepth {
		m.fail("pattern too complex")
	}
	defer func() { m.depth-- }()
	pat := m.pat
	for {
		m.poll()
		if p >= len(pat) {
			return s
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 < len(pat) {
				switch pat[p+1] {
				case 'b':
					s = m.matchBalance(s, p+2)
					if s == -1 {
						return -1
					}
					p += 4
					continue
				case 'f':
					p += 2
					if p >= len(pat) || pat[p] != '[' {
						m.fail("missing '[' after '%f' in pattern")
					}
					ep := m.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = m.src[s-1]
					}
					if s < len(m.src) {
						cur = m.src[s]
					}
					if !m.setMatches(prev, p, ep) && m.setMatches(cur, p, ep) {
						p = ep
						continue
					}
					return -1
				default:
					if isDigit(pat[p+1]) {
						s = m.matchCapture(s, pat[p+1])
						if s == -1 {
							return -1
						}
						p += 2
						continue
					}
				}
			}
		}
		// A single class, maybe with a quantifier.
		ep := m.classEnd(p)
		var q byte
		if ep < len(pat) {
			q = pat[ep]
		}
		if !m.singleMatches(s, p, ep) {
			if q == '*' || q == '?' || q == '-' {
				p = ep + 1
				continue
			}
			return -1
		}
		switch q {
		case '?':
			if r := m.match(s+1, ep+1); r != -1 {
				return r
			}
			p = ep + 1
			continue
		case '+':
			return m.maxExpand(s+1, p, ep)
		case '*':
			return m.maxExpand(s, p, ep)
		case '-':
			return m.minExpand(s, p, ep)
		}
		s++
		p = ep
	}
}

func (m *Matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.singleMatches(s+i, p, ep) {
		i++
	}
	for ; i >= 0; i-- {
		if r := m.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

func (m *Matcher) minExpand(s, p, ep int) int {
	for {
		if r := m.match(s, ep+1); r != -1 {
			return r
		}
		if !m.singleMatches(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *Matcher) startCapture(s, p, what int) int {
	if m.level >= MaxCaptures {
		m.fail("too many captures")
	}
	m.capture[m.level] = capture{start: s, len: what}
	m.level++
	r := m.match(s, p)
	if r == -1 {
		m.level--
	}
	return r
}

func (m *Matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.fail("invalid pattern capture")
	}
	m.capture[l].len = s - m.capture[l].start
	r := m.match(s, p)
	if r == -1 {
		m.capture[l].len = capUnfinished
	}
	return r
}

func (m *Matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("malformed pattern (missing arguments to '%b')")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, cl := m.pat[p], m.pat[p+1]
	depth := 1
	for i := s + 1; i < len(m.src); i++ {
		switch m.src[i] {
		case cl:
			depth--
			if depth == 0 {
				return i + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

func (m *Matcher) matchCapture(s int, d byte) int {
	l := int(d - '1')
	if l < 0 || l >= m.level || m.capture[l].len == capUnfinished {
		m.fail("invalid capture index")
	}
	c := m.capture[l]
	if c.len < 0 {
		m.fail("invalid capture index")
	}
	if len(m.src)-s >= c.len && m.src[c.start:c.start+c.len] == m.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

// Source is the subject string.
func (m *Matcher) Source() string { return m.src }
