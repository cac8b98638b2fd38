package attach

import (
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
)

// Defaults of Options.
const (
	DefaultMaxBytes = 10 << 20
	DefaultTimeout  = 10 * time.Second
	// MaxFiles bounds the files read of one message.
	MaxFiles = 10
)

// Options are the settings of attachment downloads; a command that runs
// the providers includes them in its list.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_ATTACHMENT_MAX_BYTES", Flag: "attachment-max-bytes", Default: strconv.Itoa(DefaultMaxBytes), Usage: "largest file or image of a message the gateway downloads for the model; a larger one is skipped with a note"},
		{Env: "SWITCHBOARD_ATTACHMENT_TIMEOUT_SECONDS", Flag: "attachment-timeout-seconds", Default: strconv.Itoa(int(DefaultTimeout / time.Second)), Usage: "longest the files of one message may take to download; what is not in by then is skipped with a note"},
		{Env: "SWITCHBOARD_ATTACHMENT_ALLOW_PRIVATE", Flag: "attachment-allow-private", Default: "false", Usage: "let attachment downloads reach loopback, private and link-local addresses (a platform served on a private network)"},
	}
}

// Config is the validated values of Options.
type Config struct {
	MaxBytes     int64
	Timeout      time.Duration
	AllowPrivate bool
}

// LoadConfig checks the values of Options; a wrong one fails with one
// line that names its variable.
func LoadConfig(v settings.Values) (Config, error) {
	var c Config
	n, err := v.Int("SWITCHBOARD_ATTACHMENT_MAX_BYTES", 1)
	if err != nil {
		return c, err
	}
	c.MaxBytes = int64(n)
	if c.Timeout, err = v.Duration("SWITCHBOARD_ATTACHMENT_TIMEOUT_SECONDS"); err != nil {
		return c, err
	}
	c.AllowPrivate, err = v.Bool("SWITCHBOARD_ATTACHMENT_ALLOW_PRIVATE")
	return c, err
}
