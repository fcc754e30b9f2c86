// Package server hosts the sandbox modules on one HTTP listener (and, with --computers-listen,
// a second that serves the computers' routes only: computers.go). It owns what the modules
// share: the mux they mount on, the host API's auth check (Routes.HandleAPI) and its one
// answer writer (WriteAnswer), one Prometheus registry served on /metrics, /healthz, and a
// shutdown bounded in time. A module is a value with Name and Mount; adding one is one more
// argument to New.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
)

// Shared routes (docs/http-api.md).
const (
	// HealthzPath answers "ok" to anyone: the process serves.
	HealthzPath = "/healthz"
	// MetricsPath serves the shared Prometheus registry, behind the API auth check.
	MetricsPath = "/metrics"
)

// DefaultShutdownTimeout bounds a graceful shutdown; after it, connections are cut.
const DefaultShutdownTimeout = 5 * time.Second

// HTTP server timeouts. There is deliberately no ReadTimeout/WriteTimeout: they would apply
// to hijacked WebSockets too; plain requests get per-request deadlines instead (deadlines.go)
// and the gateway bounds its sockets itself (write timeout, pong wait).
const (
	// readHeaderTimeout bounds how long a client may take to send request headers
	// (slowloris).
	readHeaderTimeout = 10 * time.Second
	// idleTimeout closes a keep-alive HTTP connection that sends no next request in time.
	idleTimeout = 2 * time.Minute
)

// Module is a sandbox module: a Go value that mounts its routes under its own prefix
// (e.g. /trapos/) and must not touch any other module's routes.
type Module interface {
	// Name is the module's name, for logs.
	Name() string
	// Mount registers the module's routes.
	Mount(routes *Routes)
}

// Config is what the server shares with its modules.
type Config struct {
	// APIToken is SANDBOX_API_TOKEN, the Bearer token of every module's host API and of
	// /metrics. Empty means those answer loopback clients only.
	APIToken string
	// Accounts checks the API tokens of accounts (tsa_…); nil serves without accounts.
	Accounts *account.Accounts
	// Passes opens the gateway's own passes (tsp_…: the agent's MCP connection of one
	// computer); nil serves without them.
	Passes *account.Passes
	// Metrics is the one Prometheus registry; modules register their collectors on it (the
	// caller hands it to them) and the server serves it on /metrics. Nil serves no /metrics.
	Metrics *prometheus.Registry
	// MetricsRegisterer registers the server's own collectors on Metrics, with the replica's
	// label under --nats (gateway.ReplicaRegisterer); nil: on Metrics as they are.
	MetricsRegisterer prometheus.Registerer
	// ShutdownTimeout bounds a graceful shutdown; zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// PublicURL is --public-url; its host is one more name the API answers to (guard.go).
	PublicURL string
	// TrustedProxies are --trusted-proxies: the peers whose X-Forwarded-For names the
	// request's client (ClientAddr). Empty: every request is its TCP peer.
	TrustedProxies TrustedProxies
}

// Shutdowner is implemented by modules that hold connections the HTTP server does not track
// (hijacked WebSockets). Shutdown must end them before ctx does.
type Shutdowner interface {
	Shutdown(ctx context.Context) error
}

// HealthDetailer is implemented by modules with a state worth a line on /healthz (the gateway:
// whether NATS is connected). The status stays 200 whatever the line says: the process serves.
type HealthDetailer interface {
	// HealthDetail is one line without a newline, or "" for none.
	HealthDetail() string
}

// Server serves a set of modules.
type Server struct {
	log             *slog.Logger
	modules         []Module
	handler         http.Handler
	shutdownTimeout time.Duration
	// readHeaderTimeout, idleTimeout, bodyReadTimeout and responseWriteTimeout are the
	// constants above and in deadlines.go; tests shorten them.
	readHeaderTimeout    time.Duration
	idleTimeout          time.Duration
	bodyReadTimeout      time.Duration
	responseWriteTimeout time.Duration
	// waiting are the connections that wait for a request, both listeners' (waiting.go).
	waiting *waitingConns
}

// New mounts the modules and returns a Server.
func New(logger *slog.Logger, cfg Config, modules ...Module) *Server {
	shutdownTimeout := cfg.ShutdownTimeout
	if shutdownTimeout <= 0 {
		shutdownTimeout = DefaultShutdownTimeout
	}
	mux := http.NewServeMux()
	routes := &Routes{mux: mux, log: logger, apiToken: cfg.APIToken, accounts: cfg.Accounts, passes: cfg.Passes, guard: newGuard(cfg)}
	var reg prometheus.Registerer
	if cfg.Metrics != nil {
		reg = cfg.MetricsRegisterer
		if reg == nil {
			reg = cfg.Metrics
		}
	}
	routes.refused = newRefusals(logger, reg)
	routes.HandleFunc("GET "+HealthzPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		body := "ok\n"
		for _, m := range modules {
			if h, ok := m.(HealthDetailer); ok {
				if line := h.HealthDetail(); line != "" {
					body += line + "\n"
				}
			}
		}
		_, _ = w.Write([]byte(body))
	})
	if cfg.Metrics != nil {
		routes.HandleAPI("GET "+MetricsPath, adminOnly(promhttp.HandlerFor(cfg.Metrics, promhttp.HandlerOpts{})))
	}
	for _, m := range modules {
		m.Mount(routes)
	}
	routes.handleNoRoute()
	s := &Server{log: logger, modules: modules, shutdownTimeout: shutdownTimeout,
		readHeaderTimeout: readHeaderTimeout, idleTimeout: idleTimeout,
		bodyReadTimeout: DefaultBodyReadTimeout, responseWriteTimeout: DefaultResponseWriteTimeout}
	s.waiting = newWaitingConns(logger, reg)
	s.handler = s.waiting.requestBegan(recovered(logger, s.bounded(withClientAddr(logger, cfg.TrustedProxies, redirectToCleanPath(mux)))))
	return s
}

// Handler returns the HTTP handler with every module mounted (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// httpServer is an http.Server of h with the server's timeouts; its requests' contexts derive
// from ctx without its cancellation (a shutdown ends them, not the signal).
func (s *Server) httpServer(ctx context.Context, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.readHeaderTimeout,
		IdleTimeout:       s.idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnContext:       withConn,
		ConnState:         s.waiting.connState,
	}
}

// Serve serves on l until ctx ends, then shuts down: it stops accepting, lets the modules
// close their connections, and returns within the shutdown timeout. It logs one "listening"
// line with the bound address once the listener is serving.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	return s.ServeWithComputersPort(ctx, l, nil)
}

// ServeWithComputersPort is Serve, and serves on computers too (nil: no such port) what a
// computer asks for and nothing else (ComputerPaths; --computers-listen): on the Minecraft
// server's own machine, CC's http rules then allow that port and not l's, whose host API
// trusts loopback clients. Both stop together. The computers' listener is logged first, as
// "listening for computers only", so that the "listening" line means both serve.
func (s *Server) ServeWithComputersPort(ctx context.Context, l, computers net.Listener) error {
	srv := s.httpServer(ctx, s.handler)
	servers := []*http.Server{srv}
	listeners := []net.Listener{l}
	if computers != nil {
		computersSrv := s.httpServer(context.WithValue(ctx, computersPortKey{}, true), computersOnly(s.handler))
		servers = append(servers, computersSrv)
		listeners = append(listeners, computers)
	}
	warns := logthrottle.New(s.log, clock.Real{})
	for i := range listeners {
		listeners[i] = readingListener{filesListener{Listener: listeners[i], warns: warns}}
	}
	serveErr := make(chan error, len(servers))
	for i, one := range servers {
		go func() {
			err := one.Serve(listeners[i])
			if !errors.Is(err, http.ErrServerClosed) {
				err = fmt.Errorf("serve %s: %w", listeners[i].Addr(), err)
			}
			serveErr <- err
		}()
	}
	if computers != nil {
		s.log.Info("listening for computers only", "addr", computers.Addr().String(), "paths", ComputerPaths)
	}
	names := make([]string, 0, len(s.modules))
	for _, m := range s.modules {
		names = append(names, m.Name())
	}
	s.log.Info("listening", "addr", l.Addr().String(), "modules", names)

	var failed error // a listener that stopped serving before ctx ended
	select {
	case failed = <-serveErr:
	case <-ctx.Done():
	}
	if failed != nil && len(servers) == 1 {
		return failed
	}
	s.log.Info("shutting down", append(stopAttrs(ctx), "timeout", s.shutdownTimeout)...)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
	defer cancel()

	// The HTTP server stops accepting and drains plain requests; hijacked sockets are the
	// modules' to close, in parallel. A client that holds its connection past the deadline is
	// cut: that is the client's doing, so the shutdown still succeeds (exit status 0).
	errs := make(chan error, len(s.modules)+len(servers))
	for _, one := range servers {
		go func() {
			if err := one.Shutdown(shutdownCtx); err != nil {
				_ = one.Close()
				if errors.Is(err, context.DeadlineExceeded) {
					s.log.Warn("shutdown deadline passed: cut the HTTP connections still open", "timeout", s.shutdownTimeout)
					err = nil
				}
				errs <- err
				return
			}
			errs <- nil
		}()
	}
	pending := len(servers)
	for _, m := range s.modules {
		if sd, ok := m.(Shutdowner); ok {
			pending++
			go func() {
				err := sd.Shutdown(shutdownCtx)
				if errors.Is(err, context.DeadlineExceeded) {
					s.log.Warn("shutdown deadline passed: the module cut its remaining connections", "module", m.Name(), "err", err)
					err = nil
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", m.Name(), err)
					return
				}
				errs <- nil
			}()
		}
	}
	var all []error
	if failed != nil {
		all = append(all, failed)
	}
	for range pending {
		if err := <-errs; err != nil {
			all = append(all, err)
		}
	}
	waitFor := len(servers)
	if failed != nil {
		waitFor--
	}
	for range waitFor {
		if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			all = append(all, err)
		}
	}
	if len(all) > 0 {
		return errors.Join(all...)
	}
	s.log.Info("stopped")
	return nil
}
