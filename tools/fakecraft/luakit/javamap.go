package luakit

import (
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
	size := 1
	for size < capacity {
		size <<= 1
	}
	for len(entries) > size*3/4 {
		size <<= 1
	}
	return bucketOrder(size, entries)
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

// javaStringHash is Java's String.hashCode of key, CC's bytes taken as the characters 0-255
// a Java string holds for them.
func javaStringHash(key string) uint32 {
	var h uint32
	for i := 0; i < len(key); i++ {
		h = 31*h + uint32(key[i])
	}
	return h
}
