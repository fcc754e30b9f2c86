package jsonscan

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Repeated is a key that one object of a JSON text names twice (RepeatedKey).
type Repeated struct {
	// Place is the object's place in the text: "" for the outermost, else as a field is
	// named in the API's messages ("payload", "payload.items[2]", "events[0]").
	Place string
	// First and Second are the two keys as given (decoded); they differ only where the object
	// is read with case folded ("type" and "TYPE").
	First, Second string
}

// RepeatedKey finds a key that an object of data (a text Valid accepts) names twice, and
// reports it, the first found; ok is false when every object names each key once. Objects
// nested less than foldDepth deep (0: none, 1: the outermost alone) count keys that differ
// only in case as the same: encoding/json fills a struct's field from any key that folds to its
// name, the last one winning, so {"type":"ping","TYPE":"lua.exec"} reads as lua.exec to the
// gateway and as ping to whoever reads its first key. A deeper object (a payload the gateway
// passes on to a computer, whose Lua tables tell "a" from "A") counts exact repeats alone.
//
// A body's reader and whatever else reads the same text (a proxy, a log, an audit) must not
// disagree on what it says; one that names a key twice is refused instead.
func RepeatedKey(data []byte, foldDepth int) (r Repeated, ok bool) {
	s := repeatScan{data: data, foldDepth: foldDepth}
	s.value(SkipSpace(data, 0), "", 0)
	return s.found, s.ok
}

// repeatScan walks a valid JSON text for RepeatedKey.
type repeatScan struct {
	data      []byte
	foldDepth int
	found     Repeated
	ok        bool
}

// value scans the value at i, at place and nesting depth, and returns the index past it (-1
// once a repeat is found).
func (s *repeatScan) value(i int, place string, depth int) int {
	switch s.data[i] {
	case '{':
		return s.object(i, place, depth)
	case '[':
		i = SkipSpace(s.data, i+1)
		for n := 0; s.data[i] != ']'; n++ {
			if i = s.value(i, place+"["+strconv.Itoa(n)+"]", depth+1); i < 0 {
				return -1
			}
			if i = SkipSpace(s.data, i); s.data[i] == ',' {
				i = SkipSpace(s.data, i+1)
			}
		}
		return i + 1
	case '"':
		return stringEnd(s.data, i)
	case 't':
		return i + len("true")
	case 'f':
		return i + len("false")
	case 'n':
		return i + len("null")
	}
	return numberEnd(s.data, i)
}

// object scans the object at i, as value does.
func (s *repeatScan) object(i int, place string, depth int) int {
	fold := depth < s.foldDepth
	seen := map[string]string{} // each key as compared, to the key as given
	i = SkipSpace(s.data, i+1)
	for s.data[i] != '}' {
		end := stringEnd(s.data, i)
		key := keyText(s.data[i:end])
		compared := key
		if fold {
			compared = strings.ToLower(strings.ToUpper(key)) // K (Kelvin) and ſ too, as encoding/json folds them
		}
		if first, taken := seen[compared]; taken {
			s.found, s.ok = Repeated{Place: place, First: first, Second: key}, true
			return -1
		}
		seen[compared] = key
		i = SkipSpace(s.data, SkipSpace(s.data, end)+1) // past the colon
		member := key
		if place != "" {
			member = place + "." + key
		}
		if i = s.value(i, member, depth+1); i < 0 {
			return -1
		}
		if i = SkipSpace(s.data, i); s.data[i] == ',' {
			i = SkipSpace(s.data, i+1)
		}
	}
	return i + 1
}

// keyText is a JSON string token's text: its bytes between the quotes when it has no escape,
// else decoded.
func keyText(token []byte) string {
	if !strings.ContainsRune(string(token), '\\') {
		return string(token[1 : len(token)-1])
	}
	var key string
	_ = json.Unmarshal(token, &key) // valid: Valid checked it
	return key
}
