package linear

import (
	"regexp"

	"github.com/switchboardhq/switchboard/providers"
)

// descriptor is what the rest of the gateway knows of Linear. An origin key
// names an agent session, not the issue, so no address is built from it.
func descriptor() providers.Platform {
	return providers.Platform{
		Name: Name, Label: "Linear", Thread: "Linear issue",
		Key:             regexp.MustCompile(`^linear:[0-9A-Za-z-]{1,64}:[0-9A-Za-z-]{1,64}$`),
		KeyForm:         "linear:<organization>:<agent session>",
		SettingPrefixes: []string{"LINEAR_"},
		Docs:            "docs/linear.md",
		Setup:           "Linear is off. Create an OAuth app in Linear (switchboard linear app prints what to enter), set LINEAR_CLIENT_ID, LINEAR_CLIENT_SECRET and LINEAR_WEBHOOK_SECRET and restart the gateway.",
	}
}
