package protocol

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByteRuleRoundTripsAll256Values(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	wire := WireOfBytes(all)
	back, err := BytesOfWire(wire)
	require.NoError(t, err)
	assert.Equal(t, all, back)
	assert.Equal(t, 256, WireLen(wire), "one byte per code point, though U+0080-U+00FF take two in UTF-8")

	// Through JSON as Go encodes it (raw UTF-8 above U+007F, \u00XX for controls and <>&).
	encoded, err := json.Marshal(wire)
	require.NoError(t, err)
	var decoded string
	require.NoError(t, json.Unmarshal(encoded, &decoded))
	back, err = BytesOfWire(decoded)
	require.NoError(t, err)
	assert.Equal(t, all, back)
	assert.LessOrEqual(t, len(encoded), 6*len(all)+2, "no byte takes more than six on the wire")
}

func TestByteRuleReadsCCsEscapes(t *testing.T) {
	// CC's serializeJSON writes every byte >= 0x7F as its own \u00XX (uppercase hex).
	for b := 0; b < 256; b++ {
		var s string
		require.NoError(t, json.Unmarshal([]byte(`"\u00`+string("0123456789ABCDEF"[b>>4])+string("0123456789ABCDEF"[b&15])+`"`), &s))
		got, err := BytesOfWire(s)
		require.NoError(t, err)
		assert.Equal(t, []byte{byte(b)}, got)
	}
}

func TestByteRuleRefusesHigherCodePoints(t *testing.T) {
	_, err := BytesOfWire("ok\u0100")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "U+0100")
}
