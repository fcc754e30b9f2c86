package server

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every route's body errors are worded by BodyError: the field and the JSON it needs, never
// the Go type behind it.
func TestBodyErrorSpeaksJSON(t *testing.T) {
	type body struct {
		Name  string   `json:"name"`
		Count int      `json:"count"`
		Ratio float64  `json:"ratio"`
		On    *bool    `json:"on"`
		Tags  []string `json:"tags"`
		Inner struct {
			Mode string `json:"mode"`
		} `json:"inner"`
	}
	decode := func(s string) error {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		var b body
		return dec.Decode(&b)
	}
	const shape = `{"name":...}`
	wants := map[string]string{"name": "a name of 1 to 63 letters"}
	for in, want := range map[string]string{
		`{"name":5}`:             `"name" must be a name of 1 to 63 letters (got a number)`,
		`{"count":1.5}`:          `"count" must be a whole number (got a number 1.5)`,
		`{"ratio":"x"}`:          `"ratio" must be a number (got a string)`,
		`{"on":"yes"}`:           `"on" must be true or false (got a string)`,
		`{"tags":{}}`:            `"tags" must be an array (got an object)`,
		`{"inner":[]}`:           `"inner" must be an object (got an array)`,
		`{"inner":{"mode":1}}`:   `"inner.mode" must be a string (got a number)`,
		`{"name":"a","extra":1}`: `the body has a field the route does not take, "extra": send a JSON object {"name":...}`,
		`[]`:                     `the body must be a JSON object {"name":...} (got a JSON array)`,
		``:                       `the body is empty: send a JSON object {"name":...}`,
		`{"name":`:               `the body ends before its JSON does: send a whole JSON object {"name":...}`,
	} {
		got := BodyError(decode(in), shape, wants)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "Go ", in)
	}
}

// TestDecodeBodyTakesExactlyOneObject: what follows the object is refused, not ignored (a
// stray brace, a second object), white space aside; a rest past the limit is still too large.
func TestDecodeBodyTakesExactlyOneObject(t *testing.T) {
	decode := func(s string, limit int64) error {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(s))
		var v struct {
			Name string `json:"name"`
		}
		return DecodeBody(r, &v, limit, `{"name":...}`, nil)
	}
	assert.NoError(t, decode(`{"name":"a"}`, 100))
	assert.NoError(t, decode(" {\"name\":\"a\"} \r\n", 100))
	for _, in := range []string{`{"name":"a"}}`, `{"name":"a"} {"name":"b"}`, `{"name":"a"}x`, `{"name":"a"},`} {
		assert.EqualError(t, decode(in, 100), `the body must hold exactly one JSON object: send one JSON object {"name":...}`, "%s", in)
	}
	var tooLarge *BodyTooLarge
	assert.ErrorAs(t, decode(`{"name":"a"}`+strings.Repeat(" ", 200)+`x`, 100), &tooLarge)
	// null decodes into a struct as nothing: the route refused its first field ("account name
	// \"\": use 1 to 63 characters…"), not the body.
	for _, in := range []string{"null", " \n null"} {
		assert.EqualError(t, decode(in, 100), `the body must be a JSON object {"name":...} (got null)`, "%q", in)
	}
	assert.EqualError(t, decode(`nul`, 100), `the body ends before its JSON does: send a whole JSON object {"name":...}`)
}

// A body naming a field twice was read with its last value, and one naming it in another case
// ("NAME") with whichever came last: a proxy or a log reading the first saw another request.
// Each is refused, naming the key, and so is a key named twice deeper in the body.
func TestDecodeBodyRefusesAKeyNamedTwice(t *testing.T) {
	decode := func(s string) error {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(s))
		var v struct {
			Name  string `json:"name"`
			Inner []struct {
				Mode string `json:"mode"`
			} `json:"inner"`
		}
		return DecodeBody(r, &v, 1000, `{"name":...}`, nil)
	}
	for in, want := range map[string]string{
		`{"name":"alice","name":"bob"}`:       `the body names the key "name" twice: send each key once (JSON readers differ on which of two counts)`,
		`{"name":"alice","NAME":"bob"}`:       `the body names the keys "name" and "NAME", which the gateway reads as one (it ignores the case of a field's name): send each key once (JSON readers differ on which of two counts)`,
		`{"inner":[{"mode":"a","Mode":"b"}]}`: `the body's inner[0] names the keys "mode" and "Mode", which the gateway reads as one (it ignores the case of a field's name): send each key once (JSON readers differ on which of two counts)`,
	} {
		assert.EqualError(t, decode(in), want, "%s", in)
	}
	assert.NoError(t, decode(`{"name":"alice","inner":[{"mode":"a"},{"mode":"b"}]}`))
}

// A body nested deeper than encoding/json reads (10 000 levels, a 20 KB body) is refused as
// JSON it cannot read, saying where, and reads no further: the account, link and input
// routes' one reader.
func TestDecodeBodyRefusesABodyNestedTooDeep(t *testing.T) {
	deep := `{"name":` + strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001) + `}`
	r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(deep))
	var v struct {
		Name any `json:"name"`
	}
	err := DecodeBody(r, &v, 64<<10, `{"name":...}`, nil)
	assert.EqualError(t, err, `the body is not valid JSON (invalid character '[' exceeded max depth, at byte 10008): send a JSON object {"name":...}`)
}

// A revocation's body takes no fields: {} or nothing passes, a field is refused (a revocation
// sent {"dryRun":true} revoked all the same), and so is anything but one object.
func TestNoFieldsBodyTakesNothingButAnEmptyObject(t *testing.T) {
	read := func(s string) error {
		return NoFieldsBody(httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(s)))
	}
	for _, in := range []string{"", "{}", " { } \n", "\r\n"} {
		assert.NoError(t, read(in), "%q", in)
	}
	for in, want := range map[string]string{
		`{"dryRun":true}`: `the body has a field the route does not take, "dryRun": send a JSON object {}`,
		`[]`:              `the body must be a JSON object {} (got a JSON array)`,
		`null`:            `the body must be a JSON object {} (got null)`,
		`{}{}`:            `the body must hold exactly one JSON object: send one JSON object {}`,
		`yes`:             `the body is not valid JSON (invalid character 'y' looking for beginning of value, at byte 1): send a JSON object {}`,
	} {
		assert.EqualError(t, read(in), want, "%s", in)
	}
	var tooLarge *BodyTooLarge
	assert.ErrorAs(t, read("{"+strings.Repeat(" ", 5000)+"}"), &tooLarge)
}

// heldBody is a body whose sender stopped: reading on meets the read deadline.
type heldBody struct{}

func (heldBody) Read([]byte) (int, error) {
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
}

// TestABodyPastItsDeadlineIsToldSo: a JSON body that did not arrive in time was "the body must
// be a JSON object …: read tcp …: i/o timeout", as if its JSON were wrong.
func TestABodyPastItsDeadlineIsToldSo(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/x", heldBody{})
	var v struct{}
	err := DecodeBody(r, &v, 1024, `{"name":…}`, nil)
	assert.EqualError(t, err, "the body did not arrive within 10s, the most a request body may take (docs/protocol.md): "+
		"send it over a faster link, or a smaller one")
}
