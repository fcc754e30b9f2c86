package jsonscan_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/jsonscan"
)

// Elements yields what encoding/json decodes an array into, element by element ([]json.RawMessage),
// for every valid sample as an element (strings holding brackets and escaped quotes, nested
// containers, numbers, literals, whitespace around each), and nothing for a text that is no array.
func TestElementsAreEncodingJSONsElements(t *testing.T) {
	for _, s := range samples {
		if !json.Valid([]byte(s)) {
			continue
		}
		for _, list := range []string{"[" + s + "]", "[ " + s + " ,\n" + s + "\t, 0 ,[\"]\",{\"}\":\"\\\"[\"}]," + s + " ]"} {
			var want []json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(list), &want), list)
			got := slices.Collect(jsonscan.Elements([]byte(list)))
			require.Len(t, got, len(want), list)
			for i := range want {
				assert.JSONEq(t, string(want[i]), string(got[i]), list)
			}
		}
	}
	for _, notArray := range []string{`{}`, `{"a":[1,2]}`, `"[1,2]"`, `0`, `null`, ` `} {
		assert.Empty(t, slices.Collect(jsonscan.Elements([]byte(notArray))), notArray)
	}
	assert.Empty(t, slices.Collect(jsonscan.Elements([]byte(` [ ] `))))
}
