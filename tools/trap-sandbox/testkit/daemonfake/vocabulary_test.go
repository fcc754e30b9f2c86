package daemonfake

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// vocabulary is trapos/tests/fixtures/vocabulary.json, which the Lua daemon's spec
// (trapos/tests/vocabulary_spec.lua) runs too; its comment says what each field means.
type vocabulary struct {
	Root     string `json:"root"`
	Computer struct {
		ID    int    `json:"id"`
		Label string `json:"label"`
	} `json:"computer"`
	Cases []struct {
		Name     string `json:"name"`
		Executes bool   `json:"executes"`
		Screen   bool   `json:"screen"`
		Given    struct {
			AllowFiles any               `json:"allowFiles"`
			AllowExec  any               `json:"allowExec"`
			Dirs       []string          `json:"dirs"`
			Files      map[string]string `json:"files"`
		} `json:"given"`
		Steps []struct {
			Type        string                     `json:"type"`
			Payload     json.RawMessage            `json:"payload"`
			RawPayload  *string                    `json:"rawPayload"`
			Answer      json.RawMessage            `json:"answer"`
			AnswerTypes map[string]string          `json:"answerTypes"`
			AnswerHas   map[string]json.RawMessage `json:"answerHas"`
			Error       *Error                     `json:"error"`
		} `json:"steps"`
	} `json:"cases"`
}

// wireBytes is the bytes a fixture string stands for (the byte rule).
func wireBytes(t *testing.T, s string) string {
	t.Helper()
	b, err := protocol.BytesOfWire(s)
	require.NoError(t, err)
	return string(b)
}

// jsonType names a JSON value's type in the fixture's words, from its first character.
func jsonType(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case '[':
		return "array"
	case '{':
		return "object"
	case 'n':
		return "null"
	}
	return "number"
}

// TestVocabulary runs the vocabulary table against the stand-in: every case but those that
// run Lua on the computer (the stand-in runs none; its Exec hook answers those in tests) and
// those that need its screen (the stand-in has none).
func TestVocabulary(t *testing.T) {
	v := testkit.ReadFixture[vocabulary](t, "vocabulary.json")
	require.NotEmpty(t, v.Cases)
	var leftOut []string
	for _, tc := range v.Cases {
		if tc.Executes || tc.Screen {
			leftOut = append(leftOut, tc.Name)
			continue
		}
		t.Run(tc.Name, func(t *testing.T) {
			allowFiles, _ := tc.Given.AllowFiles.(string)
			d := &Daemon{ID: v.Computer.ID, Label: v.Computer.Label, AllowFiles: allowFiles, AllowExec: tc.Given.AllowExec == true}
			if stray, ok := tc.Given.AllowExec.(string); ok {
				d.AllowExecStray = stray
			}
			d.MakeDir(v.Root)
			for _, dir := range tc.Given.Dirs {
				d.MakeDir(wireBytes(t, dir))
			}
			for p, contents := range tc.Given.Files {
				d.PutFile(wireBytes(t, p), []byte(wireBytes(t, contents)))
			}
			for i, step := range tc.Steps {
				payload := step.Payload
				if step.RawPayload != nil {
					payload = json.RawMessage(*step.RawPayload)
				}
				r := d.Answer(step.Type, payload)
				if step.Error != nil {
					require.NotNil(t, r.Error, "step %d (%s): want %s, got ok %v", i+1, step.Type, step.Error.Code, r.Payload)
					assert.Equal(t, step.Error.Code, r.Error.Code, "step %d (%s)", i+1, step.Type)
					if step.Error.Message != "" {
						assert.Equal(t, step.Error.Message, r.Error.Message, "step %d (%s)", i+1, step.Type)
					}
					continue
				}
				require.Nil(t, r.Error, "step %d (%s)", i+1, step.Type)
				got, err := json.Marshal(r.Payload)
				require.NoError(t, err)
				if step.Answer != nil {
					assert.JSONEq(t, string(step.Answer), string(got), "step %d (%s)", i+1, step.Type)
					continue
				}
				var fields map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(got, &fields))
				if step.AnswerTypes != nil {
					types := map[string]string{}
					for k, v := range fields {
						types[k] = jsonType(v)
					}
					assert.Equal(t, step.AnswerTypes, types, "step %d (%s)", i+1, step.Type)
				}
				for k, want := range step.AnswerHas {
					require.Contains(t, fields, k, "step %d (%s)", i+1, step.Type)
					assert.JSONEq(t, string(want), string(fields[k]), "step %d (%s): answer.%s", i+1, step.Type, k)
				}
			}
		})
	}
	sort.Strings(leftOut)
	t.Logf("left to the Lua daemon (they run Lua or need the screen): %q", leftOut)
}

// TestVocabularyCoversEveryComputerType: the table sends every type a computer answers, so
// the stand-in cannot grow a type the table does not describe.
func TestVocabularyCoversEveryComputerType(t *testing.T) {
	sent := map[string]bool{}
	for _, tc := range testkit.ReadFixture[vocabulary](t, "vocabulary.json").Cases {
		for _, step := range tc.Steps {
			sent[step.Type] = true
		}
	}
	for _, typ := range protocol.ComputerTypes {
		assert.True(t, sent[typ], "no case sends %s", typ)
	}
}

// TestExecHookGetsCheckedPayloads: what the table leaves out, the hook answers, given the
// payload as it arrived.
func TestExecHookGetsCheckedPayloads(t *testing.T) {
	var got map[string]any
	d := &Daemon{ID: 1, AllowExec: true, Exec: func(typ string, p map[string]any) (any, *Error) {
		got = p
		return map[string]any{"returns": []any{42}, "output": ""}, nil
	}}
	r := d.Answer(protocol.TypeLuaExec, json.RawMessage(`{"code":"return \"\u00e9\"","timeoutMs":100}`))
	require.Nil(t, r.Error)
	assert.Equal(t, map[string]any{"returns": []any{42}, "output": ""}, r.Payload)
	assert.Equal(t, "return \"\u00e9\"", got["code"], "the code in its wire form")

	r = (&Daemon{AllowExec: true}).Answer(protocol.TypeShellRun, json.RawMessage(`{"command":"ls"}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, string(protocol.CodeUnknownType), r.Error.Code, "no hook: nobody runs it")
}
