package runtime

import (
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
)

// Options are the runtime's settings: workers, the default limits of a
// turn, and context management.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_WORKERS", Flag: "workers", Default: "8", Usage: "sessions run at once"},
		{Env: "SWITCHBOARD_MAX_STEPS", Flag: "max-steps", Default: "50", Usage: "default model calls per turn"},
		{Env: "SWITCHBOARD_TURN_SECONDS", Flag: "turn-seconds", Default: "900", Usage: "default wall seconds per turn"},
		{Env: "SWITCHBOARD_MAX_TOKENS", Flag: "max-tokens", Default: "2000000", Usage: "default tokens (input+output) per turn"},
		{Env: "SWITCHBOARD_CONTEXT_WINDOW", Flag: "context-window", Default: "0", Usage: "model context window in tokens (0: 200000 for anthropic, 128000 for openai)"},
		{Env: "SWITCHBOARD_LEASE_SECONDS", Flag: "lease-seconds", Default: "15", Usage: "a session's lease on the replica running it lasts this long without renewal (a dead replica's turns resume elsewhere after it)"},
		{Env: "SWITCHBOARD_REPLICA_ID", Flag: "replica-id", Usage: "names this replica to the others sharing the store, across its restarts (leases, affinity, where its sessions' sandboxes are); unique per replica (default: generated into replica-id in the data directory)"},
		{Env: "SWITCHBOARD_COMPACT_FRACTION", Flag: "compact-fraction", Default: "0.8", Usage: "compact the context when it passes this fraction of the window (0 disables)"},
		{Env: "SWITCHBOARD_TEXT_DELTA_MS", Flag: "text-delta-ms", Default: "300", Usage: "log a response's text as it streams (agent.message_delta) at most this often, in milliseconds, for streamed answers (0 disables)"},
	}
}

// LoadConfig reads Options into a Config; the caller adds the store, the
// model, the harness, the tools and the logger. dataDir keeps the replica
// id when none is set.
func LoadConfig(s settings.Values, dataDir string) (Config, error) {
	var c Config
	var err error
	// The same name across restarts: a restart is no move, and the
	// sessions this replica ran keep their affinity and their sandboxes.
	if c.Holder, _, err = s.Secret("SWITCHBOARD_REPLICA_ID", filepath.Join(dataDir, "replica-id")); err != nil {
		return c, err
	}
	if c.Workers, err = s.Int("SWITCHBOARD_WORKERS", 1); err != nil {
		return c, err
	}
	if c.Limits.MaxSteps, err = s.Int("SWITCHBOARD_MAX_STEPS", 1); err != nil {
		return c, err
	}
	if c.Limits.TurnSeconds, err = s.Int("SWITCHBOARD_TURN_SECONDS", 1); err != nil {
		return c, err
	}
	maxTokens, err := s.Int("SWITCHBOARD_MAX_TOKENS", 1)
	if err != nil {
		return c, err
	}
	c.Limits.MaxTokens = int64(maxTokens)
	window, err := s.Int("SWITCHBOARD_CONTEXT_WINDOW", 0)
	if err != nil {
		return c, err
	}
	c.ContextWindow = func(model string) int { return contextWindow(window, model) }
	if c.LeaseTTL, err = s.Duration("SWITCHBOARD_LEASE_SECONDS"); err != nil {
		return c, err
	}
	if c.CompactFraction, err = s.Float("SWITCHBOARD_COMPACT_FRACTION", 0, 1); err != nil {
		return c, err
	}
	deltaMS, err := s.Int("SWITCHBOARD_TEXT_DELTA_MS", 0)
	if err != nil {
		return c, err
	}
	c.TextEvery = time.Duration(deltaMS) * time.Millisecond
	return c, nil
}

// contextWindow is a model's window: the configured one, else a
// conservative default per provider.
func contextWindow(configured int, model string) int {
	if configured > 0 {
		return configured
	}
	if p, _, _ := core.SplitModel(model); p == "openai" {
		return 128_000
	}
	return 200_000
}
