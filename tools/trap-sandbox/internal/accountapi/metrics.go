package accountapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/account"
)

// scrapeTimeout bounds one scrape's read of the store: a stuck store leaves these gauges out
// of that scrape, never the rest of /metrics.
const scrapeTimeout = 5 * time.Second

// Metrics registers the account gauges on reg, read from the store at each scrape (so every
// replica reports the shared store's counts, and a change made by `trap-sandbox accounts` on
// the data directory shows without the gateway's help). Computers connected per account are
// deliberately not a series: an account label grows with every account ever made
// (cardinality); trapos_gateway_connected_computers is the total.
func (m *Module) Metrics(reg prometheus.Registerer) *Module {
	if m.accounts != nil {
		reg.MustRegister(&storeCollector{accounts: m.accounts, log: m.log})
	}
	return m
}

var (
	accountsDesc = prometheus.NewDesc("trapos_accounts", "Accounts in the account store, by role (admin, user).", []string{"role"}, nil)
	tokensDesc   = prometheus.NewDesc("trapos_account_tokens", "API tokens in the account store, by state (active, revoked, expired).", []string{"state"}, nil)
	credsDesc    = prometheus.NewDesc("trapos_account_credentials", "Computer credentials in the account store, by state (active, revoked).", []string{"state"}, nil)
)

type storeCollector struct {
	accounts *account.Accounts
	log      *slog.Logger
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- accountsDesc
	ch <- tokensDesc
	ch <- credsDesc
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := c.accounts.Count(ctx)
	if err != nil {
		c.log.Warn("metrics: cannot read the account store; its gauges are left out of this scrape", "err", err)
		return
	}
	for role, n := range counts.Accounts {
		ch <- prometheus.MustNewConstMetric(accountsDesc, prometheus.GaugeValue, float64(n), string(role))
	}
	for state, n := range counts.Tokens {
		ch <- prometheus.MustNewConstMetric(tokensDesc, prometheus.GaugeValue, float64(n), state)
	}
	for state, n := range counts.Credentials {
		ch <- prometheus.MustNewConstMetric(credsDesc, prometheus.GaugeValue, float64(n), state)
	}
}
