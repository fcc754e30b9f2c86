package link

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// The module's host API routes (docs/http-api.md), behind the server's API auth.
const (
	// ApprovePattern approves a link code into the caller's account (an admin: any).
	ApprovePattern = "POST /trapos/link/approve"
	// KeysPath lists (GET) and makes (POST) enrollment keys.
	KeysPath = "/trapos/link/keys"
	// RevokeKeyPattern revokes one enrollment key.
	RevokeKeyPattern = "POST /trapos/link/keys/{id}/revoke"
)

// Mount registers the host API routes.
func (m *Module) Mount(routes *server.Routes) {
	routes.HandleAPIFunc(ApprovePattern, m.serveApprove)
	routes.HandleAPIFunc("GET "+KeysPath, m.serveKeys, server.AccountParam)
	routes.HandleAPIFunc("POST "+KeysPath, m.serveNewKey)
	routes.HandleAPIFunc(RevokeKeyPattern, m.serveRevokeKey)
}

// ApproveRequest is the body of ApprovePattern.
type ApproveRequest struct {
	Code    string `json:"code"`
	Account string `json:"account,omitempty"`
}

// Approved is ApprovePattern's answer: which computer was approved, so the approver sees it.
type Approved struct {
	TraposID  string    `json:"traposId"`
	Address   string    `json:"address"`
	Account   string    `json:"account"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// writeErr answers err: a *protocol.Error with status, anything else as the store's failure,
// which it logs with who met it from where (server.Who).
func (m *Module) writeErr(w http.ResponseWriter, r *http.Request, status int, err error) {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		server.WriteError(w, status, pe.Code, pe.Message)
		return
	}
	m.log.Error("the account store failed", append([]any{"err", err}, server.Who(r)...)...)
	server.WriteError(w, http.StatusInternalServerError, protocol.CodeInternal, account.FailedMessage(err))
}

// maxBodyBytes bounds a link route's JSON body.
const maxBodyBytes = 4096

// decode reads a route's JSON body into v (server.DecodeBody, which words what is wrong with
// it after the shape the route takes) and answers a body it cannot read; it reports whether v
// holds the body.
func (m *Module) decode(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
	err := server.DecodeBody(r, v, maxBodyBytes, shape, nil)
	if tooLarge, ok := errors.AsType[*server.BodyTooLarge](err); ok {
		server.WriteBodyTooLarge(w, tooLarge)
		return false
	}
	if err != nil {
		m.writeErr(w, r, http.StatusBadRequest, protocol.Errorf(protocol.CodeBadPayload, "%s", err.Error()))
		return false
	}
	return true
}

func writeOK(w http.ResponseWriter, v any) {
	payload, _ := json.Marshal(v)
	server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: payload})
}

// noAccount is a link route's refusal of a named account that is not in the store (404
// bad_payload, as it has always answered), with the account meant when one the caller sees
// is near the name (account.Meant); NoAccount tells it from the others.
func noAccount(id, meant string) *protocol.Error {
	if meant != "" {
		return protocol.Errorf(protocol.CodeBadPayload, "no account %q (did you mean %q?)", id, meant)
	}
	return protocol.Errorf(protocol.CodeBadPayload, "no account %q (trap-sandbox accounts list shows them)", id)
}

// NoAccount reports whether err is a link route's refusal of the account id as not in the
// store, with the account it names as meant (or ""), so that the CLI words it as every
// account command words an unknown account.
func NoAccount(err error, id string) (meant string, ok bool) {
	pe, isPE := errors.AsType[*protocol.Error](err)
	if !isPE || pe.Code != protocol.CodeBadPayload {
		return "", false
	}
	if pe.Message == noAccount(id, "").Message {
		return "", true
	}
	prefix := fmt.Sprintf("no account %q (did you mean ", id)
	rest, found := strings.CutPrefix(pe.Message, prefix)
	if !found {
		return "", false
	}
	meant, err = strconv.Unquote(strings.TrimSuffix(rest, "?)"))
	return meant, err == nil && strings.HasSuffix(rest, "?)")
}

// refusePass answers a caller limited to one computer (the agent's pass), which manages
// nothing of its account (account.Manage), with what it is and who does instead
// (Caller.PassRefusal); it reports whether it answered.
func (m *Module) refusePass(w http.ResponseWriter, r *http.Request, does, instead string) bool {
	caller := account.CallerFrom(r.Context())
	if caller.Only == "" {
		return false
	}
	m.writeErr(w, r, http.StatusForbidden, protocol.Errorf(protocol.CodeForbidden, "%s", caller.PassRefusal(does, instead)))
	return true
}

// target is the account a caller acts on: named (its own, or any for an admin) or its own.
// The gateway's own token (account.LocalAdmin) belongs to no stored account unless "local"
// was created, so it must name one.
func (m *Module) target(r *http.Request, named string) (string, int, error) {
	caller := account.CallerFrom(r.Context())
	id := named
	if id == "" {
		id = caller.Account
	}
	if !caller.Reaches(id) {
		return "", http.StatusForbidden, protocol.Errorf(protocol.CodeForbidden,
			"your token is account %s's: only an admin's token acts for account %s", caller.Account, id)
	}
	// As last written (account.Latest): an account added a moment ago, through any replica, is found.
	if _, err := account.Latest(m.cfg.Accounts.Store()).Account(r.Context(), id); errors.Is(err, account.ErrNotFound) {
		if named == "" && caller == account.LocalAdmin {
			return "", http.StatusBadRequest, protocol.Errorf(protocol.CodeBadPayload,
				"name the account to link into with --account NAME (\"account\" in the body): the gateway's own token (SANDBOX_API_TOKEN, or a loopback call without a token) belongs to no account")
		}
		if named == "" {
			return "", http.StatusBadRequest, protocol.Errorf(protocol.CodeBadPayload,
				"name the account to link into with --account NAME (\"account\" in the body): this token's account %s is not in the store", caller.Account)
		}
		return "", http.StatusNotFound, noAccount(id, account.Meant(r.Context(), m.cfg.Accounts.Manage(caller), id))
	} else if err != nil {
		return "", http.StatusInternalServerError, err
	}
	return id, 0, nil
}

// approver names the caller for the computer's question and the audit as the account
// commands record who made something (account.Manage): the caller's account, which is
// account.Local for the gateway's own token (SANDBOX_API_TOKEN, or loopback without one);
// an admin account acting for another account is marked " (admin)".
func approver(c account.Caller, into string) string {
	if c.Account != into && c != account.LocalAdmin {
		return c.Account + " (admin)"
	}
	return c.Account
}

func (m *Module) serveApprove(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Accounts == nil {
		m.writeErr(w, r, http.StatusNotFound, disabled)
		return
	}
	var req ApproveRequest
	const shape = `{"code": "XXXX-XXXX", "account": "NAME" (optional)}`
	if !m.decode(w, r, &req, shape) {
		return
	}
	if req.Code == "" {
		m.writeErr(w, r, http.StatusBadRequest, protocol.Errorf(protocol.CodeBadPayload, "the body is %s", shape))
		return
	}
	// Before the account's approval budget: a pass spends none of it.
	if m.refusePass(w, r, "approves no link code", "trap-sandbox link approve CODE") {
		return
	}
	caller := account.CallerFrom(r.Context())
	now := m.cfg.Clock.Now()
	wait, over := m.approves.take(now, caller.Account)
	if over == "" {
		wait = m.takeSharedApproval(r.Context(), caller.Account, now)
	}
	if wait > 0 {
		m.count("refused")
		m.writeErr(w, r, http.StatusTooManyRequests, protocol.Errorf(protocol.CodeBusy,
			"too many link approvals by account %s; try again in %d s", caller.Account, seconds(wait)))
		return
	}
	into, status, err := m.target(r, req.Account)
	if err != nil {
		m.writeErr(w, r, status, err)
		return
	}
	if gone, restarted := m.goneComputer(r.Context(), req.Code); gone != "" {
		how := "is not connected any more"
		if restarted {
			how = "lost its connection when the gateway restarted"
		}
		m.count("refused")
		m.writeErr(w, r, http.StatusNotFound, protocol.Errorf(protocol.CodeNotConnected,
			"computer %s, which showed this code, %s; run sandbox link on it again for a new code", cctext.ShowTraposID(gone), how))
		return
	}
	if refused, err := m.takesPlace(r.Context(), req.Code, into); err != nil {
		m.writeErr(w, r, http.StatusInternalServerError, err)
		return
	} else if refused != nil {
		m.count("refused")
		m.log.Warn("link approval refused: its code could take the place of a computer of the account", "accountId", into, "approvedBy", approver(caller, into))
		m.writeErr(w, r, http.StatusForbidden, refused)
		return
	}
	c, err := m.cfg.Accounts.ApproveLinkWithToken(r.Context(), req.Code, into, approver(caller, into), caller.Token)
	if err != nil {
		m.writeErr(w, r, http.StatusNotFound, m.refusal(err))
		return
	}
	m.changed(c.ID)
	m.count("approved")
	// An audit line as the account API's: who approved, from where. The computer's credential
	// is made when its player accepts, so the "computer linked" line names it.
	m.log.Info("link code approved", append([]any{"traposId", c.TraposID, "accountId", into, "approvedBy", c.ApprovedBy, "remote", server.ClientAddr(r)},
		caller.ByToken()...)...)
	writeOK(w, Approved{TraposID: c.TraposID, Address: host(c.RemoteAddr), Account: into, ExpiresAt: c.ExpiresAt.UTC()})
}

func host(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// NewKeyRequest is the body of POST KeysPath.
type NewKeyRequest struct {
	Account string `json:"account,omitempty"`
	// MaxUses is how many computers the key links (0: any number).
	MaxUses int `json:"maxUses"`
	// ExpiresInMs is its lifetime (0: never).
	ExpiresInMs int64 `json:"expiresInMs"`
}

// Key is an enrollment key as listed; Secret only in the answer that made it.
type Key struct {
	ID        string     `json:"id"`
	Account   string     `json:"account"`
	CreatedBy string     `json:"createdBy"`
	Created   time.Time  `json:"created"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	MaxUses   int        `json:"maxUses"`
	Uses      int        `json:"uses"`
	Secret    string     `json:"key,omitempty"`
	// ExpiresWithCaller, in the answer that made it, says its lifetime was cut to the
	// caller's own token's (account.Caller.Until).
	ExpiresWithCaller bool `json:"expiresWithCaller,omitempty"`
}

func keyOf(k account.EnrollmentKey) Key {
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.UTC()
		return &t
	}
	return Key{ID: k.Selector, Account: k.AccountID, CreatedBy: k.CreatedBy, Created: k.Created.UTC(), ExpiresAt: opt(k.ExpiresAt),
		RevokedAt: opt(k.RevokedAt), MaxUses: k.MaxUses, Uses: k.Uses}
}

// keyRequestProblem says which field of a new key's request cannot be used, or "": "the body
// is {…}" named none, and a lifetime past time.Duration's 292 years overflowed into the store's
// 500 (an ERROR in the log for a caller's typo). A key's lifetime is capped as a token's.
func keyRequestProblem(req NewKeyRequest) string {
	if req.MaxUses < 0 {
		return server.FieldError("maxUses", "0 (any number of computers) or more", strconv.Itoa(req.MaxUses))
	}
	if maxMs := account.MaxTokenTTL.Milliseconds(); req.ExpiresInMs < 0 || req.ExpiresInMs > maxMs {
		return server.FieldError("expiresInMs", fmt.Sprintf("a number of milliseconds from 1 to %d (%s), or 0 for a key that never expires",
			maxMs, account.MaxTokenTTLText), strconv.FormatInt(req.ExpiresInMs, 10))
	}
	return ""
}

func (m *Module) serveNewKey(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Accounts == nil {
		m.writeErr(w, r, http.StatusNotFound, disabled)
		return
	}
	var req NewKeyRequest
	const shape = `{"account": "NAME" (optional), "maxUses": N (0: any number), "expiresInMs": MS (0: never)}`
	if !m.decode(w, r, &req, shape) {
		return
	}
	if msg := keyRequestProblem(req); msg != "" {
		m.writeErr(w, r, http.StatusBadRequest, protocol.Errorf(protocol.CodeBadPayload, "%s", msg))
		return
	}
	if m.refusePass(w, r, "makes no enrollment key", "trap-sandbox link key") {
		return
	}
	into, status, err := m.target(r, req.Account)
	if err != nil {
		m.writeErr(w, r, status, err)
		return
	}
	caller := account.CallerFrom(r.Context())
	plain, k, err := m.cfg.Accounts.IssueEnrollmentKeyBy(r.Context(), into, approver(caller, into), req.MaxUses,
		time.Duration(req.ExpiresInMs)*time.Millisecond, caller.Until)
	if err != nil {
		m.writeErr(w, r, http.StatusInternalServerError, err)
		return
	}
	maxUses, expiresIn := "any", "never" // 0 would read as none, or as at once
	if req.MaxUses > 0 {
		maxUses = strconv.Itoa(req.MaxUses)
	}
	if !k.ExpiresAt.IsZero() {
		expiresIn = k.ExpiresAt.Sub(k.Created).Round(time.Second).String()
	}
	// An audit line as the account API's (a key makes credentials): by whom, from where, never
	// the key itself.
	m.log.Info("enrollment key added", append([]any{"account", into, "keyId", k.Selector, "maxUses", maxUses, "expiresIn", expiresIn},
		server.Who(r)...)...)
	out := keyOf(k)
	out.Secret, out.ExpiresWithCaller = plain, account.CutTo(k.ExpiresAt, caller.Until)
	writeOK(w, out)
}

func (m *Module) serveKeys(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Accounts == nil {
		m.writeErr(w, r, http.StatusNotFound, disabled)
		return
	}
	if m.refusePass(w, r, "lists no enrollment keys", "trap-sandbox link keys") {
		return
	}
	caller := account.CallerFrom(r.Context())
	of := r.URL.Query().Get(server.AccountParam.Name)
	if of == "" && !caller.Admin {
		of = caller.Account
	}
	if of != "" && !caller.Reaches(of) {
		m.writeErr(w, r, http.StatusForbidden, protocol.Errorf(protocol.CodeForbidden,
			"your token is account %s's: only an admin's token lists account %s's keys", caller.Account, of))
		return
	}
	keys, err := account.Latest(m.cfg.Accounts.Store()).EnrollmentKeys(r.Context(), of) // a key made a moment ago is listed
	if err != nil {
		m.writeErr(w, r, http.StatusInternalServerError, err)
		return
	}
	out := make([]Key, 0, len(keys))
	for _, k := range keys {
		out = append(out, keyOf(k))
	}
	writeOK(w, out)
}

func (m *Module) serveRevokeKey(w http.ResponseWriter, r *http.Request) {
	if m.cfg.Accounts == nil {
		m.writeErr(w, r, http.StatusNotFound, disabled)
		return
	}
	if m.refusePass(w, r, "revokes no enrollment key", "trap-sandbox link revoke-key ID") {
		return
	}
	if err := server.NoFieldsBody(r); err != nil {
		server.WriteBodyError(w, err)
		return
	}
	caller := account.CallerFrom(r.Context())
	of := caller.Account
	if caller.Admin {
		of = ""
	} else if !caller.Reaches(of) {
		// No account (the zero caller), whose "" would otherwise read as an admin's any.
		m.writeErr(w, r, http.StatusForbidden, protocol.Errorf(protocol.CodeForbidden, "this caller reaches no account: it revokes no enrollment key"))
		return
	}
	k, err := m.cfg.Accounts.RevokeEnrollmentKey(r.Context(), of, r.PathValue("id"))
	if errors.Is(err, account.ErrNotFound) {
		m.writeErr(w, r, http.StatusNotFound, protocol.Errorf(protocol.CodeLinkInvalid,
			"no enrollment key %s (trap-sandbox link keys shows the ids)", account.ShowID(r.PathValue("id"))))
		return
	}
	if err != nil {
		m.writeErr(w, r, http.StatusInternalServerError, err)
		return
	}
	m.log.Info("enrollment key revoked", append([]any{"account", k.AccountID, "keyId", k.Selector}, server.Who(r)...)...)
	writeOK(w, keyOf(k))
}
