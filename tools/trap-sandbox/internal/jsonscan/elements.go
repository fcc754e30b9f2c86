package jsonscan

import "iter"

// Elements yields the elements of the JSON array data, a text Valid accepts, each as its own
// bytes and in order, without decoding them; nothing when data is no array. A reader that
// keeps a few elements of a long list (the monitors of a screen.read) looks at each without
// the allocation per element that decoding the list into a slice takes.
func Elements(data []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		i := SkipSpace(data, 0)
		if i >= len(data) || data[i] != '[' {
			return
		}
		if i = SkipSpace(data, i+1); i < len(data) && data[i] == ']' {
			return
		}
		for i < len(data) {
			end := valueEnd(data, i)
			if end < 0 || !yield(data[i:end]) {
				return
			}
			if i = SkipSpace(data, end); i >= len(data) || data[i] != ',' {
				return
			}
			i = SkipSpace(data, i+1)
		}
	}
}

// valueEnd returns the index just past the value that starts at i of a text Valid accepts,
// or -1 when there is none there.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case 't':
		return literalEnd(data, i, "true")
	case 'f':
		return literalEnd(data, i, "false")
	case 'n':
		return literalEnd(data, i, "null")
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				if i = stringEnd(data, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	return numberEnd(data, i)
}
