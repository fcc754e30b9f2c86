package cli

import (
	"fmt"
	"math"
	"slices"
	"strings"

	fcomputer "fakecraft/computer"
)

// wayOut is how to leave the view, which ends every status line: in the raw terminal Ctrl-C
// is a key for the computer, so a person not told this has no way out but closing the
// terminal. Kept whole whatever else of the line is cut (statusLines).
const wayOut = "Ctrl-S held leaves"

// The smallest terminal the view draws in: a pocket computer's width, the narrowest screen's
// (the status line with the way out fits in it), and a few rows of the screen over the status
// line. A larger one shows the screen's top left, as much as fits, and the status line says
// how much (cutMark).
const (
	minViewWidth  = fcomputer.PocketWidth
	minViewHeight = 4
)

// statusRowsAtLeast is how many rows the status line may take of a screen that leaves it
// fewer (it takes no more than it needs): three hold a 60-column terminal's longest (how much
// of the screen is shown, the view-only line with the owner's set command, the rows not yet
// seen) with the owner's command whole, where one cut off the way out and two the command.
const statusRowsAtLeast = 3

// layout is where the view draws in a terminal: the screen from its top left, cut to
// shownW×shownH cells, and the status line's rows from statusRow (1-based) down; or, in a
// terminal too small for the view (tooSmall), the status line alone, from the first row,
// saying so.
type layout struct {
	shownW, shownH int
	statusRow      int
	status         []string
	tooSmall       bool
}

// lay lays the view out in a terminal of termW×termH (0×0: a terminal whose size is not
// known, drawn in as it comes) for a screen of w×h (a monitor's as large as it is: the view
// draws fakecraft's largest, 51×20, at most) with message on the status line ("": nothing to
// say but the way out).
//
// The status line takes the rows under the screen, and up to statusRowsAtLeast rows where the
// terminal has fewer to spare: the screen is cut to the rows above it and the line says so
// first, so that the way out, at its end, is never drawn over or cut. A screen that fits the
// terminal exactly, with nothing to say, is drawn whole, without the line.
func lay(termW, termH, w, h int, message string) layout {
	drawW, drawH := min(w, fcomputer.MaxWidth), min(h, fcomputer.MaxHeight)
	if termW <= 0 || termH <= 0 {
		// Wrapped at the screen's width: a terminal that shows the screen whole shows the
		// line whole, where one longer line wrapped by the terminal scrolled the screen up.
		status := statusLines(joinStatus(cutMark(w, h, drawW, drawH), message), drawW, math.MaxInt)
		return layout{shownW: drawW, shownH: drawH, statusRow: drawH + 1, status: status}
	}
	if termW < minViewWidth || termH < minViewHeight {
		// Short: it has few cells to be read in.
		why := fmt.Sprintf("too small: the view needs %d×%d", minViewWidth, minViewHeight)
		return layout{statusRow: 1, status: statusLines(why, termW, termH), tooSmall: true}
	}
	shownW := min(drawW, termW)
	if message == "" && shownW == w && drawH == h && h == termH {
		return layout{shownW: shownW, shownH: h, statusRow: h + 1}
	}
	room := max(termH-drawH, statusRowsAtLeast)
	var l layout
	// The line's rows and the cut they make depend on each other: each pass gives the line
	// the rows the last one took, until they are enough (at most room passes).
	for rows := 1; ; {
		l.shownW, l.shownH = shownW, min(drawH, termH-rows)
		l.status = statusLines(joinStatus(cutMark(w, h, l.shownW, l.shownH), message), termW, room)
		if len(l.status) <= rows {
			break
		}
		rows = len(l.status)
	}
	l.statusRow = l.shownH + 1
	return l
}

// cutMark is the status line's words for a screen of w×h shown as shownW×shownH ("" when it is
// shown whole): how much of it the terminal shows, from its top left.
func cutMark(w, h, shownW, shownH int) string {
	switch {
	case shownW < w && shownH < h:
		return fmt.Sprintf("%d×%d of %d×%d shown", shownW, shownH, w, h)
	case shownH < h:
		return fmt.Sprintf("%d of %d rows shown", shownH, h)
	case shownW < w:
		return fmt.Sprintf("%d of %d columns shown", shownW, w)
	}
	return ""
}

// joinStatus is the status line's parts that say something, in order, joined by "; ".
func joinStatus(parts ...string) string {
	var said []string
	for _, p := range parts {
		if p != "" {
			said = append(said, p)
		}
	}
	return strings.Join(said, "; ")
}

// statusLines is message ("": none) and then the way out, in at most rows lines of at most
// width characters (0: one line, as it is), broken at spaces. What does not fit is cut from
// message, marked "…": the way out stays whole (in a terminal narrower than it, it is cut too).
func statusLines(message string, width, rows int) []string {
	if width <= 0 {
		return []string{joinStatus(message, wayOut)}
	}
	if message == "" {
		return []string{cutTo(wayOut, width)}
	}
	lines := wrapWords(message, width)
	// The way out is never broken over two lines: it ends the message's last, or has one of
	// its own.
	if last := len(lines) - 1; len([]rune(lines[last]))+len("; "+wayOut) <= width {
		whole := append(slices.Clone(lines[:last]), lines[last]+"; "+wayOut)
		if len(whole) <= rows {
			return whole
		}
	} else if len(lines) < rows {
		return append(lines, wayOut)
	}
	kept := lines[:rows-1]
	rest := []rune(strings.Join(lines[rows-1:], " "))
	tail := []rune("; " + wayOut)
	switch room := width - len(tail); {
	case len(rest) <= room: // fits once the words before it have wrapped
		return append(kept, string(rest)+string(tail))
	case room < 2:
		return append(kept, cutTo(wayOut, width))
	default:
		cut := rest[:room-1]
		// At a space where one is in the second half: "computer 5:küche…", not "computer 5:k…".
		if space := strings.LastIndex(string(cut), " "); space > 0 && len([]rune(string(cut)[:space])) >= len(cut)/2 {
			cut = []rune(strings.TrimRight(string(cut)[:space], ";,:"))
		}
		return append(kept, string(cut)+"…"+string(tail))
	}
}

// wrapWords is text in lines of at most width characters, broken at spaces; a word wider than
// width is cut with "…".
func wrapWords(text string, width int) []string {
	var lines []string
	var line []rune
	for _, word := range strings.Fields(text) {
		w := []rune(cutTo(word, width))
		if len(line) > 0 && len(line)+1+len(w) > width {
			lines, line = append(lines, string(line)), nil
		}
		if len(line) > 0 {
			line = append(line, ' ')
		}
		line = append(line, w...)
	}
	return append(lines, string(line))
}

// cutTo is s cut to width characters, its last "…" when it is cut.
func cutTo(s string, width int) string {
	if r := []rune(s); len(r) > width {
		return string(r[:max(width-1, 0)]) + "…"
	}
	return s
}
