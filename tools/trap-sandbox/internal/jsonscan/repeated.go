package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
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
	s := scans.Get().(*repeatScan)
	s.data, s.foldDepth = data, foldDepth
	s.value(SkipSpace(data, 0), 0)
	r, ok = s.found, s.ok
	if cap(s.keys) <= maxPooledKeys && cap(s.path) <= maxPooledKeys {
		clear(s.keys[:cap(s.keys)]) // nothing of data is kept
		clear(s.path[:cap(s.path)])
		*s = repeatScan{keys: s.keys[:0], path: s.path[:0]}
		scans.Put(s)
	}
	return r, ok
}

// scans recycles RepeatedKey's scans with their lists: every /requests body is scanned.
// A scan that a deep or wide body grew past maxPooledKeys keys or steps is left to the
// collector.
var scans = sync.Pool{New: func() any { return new(repeatScan) }}

const maxPooledKeys = 1024

// repeatScan walks a valid JSON text for RepeatedKey.
type repeatScan struct {
	data      []byte
	foldDepth int
	found     Repeated
	ok        bool
	// path is where the scan is: the keys and array indexes down to the value it reads, made
	// into a Place only for a repeat.
	path []segment
	// keys holds the keys of every object open around the scan, each object's after its
	// outer one's (keySet.from): one list, so that a body's objects take no allocation.
	keys [][]byte
}

// segment is a step of repeatScan's path: an object's key, or (key nil) an array's index.
type segment struct {
	key   []byte
	index int
}

// place is the scan's path as Repeated.Place names it.
func (s *repeatScan) place() string {
	var b strings.Builder
	for _, seg := range s.path {
		switch {
		case seg.key == nil:
			b.WriteString("[" + strconv.Itoa(seg.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + string(seg.key))
		default:
			b.Write(seg.key)
		}
	}
	return b.String()
}

// value scans the value at i, at nesting depth, and returns the index past it (-1 once a
// repeat is found).
func (s *repeatScan) value(i int, depth int) int {
	switch s.data[i] {
	case '{':
		return s.object(i, depth)
	case '[':
		i = SkipSpace(s.data, i+1)
		for n := 0; s.data[i] != ']'; n++ {
			s.path = append(s.path, segment{index: n})
			if i = s.value(i, depth+1); i < 0 {
				return -1
			}
			s.path = s.path[:len(s.path)-1]
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
func (s *repeatScan) object(i int, depth int) int {
	fold := depth < s.foldDepth
	seen := keySet{s: s, from: len(s.keys)}
	i = SkipSpace(s.data, i+1)
	for s.data[i] != '}' {
		end := stringEnd(s.data, i)
		key := keyText(s.data[i:end])
		if first, taken := seen.add(key, fold); taken {
			s.found, s.ok = Repeated{Place: s.place(), First: string(first), Second: string(key)}, true
			return -1
		}
		i = SkipSpace(s.data, SkipSpace(s.data, end)+1) // past the colon
		s.path = append(s.path, segment{key: key})
		if i = s.value(i, depth+1); i < 0 {
			return -1
		}
		s.path = s.path[:len(s.path)-1]
		if i = SkipSpace(s.data, i); s.data[i] == ',' {
			i = SkipSpace(s.data, i+1)
		}
	}
	seen.done()
	return i + 1
}

// keySet is the keys an object has named so far: the scan's keys from from on while they are
// few (every body the API takes), a map past smallKeySet of them, by the key as compared.
type keySet struct {
	s     *repeatScan
	from  int
	index map[string][]byte
}

// smallKeySet is how many keys a keySet compares one by one before it takes a map.
const smallKeySet = 16

// add records key, compared with case folded when fold is set (as encoding/json folds a
// field's name: K, the Kelvin sign, is k, and ſ is s); taken is true, with the key first given
// so, when it was there already.
func (k *keySet) add(key []byte, fold bool) (first []byte, taken bool) {
	if k.index != nil {
		compared := string(key)
		if fold {
			compared = foldedKey(key)
		}
		if first, taken := k.index[compared]; taken {
			return first, true
		}
		k.index[compared] = key
		return nil, false
	}
	for _, seen := range k.s.keys[k.from:] {
		if bytes.Equal(seen, key) || fold && bytes.EqualFold(seen, key) {
			return seen, true
		}
	}
	k.s.keys = append(k.s.keys, key)
	if len(k.s.keys)-k.from > smallKeySet {
		k.index = make(map[string][]byte, 2*smallKeySet)
		for _, seen := range k.s.keys[k.from:] {
			compared := string(seen)
			if fold {
				compared = foldedKey(seen)
			}
			k.index[compared] = seen
		}
		k.s.keys = k.s.keys[:k.from]
	}
	return nil, false
}

// foldedKey is key with case folded as bytes.EqualFold compares it (the few keys an object has
// are compared so): two keys fold alike exactly when EqualFold finds them equal, which is when
// encoding/json fills one field from either. Each character is the least of its simple case
// folding's orbit (K, k and K, the Kelvin sign, are K); a byte that is not UTF-8 is U+FFFD, as
// EqualFold reads it. strings.ToLower(strings.ToUpper(…)) took İ and ı for i, which neither
// encoding/json nor EqualFold does: a body's "ıd" beside "id" was refused past smallKeySet keys
// and taken below it.
func foldedKey(key []byte) string {
	var b strings.Builder
	b.Grow(len(key))
	for len(key) > 0 {
		r, n := utf8.DecodeRune(key)
		key = key[n:]
		least := r
		for next := unicode.SimpleFold(r); next != r; next = unicode.SimpleFold(next) {
			least = min(least, next)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// done drops the object's keys from the scan's list, once the object has ended.
func (k *keySet) done() { k.s.keys = k.s.keys[:k.from] }

// keyText is a JSON string token's text: its bytes between the quotes when it has no escape,
// else decoded.
func keyText(token []byte) []byte {
	if bytes.IndexByte(token, '\\') < 0 {
		return token[1 : len(token)-1]
	}
	var key string
	_ = json.Unmarshal(token, &key) // valid: Valid checked it
	return []byte(key)
}
