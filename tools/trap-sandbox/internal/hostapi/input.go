package hostapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// InputBody is the body of POST /trapos/computers/{traposId}/input.
type InputBody struct {
	// Events are screen.input's events (docs/screen.md), as many as the input takes, up to
	// computer.MaxTypedEvents of the computer's queue.
	Events []computer.InputEvent `json:"events"`
	// TimeoutMs bounds the whole input, the wait for the computer's input turn included
	// (1 … computer.MaxTimeout); absent: computer.DefaultTimeout.
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
	// Call names this input (1 … callNameMaxBytes bytes, unique to its caller: the web console
	// makes it of a random name of its page and a count), for a later input of the caller's to
	// be typed after it (After); absent: it is named nothing.
	Call string `json:"call,omitempty"`
	// After is the Call of an earlier input of the caller's to the same computer, which this
	// one is typed after: the gateway waits, before it takes the computer's input turn, until
	// that call has ended on it (typed or refused), the wait within TimeoutMs, for at most
	// afterArrivalWithin while that call has not arrived. The web console's releases sent as its
	// page is left name the call still on its way, whose keys they let go.
	After string `json:"after,omitempty"`
}

// inputShape is the …/input body, as the API's error messages show it.
const inputShape = `{"events":[...], "timeoutMs":..., "call":..., "after":...}`

// InputAnswer is the payload of …/input's answer.
type InputAnswer struct {
	// Queued is how many events the computer queued, over all the input's requests.
	Queued int `json:"queued"`
}

// serveInput types a whole input on the computer's screen (computer.Client.TypeInput): the
// web console's keys and Type field, and every HTTP client's input, in one call that no other
// caller's input interrupts. An answer the computer refused is, as on …/requests, 200 with its
// error; either way an error after part of the input was typed carries queued (how much).
func (m *Module) serveInput(w http.ResponseWriter, r *http.Request) {
	traposID := cctext.TraposID(r.PathValue("traposId"))
	var body InputBody
	err := server.DecodeBody(r, &body, maxInputBodyBytes, inputShape, map[string]string{
		"events":    "a list of screen.input events (docs/screen.md)",
		"timeoutMs": bodyWants["timeoutMs"],
		"call":      "a string, this input's name (" + strconv.Itoa(callNameMaxBytes) + " bytes at most)",
		"after":     "a string, the call (its name) this input is typed after",
	})
	if tooLarge, ok := errors.AsType[*server.BodyTooLarge](err); ok {
		server.WriteBodyTooLarge(w, tooLarge)
		return
	}
	if err != nil {
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, err.Error())
		return
	}
	if len(body.Events) == 0 {
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, `the body needs "events", at least one screen.input event (e.g. {"type":"key","name":"enter"})`)
		return
	}
	timeout, msg := bodyTimeout(body.TimeoutMs)
	msg = cmp.Or(msg, validCallName("call", body.Call), validCallName("after", body.After))
	if msg == "" && body.After != "" && body.After == body.Call {
		msg = fmt.Sprintf(`"after" names this input's own call %q: an input goes after an earlier one`, body.Call)
	}
	if msg != "" {
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, msg)
		return
	}
	defer m.order.begin(traposID, body.Call)()
	if body.After != "" { // the wait is the input's time, as the wait for the input turn is
		waited := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		err := m.order.await(ctx, traposID, body.After)
		cancel()
		if err != nil {
			writeInputError(w, err, nil)
			return
		}
		timeout = max(timeout-time.Since(waited), time.Millisecond)
	}
	queued, warnings, err := m.client.TypeInput(r.Context(), traposID, body.Events, timeout)
	if err != nil {
		writeInputError(w, err, warnings)
		return
	}
	payload, _ := json.Marshal(InputAnswer{Queued: queued})
	server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: payload, Warnings: warnings})
}

// writeInputError answers an input's error: the computer's refusal as the request's answer
// (200), any other by its code's status; with queued when part of the input was typed.
func writeInputError(w http.ResponseWriter, err error, warnings []cctext.Replacement) {
	queued := 0
	if partly, ok := errors.AsType[*computer.PartlyTyped](err); ok {
		queued = partly.Queued
	}
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok {
		pe = protocol.Errorf(protocol.CodeInternal, "%v", err)
	}
	answer := onTheWire(pe)
	answer.Queued = queued
	status := StatusOf(pe)
	if pe.ByComputer {
		status = http.StatusOK
	}
	server.WriteAnswer(w, status, server.Answer{Error: answer, Warnings: warnings})
}

var _ computer.InputTyper = HTTP{}

// TypeInput implements computer.InputTyper: POST …/input with timeoutMs = timeout, the
// gateway splitting the input and holding the computer's input turn over its requests. An
// error after part of it was typed is a *computer.PartlyTyped, as in-process.
func (h HTTP) TypeInput(ctx context.Context, traposID string, events []computer.InputEvent, timeout time.Duration) (int, []cctext.Replacement, error) {
	body, err := json.Marshal(InputBody{Events: events, TimeoutMs: new(max(timeout.Milliseconds(), 1))})
	if err != nil {
		return 0, nil, fmt.Errorf("encode the input: %w", err)
	}
	caller := ctx
	ctx, cancel := h.answerContext(caller, timeout)
	defer cancel()
	status, header, data, err := h.do(ctx, http.MethodPost, h.computerPath(traposID)+"/input", body)
	if err = h.answerError(caller, err, timeout); err != nil {
		return 0, nil, err
	}
	var ans struct {
		server.Answer
		Payload InputAnswer `json:"payload"`
	}
	decodeErr := json.Unmarshal(data, &ans)
	if status == http.StatusNotFound && (decodeErr != nil || ans.Error == nil ||
		ans.Error.Code == protocol.CodeNotFound && strings.HasPrefix(ans.Error.Message, server.NoRouteAnswer)) {
		// A gateway older than …/input: its API's own no-route answer, or net/http's plain
		// 404 of a gateway older than that. The input goes part by part, on …/requests.
		return 0, nil, computer.ErrNoWholeInput
	}
	if decodeErr != nil || (status == http.StatusOK && !ans.OK && ans.Error == nil) {
		return 0, nil, h.NotTheAPI(status, data)
	}
	if ans.OK && status == http.StatusOK {
		return ans.Payload.Queued, ans.Warnings, nil
	}
	if status == http.StatusOK {
		err = ans.Error.FromTheAPI()
	} else {
		err = withRetryAfter(h.Refusal(status, data), header)
	}
	if ans.Error != nil && ans.Error.Queued > 0 {
		err = &computer.PartlyTyped{Err: err, Queued: ans.Error.Queued}
	}
	return 0, ans.Warnings, err
}
