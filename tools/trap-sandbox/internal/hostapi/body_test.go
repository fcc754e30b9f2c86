package hostapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plainBodies are bodies parsePlainBody reads itself, and some it leaves to json.Unmarshal.
var plainBodies = []string{
	`{"type":"ping","payload":{},"timeoutMs":10000}`,
	` { "type" : "run" , "payload" : { "code" : "print(\"hi\")", "n": [1, 2.5, {"x": null}] } } `,
	`{"payload":null,"type":"ping","timeoutMs":null}`,
	`{"type":"ping","payload":[],"timeoutMs":-0}`,
	`{}`,
	`{"type":"é"}`,
	// Left to json.Unmarshal:
	`{"type":"p\u0069ng"}`,
	`{"TYPE":"ping"}`,
	`{"type":"ping","type":"run"}`,
	`{"type":"ping","timeoutMs":1.5}`,
	`{"type":"ping","timeoutMs":1e3}`,
	`{"type":"ping","timeoutMs":99999999999999999999}`,
	`{"type":null}`,
	`{"type":7}`,
	`{"type":"ping","other":1}`,
	"{\"type\":\"\xff\"}",
	`[]`,
	`"ping"`,
	`{"type":"ping"} {}`,
	`{"type":"ping"`,
	``,
}

func TestAPlainBodyIsReadWithoutReflection(t *testing.T) {
	req, ok := parsePlainBody([]byte(`{"type":"ping","payload":{"a":[1]},"timeoutMs":250}`))
	require.True(t, ok)
	assert.Equal(t, "ping", req.Type)
	assert.JSONEq(t, `{"a":[1]}`, string(req.Payload))
	require.NotNil(t, req.TimeoutMs)
	assert.Equal(t, int64(250), *req.TimeoutMs)
	for _, body := range []string{`{"TYPE":"ping"}`, `{"type":"ping","type":"run"}`, `{"type":"ping","timeoutMs":1.5}`} {
		_, ok := parsePlainBody([]byte(body))
		assert.False(t, ok, "%s is json.Unmarshal's to read", body)
	}
}

// A /requests body that names a key twice is refused before anything is sent: read with the
// last value, {"type":"ping","TYPE":"lua.exec"} ran Lua where a proxy or a log reading its
// first "type" saw a ping. The body's own fields fold case, as encoding/json reads them; the
// payload's keys, a Lua table's, do not ("a" and "A" are two keys there).
func TestARequestBodyNamingAKeyTwiceIsRefused(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"ping","type":"lua.exec"}`:                                        `the body names the key "type" twice`,
		`{"type":"lua.exec","TYPE":"ping"}`:                                        `the body names the keys "type" and "TYPE", which the gateway reads as one`,
		`{"type":"lua.exec","payload":{"code":"return 1","code":"return 2"}}`:      `the body's payload names the key "code" twice`,
		`{"type":"lua.exec","payload":{"code":"return 1","cod\u0065":"return 2"}}`: `the body's payload names the key "code" twice`,
	} {
		_, _, msg := parseRequestBody([]byte(body))
		assert.Contains(t, msg, want, "%s", body)
	}
	req, _, msg := parseRequestBody([]byte(`{"type":"lua.exec","payload":{"a":1,"A":2}}`))
	assert.Empty(t, msg)
	assert.JSONEq(t, `{"a":1,"A":2}`, string(req.Payload))
}

// What parsePlainBody reads, it reads as json.Unmarshal does.
func FuzzPlainBodyIsUnmarshals(f *testing.F) {
	for _, b := range plainBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := parsePlainBody(body)
		if !ok {
			return
		}
		var want RequestBody
		require.NoError(t, json.Unmarshal(body, &want), "%q", body)
		assert.Equal(t, want.Type, got.Type, "%q", body)
		assert.Equal(t, string(want.Payload), string(got.Payload), "%q", body)
		assert.Equal(t, want.Payload == nil, got.Payload == nil, "%q", body)
		assert.Equal(t, want.TimeoutMs == nil, got.TimeoutMs == nil, "%q", body)
		if want.TimeoutMs != nil && got.TimeoutMs != nil {
			assert.Equal(t, *want.TimeoutMs, *got.TimeoutMs, "%q", body)
		}
	})
}
