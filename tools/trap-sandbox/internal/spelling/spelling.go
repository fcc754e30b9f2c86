// Package spelling finds the word a mistyped one most likely meant: the one home of the edit
// distance by which the CLI names a command meant ("did you mean \"computers\"?") and MCP an
// argument meant ("did you mean length?"), and an account command an account meant.
package spelling

import (
	"strings"
	"unicode/utf8"
)

// Distance is the number of letters to insert, delete or replace to turn a into b.
func Distance(a, b string) int {
	ar, br := []rune(a), []rune(b)
	prev := make([]int, len(br)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ar); i++ {
		cur := make([]int, len(br)+1)
		cur[0] = i
		for j := 1; j <= len(br); j++ {
			replace := prev[j-1]
			if ar[i-1] != br[j-1] {
				replace++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, replace)
		}
		prev = cur
	}
	return prev[len(br)]
}

// Nearest is the one of names that word, mistyped, most likely means, or "": one the same in
// another case or, for a word of four letters or more, one that begins the other (cut short,
// or a letter too many at the end), else the nearest by at most two letters. A shorter word
// has too many neighbours to name one. MCP names an argument so ("did you mean length?"),
// the account commands and routes an account ("did you mean \"alice\"?").
func Nearest(word string, names []string) string {
	lower := strings.ToLower(word)
	long := utf8.RuneCountInString(lower) >= 4
	for _, n := range names {
		if l := strings.ToLower(n); l == lower || long && (strings.HasPrefix(l, lower) || strings.HasPrefix(lower, l)) {
			return n
		}
	}
	if !long {
		return ""
	}
	nearest, best := "", 3
	for _, n := range names {
		if d := Distance(lower, strings.ToLower(n)); d < best {
			nearest, best = n, d
		}
	}
	return nearest
}
