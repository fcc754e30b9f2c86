package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// Keys count as one exactly when encoding/json fills one field from either (bytes.EqualFold's
// simple case folding), in an object of a few keys and in one of many (past the keys it compares
// one by one) alike: ı and İ are not i (ToLower(ToUpper(…)) took them for it past 16 keys, and
// refused {…,"ıd":1,"id":2}), K the Kelvin sign is k, ſ is s, and two bytes that are not UTF-8
// are one key, as U+FFFD.
func TestRepeatedKeyFoldsAsEncodingJSONInObjectsOfAnySize(t *testing.T) {
	var id struct {
		ID int `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"ıd":1,"İd":2}`), &id))
	require.Zero(t, id.ID, "encoding/json fills no field id from ıd or İd")

	many := strings.Builder{}
	for i := range 20 {
		fmt.Fprintf(&many, `"filler%d":0,`, i)
	}
	check := func(a, b string) {
		t.Helper()
		want := bytes.EqualFold([]byte(a), []byte(b))
		if fills, ok := jsonFillsFieldNamed(a, b); ok {
			want = fills // encoding/json itself, where a can name a field
		}
		for _, body := range []string{
			`{"` + a + `":1,"` + b + `":2}`,
			`{` + many.String() + `"` + a + `":1,"` + b + `":2}`,
		} {
			_, found := jsonscan.RepeatedKey([]byte(body), 1)
			if found != want {
				t.Errorf("%q and %q (%U, %U) in %d bytes: found %v, read as one by encoding/json %v", a, b, []rune(a), []rune(b), len(body), found, want)
			}
		}
	}
	check("id", "ıd")
	check("id", "İd")
	check("kind", "\u212aind")
	check("\xff", "\xfe")
	check("\xff", "\ufffd")
	for r := rune(0x80); r <= 0x1ffff; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, other := range []rune{unicode.SimpleFold(r), unicode.ToLower(unicode.ToUpper(r)), unicode.ToUpper(r), unicode.ToLower(r)} {
			if other != r {
				check(string(r), string(other))
			}
		}
	}
}

// jsonFillsFieldNamed reports whether encoding/json fills a struct's field named name (its json
// tag) from the key key; ok is false when name cannot be a field's (encoding/json does not
// fill it from name itself).
func jsonFillsFieldNamed(name, key string) (fills, ok bool) {
	fields := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:"` + name + `"`)}})
	filled := func(key string) bool {
		v := reflect.New(fields)
		text, _ := json.Marshal(map[string]int{key: 1})
		return json.Unmarshal(text, v.Interface()) == nil && v.Elem().Field(0).Int() == 1
	}
	if !utf8.ValidString(name) || !filled(name) {
		return false, false
	}
	return filled(key), true
}
