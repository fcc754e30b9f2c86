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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found := jsonscan.RepeatedKey([]byte(tc.text), tc.foldDepth)
			assert.Equal(t, tc.found, found)
			assert.Equal(t, tc.want, got)
		})
	}
}
