package lua

import (
	"math"
	"math/bits"
	"unsafe"
)

// A table's traversal order (next, pairs, ForEach) is the one CC: Tweaked's Lua, Cobalt
// 0.9, gives, where a program can see it: Cobalt's LuaTable is Lua 5.1's ltable.c, an array
// part of whole-number keys 1..n, then a node array of a power of two whose keys sit at
// their main position (a hash of the key) or, on a collision, in the last free node,
// chained from it; next walks the array part, then the nodes in index order. Which node a
// key lands in follows from the keys' hashes and the table's whole history (inserts,
// keys set to nil and left dead in their node, rehashes when the nodes are full, a
// constructor's size hints). The values stay where gopher-lua keeps them (array, strdict,
// dict); a table also keeps the layout Cobalt would have, the keys alone, updated when a
// key that holds no value is set (an update or a removal never moves a key, in Cobalt as
// here), and next reads it. The hashes are Cobalt's for strings and numbers; a boolean,
// table, function, coroutine or userdata hashes by Java's identity hash there, which
// differs from run to run in CC, and by a stand-in here (its address).
//
// Written from Cobalt 0.9.4's LuaTable (newKey, rehash, resize, next) and Lua 5.1's
// ltable.c, whose algorithm it is; the orders were compared with Cobalt run from its
// source (cobaltorder_test.go).

// layoutInt reports whether key is a whole number that Cobalt keeps as a LuaInteger (a
// Java int), and that int.
func layoutInt(key LValue) (int32, bool) {
	n, ok := key.(LNumber)
	if !ok || !(float64(n) >= math.MinInt32 && float64(n) <= math.MaxInt32) {
		return 0, false
	}
	i := int32(n)
	return i, float64(i) == float64(n)
}

// layoutHash is Cobalt's hashCode of key and whether its node is found by the modulo of
// the node count minus one, odd (hashmod: numbers, tables, functions, coroutines,
// userdata), rather than by masking (strings, booleans).
func layoutHash(key LValue) (int32, bool) {
	switch k := key.(type) {
	case LString:
		return stringHash(string(k)), false
	case LNumber:
		if i, ok := layoutInt(k); ok {
			return i, true // LuaInteger.hashCode
		}
		b := math.Float64bits(float64(k))
		return int32(b>>32) | int32(b), true // LuaDouble.hashCode
	case LBool:
		if k {
			return 1231, false // an identity hash in Java; Boolean's hashCode stands in
		}
		return 1237, false
	case *LTable:
		return addressHash(unsafe.Pointer(k)), true
	case *LFunction:
		return addressHash(unsafe.Pointer(k)), true
	case *LState:
		return addressHash(unsafe.Pointer(k)), true
	case *LUserData:
		return addressHash(unsafe.Pointer(k)), true
	}
	return 0, true
}

// stringHash is Cobalt's LuaString.hashCode (Lua 5.1's string hash): a seed of the length,
// then at most about 32 of the bytes, from the last.
func stringHash(s string) int32 {
	h := int32(len(s))
	step := (len(s) >> 5) + 1
	for l := len(s); l >= step; l -= step {
		h ^= (h << 5) + (h >> 2) + int32(s[l-1])
	}
	return h
}

// addressHash stands in for Java's identity hash of an object.
func addressHash(p unsafe.Pointer) int32 {
	a := uint64(uintptr(p))
	return int32(a>>4) ^ int32(a>>36)
}

// mainNode is key's main position among n nodes (a power of two): Cobalt's hashSlot.
func mainNode(key LValue, n int) int {
	h, byMod := layoutHash(key)
	mask := int32(n - 1)
	if byMod {
		return int((h & 0x7FFFFFFF) % (mask | 1))
	}
	return int(h & mask)
}

// ceilLog2 is ⌈log2 x⌉ for x ≥ 1, Cobalt's log2.
func ceilLog2(x int) int {
	return bits.Len32(uint32(x - 1))
}

// alive reports whether the table holds a value for key.
func (tb *LTable) alive(key LValue) bool {
	return tb.RawGet(key) != LNil
}

// findNode is the node holding key, alive or dead, or -1.
func (tb *LTable) findNode(key LValue) int {
	if len(tb.nodes) == 0 {
		return -1
	}
	for n := mainNode(key, len(tb.nodes)); n >= 0; n = int(tb.chain[n]) {
		if tb.nodes[n] == key {
			return n
		}
	}
	return -1
}

// inLayoutArray reports whether key lies in the array part of the layout.
func (tb *LTable) inLayoutArray(key LValue) bool {
	i, ok := layoutInt(key)
	return ok && i > 0 && int(i) <= tb.arrayPart
}

// layoutSet places key, about to be set, as Cobalt's rawset does: nothing moves when it is
// in the array part or already has a node (alive or dead); else it gets a node (newKey),
// which may rehash first (the key may then fall in the array part). A key set to nil gets
// one too, as in Cobalt.
func (tb *LTable) layoutSet(key LValue) {
	for !tb.inLayoutArray(key) && tb.findNode(key) < 0 && !tb.newKey(key) {
	}
}

// newKey puts key in its main node, moving a colliding key that is not in its own main
// node to a free one, or else puts key in a free node chained after the colliding one. It
// reports false when it rehashed instead (no free node), and the caller tries again.
func (tb *LTable) newKey(key LValue) bool {
	if len(tb.nodes) == 0 {
		tb.rehash(key)
		return false
	}
	main := mainNode(key, len(tb.nodes))
	if other := tb.nodes[main]; other != nil && tb.alive(other) {
		free := tb.freeNode()
		if free < 0 {
			tb.rehash(key)
			return false
		}
		prev := mainNode(other, len(tb.nodes))
		if prev != main {
			for int(tb.chain[prev]) != main {
				prev = int(tb.chain[prev])
			}
			tb.chain[prev] = int32(free)
			tb.nodes[free], tb.chain[free] = tb.nodes[main], tb.chain[main]
			tb.nodes[main], tb.chain[main] = nil, -1
		} else {
			if tb.chain[main] != -1 {
				tb.chain[free] = tb.chain[main]
			}
			tb.chain[main] = int32(free)
			main = free
		}
	}
	tb.nodes[main] = key
	return true
}

// freeNode is the last free node below the last one handed out, or -1 (Cobalt's
// getFreePos): a dead key's node is not free.
func (tb *LTable) freeNode() int {
	for tb.lastFree >= 0 {
		n := tb.lastFree
		tb.lastFree--
		if tb.nodes[n] == nil {
			return n
		}
	}
	return -1
}

// countInt counts key in nums by the power of two its array index lies under, when it
// could be one.
func countInt(key LValue, nums *[32]int) int {
	if i, ok := layoutInt(key); ok && i > 0 {
		nums[ceilLog2(int(i))]++
		return 1
	}
	return 0
}

// rehash sizes the array part and the nodes for the live keys and extra (the key being
// added), as Cobalt's rehash (ltable.c's computesizes): the array part is the largest power
// of two more than half full.
func (tb *LTable) rehash(extra LValue) {
	var nums [32]int
	arrayCount := 0
	i := 1
	for lg, ttlg := 0, 1; lg <= 31; lg, ttlg = lg+1, ttlg*2 {
		lim := ttlg
		if lim > tb.arrayPart {
			lim = tb.arrayPart
			if i > lim {
				break
			}
		}
		lc := 0
		for ; i <= lim; i++ {
			if tb.intValue(i) != LNil {
				lc++
			}
		}
		nums[lg] += lc
		arrayCount += lc
	}
	total := arrayCount
	for n := len(tb.nodes) - 1; n >= 0; n-- {
		if key := tb.nodes[n]; key != nil && tb.alive(key) {
			arrayCount += countInt(key, &nums)
			total++
		}
	}
	if extra != nil {
		arrayCount += countInt(extra, &nums)
		total++
	}
	arraySize, inArray, sum := 0, 0, 0
	for lg, twoPow := 0, 1; arrayCount > twoPow/2; lg, twoPow = lg+1, twoPow*2 {
		if nums[lg] > 0 {
			sum += nums[lg]
			if sum > twoPow/2 {
				arraySize, inArray = twoPow, sum
			}
		}
	}
	tb.layoutResize(arraySize, total-inArray)
}

// layoutResize gives the layout an array part of arraySize and at least hashSize nodes,
// placing the live keys again: those the array part no longer holds in increasing order,
// then the old nodes' from the last (Cobalt's resize).
func (tb *LTable) layoutResize(arraySize, hashSize int) {
	oldArray, oldNodes := tb.arrayPart, tb.nodes
	if arraySize > oldArray {
		tb.arrayPart = arraySize
	}
	if hashSize == 0 {
		tb.nodes, tb.chain, tb.lastFree = nil, nil, 0
	} else {
		size := 1 << ceilLog2(hashSize)
		tb.nodes = make([]LValue, size)
		tb.chain = make([]int32, size)
		for n := range tb.chain {
			tb.chain[n] = -1
		}
		tb.lastFree = size - 1
	}
	if arraySize < oldArray {
		tb.arrayPart = arraySize
		for i := arraySize + 1; i <= oldArray; i++ {
			if key := LNumber(i); tb.alive(key) {
				tb.layoutSet(key)
			}
		}
	}
	for n := len(oldNodes) - 1; n >= 0; n-- {
		if key := oldNodes[n]; key != nil && tb.alive(key) {
			tb.layoutSet(key)
		}
	}
}

// SizeAsCobalt gives an empty table the array part and nodes a constructor's size hints
// give Cobalt's (OP_NEWTABLE's B and C, decoded: new LuaTable(arraySize, hashSize)).
func (tb *LTable) SizeAsCobalt(arraySize, hashSize int) {
	if arraySize > 0 || hashSize > 0 {
		tb.layoutResize(arraySize, hashSize)
	}
}

// presizeArray grows the layout's array part to n before a constructor stores its list
// items (Cobalt's presize, from OP_SETLIST), which places the nodes' keys again.
func (tb *LTable) presizeArray(n int) {
	if n > tb.arrayPart {
		tb.layoutResize(n, len(tb.nodes))
	}
}

// layoutIndex is where a traversal goes on after key (Cobalt's findIndex): 0 for nil,
// the array index, or past the array part the node's index plus one; -1 for a key the
// table does not hold.
func (tb *LTable) layoutIndex(key LValue) int {
	if key == LNil {
		return 0
	}
	if tb.inLayoutArray(key) {
		i, _ := layoutInt(key)
		return int(i)
	}
	if n := tb.findNode(key); n >= 0 {
		return tb.arrayPart + n + 1
	}
	return -1
}

// layoutNext is the key after the one at index i (layoutIndex) that holds a value, and
// that value; nil when there is none.
func (tb *LTable) layoutNext(i int) (LValue, LValue) {
	for ; i < tb.arrayPart; i++ {
		if v := tb.intValue(i + 1); v != LNil {
			return LNumber(i + 1), v
		}
	}
	for n := i - tb.arrayPart; n < len(tb.nodes); n++ {
		if key := tb.nodes[n]; key != nil {
			if v := tb.RawGet(key); v != LNil {
				return key, v
			}
		}
	}
	return LNil, LNil
}

// LayOutAsCobalt lays tb's keys out afresh as Cobalt's would lie in a table made with new
// LuaTable(0, hashSize) and then given the keys of order, in that order, and then the other
// keys tb holds, in the order it walks them now: the layout of a library Cobalt makes in
// Java (RegisteredFunction.bind, then a few more rawsets), which a program sees as the order
// pairs walks it. A name tb does not hold is skipped. No value moves.
func (tb *LTable) LayOutAsCobalt(hashSize int, order ...string) {
	named := make(map[string]bool, len(order))
	for _, k := range order {
		named[k] = true
	}
	var rest []LValue
	for k, _ := tb.layoutNext(0); k != LNil; k, _ = tb.layoutNext(tb.layoutIndex(k)) {
		if s, ok := k.(LString); !ok || !named[string(s)] {
			rest = append(rest, k)
		}
	}
	tb.arrayPart, tb.nodes, tb.chain, tb.lastFree = 0, nil, nil, 0
	tb.SizeAsCobalt(0, hashSize)
	for _, k := range order {
		if key := LString(k); tb.alive(key) {
			tb.layoutSet(key)
		}
	}
	for _, key := range rest {
		tb.layoutSet(key)
	}
}
