package accountapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Client is account.Manager through a running gateway's account API, as the caller its
// Token opens (an account's tsa_… token, the gateway's SANDBOX_API_TOKEN, or none on
// loopback). The zero Client means http.DefaultClient.
type Client struct {
	URL    string
	Token  string
	Client *http.Client
}

var _ account.Manager = Client{}

// Error is the gateway's refusal: its code and message, and the account error it stands for
// (errors.Is works as on the store: account.ErrNotFound, ErrExists, ErrForbidden,
// ErrInvalid).
type Error struct {
	Code    protocol.Code
	Message string
	Status  int
	is      error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.is }

// AddAccount implements account.Manager: POST AccountsPath.
func (c Client) AddAccount(ctx context.Context, id string, role account.Role) (account.NewAccount, error) {
	var out account.NewAccount
	return out, c.call(ctx, http.MethodPost, AccountsPath, AddAccountBody{ID: id, Admin: role == account.RoleAdmin}, &out)
}

// Accounts implements account.Manager: GET AccountsPath.
func (c Client) Accounts(ctx context.Context) ([]account.AccountInfo, error) {
	var out []account.AccountInfo
	return out, c.call(ctx, http.MethodGet, AccountsPath, nil, &out)
}

// RemoveAccount implements account.Manager: DELETE AccountPattern.
func (c Client) RemoveAccount(ctx context.Context, id string) (account.Removed, error) {
	var out account.Removed
	return out, c.call(ctx, http.MethodDelete, strings.Replace(AccountPattern, "{name}", url.PathEscape(id), 1), nil, &out)
}

// Tokens implements account.Manager: GET TokensPath.
func (c Client) Tokens(ctx context.Context, accountID string) ([]account.Token, error) {
	var out []account.Token
	return out, c.call(ctx, http.MethodGet, withAccount(TokensPath, accountID), nil, &out)
}

// AddToken implements account.Manager: POST TokensPath.
func (c Client) AddToken(ctx context.Context, accountID, name string, ttl time.Duration) (account.NewToken, error) {
	secs := int64(ttl / time.Second)
	if ttl > 0 && secs == 0 {
		secs = 1
	}
	var out account.NewToken
	return out, c.call(ctx, http.MethodPost, TokensPath, AddTokenBody{Account: accountID, Name: name, ExpiresInSeconds: secs}, &out)
}

// RevokeToken implements account.Manager: POST TokenRevokePattern.
func (c Client) RevokeToken(ctx context.Context, id string) (account.Token, error) {
	var out account.Token
	return out, c.call(ctx, http.MethodPost, strings.Replace(TokenRevokePattern, "{id}", url.PathEscape(id), 1), struct{}{}, &out)
}

// Credentials implements account.Manager: GET CredentialsPath.
func (c Client) Credentials(ctx context.Context, accountID string) ([]account.Credential, error) {
	var out []account.Credential
	return out, c.call(ctx, http.MethodGet, withAccount(CredentialsPath, accountID), nil, &out)
}

// AddCredential implements account.Manager: POST CredentialsPath.
func (c Client) AddCredential(ctx context.Context, accountID string) (account.NewCredential, error) {
	var out account.NewCredential
	return out, c.call(ctx, http.MethodPost, CredentialsPath, AddCredentialBody{Account: accountID}, &out)
}

// RevokeCredential implements account.Manager: POST CredentialRevokePattern.
func (c Client) RevokeCredential(ctx context.Context, id string) (account.Credential, error) {
	var out account.Credential
	return out, c.call(ctx, http.MethodPost, strings.Replace(CredentialRevokePattern, "{id}", url.PathEscape(id), 1), struct{}{}, &out)
}

func withAccount(path, accountID string) string {
	if accountID == "" {
		return path
	}
	return path + "?" + url.Values{server.AccountParam.Name: {accountID}}.Encode()
}

// call sends one call and decodes its answer into out: a listing as it is, anything else
// from the {ok, payload} answer. A refusal is an *Error.
func (c Client) call(ctx context.Context, method, path string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	// The HTTP client's errors name the gateway's URL and what to do (nothing listening, a
	// URL that is none, a gateway that does not answer), as every client command says them.
	status, data, err := hostapi.HTTP{URL: c.URL, Token: c.Token, Client: c.Client}.Do(ctx, method, path, b)
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Attributed {
		// The client's own words about the gateway (a URL that reaches none), said as the
		// other commands say them, without the code in front.
		return &Error{Code: pe.Code, Message: pe.Message}
	}
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return c.refusal(status, data)
	}
	if method == http.MethodGet {
		if err := json.Unmarshal(data, out); err != nil {
			return c.notTheAPI(status, data)
		}
		return nil
	}
	var ans server.Answer
	if json.Unmarshal(data, &ans) != nil || !ans.OK || json.Unmarshal(ans.Payload, out) != nil {
		return c.notTheAPI(status, data)
	}
	return nil
}

// notTheAPI is an answer that is not the API's as every client command words it
// (hostapi.HTTP.NotTheAPI): another server's page, or a gateway older than the route.
func (c Client) notTheAPI(status int, data []byte) error {
	pe := hostapi.HTTP{URL: c.URL}.NotTheAPI(status, data)
	return &Error{Code: pe.Code, Message: pe.Message, Status: status}
}

// refusal is a non-200 answer as an *Error standing for the store's error of its code; a
// refused token names the way to give one.
func (c Client) refusal(status int, data []byte) error {
	var ans server.Answer
	if json.Unmarshal(data, &ans) != nil || ans.Error == nil {
		return c.notTheAPI(status, data)
	}
	e := &Error{Code: ans.Error.Code, Message: cctext.Show(ans.Error.Message, false), Status: status}
	switch ans.Error.Code {
	case CodeNotFound:
		e.is = account.ErrNotFound
		if strings.HasSuffix(e.Message, account.ErrNotReached.Error()) {
			e.is = account.ErrNotReached // the caller's fix is another token
		}
	case CodeExists:
		e.is = account.ErrExists
	case protocol.CodeForbidden:
		e.is = account.ErrForbidden
	case protocol.CodeBadPayload:
		e.is = account.ErrInvalid
	case protocol.CodeUnauthorized:
		// The API auth's refusal, worded as every client command words it (hostapi's Refusal,
		// its one home): the gateway and its status, then the fix, to give a token (the
		// gateway's own is one too, for an operator with no account yet) or that the one given
		// was refused.
		if pe, ok := errors.AsType[*protocol.Error](hostapi.HTTP{URL: c.URL, Token: c.Token}.Refusal(status, data)); ok {
			e.Message = cctext.Show(pe.Message, false)
		}
	default:
		e.is = errors.New(string(ans.Error.Code))
	}
	return e
}
