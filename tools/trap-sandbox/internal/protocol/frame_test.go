package protocol

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeFramePayloadForms(t *testing.T) {
	cases := []struct {
		name    string
		payload string // the text after "payload": ; empty means the key is absent
		want    string
	}{
		{name: "object", payload: `{"a":1,"b":[1,2]}`, want: `{"a":1,"b":[1,2]}`},
		{name: "empty object", payload: `{}`, want: `{}`},
		{name: "empty array from CC sentinel", payload: `[]`, want: `{}`},
		{name: "non-empty array", payload: `[1,2]`, want: `{}`},
		{name: "missing", payload: ``, want: `{}`},
		{name: "null", payload: `null`, want: `{}`},
		{name: "string", payload: `"str"`, want: `{}`},
		{name: "number", payload: `3`, want: `{}`},
		{name: "boolean", payload: `true`, want: `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := `{"event":"computer_request","traposSenderId":"7:","messageId":"m1","type":"ping"`
			if tc.payload != "" {
				text += `,"payload":` + tc.payload
			}
			text += `}`
			f, err := DecodeFrame([]byte(text))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(f.Payload))
			assert.Equal(t, EventComputerRequest, f.Event)
			assert.Equal(t, "7:", f.TraposSenderID)
			assert.Equal(t, "m1", f.MessageID)
			assert.Equal(t, "ping", f.Type)
		})
	}
}

func TestDecodeFrameRejects(t *testing.T) {
	cases := []struct {
		name string
		text string
		want error
	}{
		{name: "not JSON", text: `{"event":`, want: ErrMalformed},
		{name: "empty", text: ``, want: ErrMalformed},
		{name: "JSON null", text: `null`, want: ErrMalformed},
		{name: "array", text: `[]`, want: ErrMalformed},
		{name: "string", text: `"computer_request"`, want: ErrMalformed},
		{name: "no event", text: `{"messageId":"m","type":"x"}`, want: ErrMalformed},
		{name: "event not a string", text: `{"event":1,"messageId":"m"}`, want: ErrMalformed},
		{name: "unknown event", text: `{"event":"hello","messageId":"m"}`, want: ErrUnknownEvent},
		{name: "event case differs", text: `{"event":"Computer_Request","messageId":"m"}`, want: ErrUnknownEvent},
		{name: "no messageId", text: `{"event":"computer_request","type":"x"}`, want: ErrMalformed},
		{name: "null messageId", text: `{"event":"computer_request","messageId":null}`, want: ErrMalformed},
		{name: "numeric messageId", text: `{"event":"computer_request","messageId":3}`, want: ErrMalformed},
		{name: "type not a string", text: `{"event":"computer_request","messageId":"m","type":{}}`, want: ErrMalformed},
		{name: "sender not a string", text: `{"event":"computer_request","messageId":"m","traposSenderId":7}`, want: ErrMalformed},
		{name: "ok not a boolean", text: `{"event":"computer_response","messageId":"m","ok":"yes"}`, want: ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeFrame([]byte(tc.text))
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

func TestDecodeFrameResponses(t *testing.T) {
	t.Run("ok with payload", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","traposSenderId":"7:a","messageId":"g1","type":"ping","ok":true,"payload":{"traposId":"7:a"}}`))
		require.NoError(t, err)
		assert.True(t, f.OK)
		assert.Nil(t, f.Error)
		assert.JSONEq(t, `{"traposId":"7:a"}`, string(f.Payload))
	})
	t.Run("failure with error object", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","type":"x","ok":false,"error":{"code":"unknown_type","message":"no x"}}`))
		require.NoError(t, err)
		assert.False(t, f.OK)
		require.NotNil(t, f.Error)
		assert.Equal(t, &Error{Code: CodeUnknownType, Message: "no x"}, f.Error)
	})
	t.Run("failure with error as a string", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","ok":false,"error":"boom"}`))
		require.NoError(t, err)
		assert.Equal(t, &Error{Code: CodeInternal, Message: "boom"}, f.Error)
	})
	t.Run("failure without error", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","ok":false}`))
		require.NoError(t, err)
		require.NotNil(t, f.Error)
		assert.Equal(t, CodeInternal, f.Error.Code)
	})
	t.Run("missing ok counts as failure", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","payload":[]}`))
		require.NoError(t, err)
		assert.False(t, f.OK)
		assert.NotNil(t, f.Error)
	})
	t.Run("error object with a code only", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","ok":false,"error":{"code":"timeout","message":5}}`))
		require.NoError(t, err)
		assert.Equal(t, &Error{Code: CodeTimeout}, f.Error)
	})
	t.Run("error object with neither a code nor a message", func(t *testing.T) {
		for _, errorValue := range []string{`{}`, `{"code":5,"message":["x"]}`, `{"code":"","message":null}`} {
			f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","ok":false,"error":` + errorValue + `}`))
			require.NoError(t, err)
			assert.Equal(t, &Error{Code: CodeInternal, Message: "the response's error has no code (a non-empty string) and no message"}, f.Error, errorValue)
		}
	})
	t.Run("error object with a message only", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","ok":false,"error":{"message":"it broke"}}`))
		require.NoError(t, err)
		assert.Equal(t, &Error{Code: CodeInternal, Message: "it broke"}, f.Error)
	})
	t.Run("error is ignored when ok", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_response","messageId":"g1","ok":true,"error":{"code":"timeout"}}`))
		require.NoError(t, err)
		assert.Nil(t, f.Error)
	})
}

func TestDecodeFrameCCQuirks(t *testing.T) {
	// textutils.serializeJSON: whole numbers without a decimal point, every byte >= 0x80 as its
	// own \u00XX escape, key order arbitrary, null fields.
	text := `{"payload":{"n":3,"s":"caf\u00C3\u00A9"},"type":"probe_gateway","messageId":"a\u00C3b","traposSenderId":null,"event":"computer_request"}`
	f, err := DecodeFrame([]byte(text))
	require.NoError(t, err)
	assert.Equal(t, "probe_gateway", f.Type)
	assert.Equal(t, "", f.TraposSenderID)
	assert.Equal(t, "a\u00C3b", f.MessageID)
	assert.Equal(t, `"a\u00C3b"`, string(f.RawMessageID), "the raw token is kept for an exact echo")
	assert.JSONEq(t, `{"n":3,"s":"caf\u00C3\u00A9"}`, string(f.Payload))
}

func TestEncodeFrame(t *testing.T) {
	t.Run("gateway response ok", func(t *testing.T) {
		out, err := EncodeFrame(Frame{Event: EventGatewayResponse, TraposReceiverID: "7:", MessageID: "m1", Type: "hello", OK: true, Payload: json.RawMessage(`{"accountId":"local"}`)})
		require.NoError(t, err)
		assert.JSONEq(t, `{"event":"gateway_response","traposReceiverId":"7:","messageId":"m1","type":"hello","ok":true,"payload":{"accountId":"local"}}`, string(out))
	})
	t.Run("gateway response failure", func(t *testing.T) {
		out, err := EncodeFrame(Frame{Event: EventGatewayResponse, TraposReceiverID: "", MessageID: "m1", Type: "x", Error: Errorf(CodeUnknownType, "no handler for %q", "x")})
		require.NoError(t, err)
		assert.JSONEq(t, `{"event":"gateway_response","traposReceiverId":"","messageId":"m1","type":"x","ok":false,"error":{"code":"unknown_type","message":"no handler for \"x\""}}`, string(out))
	})
	t.Run("request gets an empty payload", func(t *testing.T) {
		out, err := EncodeFrame(Frame{Event: EventGatewayRequest, TraposReceiverID: "7:", MessageID: "g1", Type: "ping"})
		require.NoError(t, err)
		assert.JSONEq(t, `{"event":"gateway_request","traposReceiverId":"7:","messageId":"g1","type":"ping","payload":{}}`, string(out))
	})
	t.Run("computer events carry the sender", func(t *testing.T) {
		out, err := EncodeFrame(Frame{Event: EventComputerRequest, TraposSenderID: "7:", MessageID: "c1", Type: "hello"})
		require.NoError(t, err)
		assert.Contains(t, string(out), `"traposSenderId":"7:"`)
		assert.NotContains(t, string(out), `traposReceiverId`)
	})
	t.Run("raw messageId echoed byte for byte", func(t *testing.T) {
		f, err := DecodeFrame([]byte(`{"event":"computer_request","messageId":"x\u00e9\/y","type":"t"}`))
		require.NoError(t, err)
		out, err := EncodeFrame(Frame{Event: EventGatewayResponse, MessageID: f.MessageID, RawMessageID: f.RawMessageID, Type: f.Type, OK: true})
		require.NoError(t, err)
		assert.Contains(t, string(out), `"messageId":"x\u00e9\/y"`)
	})
	t.Run("no HTML escaping", func(t *testing.T) {
		out, err := EncodeFrame(Frame{Event: EventGatewayRequest, MessageID: "g", Type: "a<b>&", Payload: json.RawMessage(`{"k":"<&>"}`)})
		require.NoError(t, err)
		assert.Contains(t, string(out), `"a<b>&"`)
		assert.Contains(t, string(out), `"<&>"`)
	})
	t.Run("too large", func(t *testing.T) {
		big := `{"blob":"` + strings.Repeat("x", MaxFrameBytes) + `"}`
		_, err := EncodeFrame(Frame{Event: EventGatewayRequest, MessageID: "g", Type: "t", Payload: json.RawMessage(big)})
		assert.ErrorIs(t, err, ErrFrameTooLarge)
	})
	t.Run("just fits", func(t *testing.T) {
		empty, err := EncodeFrame(Frame{Event: EventGatewayRequest, MessageID: "g", Type: "t", Payload: json.RawMessage(`{"b":""}`)})
		require.NoError(t, err)
		fill := MaxFrameBytes - len(empty)
		out, err := EncodeFrame(Frame{Event: EventGatewayRequest, MessageID: "g", Type: "t", Payload: json.RawMessage(`{"b":"` + strings.Repeat("x", fill) + `"}`)})
		require.NoError(t, err)
		assert.Len(t, out, MaxFrameBytes)
		_, err = EncodeFrame(Frame{Event: EventGatewayRequest, MessageID: "g", Type: "t", Payload: json.RawMessage(`{"b":"` + strings.Repeat("x", fill+1) + `"}`)})
		assert.ErrorIs(t, err, ErrFrameTooLarge)
	})
	t.Run("invalid payload", func(t *testing.T) {
		_, err := EncodeFrame(Frame{Event: EventGatewayRequest, MessageID: "g", Type: "t", Payload: json.RawMessage(`{`)})
		assert.Error(t, err)
	})
	t.Run("unknown event", func(t *testing.T) {
		_, err := EncodeFrame(Frame{Event: "nope"})
		assert.Error(t, err)
	})
}

func TestCodeOf(t *testing.T) {
	assert.Equal(t, Code(""), CodeOf(nil))
	assert.Equal(t, CodeTimeout, CodeOf(Errorf(CodeTimeout, "late")))
	assert.Equal(t, CodeNotConnected, CodeOf(errors.Join(errors.New("ctx"), Errorf(CodeNotConnected, "gone"))))
	assert.Equal(t, CodeInternal, CodeOf(errors.New("plain")))
	assert.Equal(t, "timeout: late", Errorf(CodeTimeout, "late").Error())
	assert.Len(t, Codes, 9)
}

func FuzzDecodeFrame(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		frame, err := DecodeFrame(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownEvent) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !frame.Event.IsKnown() {
			t.Fatalf("decoded an unknown event %q", frame.Event)
		}
		if len(frame.Payload) == 0 || frame.Payload[0] != '{' || !json.Valid(frame.Payload) {
			t.Fatalf("payload is not an object: %q", frame.Payload)
		}
		if frame.Event.IsResponse() && !frame.OK && frame.Error == nil {
			t.Fatal("failed response without an error")
		}
		// A decoded frame re-encodes (unless too large) and decodes to the same fields.
		out, err := EncodeFrame(frame)
		if errors.Is(err, ErrFrameTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeFrame(out)
		if err != nil {
			t.Fatalf("decode re-encoded frame: %v", err)
		}
		if again.MessageID != frame.MessageID || again.Type != frame.Type || again.Event != frame.Event || again.OK != frame.OK {
			t.Fatalf("round trip changed the frame: %+v vs %+v", frame, again)
		}
	})
}

// AppendFrame appends exactly what EncodeFrame returns, and leaves dst as it was on an error.
func TestAppendFrameAppendsTheEncodedFrame(t *testing.T) {
	f := Frame{Event: EventGatewayResponse, TraposReceiverID: "7:", MessageID: "m", Type: TypeProbeGateway, OK: true,
		Payload: json.RawMessage(`{ "sandboxOk": true }`)}
	want, err := EncodeFrame(f)
	require.NoError(t, err)
	buf := make([]byte, 0, 8)
	buf = append(buf, "prefix"...)
	got, err := AppendFrame(buf, f)
	require.NoError(t, err)
	assert.Equal(t, "prefix"+string(want), string(got))

	got, err = AppendFrame(got[:6], Frame{Event: EventGatewayRequest, Type: "x", Payload: json.RawMessage(`{`)})
	require.Error(t, err)
	assert.Equal(t, "prefix", string(got))
}
