package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"

	"trap-sandbox/internal/jsonscan"
	"trap-sandbox/internal/protocol"
)

// BodyError says what is wrong with a JSON request body that encoding/json refused, in the
// API's terms: the field and what it must be, an empty or cut-off body, where the syntax
// breaks, a field the route does not take; never the Go type the body is decoded into
// ("cannot unmarshal number 1.5 into Go struct field RequestBody.timeoutMs of type int64").
// It is the one wording of every route's body errors. shape shows the body the route takes;
// wants says what a field must be where its JSON kind alone says too little (e.g. "timeoutMs":
// "a whole number of milliseconds between 1 and 60000").
func BodyError(err error, shape string, wants map[string]string) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		if te.Field == "" {
			return fmt.Sprintf("the body must be a JSON object %s (got a JSON %s)", shape, te.Value)
		}
		want, ok := wants[te.Field]
		if !ok {
			want = jsonKind(te.Type)
		}
		return FieldError(te.Field, want, withArticle(te.Value))
	}
	switch {
	case errors.Is(err, io.EOF):
		return "the body is empty: send a JSON object " + shape
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON does: send a whole JSON object " + shape
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Sprintf("the body is not valid JSON (%s, at byte %d): send a JSON object %s", se.Error(), se.Offset, shape)
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Sprintf("the body has a field the route does not take, %s: send a JSON object %s", field, shape)
	}
	return fmt.Sprintf("the body must be a JSON object %s: %v", shape, err)
}

// ReadBodyError is the message for a request body that could not be read (its limit aside).
// One that did not arrive within the body deadline (bounded) says so and what to do, not the
// socket's "read tcp 127.0.0.1:4444->…: i/o timeout": a big file PUT over a slow link meets it.
func ReadBodyError(err error) string {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Sprintf("the body did not arrive within %s, the most a request body may take (docs/protocol.md): "+
			"send it over a faster link, or a smaller one", DefaultBodyReadTimeout)
	}
	return "cannot read the body: " + err.Error()
}

// DecodeBody reads r's JSON body into v (a field v does not have is refused), reading at most
// limit bytes: the one body reader of the API's JSON routes. Its error is a *BodyTooLarge for
// a body over limit (WriteBodyTooLarge's 413), else says what is wrong with the body
// (BodyError). The connection of an error answer to a request with a body is closed anyway
// (bounded), so the reader needs no ResponseWriter.
func DecodeBody(r *http.Request, v any, limit int64, shape string, wants map[string]string) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, limit))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		err = RestOfBody(dec)
		if err != nil && errors.Is(err, errMoreThanOneValue) {
			return fmt.Errorf("%w: send one JSON object %s", err, shape)
		}
	}
	if err == nil && string(raw) == "null" {
		// encoding/json takes null into a struct as nothing at all: the route would then
		// refuse its first missing field, not the body.
		return fmt.Errorf("the body must be a JSON object %s (got null)", shape)
	}
	if err == nil {
		if rep, repeated := jsonscan.RepeatedKey(raw, jsonscan.MaxDepth); repeated {
			return errors.New(RepeatedKeyError(rep))
		}
		fields := json.NewDecoder(bytes.NewReader(raw))
		fields.DisallowUnknownFields()
		err = fields.Decode(v)
	}
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &BodyTooLarge{Limit: limit}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errors.New(ReadBodyError(err))
		}
		return errors.New(BodyError(err, shape, wants))
	}
	return nil
}

// maxNoFieldsBody bounds the body of a route that takes no fields (NoFieldsBody): {} and room
// for white space.
const maxNoFieldsBody = 4 << 10

// NoFieldsBody reads the body of a route that takes none, a revocation's ({} or nothing): any
// field is refused, as DecodeBody refuses one a route does not take ({"dryRun":true} revoked
// all the same), and so is anything but an object. Its error is DecodeBody's.
func NoFieldsBody(r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxNoFieldsBody))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &BodyTooLarge{Limit: maxNoFieldsBody}
	}
	if err != nil {
		return errors.New(ReadBodyError(err))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return DecodeBody(r, &struct{}{}, maxNoFieldsBody, "{}", nil)
}

// WriteBodyError answers a body DecodeBody or NoFieldsBody refused: 413 for one over its
// limit (WriteBodyTooLarge), else 400 bad_payload with what is wrong with it.
func WriteBodyError(w http.ResponseWriter, err error) {
	if tooLarge, ok := errors.AsType[*BodyTooLarge](err); ok {
		WriteBodyTooLarge(w, tooLarge)
		return
	}
	WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, err.Error())
}

// RepeatedKeyError is the one wording of a body that names a key twice in one object
// (jsonscan.RepeatedKey): refused, since encoding/json takes the last of the two and another
// reader of the same body (a proxy, a log) may take the first.
func RepeatedKeyError(r jsonscan.Repeated) string {
	where := "the body"
	if r.Place != "" {
		where = "the body's " + r.Place
	}
	keys := fmt.Sprintf("the key %q twice", r.First)
	if r.First != r.Second {
		keys = fmt.Sprintf("the keys %q and %q, which the gateway reads as one (it ignores the case of a field's name)", r.First, r.Second)
	}
	return fmt.Sprintf("%s names %s: send each key once (JSON readers differ on which of two counts)", where, keys)
}

// errMoreThanOneValue is RestOfBody's refusal.
var errMoreThanOneValue = errors.New("the body must hold exactly one JSON object")

// RestOfBody checks what follows the JSON value dec has just decoded: nothing may but white
// space ({"type":"ping"}} or a second object is refused, where dec.More would take the first).
// Its error says so, or is the reading's (a *http.MaxBytesError past a limit).
func RestOfBody(dec *json.Decoder) error {
	_, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		if _, ok := errors.AsType[*json.SyntaxError](err); !ok {
			return err
		}
	}
	return errMoreThanOneValue
}

// BodyTooLarge is a request body over its route's limit; a body reader answers it with
// WriteBodyTooLarge.
type BodyTooLarge struct {
	Limit int64  // the most the route reads, in bytes
	Why   string // what the limit stands for, if anything ("a frame may not exceed …")
}

func (e *BodyTooLarge) Error() string {
	msg := fmt.Sprintf("the body is larger than %d bytes, the most this route takes", e.Limit)
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg + ": send a smaller one"
}

// WriteBodyTooLarge answers a body over its route's limit: 413, bad_payload, with the limit.
func WriteBodyTooLarge(w http.ResponseWriter, e *BodyTooLarge) {
	WriteError(w, http.StatusRequestEntityTooLarge, protocol.CodeBadPayload, e.Error())
}

// FieldError is the one wording of a body field the route cannot use: what it must be and
// what it got ("timeoutMs" must be a whole number of milliseconds between 1 and 60000 (got
// 0)), whether its JSON kind is wrong (BodyError) or its value (a route's own check).
func FieldError(field, want, got string) string {
	return fmt.Sprintf("%q must be %s (got %s)", field, want, got)
}

// FieldTypeError words a JSON value of the wrong type as BodyError words a body's field
// ("\"pocket\" must be true or false (got a string)"), for any JSON the host reads, a
// computer's answer too; ok is false for another error, or one naming no field.
func FieldTypeError(err error) (msg string, ok bool) {
	te, ok := errors.AsType[*json.UnmarshalTypeError](err)
	if !ok || te.Field == "" {
		return "", false
	}
	return FieldError(te.Field, jsonKind(te.Type), withArticle(te.Value)), true
}

// jsonKind names the JSON value a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "an object"
}

// withArticle is a JSON value's kind as encoding/json names it ("number 1.5", "object"), with
// its article.
func withArticle(kind string) string {
	if strings.HasPrefix(kind, "a") || strings.HasPrefix(kind, "o") {
		return "an " + kind
	}
	return "a " + kind
}
