// Package accountapi is account management over the host API (docs/http-api.md), a sandbox
// module: accounts, their API tokens and their computers' credentials, listed, added and
// revoked by the caller the server's API auth let in (account.CallerFrom). Who may do what
// is account.Accounts.Manage's (one home for the rule); this package is its HTTP face and its
// client: Client implements account.Manager over these routes, so `trap-sandbox accounts …`
// has one code path whether it works on the store or through a running gateway.
package accountapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// ModuleName is the module's name.
const ModuleName = "trapos-accounts"

// Routes of the account API (docs/http-api.md).
const (
	// AccountsPath lists the accounts (GET) and adds one (POST, admins only).
	AccountsPath = "/trapos/accounts"
	// AccountPattern removes the account {name} (DELETE, admins only) with its tokens,
	// credentials, enrollment keys and link codes, and closes its connected computers.
	AccountPattern = "/trapos/accounts/{name}"
	// TokensPath lists API tokens (GET, ?account=) and issues one (POST).
	TokensPath = "/trapos/tokens"
	// TokenRevokePattern revokes the token of {id} (its selector).
	TokenRevokePattern = "/trapos/tokens/{id}/revoke"
	// CredentialsPath lists computer credentials (GET, ?account=) and issues one (POST).
	CredentialsPath = "/trapos/credentials"
	// CredentialRevokePattern revokes the credential of {id}.
	CredentialRevokePattern = "/trapos/credentials/{id}/revoke"
)

// Error codes of the account API beside protocol's (forbidden, bad_payload, internal): a
// record that is not there (or that the caller does not reach), one that exists already, and
// a gateway that keeps no accounts.
const (
	CodeNotFound                 = protocol.CodeNotFound
	CodeExists     protocol.Code = "exists"
	CodeNoAccounts protocol.Code = "no_accounts"
	maxBodyBytes                 = 64 << 10
	noAccountsHint               = "this gateway keeps no accounts (its data directory could not be used: start it with --data-dir DIR, or --nats for replicas)"
)

// AddAccountBody is POST AccountsPath's body.
type AddAccountBody struct {
	ID    string `json:"id"`
	Admin bool   `json:"admin,omitempty"`
}

// AddTokenBody is POST TokensPath's body. Account "" is the caller's own; ExpiresInSeconds 0
// never expires.
type AddTokenBody struct {
	Account          string `json:"account,omitempty"`
	Name             string `json:"name"`
	ExpiresInSeconds int64  `json:"expiresInSeconds,omitempty"`
}

// AddCredentialBody is POST CredentialsPath's body; Account "" is the caller's own.
type AddCredentialBody struct {
	Account string `json:"account,omitempty"`
}

// Module serves the account API. It implements server.Module.
type Module struct {
	accounts *account.Accounts // nil: the gateway keeps no accounts; every route says so
	log      *slog.Logger
	revoked  func(selector string)
	removed  func(accountID string, credentials []string) (closed, notClosed []string)
}

// New returns the module over accounts (nil: every route answers that there are none).
func New(accounts *account.Accounts, logger *slog.Logger) *Module {
	return &Module{accounts: accounts, log: logger, revoked: func(string) {}, removed: func(string, []string) ([]string, []string) { return nil, nil }}
}

// OnCredentialRevoked sets what a credential's revocation does besides the store's record:
// the gateway closes the socket that said hello with it, at once.
func (m *Module) OnCredentialRevoked(f func(selector string)) *Module {
	m.revoked = f
	return m
}

// OnAccountRemoved sets what an account's removal does besides the store's: the gateway closes
// the sockets of the account's computers (its credentials, now gone) wherever they are, and
// says which computers it closed, and which it could not (held by an older replica).
func (m *Module) OnAccountRemoved(f func(accountID string, credentials []string) (closed, notClosed []string)) *Module {
	m.removed = f
	return m
}

// HealthDetail implements server.HealthDetailer: the account store's line, when it has one
// (account.KV's, on NATS: the bucket lost), or "".
func (m *Module) HealthDetail() string {
	if m.accounts == nil {
		return ""
	}
	if h, ok := m.accounts.Store().(server.HealthDetailer); ok {
		return h.HealthDetail()
	}
	return ""
}

// Name implements server.Module.
func (m *Module) Name() string { return ModuleName }

// Mount registers the routes behind the server's API auth.
func (m *Module) Mount(routes *server.Routes) {
	routes.HandleAPIFunc("GET "+AccountsPath, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		return listing(mg.Accounts(r.Context()))
	}))
	routes.HandleAPIFunc("POST "+AccountsPath, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		var b AddAccountBody
		if err := decode(r, &b); err != nil {
			return nil, err
		}
		role := account.RoleUser
		if b.Admin {
			role = account.RoleAdmin
		}
		return one(mg.AddAccount(r.Context(), b.ID, role))
	}))
	routes.HandleAPIFunc("DELETE "+AccountPattern, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		removed, err := mg.RemoveAccount(r.Context(), r.PathValue("name"))
		if err == nil {
			removed.Closed, removed.NotClosed = m.removed(removed.Account.ID, removed.Credentials)
		}
		return one(removed, err)
	}))
	routes.HandleAPIFunc("GET "+TokensPath, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		return listing(mg.Tokens(r.Context(), r.URL.Query().Get(server.AccountParam.Name)))
	}), server.AccountParam)
	routes.HandleAPIFunc("POST "+TokensPath, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		var b AddTokenBody
		if err := decode(r, &b); err != nil {
			return nil, err
		}
		// Checked here as well as by AddToken: seconds past the cap overflow the conversion.
		if maxSecs := int64(account.MaxTokenTTL / time.Second); b.ExpiresInSeconds < 0 || b.ExpiresInSeconds > maxSecs {
			return nil, fmt.Errorf("%w: expiresInSeconds %d: give a number of seconds from 1 to %d (%s), or 0 for a token that never expires",
				account.ErrInvalid, b.ExpiresInSeconds, maxSecs, account.MaxTokenTTLText)
		}
		return one(mg.AddToken(r.Context(), b.Account, b.Name, time.Duration(b.ExpiresInSeconds)*time.Second))
	}))
	routes.HandleAPIFunc("POST "+TokenRevokePattern, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		if err := noFields(r); err != nil {
			return nil, err
		}
		return one(mg.RevokeToken(r.Context(), r.PathValue("id")))
	}))
	routes.HandleAPIFunc("GET "+CredentialsPath, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		return listing(mg.Credentials(r.Context(), r.URL.Query().Get(server.AccountParam.Name)))
	}), server.AccountParam)
	routes.HandleAPIFunc("POST "+CredentialsPath, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		var b AddCredentialBody
		if err := decode(r, &b); err != nil {
			return nil, err
		}
		return one(mg.AddCredential(r.Context(), b.Account))
	}))
	routes.HandleAPIFunc("POST "+CredentialRevokePattern, m.with(func(mg account.Manager, r *http.Request) (any, error) {
		if err := noFields(r); err != nil {
			return nil, err
		}
		c, err := mg.RevokeCredential(r.Context(), r.PathValue("id"))
		if err == nil {
			m.revoked(c.Selector)
		}
		return one(c, err)
	}))
}

// answer marks a route's result that goes out as {ok, payload} (a creation, a revocation);
// any other result is a listing, sent as it is.
type answer struct{ payload any }

func one[T any](v T, err error) (any, error) { return answer{v}, err }

// listing is a route's list, an empty one as [] (the store gives none as nil, which went out
// as null: an account without credentials listed them as null, where docs/http-api.md and
// every other listing answer an array).
func listing[T any](v []T, err error) (any, error) {
	if v == nil {
		v = []T{}
	}
	return v, err
}

// with runs a route as the caller's account.Manager and writes its result or its error. A
// created secret is in the answer only: nothing here logs a body.
func (m *Module) with(route func(account.Manager, *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if m.accounts == nil {
			server.WriteError(w, http.StatusServiceUnavailable, CodeNoAccounts, noAccountsHint)
			return
		}
		who := server.Who(r)
		mg := audited{Manager: m.accounts.Manage(account.CallerFrom(r.Context())), log: m.log, who: who}
		out, err := route(mg, r)
		if err != nil {
			m.writeError(w, err, who)
			return
		}
		if a, ok := out.(answer); ok {
			payload, err := json.Marshal(a.payload)
			if err != nil {
				m.writeError(w, err, who)
				return
			}
			server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: payload})
			return
		}
		server.WriteJSON(w, http.StatusOK, out)
	}
}

// writeError is the one error → status table of the account API; a failure of the store is
// logged with who met it, from where (server.Who's who), as the changes are.
func (m *Module) writeError(w http.ResponseWriter, err error, who []any) {
	if tooLarge, ok := errors.AsType[*server.BodyTooLarge](err); ok {
		server.WriteBodyTooLarge(w, tooLarge)
		return
	}
	switch {
	case errors.Is(err, account.ErrForbidden):
		server.WriteError(w, http.StatusForbidden, protocol.CodeForbidden, withoutKind(err, account.ErrForbidden))
	case errors.Is(err, account.ErrNotFound):
		server.WriteError(w, http.StatusNotFound, CodeNotFound, err.Error())
	case errors.Is(err, account.ErrExists):
		server.WriteError(w, http.StatusConflict, CodeExists, err.Error())
	case errors.Is(err, account.ErrInvalid):
		server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, withoutKind(err, account.ErrInvalid))
	default:
		m.log.Error("account API: the account store failed", append([]any{"err", err}, who...)...)
		server.WriteError(w, http.StatusInternalServerError, protocol.CodeInternal, account.FailedMessage(err))
	}
}

// withoutKind is err's message without the word of its kind (kind, a sentinel it wraps, as
// "forbidden: …" or "invalid: …"), which the answer's code says: the message is the sentence
// docs/http-api.md shows, "adding an account needs an admin token, …".
func withoutKind(err, kind error) string {
	return strings.TrimPrefix(err.Error(), kind.Error()+": ")
}

// decode reads a JSON body into v (server.DecodeBody); a body that is not one is ErrInvalid,
// saying why, one over maxBodyBytes a *server.BodyTooLarge.
func decode(r *http.Request, v any) error {
	err := server.DecodeBody(r, v, maxBodyBytes, shapeOf(v), nil)
	if _, ok := errors.AsType[*server.BodyTooLarge](err); ok || err == nil {
		return err
	}
	return fmt.Errorf("%w: %s", account.ErrInvalid, err)
}

// noFields reads the body of a revocation, which takes none (server.NoFieldsBody), as decode
// words its errors.
func noFields(r *http.Request) error {
	err := server.NoFieldsBody(r)
	if _, ok := errors.AsType[*server.BodyTooLarge](err); ok || err == nil {
		return err
	}
	return fmt.Errorf("%w: %s", account.ErrInvalid, err)
}

// shapeOf shows the JSON object a route's body struct v is read from, {"id":..., "admin":...},
// for the error that answers a body of another shape.
func shapeOf(v any) string {
	t := reflect.TypeOf(v).Elem()
	fields := make([]string, 0, t.NumField())
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			fields = append(fields, fmt.Sprintf("%q:...", name))
		}
	}
	return "{" + strings.Join(fields, ", ") + "}"
}
