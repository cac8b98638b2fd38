// Package metrics exposes the gateway's Prometheus metrics: sessions by
// status, turns by reason, model latency and tokens, turns' tokens and
// estimated cost by agent and installation, SSE subscribers.
// Other packages report through the small methods here; /metrics serves
// the registry.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// StatusCounter counts sessions by status without scanning them.
type StatusCounter interface {
	CountByStatus(ctx context.Context) (map[core.Status]int, error)
}

// Metrics is the registry and the instruments in it.
type Metrics struct {
	reg          *prometheus.Registry
	turns        *prometheus.CounterVec
	modelLatency *prometheus.HistogramVec
	modelErrors  *prometheus.CounterVec
	tokens       *prometheus.CounterVec
	turnTokens   *prometheus.CounterVec
	cost         *prometheus.CounterVec
	sse          prometheus.Gauge
	events       *prometheus.CounterVec
	// Intake counts inbound webhooks by provider and outcome.
	Intake *prometheus.CounterVec
}

// New builds the registry; sessions are counted from counter at scrape time.
func New(counter StatusCounter, log *slog.Logger) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_turns_total", Help: "Turns completed, by yield reason.",
		}, []string{"reason"}),
		modelLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_model_request_seconds", Help: "Model call latency, by model.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
		}, []string{"model"}),
		modelErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_model_errors_total", Help: "Model calls that failed, by model.",
		}, []string{"model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_model_tokens_total", Help: "Model tokens, by model and direction.",
		}, []string{"model", "direction"}),
		turnTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_turn_tokens_total", Help: "Tokens of completed turns, by agent, installation and kind (input, output, cache_read, cache_creation).",
		}, []string{"agent", "installation", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_turn_cost_usd_total", Help: "Estimated cost in US dollars of completed turns whose model has a price, by agent and installation.",
		}, []string{"agent", "installation"}),
		sse: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "switchboard_sse_subscribers", Help: "Open SSE event streams.",
		}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_events_total", Help: "Events logged, by type.",
		}, []string{"type"}),
		Intake: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_webhook_intake_total", Help: "Inbound webhooks, by provider and outcome.",
		}, []string{"provider", "outcome"}),
	}
	m.reg.MustRegister(m.turns, m.modelLatency, m.modelErrors, m.tokens, m.turnTokens, m.cost, m.sse, m.events, m.Intake,
		&statusCollector{counter: counter, log: log},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ModelCall records one model call (harness.Observer).
func (m *Metrics) ModelCall(model string, d time.Duration, u core.Usage, err error) {
	if err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			m.modelErrors.WithLabelValues(model).Inc()
		}
		return
	}
	m.modelLatency.WithLabelValues(model).Observe(d.Seconds())
	for kind, n := range tokenKinds(u) {
		m.tokens.WithLabelValues(model, kind).Add(float64(n))
	}
}

// tokenKinds are u's counts by the label value that names each.
func tokenKinds(u core.Usage) map[string]int64 {
	return map[string]int64{"input": u.InputTokens, "output": u.OutputTokens,
		"cache_read": u.CacheReadInputTokens, "cache_creation": u.CacheCreationInputTokens}
}

// TurnCompleted counts a turn, and its tokens and estimated cost by agent
// and installation (harness.Observer).
func (m *Metrics) TurnCompleted(r harness.TurnReport) {
	m.turns.WithLabelValues(string(r.Reason)).Inc()
	for kind, n := range tokenKinds(r.Usage) {
		m.turnTokens.WithLabelValues(r.Agent, r.Installation, kind).Add(float64(n))
	}
	if r.CostUSD != nil {
		m.cost.WithLabelValues(r.Agent, r.Installation).Add(*r.CostUSD)
	}
}

// SSE moves the open-stream gauge.
func (m *Metrics) SSE(delta int) { m.sse.Add(float64(delta)) }

var sessionsDesc = prometheus.NewDesc("switchboard_sessions", "Sessions, by status.", []string{"status"}, nil)

// statusCollector reads the store's status counts at scrape time.
type statusCollector struct {
	counter StatusCounter
	log     *slog.Logger
}

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- sessionsDesc }

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	counts, err := c.counter.CountByStatus(context.Background())
	if err != nil {
		c.log.Warn("count sessions for metrics", "err", err)
		return
	}
	for _, s := range []core.Status{core.StatusQueued, core.StatusRunning, core.StatusAwaitingInput, core.StatusIdle, core.StatusFailed, core.StatusArchived} {
		ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

// Follow counts the events the store's commit stream announces, by type,
// until ctx ends: those this process logged, not the other replicas'
// (each replica's /metrics counts its own, so a sum across replicas
// counts each event once). After a lag the count is short by what was
// missed.
func (m *Metrics) Follow(ctx context.Context, sub *core.Subscription) {
	sub.Run(ctx, func(c core.Change) {
		if c.Remote {
			return
		}
		for _, e := range c.Events {
			m.events.WithLabelValues(e.Type).Inc()
		}
	}, func() {})
}
