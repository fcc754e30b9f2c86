package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// RevokePattern revokes the credential of a connected computer and closes its socket (4003).
const RevokePattern = "/trapos/computers/{traposId}/revoke"

// revokeOfflineHint ends RevokePattern's answer for a computer that is not connected: how
// its credential is revoked all the same.
const revokeOfflineHint = "to revoke the credential of a computer that is not connected: trap-sandbox credentials list (its TRAPOSID column), then trap-sandbox credentials revoke ID"

// Revoked is the answer of RevokePattern: which credential was revoked, and whose.
type Revoked struct {
	TraposID   string `json:"traposId"`
	AccountID  string `json:"accountId"`
	Credential string `json:"credential"`
	// Replica is the replica that holds the computer's socket when it is another one
	// (docs/scale-out.md): it closes the socket as the revocation reaches it, at once, or once
	// it is back on NATS, where this replica closes its own at once.
	Replica string `json:"replica,omitempty"`
}

// revokeComputer revokes the credential the computer traposID said hello with, for a caller
// who reaches it (its own account's first, for an admin), and closes its socket: here at
// once, and on the replica that holds it through the cluster. A computer the caller
// does not reach answers as one that is not connected, with a request's hint (computer.Hint).
func (g *Gateway) revokeComputer(r *http.Request, traposID string) (Revoked, error) {
	caller := account.CallerFrom(r.Context())
	var found *Computer
	var owners []string    // the other accounts that have it connected, for an admin
	var reached []Computer // for the hint of a computer not found
	ownWins := caller.OwnWins()
	for _, c := range g.Computers() {
		if !caller.Reaches(c.AccountID) {
			continue
		}
		reached = append(reached, c)
		switch {
		case c.TraposID != traposID:
		case ownWins && c.AccountID == caller.Account:
			found, owners = &c, nil // its own wins
		case found == nil || !ownWins || found.AccountID != caller.Account:
			found, owners = &c, append(owners, c.AccountID)
		}
	}
	if len(owners) > 1 {
		// An admin naming a traposId of several accounts, none its own: the first of them was
		// revoked (alice's 7:kitchen, where the admin meant bob's stolen one), where every
		// other route names the accounts and reaches none.
		slices.Sort(owners)
		return Revoked{}, hostcomputer.ConnectedInSeveral(traposID, owners)
	}
	if found == nil {
		if pe := g.relabelledAway(caller, traposID); pe != nil {
			// Named by the id it left a moment ago (the list read just before its label
			// changed): its new id, as every other route says, is what to revoke.
			return Revoked{}, pe
		}
		// Revoking is most needed for a computer that is gone (stolen, given away): its
		// credential is revoked by its id, which the computer list does not show. The hint
		// for a request's computer that none of the caller's is connected (run sandbox status
		// on it in game) is no fix for one to be cut off: listed false leaves it out.
		out := *hostcomputer.Hint(hostcomputer.NotConnected(traposID), traposID, reached, false, caller, 0, account.HoldsOne)
		out.Message += "; " + revokeOfflineHint
		return Revoked{}, &out
	}
	k := Key{AccountID: found.AccountID, TraposID: found.TraposID}
	cluster := g.registry.cluster
	selector, holder := "", ""
	if s := g.registry.Lookup(k); s != nil {
		selector = s.Credential()
	} else if cluster != nil {
		selector, holder = cluster.RemoteCredential(k), found.Replica
	}
	if selector == "" {
		if g.cfg.Password == "" {
			// "change SANDBOX_PASSWORD" is no step on a gateway that has none: setting one
			// cuts off this computer and every other one not given it too.
			return Revoked{}, protocol.Errorf(protocol.CodeForbidden,
				"computer %s says hello with no secret (this gateway has no SANDBOX_PASSWORD), not a credential of its own: there is nothing of its own to revoke "+
					"(set SANDBOX_PASSWORD, which every computer must then have as its sandbox.password, or give this one a credential: trap-sandbox credentials add)", cctext.ShowTraposID(traposID))
		}
		return Revoked{}, protocol.Errorf(protocol.CodeForbidden,
			"computer %s says hello with the shared password, not a credential of its own: there is nothing of its own to revoke (change SANDBOX_PASSWORD, or give it a credential: trap-sandbox credentials add)", cctext.ShowTraposID(traposID))
	}
	if _, err := g.cfg.Accounts.RevokeCredential(r.Context(), "", selector); err != nil {
		return Revoked{}, err
	}
	// An audit line as the account API's "credential revoked" (same attributes): who, from
	// where, and which credential, never a secret. The socket's own close line names none of
	// that.
	g.log.Info("computer revoked", append([]any{"traposId", clip(k.TraposID), "account", k.AccountID, "credentialId", selector},
		server.Who(r)...)...)
	g.CredentialRevoked(selector)
	return Revoked{TraposID: k.TraposID, AccountID: k.AccountID, Credential: selector, Replica: holder}, nil
}

// relabelledAway is the answer of every route for computer traposID, connected in none of the
// accounts the caller reaches, when it was relabelled from that id within RelabelFollowWindow
// (recentRelabels.answer, naming its new id), else nil. The accounts are those a request's
// route asks (hostapi's accountOf): the caller's own; for an admin with none there, the one
// account it was relabelled in.
func (g *Gateway) relabelledAway(caller account.Caller, traposID string) *protocol.Error {
	accountID := caller.Account
	if caller.Admin {
		if in := g.RelabelledIn(traposID); len(in) == 1 {
			accountID = in[0]
		}
	}
	if !caller.Reaches(accountID) {
		return nil
	}
	return g.registry.relabels.answer(Key{AccountID: accountID, TraposID: traposID})
}

func (g *Gateway) serveRevoke(w http.ResponseWriter, r *http.Request) {
	if err := server.NoFieldsBody(r); err != nil {
		server.WriteBodyError(w, err)
		return
	}
	rev, err := g.revokeComputer(r, cctext.TraposID(r.PathValue("traposId")))
	var pe *protocol.Error
	switch {
	case err == nil:
		payload, _ := json.Marshal(rev)
		server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: payload})
	case errors.As(err, &pe) && pe.Code == protocol.CodeNotConnected:
		server.WriteAnswer(w, http.StatusNotFound, server.Answer{Error: &protocol.Error{Code: pe.Code, Message: pe.Message, Accounts: pe.Accounts, RelabelledTo: pe.RelabelledTo}})
	case errors.As(err, &pe):
		server.WriteError(w, http.StatusForbidden, pe.Code, pe.Message)
	default:
		g.log.Error("revoke: the account store failed", append([]any{"err", err}, server.Who(r)...)...)
		server.WriteError(w, http.StatusInternalServerError, protocol.CodeInternal, account.FailedMessage(err))
	}
}

// RevocationSource lists the credentials revoked in the account store since it was last
// asked, and maybe some of those before again (account.RevocationFeed: what another process
// revoked on the data directory).
type RevocationSource interface {
	Next(ctx context.Context, now time.Time) ([]string, error)
}

// FollowRevocations asks src every period, until ctx ends, and closes the sockets of the
// credentials it lists (4003, as RevokeCredential). So a credential revoked by another
// process that shares the account store (`trap-sandbox credentials revoke` on the data
// directory beside the gateway) closes its computer's socket within a period, as one revoked
// through the API does at once; its next hello is refused either way.
func (g *Gateway) FollowRevocations(ctx context.Context, src RevocationSource, period time.Duration) {
	t := g.cfg.Clock.NewTimer(period)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		revoked, err := src.Next(ctx, g.cfg.Clock.Now())
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			failing = true
			g.log.Warn("cannot look for credentials revoked by another process: until it can, their sockets close only at their next hello", "err", err)
		case err == nil && failing:
			failing = false
			g.log.Info("looking for credentials revoked by another process again")
		}
		g.revokeCredentials(revoked)
		t.Reset(period)
	}
}
