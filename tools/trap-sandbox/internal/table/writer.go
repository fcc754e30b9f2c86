package table

import (
	"bytes"
	"io"
	"strings"

	"trap-sandbox/internal/cctext"
)

// Writer lays out a table written to it, as text/tabwriter with a minimum cell width of 0,
// the given padding and spaces to pad does, but by Columns: a cell ends at a tab, a row at a
// newline, and the cells of one column in consecutive rows (each ending at a tab, so a row's
// last cell is in no column) are padded with spaces to the widest of them plus the padding.
// A table of ASCII text comes out byte for byte as tabwriter's.
//
// Each cell is shown by cctext.ShowComposed first, whoever built the row: no control character
// reaches the terminal raw, nor one that prints as another or as none (a no-break space, a
// zero-width space or joiner), which would make two cells that differ look alike: a token
// named "a", U+200B, "b" lists as a\u200bb beside ab. The listings show a computer's label, a
// file's name and a record's text so already (cctext.ShowTraposID, ShowPath, ShowDistinct),
// and showing a shown cell changes nothing: a backslash is left as it is, so a row's builder
// shows a record's text by ShowDistinct, which shows one that would read as an escape as \x5c.
type Writer struct {
	out     io.Writer
	padding int
	text    []byte
}

// NewWriter is a Writer to out that pads each column's widest cell with padding spaces.
func NewWriter(out io.Writer, padding int) *Writer {
	return &Writer{out: out, padding: padding}
}

// Write takes more of the table; nothing is written to out before Flush, since a row may widen
// the column of every row before it.
func (w *Writer) Write(p []byte) (int, error) {
	w.text = append(w.text, p...)
	return len(p), nil
}

// Flush writes the table taken so far, laid out, and starts a new one.
func (w *Writer) Flush() error {
	rows := splitRows(w.text)
	w.text = nil
	widths := make([][]int, len(rows))
	for i, r := range rows {
		widths[i] = make([]int, len(r.cells))
	}
	alignColumn(rows, widths, 0, len(rows), 0, w.padding)
	var b bytes.Buffer
	for i, r := range rows {
		for j, cell := range r.cells {
			b.WriteString(cell)
			if j < len(r.cells)-1 {
				b.WriteString(strings.Repeat(" ", widths[i][j]-Columns(cell)))
			}
		}
		if r.ended {
			b.WriteByte('\n')
		}
	}
	_, err := w.out.Write(b.Bytes())
	return err
}

// row is one line of a table: its cells, shown, and whether a newline ended it (the last
// one written may have none).
type row struct {
	cells []string
	ended bool
}

func splitRows(text []byte) []row {
	if len(text) == 0 {
		return nil
	}
	lines := strings.Split(string(text), "\n")
	last := len(lines) - 1
	if lines[last] == "" {
		lines = lines[:last] // the text ended with a newline
	}
	rows := make([]row, len(lines))
	for i, line := range lines {
		cells := strings.Split(line, "\t")
		for j, c := range cells {
			cells[j] = cctext.ShowComposed(c, false)
		}
		rows[i] = row{cells: cells, ended: i < last}
	}
	return rows
}

// alignColumn sets the width of column col in rows[from:to] and, recursively, of the columns
// after it: a column is aligned over each run of consecutive rows that have a cell in it (a
// cell that ends at a tab), and so is the next column within that run only. A row with fewer
// cells ends the runs of the columns it lacks, as in tabwriter.
func alignColumn(rows []row, widths [][]int, from, to, col, padding int) {
	for i := from; i < to; {
		if col >= len(rows[i].cells)-1 {
			i++
			continue
		}
		end, width := i, 0
		for ; end < to && col < len(rows[end].cells)-1; end++ {
			width = max(width, Columns(rows[end].cells[col])+padding)
		}
		for k := i; k < end; k++ {
			widths[k][col] = width
		}
		alignColumn(rows, widths, i, end, col+1, padding)
		i = end
	}
}
