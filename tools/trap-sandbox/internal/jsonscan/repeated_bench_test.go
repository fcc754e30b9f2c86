package jsonscan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"trap-sandbox/internal/jsonscan"
)

// hostileBodies are bodies of about 1 MiB (the largest a JSON route takes) shaped to make the
// scan for a repeated key slow: one object of as many keys as fit, folded and not; objects of
// 17 keys each (each past the keys compared one by one); keys alike but for their last
// character; keys each with an escape (decoded one by one); nesting as deep as allowed.
func hostileBodies() map[string][]byte {
	const size = 1 << 20
	object := func(key func(i int) string) []byte {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; b.Len() < size-64; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q:0", key(i))
		}
		b.WriteString("}")
		return []byte(b.String())
	}
	var small strings.Builder
	small.WriteString("[")
	for i := 0; small.Len() < size-256; i++ {
		if i > 0 {
			small.WriteString(",")
		}
		small.WriteString("{")
		for k := range 17 {
			if k > 0 {
				small.WriteString(",")
			}
			fmt.Fprintf(&small, `"k%d":%d`, k, i)
		}
		small.WriteString("}")
	}
	small.WriteString("]")
	deep := strings.Repeat(`{"a":`, jsonscan.MaxDepth-1) + "1" + strings.Repeat("}", jsonscan.MaxDepth-1)
	alike := strings.Repeat("x", 200)
	return map[string][]byte{
		"many keys":        object(func(i int) string { return fmt.Sprintf("k%d", i) }),
		"many Kelvin keys": object(func(i int) string { return fmt.Sprintf("\u212a%d", i) }),
		"objects of 17":    []byte(small.String()),
		"keys alike":       object(func(i int) string { return alike + fmt.Sprint(i) }),
		"escaped keys":     []byte(strings.ReplaceAll(string(object(func(i int) string { return fmt.Sprintf("k%d", i) })), `"k`, `"\u006b`)),
		"deep":             []byte(deep),
	}
}

// BenchmarkRepeatedKeyOfHostileBodies: how long the scan takes for each hostileBodies, folded
// throughout (as DecodeBody scans) and not (as a /requests payload is).
func BenchmarkRepeatedKeyOfHostileBodies(b *testing.B) {
	for name, body := range hostileBodies() {
		if !jsonscan.Valid(body) {
			b.Fatalf("%s is not valid JSON", name)
		}
		for _, foldDepth := range []int{jsonscan.MaxDepth, 1} {
			b.Run(fmt.Sprintf("%s/fold %d", name, foldDepth), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if _, found := jsonscan.RepeatedKey(body, foldDepth); found {
						b.Fatal("found a repeat")
					}
				}
			})
		}
	}
}

// BenchmarkUnmarshalOfHostileBodies is encoding/json's decoding of the same bodies into any,
// for scale: the scan should cost no more than reading the body once.
func BenchmarkUnmarshalOfHostileBodies(b *testing.B) {
	for name, body := range hostileBodies() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v any
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
