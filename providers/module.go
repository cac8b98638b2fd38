package providers

import (
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/attach"
)

// Module is a platform as the gateway's configuration sees it: the
// settings it declares and how to build it from them. cmd/switchboard
// lists the modules it ships; nothing registers itself.
type Module struct {
	// Platform is what the rest of the gateway knows of the platform.
	Platform Platform
	Options  []settings.Option
	// Load validates the module's settings (an error names the variable)
	// and returns how to build the provider, or nil when the platform is
	// off.
	Load func(v settings.Values, env LoadEnv) (Build, error)
	// App is how the platform's app is created by hand, nil when the
	// module says nothing of it.
	App *AppSetup
}

// LoadEnv is what a module's Load may read besides its settings: what the
// gateway keeps in its data directory.
type LoadEnv struct {
	DataDir string
	Sealer  core.Sealer
}

// Build makes a provider once the store is open.
type Build func(d Deps) (Provider, error)

// Store is what providers keep in the gateway's store: sessions, their
// logs, installations and their tokens, single-use keys, and the output
// sinks' positions.
type Store interface {
	core.Store
	core.InstallationStore
	core.OnceStore
	core.SinkStore
}

// Deps is what the gateway hands every provider it builds.
type Deps struct {
	// Platforms are every platform the gateway ships, served or not.
	Platforms Platforms
	Store     Store
	Intake    *Intake
	Sealer    core.Sealer
	// States sign the state of install flows (and of the GitHub App's
	// manifest flow).
	States     *oauth.States
	PublicURL  string
	AdminToken string
	DataDir    string
	MaxBody    int64
	Logger     *slog.Logger
	// Holder names this replica in the store's claims on sessions'
	// output (the id its runtime's leases carry), and ClaimTTL is how long
	// a claim lasts without renewal; zero values take output's defaults.
	Holder   string
	ClaimTTL time.Duration
	// Attachments downloads the files of the messages that trigger the
	// agent, for the model; nil leaves them out.
	Attachments *attach.Fetcher
}
