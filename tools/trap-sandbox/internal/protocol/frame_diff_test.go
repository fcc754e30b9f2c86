package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests here hold DecodeFrame and EncodeFrame to the behaviour of the implementations they
// replaced (reference_test.go): same frames, same bytes, same errors.

// decodeSeeds are FuzzDecodeFrame's seeds plus frames that poke at the top-level walk.
var decodeSeeds = []string{
	`{"event":"computer_request","traposSenderId":"7:","messageId":"m1","type":"hello","payload":{"traposId":"7:","secret":"s"}}`,
	`{"event":"computer_request","traposSenderId":"7:","messageId":"m1","type":"probe_gateway","payload":[]}`,
	`{"event":"computer_response","traposSenderId":"7:a","messageId":"g1","type":"ping","ok":true,"payload":{"traposId":"7:a"}}`,
	`{"event":"computer_response","messageId":"g1","ok":false,"error":{"code":"unknown_type","message":"x"}}`,
	`{"event":"computer_response","messageId":"g1","ok":false,"error":"boom"}`,
	`{"event":"gateway_request","traposReceiverId":"7:","messageId":"g","type":"ping","payload":null}`,
	`{"event":"unknown","messageId":"m"}`,
	`{"messageId":"a\u00C3b","event":"computer_request","payload":"str"}`,
	`null`, `[]`, `{`, ``, `{"event":1}`,
	// Duplicate keys: the last one wins, whatever the earlier ones held.
	`{"event":1,"event":"computer_request","messageId":"a","messageId":"b","payload":{"x":1},"payload":[]}`,
	`{"event":"computer_request","messageId":"m","type":"a","type":7}`,
	`{"event":"computer_response","messageId":"m","ok":"yes","ok":true}`,
	// Keys match exactly, after their escapes are decoded.
	`{"Event":"computer_request","messageId":"m"}`,
	`{"event":"computer_request","MessageId":"m"}`,
	`{"\u0065vent":"computer_request","message\u0049d":"m","ty\u0070e":"t","\u0070ayload":{"a":1}}`,
	`{"event":"computer_request","messageId":"m","event\u0000":"x","ev\u00e9nt":"y"}`,
	"{\"event\":\"computer_request\",\"messageId\":\"m\",\"ev\xffent\":\"x\",\"\xff\":1}",
	// Strings with escapes or invalid UTF-8.
	`{"event":"\u0063omputer_request","messageId":"\ud83d\ude00\ud800x\/\"\\\n","type":"\u2028"}`,
	"{\"event\":\"computer_request\",\"messageId\":\"a\xffb\xc3\",\"type\":\"\xed\xa0\x80\",\"traposSenderId\":\"\xef\xbf\xbd\"}",
	"{\"event\":\"computer_request\xff\",\"messageId\":\"m\"}",
	`{"event":"computer_request ","messageId":"m"}`,
	`{"event":"","messageId":"m"}`,
	// Whitespace everywhere.
	" \t\r\n{ \"event\" :\n\"computer_response\" , \"messageId\"\t:\t\"m\" ,\"ok\" : true , \"payload\" : { \"a\" : [ 1 , 2 ] } } \n",
	"{\"event\":\"computer_request\",\"messageId\":\"m\",\"payload\":\r\n\t[ ] }",
	"{\"event\":\"computer_response\",\"messageId\":\"m\",\"ok\":true\n,\"payload\":{}\r}",
	"{\"event\":\"computer_response\",\"messageId\":\"m\",\"payload\":12\t,\"ok\":false\r\n}",
	`{ }`,
	// Payloads with brackets and quotes inside strings, nesting, other types.
	`{"event":"computer_request","messageId":"m","payload":{"a":"}]{[\"","b":[{"c":"\\"},{"d":[[]]}],"e":{}}}`,
	`{"payload":{"k":"\"}","l":"\\\\"},"event":"gateway_request","messageId":"m"}`,
	`{"event":"computer_request","messageId":"m","payload":[{"a":1}]}`,
	`{"event":"computer_request","messageId":"m","payload":-1.5e+3}`,
	`{"event":"computer_request","messageId":"m","payload":false}`,
	`{"event":"computer_request","messageId":"m","payload":"{}"}`,
	// Null and wrongly typed fields.
	`{"event":null,"messageId":"m"}`,
	`{"event":"computer_request","messageId":"m","type":null,"traposSenderId":null,"traposReceiverId":null,"payload":null}`,
	`{"event":"computer_response","messageId":"m","ok":null,"error":null}`,
	`{"event":"computer_request","messageId":1e3}`,
	`{"event":"computer_request","messageId":"m","traposReceiverId":true}`,
	`{"event":"computer_request","messageId":"m","traposSenderId":[]}`,
	`{"event":"computer_response","messageId":"m","ok":"true"}`,
	`{"event":"computer_response","messageId":"m","ok":1}`,
	`{"event":"gateway_response","messageId":"m","ok":false,"error":{"CODE":"timeout","Message":"late"}}`,
	`{"event":"gateway_response","messageId":"m","ok":false,"error":[1]}`,
	`{"event":"gateway_response","messageId":"m","ok":false,"error":{"code":"a","code":"b","message":null}}`,
	`{"event":"gateway_request","messageId":"m","ok":"x","error":7}`,
	// Not a frame at all.
	`{"event":"computer_request","messageId":"m"} x`,
	`{"event":"computer_request","messageId":"m",}`,
	`{"event":"computer_request","messageId":"m\u12"}`,
	"{\"event\":\"computer_request\",\"messageId\":\"m\x01\"}",
	`true`, `3`, `"x"`, ` `, `{"a":1}{`,
	// Nesting at, and past, encoding/json's depth limit.
	`{"event":"computer_request","messageId":"m","payload":{"a":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`,
	`{"event":"computer_request","messageId":"m","payload":{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}}`,
}

func FuzzDecodeFrameMatchesReference(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := referenceDecodeFrame(data)
		// Decode a copy and then spoil it: the frame must not share memory with the input.
		input := bytes.Clone(data)
		got, gotErr := DecodeFrame(input)
		for i := range input {
			input[i] = '#'
		}
		requireSameError(t, wantErr, gotErr)
		requireSameFrame(t, want, got)
		if wantErr != nil {
			return
		}
		// A decoded frame also encodes the same way (the frames CC sends back are like this).
		wantOut, wantErr := referenceEncodeFrame(want)
		gotOut, gotErr := EncodeFrame(want)
		requireSameError(t, wantErr, gotErr)
		require.Equal(t, string(wantOut), string(gotOut))
	})
}

func FuzzEncodeFrameMatchesReference(f *testing.F) {
	type seed struct {
		event                uint8
		sender, receiver, id string
		rawID                []byte
		typ                  string
		ok                   bool
		payload              []byte
		hasError             bool
		code, message        string
	}
	seeds := []seed{
		{event: 0, sender: "7:kitchen", id: "3f0c9a0e", typ: "probe_gateway", payload: []byte(`{}`)},
		{event: 1, sender: "7:", id: "g1", typ: "ping", ok: true, payload: []byte(`{"traposId":"7:a"}`)},
		{event: 3, receiver: "7:", id: "m", rawID: []byte(`"m"`), typ: "hello", ok: true, payload: []byte(` { "a" : [ 1 , "x y" ] } `)},
		{event: 3, receiver: "", id: "m1", typ: "x", hasError: true, code: "unknown_type", message: `no handler for "x"`},
		{event: 3, id: "m1", typ: "x"},
		{event: 2, receiver: "<&>\u2028\u2029", id: "<a&b>\u2028", typ: "a<b>&\x00\x1f\x7f\b\f\n\r\t\"\\", payload: []byte(`{"k":"<&>\u2028"}`)},
		{event: 0, sender: "a\xffb\xc3", id: "\xed\xa0\x80", typ: "\xef\xbf\xbd\xe2\x80\xa8", payload: []byte("{\"k\":\"\xff\xe2\x80\xa8\"}")},
		{event: 1, hasError: true, code: "a\nb", message: "\xff<>"},
		{event: 2, id: "m", payload: []byte(`{`)},
		{event: 3, id: "m", payload: []byte(`nope`), hasError: true},
		{event: 3, id: "m", ok: true, payload: []byte(`[]`)},
		{event: 2, id: "m", payload: []byte(" \t\n")},
		{event: 2, id: "m", rawID: []byte(`"unterminated`)},
		{event: 2, id: "m", rawID: []byte(`  `), payload: []byte(`{`)},
		{event: 2, id: "m", rawID: []byte(` {"a" : 1} `)},
		{event: 2, id: "m", rawID: []byte(`1 2`)},
		{event: 2, id: "m", rawID: []byte(`"a"b"`)},
		{event: 2, id: "m", rawID: []byte(`"`)},
		{event: 2, id: "m", rawID: []byte(`""`)},
		{event: 2, id: "m", rawID: []byte("\"\x01\"")},
		{event: 2, id: "m", rawID: []byte("\"\xff<\u2028\"")},
		{event: 2, id: "m", rawID: []byte(`"x\u00e9\/y"`)},
		{event: 4, id: "m"},
	}
	for _, s := range seeds {
		f.Add(s.event, s.sender, s.receiver, s.id, s.rawID, s.typ, s.ok, s.payload, s.hasError, s.code, s.message)
	}
	f.Fuzz(func(t *testing.T, event uint8, sender, receiver, id string, rawID []byte, typ string, ok bool,
		payload []byte, hasError bool, code, message string) {
		events := []Event{EventComputerRequest, EventComputerResponse, EventGatewayRequest, EventGatewayResponse, "nope"}
		frame := Frame{Event: events[int(event)%len(events)], TraposSenderID: sender, TraposReceiverID: receiver,
			MessageID: id, RawMessageID: rawID, Type: typ, OK: ok, Payload: payload}
		if hasError {
			frame.Error = &Error{Code: Code(code), Message: message}
		}
		want, wantErr := referenceEncodeFrame(frame)
		got, gotErr := EncodeFrame(frame)
		requireSameError(t, wantErr, gotErr)
		require.Equal(t, string(want), string(got))
	})
}

// TestEncodeFrameMatchesReferenceAtSizeLimit checks frames around MaxFrameBytes, with strings
// that grow when escaped, which the fuzzer is unlikely to build.
func TestEncodeFrameMatchesReferenceAtSizeLimit(t *testing.T) {
	base := Frame{Event: EventGatewayRequest, MessageID: "g<&>", Type: "t\n", Payload: json.RawMessage(`{"b":""}`)}
	empty, err := referenceEncodeFrame(base)
	require.NoError(t, err)
	for _, extra := range []int{-7, -6, -1, 0, 1, 2, 6} {
		fill := MaxFrameBytes - len(empty) + extra
		for _, frame := range []Frame{
			{Event: base.Event, MessageID: base.MessageID, Type: base.Type, Payload: json.RawMessage(`{"b":"` + strings.Repeat("x", fill) + `"}`)},
			{Event: base.Event, MessageID: base.MessageID, Type: base.Type + strings.Repeat("\x01", fill/6), Payload: base.Payload},
			{Event: base.Event, MessageID: base.MessageID + strings.Repeat("<", fill/6), Type: base.Type, Payload: base.Payload},
			{Event: EventGatewayResponse, MessageID: "g", Type: "t", Error: &Error{Code: "c", Message: strings.Repeat("\"", fill/2)}},
		} {
			want, wantErr := referenceEncodeFrame(frame)
			got, gotErr := EncodeFrame(frame)
			requireSameError(t, wantErr, gotErr)
			require.Equal(t, string(want), string(got))
		}
	}
}

// requireSameError fails unless got is the error want is: both nil, or the same message and
// the same kind.
func requireSameError(t *testing.T, want, got error) {
	t.Helper()
	if want == nil || got == nil {
		require.Equal(t, want, got)
		return
	}
	require.Equal(t, want.Error(), got.Error())
	for _, kind := range []error{ErrMalformed, ErrUnknownEvent, ErrFrameTooLarge} {
		require.Equal(t, errors.Is(want, kind), errors.Is(got, kind), "errors.Is %v", kind)
	}
	var wantMarshaler, gotMarshaler *json.MarshalerError
	require.Equal(t, errors.As(want, &wantMarshaler), errors.As(got, &gotMarshaler))
	var wantSyntax, gotSyntax *json.SyntaxError
	require.Equal(t, errors.As(want, &wantSyntax), errors.As(got, &gotSyntax))
	if wantSyntax != nil {
		require.Equal(t, wantSyntax.Offset, gotSyntax.Offset)
	}
}

// requireSameFrame fails unless got equals want, down to nil versus empty slices, and shares
// the EmptyPayload slice exactly when want does.
func requireSameFrame(t *testing.T, want, got Frame) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		assert.Equal(t, want, got) // for a readable diff
		t.Fatalf("frames differ: %#v vs %#v", want, got)
	}
	require.Equal(t, isEmptyPayload(want.Payload), isEmptyPayload(got.Payload), "payload is EmptyPayload")
}

func isEmptyPayload(p json.RawMessage) bool {
	return len(p) > 0 && &p[0] == &EmptyPayload[0]
}
