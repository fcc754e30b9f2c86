package server

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
)

// TestAPIAuthCountsRefusalsAndRecordsUse: each refusal counts under its reason, and an
// admitted account token records when and from where it was used.
func TestAPIAuthCountsRefusalsAndRecordsUse(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	accounts := account.New(account.NewMemory(), clk)
	alice, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	short, _, err := accounts.IssueToken(ctx, "alice", "short", time.Hour)
	require.NoError(t, err)
	gone, gt, err := accounts.IssueToken(ctx, "alice", "gone", 0)
	require.NoError(t, err)
	_, err = accounts.RevokeToken(ctx, "", gt.Selector)
	require.NoError(t, err)
	clk.Advance(time.Hour)

	for name, cfg := range map[string]Config{"no api token": {}, "api token": {APIToken: "tok3n"}} {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			cfg.Accounts, cfg.Metrics = accounts, reg
			s := New(slog.New(slog.DiscardHandler), cfg, callerModule{})
			get := func(remote, token string) int { return serve(s, http.MethodGet, "/api/caller", remote, token).Code }
			assert.Equal(t, http.StatusUnauthorized, get("192.0.2.7:1", alice+"x"))
			assert.Equal(t, http.StatusUnauthorized, get("192.0.2.7:1", short))
			assert.Equal(t, http.StatusUnauthorized, get("192.0.2.7:1", gone))
			assert.Equal(t, http.StatusUnauthorized, get("192.0.2.7:1", gone))
			remote := get("192.0.2.7:1", "")
			assert.Equal(t, http.StatusOK, get("192.0.2.9:7", alice))

			refused := func(reason string) float64 { return counted(t, reg, "trapos_api_auth_refused_total", "reason", reason) }
			assert.Equal(t, 1.0, refused(RefusalBadToken))
			assert.Equal(t, 1.0, refused(RefusalExpired))
			assert.Equal(t, 2.0, refused(RefusalRevoked))
			if cfg.APIToken != "" {
				assert.Equal(t, http.StatusUnauthorized, remote)
				assert.Equal(t, 1.0, refused(RefusalWrongAPIToken))
				assert.Equal(t, 0.0, refused(RefusalNotLoopback))
			} else {
				assert.Equal(t, http.StatusForbidden, remote)
				assert.Equal(t, 1.0, refused(RefusalNotLoopback))
				assert.Equal(t, 0.0, refused(RefusalWrongAPIToken))
			}

			toks, err := accounts.Store().Tokens(ctx, "alice")
			require.NoError(t, err)
			for _, tk := range toks {
				if tk.Name == "first" {
					assert.Equal(t, clk.Now(), tk.LastUsed)
					assert.Equal(t, "192.0.2.9", tk.RemoteAddr, "the address of its last use")
				} else {
					assert.True(t, tk.LastUsed.IsZero(), "a refused token records no use: %s", tk.Name)
				}
			}
		})
	}
}

// counted is the value of the series of metric whose label is value, from reg.
func counted(t *testing.T, reg *prometheus.Registry, metric, label, value string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", metric, label, value)
	return 0
}
