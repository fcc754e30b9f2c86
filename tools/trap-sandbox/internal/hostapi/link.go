package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/server"
)

// The link module's host routes (internal/link), called by `trap-sandbox link …`.

// ApproveLink approves a computer's link code into account ("" for the caller's own): POST
// /trapos/link/approve. It returns the answer payload ({traposId, address, account, expiresAt}).
func (h HTTP) ApproveLink(ctx context.Context, code, account string) (json.RawMessage, error) {
	return h.call(ctx, http.MethodPost, "/trapos/link/approve", map[string]string{"code": code, "account": account}, "a link approval")
}

// NewEnrollmentKey makes an enrollment key (POST /trapos/link/keys with body).
func (h HTTP) NewEnrollmentKey(ctx context.Context, body any) (json.RawMessage, error) {
	return h.call(ctx, http.MethodPost, "/trapos/link/keys", body, "a new enrollment key")
}

// EnrollmentKeys lists enrollment keys (of account, "" for the caller's, or every account's
// for an admin).
func (h HTTP) EnrollmentKeys(ctx context.Context, account string) (json.RawMessage, error) {
	path := "/trapos/link/keys"
	if account != "" {
		path += "?" + url.Values{server.AccountParam.Name: {account}}.Encode()
	}
	return h.call(ctx, http.MethodGet, path, nil, "the enrollment keys")
}

// RevokeEnrollmentKey revokes the enrollment key id.
func (h HTTP) RevokeEnrollmentKey(ctx context.Context, id string) (json.RawMessage, error) {
	return h.call(ctx, http.MethodPost, "/trapos/link/keys/"+url.PathEscape(id)+"/revoke", map[string]any{}, "a key revocation")
}

// call sends one JSON call and returns the payload of its {ok:true} answer.
func (h HTTP) call(ctx context.Context, method, path string, body any, what string) (json.RawMessage, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	status, data, err := h.Do(ctx, method, path, b)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, h.Refusal(status, data)
	}
	var ans server.Answer
	if err := json.Unmarshal(data, &ans); err != nil || !ans.OK {
		return nil, fmt.Errorf("the gateway at %s answered %s with something else: %.200s", ShownURL(h.URL), what, cctext.Show(string(data), false))
	}
	return ans.Payload, nil
}
