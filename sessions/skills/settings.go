package skills

import (
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
)

// Options are the settings of skill uploads.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_SKILL_MAX_BYTES", Flag: "skill-max-bytes", Default: strconv.Itoa(core.DefaultMaxSkillBytes), Usage: "largest skill upload: its request body, and its files uncompressed"},
	}
}

// Config is the validated values of Options.
type Config struct {
	MaxBytes int64
}

// LoadConfig checks the values of Options; a wrong one fails with one
// line that names its variable.
func LoadConfig(s settings.Values) (Config, error) {
	n, err := s.Int("SWITCHBOARD_SKILL_MAX_BYTES", 1024)
	return Config{MaxBytes: int64(n)}, err
}
