package luakit

import (
	"math"
	"sort"

	lua "github.com/yuin/gopher-lua"
)

// JavaDefaultCapacity is the capacity of a Java HashMap made without one (new HashMap<>()).
const JavaDefaultCapacity = 16

// MapEntry is one entry a CC Java API puts in the map it returns.
type MapEntry struct {
	Key   string
	Value lua.LValue
}

// JavaMap is the Lua table CC makes of a Java HashMap<String, …> of the given initial
// capacity whose entries were put in this order (keys distinct, none removed): CC copies a
// map into a new table in the map's iteration order, leaving out nil values
// (CobaltLuaMachine.toValue), so the order pairs walks the table in follows from the keys'
// Java hashes and the map's size, the same on every run. HashMap iterates its buckets in
// turn, each in the order its keys were put (a resize keeps that order), a key's bucket
// being its spread String.hashCode masked by the table's size: the power of two from the
// capacity, doubled while the entries pass three quarters of it.
func JavaMap(L *lua.LState, capacity int, entries ...MapEntry) *lua.LTable {
	t := L.NewTable()
	for _, e := range javaMapOrder(capacity, entries) {
		if e.Value != lua.LNil {
			t.RawSetString(e.Key, e.Value)
		}
	}
	return t
}

// JavaMapKeys is the order a Java HashMap of that initial capacity iterates the keys, put in
// the order given: the order of a Java map's keySet CC hands to Lua as a list.
func JavaMapKeys(capacity int, keys ...string) []string {
	entries := make([]MapEntry, len(keys))
	for i, k := range keys {
		entries[i] = MapEntry{Key: k}
	}
	out := make([]string, len(keys))
	for i, e := range javaMapOrder(capacity, entries) {
		out[i] = e.Key
	}
	return out
}

// ConcurrentMapKeys is the order a Java ConcurrentHashMap made without a capacity (new
// ConcurrentHashMap<>()) iterates its keys, put in the order given, having held at most
// peak entries at once: the order of such a map's keySet CC hands to Lua as a list (a wired
// modem's getNamesRemote). It iterates its buckets as a HashMap does, but its table of 16
// grows once its entries reach three quarters of it, where a HashMap's grows past that, and
// never shrinks. Keys of one bucket come in the order put; a ConcurrentHashMap's resize may
// reverse part of a bucket, which this does not follow.
func ConcurrentMapKeys(peak int, keys ...string) []string {
	size := JavaDefaultCapacity
	for peak >= size*3/4 {
		size <<= 1
	}
	entries := make([]MapEntry, len(keys))
	for i, k := range keys {
		entries[i] = MapEntry{Key: k}
	}
	out := make([]string, len(keys))
	for i, e := range bucketOrder(size, entries) {
		out[i] = e.Key
	}
	return out
}

// javaMapOrder is the order a Java HashMap of that initial capacity iterates entries put in
// the order given.
func javaMapOrder(capacity int, entries []MapEntry) []MapEntry {
	hashes := make([]int32, len(entries))
	for i, e := range entries {
		hashes[i] = int32(javaStringHash(e.Key))
	}
	out := make([]MapEntry, len(entries))
	for i, at := range JavaHashMapOrder(capacity, hashes) {
		out[i] = entries[at]
	}
	return out
}

// treeifyBin and minTreeifyCapacity are Java HashMap's TREEIFY_THRESHOLD + 1 and
// MIN_TREEIFY_CAPACITY: a bucket given its ninth key grows a table of fewer than 64
// buckets (treeifyBin's resize).
const (
	treeifyBin         = 9
	minTreeifyCapacity = 64
)

// JavaHashMapOrder is the order a Java HashMap of that initial capacity iterates distinct
// keys of these hashCodes put in this order, as indexes into hashes. It walks its buckets
// in turn, each in the order its keys were put (a resize splits a bucket keeping that
// order); a key's bucket is its hash spread (h ^ h>>>16) masked by the table's size, a
// power of two from the capacity that doubles once the keys pass three quarters of it, or
// when a bucket of a table under 64 gets its ninth key. A bucket of nine or more keys in a
// larger table becomes a tree in Java, walked in an order that follows its comparisons;
// here it keeps the order put.
func JavaHashMapOrder(capacity int, hashes []int32) []int {
	size := 1
	for size < capacity {
		size <<= 1
	}
	spread := func(i int) uint32 {
		h := uint32(hashes[i])
		return h ^ h>>16
	}
	binSizes := func(size, keys int) []int {
		bins := make([]int, size)
		for i := range keys {
			bins[spread(i)&uint32(size-1)]++
		}
		return bins
	}
	bins := binSizes(size, 0)
	for i := range hashes {
		b := spread(i) & uint32(size-1)
		bins[b]++
		if bins[b] >= treeifyBin && size < minTreeifyCapacity {
			size <<= 1
			bins = binSizes(size, i+1)
		}
		if i+1 > size*3/4 {
			size <<= 1
			bins = binSizes(size, i+1)
		}
	}
	order := make([]int, len(hashes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return spread(order[a])&uint32(size-1) < spread(order[b])&uint32(size-1)
	})
	return order
}

// bucketOrder is the order a Java hash table of size buckets iterates entries put in the
// order given: bucket by bucket, each in the order put.
func bucketOrder(size int, entries []MapEntry) []MapEntry {
	bucket := func(key string) uint32 {
		h := javaStringHash(key)
		return (h ^ h>>16) & uint32(size-1)
	}
	ordered := append([]MapEntry(nil), entries...)
	sort.SliceStable(ordered, func(i, j int) bool { return bucket(ordered[i].Key) < bucket(ordered[j].Key) })
	return ordered
}

// JavaStringHash is Java's String.hashCode of s, CC's bytes taken as the characters 0-255
// a Java string holds for them.
func JavaStringHash(s string) int32 { return int32(javaStringHash(s)) }

// JavaDoubleHash is Java's Double.hashCode of f (every NaN hashes as Java's one NaN).
func JavaDoubleHash(f float64) int32 {
	bits := math.Float64bits(f)
	if f != f {
		bits = 0x7ff8000000000000
	}
	return int32(bits ^ bits>>32)
}

// JavaBooleanHash is Java's Boolean.hashCode of b.
func JavaBooleanHash(b bool) int32 {
	if b {
		return 1231
	}
	return 1237
}

// javaStringHash is Java's String.hashCode of key, CC's bytes taken as the characters 0-255
// a Java string holds for them.
func javaStringHash(key string) uint32 {
	var h uint32
	for i := 0; i < len(key); i++ {
		h = 31*h + uint32(key[i])
	}
	return h
}
