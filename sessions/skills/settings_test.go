package skills

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/settings"
)

func TestLoadConfig(t *testing.T) {
	for _, tt := range []struct {
		value  string
		want   int64
		errHas string
	}{
		{Options()[0].Default, 5 << 20, ""},
		{"10485760", 10 << 20, ""},
		{"100", 0, `SWITCHBOARD_SKILL_MAX_BYTES="100": want a whole number ≥ 1024`},
		{"5MB", 0, `SWITCHBOARD_SKILL_MAX_BYTES="5MB"`},
	} {
		c, err := LoadConfig(settings.Values{"SWITCHBOARD_SKILL_MAX_BYTES": tt.value})
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("%q: err = %v, want %q", tt.value, err, tt.errHas)
			}
			continue
		}
		if err != nil || c.MaxBytes != tt.want {
			t.Errorf("%q: %d, %v; want %d", tt.value, c.MaxBytes, err, tt.want)
		}
	}
}
