package mcp

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
)

// resultBytes bounds the JSON text of a tool's result. opencode 1.18.33 keeps none of a tool
// result over 50 KiB (51200 bytes of its texts, joined by a blank line): it hands the model
// "...54280 bytes truncated..." and the path of a file of its own instead, so a long answer
// reached the model as nothing. 40 KiB leaves 10 KiB for the notes after the JSON (the data
// note, what was left out) and for a client that counts a little differently. Every tool
// whose result can grow (run_lua, run_program, list_computers, list_files, computer_info's
// peripherals: a wired network of storage may name hundreds, read_file: a file's bytes) cuts
// its result to it, saying what it left out and how to get the rest (fit); read_file's
// description says to read a file over it in parts (partBytes); a screen is far under it
// (51x19 cells).
const resultBytes = 40 << 10

// partBytes is the part read_file's description suggests: a part's JSON is its bytes and
// their escapes (a line break is two), so it is left room within resultBytes.
const partBytes = resultBytes * 4 / 5

// oneResult is what a result was cut to fit, said where it was cut: why it is not whole.
var oneResult = fmt.Sprintf("one tool result (%d KB: opencode keeps none of a longer one)", resultBytes>>10)

// fit is out cut to resultBytes, for the outputs that can grow; any other comes back as it is.
func fit(out any) any {
	switch o := out.(type) {
	case LuaOutput:
		return o.fit()
	case ProgramOutput:
		return o.fit()
	case ComputersOutput:
		return o.fit()
	case ListOutput:
		return o.fit()
	case InfoOutput:
		return o.fit()
	case ReadOutput:
		return o.fit()
	}
	return out
}

// fits reports whether v's JSON is at most resultBytes.
func fits(v any) bool {
	data, err := marshal(v)
	return err == nil && len(data) <= resultBytes
}

// mostThatFit is the largest n in [0, hi] for which fits(n) holds, fits being true up to some
// n and false above it; 0 when none does.
func mostThatFit(hi int, fits func(n int) bool) int {
	return max(0, sort.Search(hi+1, func(n int) bool { return !fits(n) })-1)
}

// valueCut is one part of a result that fit cut: where it is (a JSON path: returns[0].name),
// how much of it is kept, of how much, and of what (characters, entries).
type valueCut struct {
	where    string
	kept, of int
	unit     string
}

func (c valueCut) String() string {
	return fmt.Sprintf("%s holds the first %d of its %d %s", c.where, c.kept, c.of, c.unit)
}

// cutsSaid says the cuts, the first few by name.
func cutsSaid(cuts []valueCut) string {
	const named = 3
	said := make([]string, 0, named)
	for _, c := range cuts[:min(named, len(cuts))] {
		said = append(said, c.String())
	}
	s := strings.Join(said, "; ")
	if len(cuts) > named {
		s += fmt.Sprintf("; and %d more are cut so", len(cuts)-named)
	}
	return s
}

// cutText is s cut to its first n characters (by the text rule, a character is one byte on
// the computer, so string.sub counts the same), the cut, if any, appended to cuts.
func cutText(s string, n int, where string, cuts *[]valueCut) string {
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s
	}
	end := 0
	for i := 0; i < n; i++ {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	*cuts = append(*cuts, valueCut{where: where, kept: n, of: count, unit: "characters"})
	return s[:end]
}

// cutValue is v (decoded JSON) with no string over n characters and no array or object over n
// entries (an object keeps its first n keys, sorted as its JSON is), the cuts appended to cuts.
func cutValue(v any, n int, where string, cuts *[]valueCut) any {
	switch x := v.(type) {
	case string:
		return cutText(x, n, where, cuts)
	case []any:
		kept := make([]any, 0, min(n, len(x)))
		for i, e := range x[:min(n, len(x))] {
			kept = append(kept, cutValue(e, n, fmt.Sprintf("%s[%d]", where, i), cuts))
		}
		if len(x) > n {
			*cuts = append(*cuts, valueCut{where: where, kept: n, of: len(x), unit: "entries"})
		}
		return kept
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		kept := make(map[string]any, min(n, len(keys)))
		for _, k := range keys[:min(n, len(keys))] {
			kept[k] = cutValue(x[k], n, where+"."+k, cuts)
		}
		if len(keys) > n {
			*cuts = append(*cuts, valueCut{where: where, kept: n, of: len(keys), unit: "entries"})
		}
		return kept
	}
	return v
}

// largest is the longest string's length or the most entries of an array or object in v: the
// n above which cutValue cuts nothing.
func largest(v any) int {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x)
	case []any:
		n := len(x)
		for _, e := range x {
			n = max(n, largest(e))
		}
		return n
	case map[string]any:
		n := len(x)
		for _, e := range x {
			n = max(n, largest(e))
		}
		return n
	}
	return 0
}

// fit cuts a chunk's return values, output and error alike, to the most characters and entries
// each that fit its JSON in resultBytes.
func (o LuaOutput) fit() LuaOutput {
	if fits(o) {
		return o
	}
	cut := func(n int) (LuaOutput, []valueCut) {
		var cuts []valueCut
		c := o
		c.Returns = cutValue(o.Returns, n, "returns", &cuts).([]any)
		c.Output = cutText(o.Output, n, "output", &cuts)
		c.Error = cutText(o.Error, n, "error", &cuts)
		return c, cuts
	}
	n := mostThatFit(max(largest(o.Returns), largest(o.Output), largest(o.Error)), func(n int) bool {
		c, _ := cut(n)
		return fits(c)
	})
	c, cuts := cut(n)
	c.cut = "The result is cut to fit " + oneResult + ": " + cutsSaid(cuts) + ". Get the rest in parts: " +
		"return a part of a long string (string.sub(s, from, to): a character is one byte there) or of a table, print less, " +
		"or write it to a file on the computer and read that with read_file's offset and length."
	return c
}

// fit cuts a program's output to the most characters that fit its JSON in resultBytes.
func (o ProgramOutput) fit() ProgramOutput {
	if fits(o) {
		return o
	}
	whole := o.Output
	var cuts []valueCut
	n := mostThatFit(largest(whole), func(n int) bool {
		o.Output = cutText(whole, n, "output", new([]valueCut))
		return fits(o)
	})
	o.Output = cutText(whole, n, "output", &cuts)
	o.cut = "The result is cut to fit " + oneResult + ": " + cutsSaid(cuts) + ". Print less (a narrower command), " +
		"or have it write to a file on the computer (run_lua can) and read that with read_file's offset and length."
	return o
}

// fit keeps the first computers of the list that fit resultBytes; note says how many it left out.
func (o ComputersOutput) fit() ComputersOutput {
	if fits(o) {
		return o
	}
	all := o.Computers
	n := mostThatFit(len(all), func(n int) bool {
		o.Computers = all[:n]
		return fits(o)
	})
	o.Computers, o.cutToFit = all[:n], len(all)
	return o
}

// fit keeps the first entries of the directory that fit resultBytes; note says where the rest are.
func (o ListOutput) fit() ListOutput {
	if fits(o) {
		return o
	}
	all := o.Entries
	n := mostThatFit(len(all), func(n int) bool {
		o.Entries = all[:n]
		return fits(o)
	})
	o.Entries, o.total = all[:n], len(all)
	return o
}

// note says what list_files left out of a directory too long for one result, and how to list
// the rest; "" for a whole one.
func (o ListOutput) note() string {
	unreached := ""
	if slices.ContainsFunc(o.Entries, func(e computer.Entry) bool { return e.ReadsAs != "" }) {
		unreached = fmt.Sprintf("An entry with readsAs has a name no path on the computer reaches (put on its drive from outside CC: %s): "+
			"its path reads readsAs, another file or none, whose isDir and size it shows; %s.", cctext.NameRules, cctext.Unreachable)
	}
	if o.total <= len(o.Entries) {
		return unreached
	}
	return strings.TrimSpace(unreached + " " + fmt.Sprintf("These are the first %d of the directory's %d entries, not all of them: the rest do not fit %s. "+
		"List the rest with run_lua (needs the owner's sandbox.allow_exec true), e.g. %s",
		len(o.Entries), o.total, oneResult, namesFrom(o.Path, len(o.Entries)+1, len(o.Entries)+500)))
}

// fit keeps the first peripherals that fit resultBytes (a computer on a wired network of a
// storage system names each chest); cut says where the rest are.
func (o InfoOutput) fit() InfoOutput {
	if fits(o) {
		return o
	}
	all := o.Peripherals
	n := mostThatFit(len(all), func(n int) bool {
		o.Peripherals = all[:n]
		return fits(o)
	})
	o.Peripherals = all[:n]
	o.cut = fmt.Sprintf("peripherals holds the first %d of the computer's %d, not all of them: the rest do not fit %s. "+
		"List the rest with run_lua (needs the owner's sandbox.allow_exec true), e.g. "+
		"local names = peripheral.getNames() return #names, {table.unpack(names, %d, %d)}", n, len(all), oneResult, n+1, n+500)
	return o
}

// fit cuts a file, or a part of one, whose JSON is over resultBytes to its first bytes that fit,
// as a part from the same offset: a whole 258 KB log reached an opencode model as nothing.
// note says that it was cut and where the next part begins. Text is cut at a character (one
// byte on the computer), base64 at a group of four characters (three bytes), so the part is
// the file's bytes as a part read with that length gives them.
func (o ReadOutput) fit() ReadOutput {
	if fits(o) {
		return o
	}
	bytesRead := o.read
	offset := int64(0)
	if o.Offset != nil {
		offset = *o.Offset
	}
	// first is o holding the file's first n units (characters of text, groups of base64) as a
	// part, its offset and length set, as they count in its JSON.
	var first func(n int) ReadOutput
	var units int
	part := func(c ReadOutput, kept int64) ReadOutput {
		c.Offset, c.Length, c.cutFrom, c.wholeAsked = &offset, &kept, bytesRead, o.Offset == nil
		return c
	}
	switch {
	case o.Content != nil:
		whole := *o.Content
		units = utf8.RuneCountInString(whole)
		first = func(n int) ReadOutput {
			s := cutText(whole, n, "content", new([]valueCut))
			c := o
			c.Content = &s
			return part(c, int64(n))
		}
	case o.ContentBase64 != nil:
		whole := *o.ContentBase64
		units = len(whole) / 4
		first = func(n int) ReadOutput {
			s := whole[:4*n]
			c := o
			c.ContentBase64 = &s
			return part(c, min(int64(3*n), bytesRead))
		}
	default:
		return o
	}
	// Each unit is a byte of JSON at least: no more than resultBytes of them can fit.
	n := mostThatFit(min(units, resultBytes), func(n int) bool { return fits(first(n)) })
	return first(n)
}
