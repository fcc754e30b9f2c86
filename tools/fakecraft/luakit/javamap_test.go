package luakit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"fakecraft/ccstr"
)

// The orders Java 21's HashMap iterated the same keys in, put in the same order: past a
// resize (20 keys in a map of 16), keys of one hash (Aa and BB) in a small map, and keys
// past ASCII (CC's bytes, Java's characters 0-255).
func TestJavaMapOrderIsJavas(t *testing.T) {
	order := func(capacity int, keys ...string) string {
		entries := make([]MapEntry, len(keys))
		for i, k := range keys {
			entries[i] = MapEntry{Key: k}
		}
		var out []string
		for _, e := range javaMapOrder(capacity, entries) {
			out = append(out, e.Key)
		}
		return strings.Join(out, " ")
	}
	var twenty []string
	for i := 1; i <= 20; i++ {
		twenty = append(twenty, fmt.Sprintf("key%d", i))
	}
	assert.Equal(t, "key1 key2 key5 key6 key3 key4 key9 key7 key8 key11 key10 key20 key15 key14 key13 key12 key19 key18 key17 key16",
		order(JavaDefaultCapacity, twenty...))
	assert.Equal(t, "Aa BB x AaAa BBBB AaBB", order(2, "Aa", "BB", "x", "AaAa", "BBBB", "AaBB"))
	assert.Equal(t, ccstr.FromText("größe küche z"),
		order(JavaDefaultCapacity, ccstr.FromText("größe"), ccstr.FromText("küche"), "z"))
	assert.Equal(t, "sec wday min month hour year isdst yday day",
		order(9, "year", "month", "day", "hour", "min", "sec", "wday", "yday", "isdst"))
}

// The orders Java 21's ConcurrentHashMap iterated the same keys in, put in the same order:
// a cable's names, keys of one hash, a resize (20 keys, and 12, where a HashMap of 16 has
// not grown), and a map that grew and lost keys again.
func TestConcurrentMapOrderIsJavas(t *testing.T) {
	order := func(peak int, keys ...string) string { return strings.Join(ConcurrentMapKeys(peak, keys...), " ") }
	assert.Equal(t, "modem_9 printer_0 monitor_1 monitor_0 drive_0",
		order(5, "monitor_0", "monitor_1", "printer_0", "drive_0", "modem_9"))
	assert.Equal(t, "Aa BB x AaAa BBBB AaBB", order(6, "Aa", "BB", "x", "AaAa", "BBBB", "AaBB"))
	var twenty, twelve []string
	for i := 1; i <= 20; i++ {
		twenty = append(twenty, fmt.Sprintf("key%d", i))
	}
	for i := range 12 {
		twelve = append(twelve, fmt.Sprintf("monitor_%d", i))
	}
	assert.Equal(t, "key1 key2 key5 key6 key3 key4 key9 key7 key8 key11 key10 key20 key15 key14 key13 key12 key19 key18 key17 key16",
		order(20, twenty...))
	assert.Equal(t, "monitor_10 monitor_11 monitor_9 monitor_7 monitor_8 monitor_5 monitor_6 monitor_3 monitor_4 monitor_1 monitor_2 monitor_0",
		order(12, twelve...))
	assert.Equal(t, "monitor_10 monitor_9 monitor_7 monitor_8 monitor_5 monitor_6 monitor_3 monitor_4 monitor_1 monitor_2 monitor_0",
		order(11, twelve[:11]...))
	assert.Equal(t, "monitor_1 monitor_2 monitor_0", order(12, twelve[:3]...), "grown to 12, then 3 left")
}

// The orders Java 21's HashMap iterated keys of other types in, put in the order given, as
// CC's toObject fills one from a Lua table: whole numbers 1 to n (a bucket's ninth key grows
// a small table), and a mix of numbers, strings and booleans.
func TestJavaHashMapOrderIsJavas(t *testing.T) {
	numbers := func(n int) string {
		hashes := make([]int32, n)
		for i := range hashes {
			hashes[i] = JavaDoubleHash(float64(i + 1))
		}
		var out []string
		for _, at := range JavaHashMapOrder(JavaDefaultCapacity, hashes) {
			out = append(out, fmt.Sprint(at+1))
		}
		return strings.Join(out, " ")
	}
	assert.Equal(t, "1 2 4 8 9 5 10 3 6 7", numbers(10))
	assert.Equal(t, "2 8 9 10 11 3 12 13 14 15 1 4 16 17 18 19 5 20 6 7", numbers(20))
	sixty := make([]string, 0, 60)
	for i := 2; i <= 60; i++ {
		sixty = append(sixty, fmt.Sprint(i))
	}
	assert.Equal(t, strings.Join(append(sixty, "1"), " "), numbers(60))

	keys := []any{1.0, 2.0, 3.0, "nMessageID", "nRecipient", "nSender", "message", "sProtocol", "sType", "sHostname", true, false, 1.5, -2.0}
	hashes := make([]int32, len(keys))
	for i, k := range keys {
		switch k := k.(type) {
		case float64:
			hashes[i] = JavaDoubleHash(k)
		case string:
			hashes[i] = JavaStringHash(k)
		case bool:
			hashes[i] = JavaBooleanHash(k)
		}
	}
	var out []string
	for _, at := range JavaHashMapOrder(JavaDefaultCapacity, hashes) {
		out = append(out, fmt.Sprint(keys[at]))
	}
	assert.Equal(t, "2 -2 3 nRecipient sProtocol message true 1 nSender sType false 1.5 nMessageID sHostname", strings.Join(out, " "))
}
