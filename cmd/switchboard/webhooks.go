package main

import (
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/webhooks"
)

// webhookConfig is the webhooks part of serveConfig.
type webhookConfig struct {
	allowPrivate bool
	workers      int
	timeout      time.Duration
	backoffBase  time.Duration
	backoffMax   time.Duration
	horizon      time.Duration
	pauseAfter   time.Duration // negative: never
}

func loadWebhookConfig(s settings.Values) (webhookConfig, error) {
	var c webhookConfig
	var err error
	if c.allowPrivate, err = s.Bool("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE"); err != nil {
		return c, err
	}
	if c.workers, err = s.Int("SWITCHBOARD_WEBHOOK_WORKERS", 1); err != nil {
		return c, err
	}
	if c.timeout, err = s.Duration("SWITCHBOARD_WEBHOOK_TIMEOUT_SECONDS"); err != nil {
		return c, err
	}
	base, err := s.Int("SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS", 1)
	if err != nil {
		return c, err
	}
	c.backoffBase = time.Duration(base) * time.Millisecond
	if c.backoffMax, err = s.Duration("SWITCHBOARD_WEBHOOK_BACKOFF_MAX_SECONDS"); err != nil {
		return c, err
	}
	if c.horizon, err = s.Duration("SWITCHBOARD_WEBHOOK_HORIZON_SECONDS"); err != nil {
		return c, err
	}
	pause, err := s.Int("SWITCHBOARD_WEBHOOK_PAUSE_SECONDS", 0)
	if err != nil {
		return c, err
	}
	c.pauseAfter = time.Duration(pause) * time.Second
	if pause == 0 {
		c.pauseAfter = -1
	}
	return c, nil
}

// newWebhooks builds the delivery service over the store's outbox;
// destination secrets are sealed with the master key.
func newWebhooks(cfg *serveConfig, store webhooks.Store, commits core.CommitStream, log *slog.Logger) *webhooks.Service {
	c := cfg.webhooks
	return webhooks.New(webhooks.Config{
		Store:        store,
		Commits:      commits,
		Sealer:       cfg.sealer,
		Client:       webhooks.NewClient(webhooks.ClientOptions{AllowPrivate: c.allowPrivate, Timeout: c.timeout, MaxConnsPerHost: c.workers}),
		AllowPrivate: c.allowPrivate,
		Workers:      c.workers,
		BackoffBase:  c.backoffBase,
		BackoffMax:   c.backoffMax,
		Horizon:      c.horizon,
		PauseAfter:   c.pauseAfter,
		Logger:       log.With("component", "webhooks"),
	})
}
