package gateway

import (
	"encoding/json"
	"errors"
	"net/http"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// RevokePattern revokes the credential of a connected computer and closes its socket (4003).
const RevokePattern = "/trapos/computers/{traposId}/revoke"

// Revoked is the answer of RevokePattern: which credential was revoked, and whose.
type Revoked struct {
	TraposID   string `json:"traposId"`
	AccountID  string `json:"accountId"`
	Credential string `json:"credential"`
}

// revokeComputer revokes the credential the computer traposID said hello with, for a caller
// who reaches it (its own account's first, for an admin), and closes its socket: here at
// once, and on the replica that holds it through the cluster. A computer the caller
// does not reach answers as one that is not connected.
func (g *Gateway) revokeComputer(r *http.Request, traposID string) (Revoked, error) {
	caller := account.CallerFrom(r.Context())
	var found *Computer
	for _, c := range g.Computers() {
		if c.TraposID != traposID || !caller.Reaches(c.AccountID) {
			continue
		}
		if found == nil || c.AccountID == caller.Account {
			found = &c
		}
	}
	if found == nil {
		return Revoked{}, protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected", traposID)
	}
	k := Key{AccountID: found.AccountID, TraposID: found.TraposID}
	cluster := g.registry.cluster
	selector := ""
	if s := g.registry.Lookup(k); s != nil {
		selector = s.Credential()
	} else if cluster != nil {
		selector = cluster.RemoteCredential(k)
	}
	if selector == "" {
		return Revoked{}, protocol.Errorf(protocol.CodeForbidden,
			"computer %s says hello with the shared password, not a credential of its own: there is nothing of its own to revoke (change SANDBOX_PASSWORD, or give it a credential: trap-sandbox credentials add)", traposID)
	}
	if _, err := g.cfg.Accounts.RevokeCredential(r.Context(), "", selector); err != nil {
		return Revoked{}, err
	}
	g.CredentialRevoked(selector)
	return Revoked{TraposID: k.TraposID, AccountID: k.AccountID, Credential: selector}, nil
}

func (g *Gateway) serveRevoke(w http.ResponseWriter, r *http.Request) {
	rev, err := g.revokeComputer(r, r.PathValue("traposId"))
	var pe *protocol.Error
	switch {
	case err == nil:
		payload, _ := json.Marshal(rev)
		server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: payload})
	case errors.As(err, &pe) && pe.Code == protocol.CodeNotConnected:
		server.WriteError(w, http.StatusNotFound, pe.Code, pe.Message)
	case errors.As(err, &pe):
		server.WriteError(w, http.StatusForbidden, pe.Code, pe.Message)
	default:
		g.log.Error("revoke: the account store failed", "err", err)
		server.WriteError(w, http.StatusInternalServerError, protocol.CodeInternal, "the account store failed; try again")
	}
}
