package slowhash

import (
	"bytes"
	"testing"
)

// TestSumIsFixedAndNamesItsPurpose: every replica derives the same value from the same
// secret and purpose, and another purpose gives another value.
func TestSumIsFixedAndNamesItsPurpose(t *testing.T) {
	a := Sum("minecraft2026", "purpose one", 32)
	if !bytes.Equal(a, Sum("minecraft2026", "purpose one", 32)) {
		t.Fatal("the same secret and purpose gave two values")
	}
	if bytes.Equal(a, Sum("minecraft2026", "purpose two", 32)) {
		t.Fatal("two purposes gave one value")
	}
	if len(a) != 32 {
		t.Fatalf("%d bytes, want 32", len(a))
	}
}

func BenchmarkSum(b *testing.B) {
	for range b.N {
		Sum("a password of some length", "bench", 32)
	}
}
