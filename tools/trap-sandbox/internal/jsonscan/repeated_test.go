package jsonscan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/jsonscan"
)

// A key named twice in one object is found, with its object's place; case counts only as deep
// as foldDepth says (where encoding/json fills a struct's fields, which fold it).
func TestRepeatedKeyFindsAKeyNamedTwice(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		foldDepth  int
		want       jsonscan.Repeated
		found      bool
	}{
		{"each once", `{"type":"ping","payload":{"a":1,"A":2,"b":{"a":1}},"timeoutMs":5}`, 1, jsonscan.Repeated{}, false},
		{"outermost", `{"type":"ping","type":"lua.exec"}`, 1, jsonscan.Repeated{First: "type", Second: "type"}, true},
		{"escaped", `{"type":"ping","typ\u0065":"lua.exec"}`, 1, jsonscan.Repeated{First: "type", Second: "type"}, true},
		{"case folded", `{"type":"lua.exec","TYPE":"ping"}`, 1, jsonscan.Repeated{First: "type", Second: "TYPE"}, true},
		{"kelvin sign folds to k", `{"kind":1,"\u212aind":2}`, 1, jsonscan.Repeated{First: "kind", Second: "\u212aind"}, true},
		{"case kept below foldDepth", `{"payload":{"a":1,"A":2}}`, 1, jsonscan.Repeated{}, false},
		{"case folded everywhere", `{"events":[{"type":"char"},{"text":"a","TEXT":"b"}]}`, jsonscan.MaxDepth,
			jsonscan.Repeated{Place: "events[1]", First: "text", Second: "TEXT"}, true},
		{"in the payload", `{"type":"lua.exec","payload":{"code":"return 1","code":"return 2"}}`, 1,
			jsonscan.Repeated{Place: "payload", First: "code", Second: "code"}, true},
		{"deep", ` { "payload" : { "items" : [ 1 , { "x" : [ ] , "x" : null } ] } } `, 1,
			jsonscan.Repeated{Place: "payload.items[1]", First: "x", Second: "x"}, true},
		{"not an object", `[1,"a",true,false,null,-2.5e3]`, 1, jsonscan.Repeated{}, false},
		{"empty", `{}`, 1, jsonscan.Repeated{}, false},
		{"empty keys", `{"a":[{"":1,"":2}]}`, 1, jsonscan.Repeated{Place: "a[0]", First: "", Second: ""}, true},
		{"many keys", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"K3":3}`,
			1, jsonscan.Repeated{First: "k3", Second: "K3"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found := jsonscan.RepeatedKey([]byte(tc.text), tc.foldDepth)
			assert.Equal(t, tc.found, found)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Every /requests body is scanned: the usual one costs no allocation.
func TestRepeatedKeyAllocatesNothingForAUsualBody(t *testing.T) {
	if raceDetector {
		t.Skip("sync.Pool keeps nothing for sure under -race")
	}
	body := []byte(`{"type":"lua.exec","payload":{"code":"return 1","timeoutMs":5000,"args":[1,"a",{"x":null}]},"timeoutMs":10000}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, found := jsonscan.RepeatedKey(body, 1); found {
			t.Fatal("found a repeat")
		}
	})
	assert.Zero(t, allocs)
}
