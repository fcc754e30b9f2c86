package protocol

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// wireFixture is trapos/tests/fixtures/wire_frames.json, which the Lua codec's spec
// (trapos/tests/wire_frames_spec.lua) reads too, so the two codecs cannot drift.
type wireFixture struct {
	MaxFrameBytes int      `json:"maxFrameBytes"`
	Codes         []string `json:"codes"`
	ComputerTypes []string `json:"computerTypes"`
	Cases         []struct {
		Name    string `json:"name"`
		Input   string `json:"input"`
		Ignored bool   `json:"ignored"`
		Decoded *struct {
			Event        string          `json:"event"`
			MessageID    string          `json:"messageId"`
			Type         string          `json:"type"`
			OK           *bool           `json:"ok"`
			Payload      json.RawMessage `json:"payload"`
			ErrorCode    string          `json:"errorCode"`
			ErrorMessage string          `json:"errorMessage"`
		} `json:"decoded"`
	} `json:"cases"`
}

func TestWireFixtureLimitsAndCodes(t *testing.T) {
	fx := testkit.ReadFixture[wireFixture](t, "wire_frames.json")
	assert.Equal(t, MaxFrameBytes, fx.MaxFrameBytes)
	codes := make([]string, len(Codes))
	for i, c := range Codes {
		codes[i] = string(c)
	}
	assert.Equal(t, fx.Codes, codes)
}

// TestWireFixtureHasEveryComputerType: the fixture names the types a computer answers as
// ComputerTypes does, and holds a request and a successful answer of each, so a new type
// cannot join the vocabulary without frames both codecs read.
func TestWireFixtureHasEveryComputerType(t *testing.T) {
	fx := testkit.ReadFixture[wireFixture](t, "wire_frames.json")
	assert.Equal(t, ComputerTypes, fx.ComputerTypes)
	requests, answers := map[string]bool{}, map[string]bool{}
	for _, tc := range fx.Cases {
		if tc.Decoded == nil {
			continue
		}
		switch {
		case tc.Decoded.Event == string(EventGatewayRequest):
			requests[tc.Decoded.Type] = true
		case tc.Decoded.Event == string(EventComputerResponse) && tc.Decoded.OK != nil && *tc.Decoded.OK:
			answers[tc.Decoded.Type] = true
		}
	}
	for _, typ := range ComputerTypes {
		assert.True(t, requests[typ], "no gateway_request case of %s", typ)
		assert.True(t, answers[typ], "no successful computer_response case of %s", typ)
	}
}

func TestWireFixtureFrames(t *testing.T) {
	for _, tc := range testkit.ReadFixture[wireFixture](t, "wire_frames.json").Cases {
		t.Run(tc.Name, func(t *testing.T) {
			f, err := DecodeFrame([]byte(tc.Input))
			if tc.Ignored {
				assert.Error(t, err, "a malformed frame is dropped")
				return
			}
			require.NoError(t, err)
			want := tc.Decoded
			require.NotNil(t, want)
			assert.Equal(t, want.Event, string(f.Event))
			assert.Equal(t, want.MessageID, f.MessageID)
			assert.Equal(t, want.Type, f.Type)
			if want.OK != nil {
				assert.Equal(t, *want.OK, f.OK)
			}
			if want.Payload != nil {
				assert.JSONEq(t, string(want.Payload), string(f.Payload))
			}
			if want.ErrorCode != "" {
				require.NotNil(t, f.Error)
				assert.Equal(t, want.ErrorCode, string(f.Error.Code))
				if want.ErrorMessage != "" {
					assert.Equal(t, want.ErrorMessage, f.Error.Message)
				}
			}
		})
	}
}
