package protocol

import (
	"encoding/json"
	"testing"
)

// benchFrames are typical frames of the gateway's traffic, as they arrive on the wire.
var benchFrames = []struct {
	name string
	text string
}{
	{"probe_gateway", `{"event":"computer_request","traposSenderId":"7:kitchen","messageId":"3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60","type":"probe_gateway","payload":{}}`},
	// CC's textutils.serializeJSON sends an empty table as [].
	{"probe_gateway_cc_array", `{"event":"computer_request","traposSenderId":"7:kitchen","messageId":"3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60","type":"probe_gateway","payload":[]}`},
	{"ping_response", `{"event":"computer_response","traposSenderId":"7:kitchen","messageId":"g-3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60","type":"ping","ok":true,"payload":{"traposId":"7:kitchen"}}`},
	{"gateway_response", `{"event":"gateway_response","traposReceiverId":"7:kitchen","messageId":"3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60","type":"probe_gateway","ok":true,"payload":{"sandboxOk":true,"opencodeOk":true}}`},
}

func BenchmarkDecodeFrame(b *testing.B) {
	for _, bf := range benchFrames {
		data := []byte(bf.text)
		b.Run(bf.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := DecodeFrame(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncodeFrame(b *testing.B) {
	frames := []struct {
		name  string
		frame Frame
	}{
		{"probe_gateway", Frame{Event: EventComputerRequest, TraposSenderID: "7:kitchen", MessageID: "3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60", Type: "probe_gateway", Payload: json.RawMessage(`{}`)}},
		{"ping_response", Frame{Event: EventComputerResponse, TraposSenderID: "7:kitchen", MessageID: "g-3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60", Type: "ping", OK: true, Payload: json.RawMessage(`{"traposId":"7:kitchen"}`)}},
		{"gateway_response", Frame{Event: EventGatewayResponse, TraposReceiverID: "7:kitchen", MessageID: "3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60", RawMessageID: json.RawMessage(`"3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60"`), Type: "probe_gateway", OK: true, Payload: json.RawMessage(`{"sandboxOk":true,"opencodeOk":true}`)}},
		{"gateway_response_error", Frame{Event: EventGatewayResponse, TraposReceiverID: "7:kitchen", MessageID: "3f0c9a0e-5c1e-4b8e-9f5e-1d2c3b4a5f60", Type: "x", Error: Errorf(CodeUnknownType, "no handler for %q", "x")}},
	}
	for _, bf := range frames {
		b.Run(bf.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := EncodeFrame(bf.frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
