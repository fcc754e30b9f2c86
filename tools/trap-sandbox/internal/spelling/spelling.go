// Package spelling finds the word a mistyped one most likely meant: the one home of the edit
// distance by which the CLI names a command meant ("did you mean \"computers\"?") and MCP an
// argument meant ("did you mean length?").
package spelling

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
