package webhooks

import (
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
)

// Options are the settings of outbound webhooks.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", Flag: "webhook-allow-private", Default: "false", Usage: "let webhook deliveries reach loopback, private and link-local addresses"},
		{Env: "SWITCHBOARD_WEBHOOK_WORKERS", Flag: "webhook-workers", Default: "16", Usage: "webhook deliveries in flight at once"},
		{Env: "SWITCHBOARD_WEBHOOK_TIMEOUT_SECONDS", Flag: "webhook-timeout-seconds", Default: "10", Usage: "how long one delivery attempt may take; a slower answer is a failure"},
		{Env: "SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS", Flag: "webhook-backoff-base-ms", Default: "1000", Usage: "ceiling of the first retry's wait; it doubles per failure (full jitter)"},
		{Env: "SWITCHBOARD_WEBHOOK_BACKOFF_MAX_SECONDS", Flag: "webhook-backoff-max-seconds", Default: "3600", Usage: "the retry wait's ceiling stops growing here"},
		{Env: "SWITCHBOARD_WEBHOOK_HORIZON_SECONDS", Flag: "webhook-horizon-seconds", Default: "86400", Usage: "how long after its first attempt a delivery is retried before it is dead-lettered"},
		{Env: "SWITCHBOARD_WEBHOOK_PAUSE_SECONDS", Flag: "webhook-pause-seconds", Default: "259200", Usage: "pause a destination that has failed this long without a success (0: never)"},
	}
}

// LoadConfig reads Options into a Config (with its Client); the caller
// adds the store, its commit stream, the sealer and the logger.
func LoadConfig(s settings.Values) (Config, error) {
	var c Config
	var err error
	if c.AllowPrivate, err = s.Bool("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE"); err != nil {
		return c, err
	}
	if c.Workers, err = s.Int("SWITCHBOARD_WEBHOOK_WORKERS", 1); err != nil {
		return c, err
	}
	timeout, err := s.Duration("SWITCHBOARD_WEBHOOK_TIMEOUT_SECONDS")
	if err != nil {
		return c, err
	}
	base, err := s.Int("SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS", 1)
	if err != nil {
		return c, err
	}
	c.BackoffBase = time.Duration(base) * time.Millisecond
	if c.BackoffMax, err = s.Duration("SWITCHBOARD_WEBHOOK_BACKOFF_MAX_SECONDS"); err != nil {
		return c, err
	}
	if c.Horizon, err = s.Duration("SWITCHBOARD_WEBHOOK_HORIZON_SECONDS"); err != nil {
		return c, err
	}
	pause, err := s.Int("SWITCHBOARD_WEBHOOK_PAUSE_SECONDS", 0)
	if err != nil {
		return c, err
	}
	c.PauseAfter = time.Duration(pause) * time.Second
	if pause == 0 {
		c.PauseAfter = -1
	}
	c.Client = NewClient(ClientOptions{AllowPrivate: c.AllowPrivate, Timeout: timeout, MaxConnsPerHost: c.Workers})
	return c, nil
}
