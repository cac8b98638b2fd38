// Package linear is the Linear provider: it puts the gateway's agents into
// Linear through Linear's Agent API, as the app's own user (actor=app).
//
//   - Intake (POST /webhooks/linear): the linear-signature header (hex
//     HMAC-SHA256 of the raw body) and the signed webhookTimestamp
//     (within a minute) are checked before anything is decoded. An
//     AgentSessionEvent `created` (a mention, or the issue delegated to the
//     app) starts the session linear:<organization>:<agent session> with
//     the issue recorded on it and the prompt context, earlier comments
//     and guidance as its first input; `prompted` steers it; `prompted`
//     with the stop signal, or the app removed as the delegate,
//     interrupts it; OAuthApp `revoked` forgets the organization's tokens.
//     While a tool call waits for a person, a prompt "allow" or "deny"
//     from a member of the workspace is its user.tool_confirmation.
//     Each input is stored with the Linear-Delivery header as its dedupe
//     key in one durable transaction before the 200.
//   - Output sink (Renderer): the session's log as agent activities — a
//     thought as soon as an input is stored (before any model call), tool
//     calls as actions (ephemeral while they run), the final answer as a
//     response, a question, a tool call waiting for a person or a budget
//     pause as an elicitation (with select options when they have
//     answers), failures as errors — and the session page as the agent
//     session's external URL, the agent's plan as its plan. A budget per
//     organization orders calls by priority and coalesces thoughts;
//     RATELIMITED answers are waited out. Every activity carries an id
//     derived from the session and log position, so a restart neither
//     loses nor repeats one.
//   - MCP tools: linearapi's tool server, acting as the installation.
//   - Repository choice: which of the agent's granted repositories an
//     issue is about, from Linear's issueRepositorySuggestions, or asked.
//   - Install: OAuth with actor=app; access tokens expire and are renewed
//     with the rotating refresh token, sealed at rest.
package linear

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/attach"
	"github.com/switchboardhq/switchboard/providers/output"
	"golang.org/x/sync/singleflight"
)

// Name is the provider's name: the origin provider of its sessions.
const Name = "linear"

// Defaults of the API base and the consent page.
const (
	DefaultAPIURL       = "https://api.linear.app"
	DefaultAuthorizeURL = "https://linear.app/oauth/authorize"
)

// DefaultScopes are the scopes an install asks for: the app acts on
// issues and comments and can be assigned (delegated) and mentioned.
var DefaultScopes = []string{"read", "write", "app:assignable", "app:mentionable"}

// DefaultReplayWindow is how far a webhook's signed timestamp may be from
// now (Linear's recommendation: a minute).
const DefaultReplayWindow = time.Minute

// DefaultRequestsPerHour is the budget of API calls per organization:
// Linear allows an OAuth app 5,000 requests an hour per user (the app
// user, with actor=app), and the tools share it.
const DefaultRequestsPerHour = 4000

// Sessions is what the provider needs of the session store.
type Sessions interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	ListSessions(ctx context.Context, f core.SessionFilter) (core.SessionList, error)
	Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error)
	SessionByKey(ctx context.Context, key string) (*core.Session, error)
}

// Installations is what the provider needs of the installation store.
type Installations interface {
	core.InstallationStore
	core.OnceStore
}

// Config configures the provider.
type Config struct {
	ClientID      string
	ClientSecret  string
	WebhookSecret string
	// APIURL is the API base: GraphQL at /graphql, the token endpoint at
	// /oauth/token (default DefaultAPIURL).
	APIURL string
	// AuthorizeURL is the consent page (default DefaultAuthorizeURL with
	// the default API base, else <APIURL>/oauth/authorize).
	AuthorizeURL string
	// PublicURL is the gateway's base URL: the agent session's external
	// link is <PublicURL>/sessions/<id>.
	PublicURL string
	Scopes    []string
	// ReplayWindow bounds the signed timestamp's age (default
	// DefaultReplayWindow).
	ReplayWindow time.Duration
	// RefreshMargin renews an access token this long before it expires
	// (default oauth.DefaultRefreshMargin).
	RefreshMargin time.Duration
	// RequestsPerHour and Burst size the per-organization budget of
	// activity calls (defaults DefaultRequestsPerHour and 60).
	RequestsPerHour int
	Burst           int
	MaxBody         int64
	Sessions        Sessions
	Installations   Installations
	Sealer          core.Sealer
	// Intake stores what the intake decided (providers.Intake).
	Intake *providers.Intake
	// Attachments downloads the images of prompts; nil leaves them out.
	Attachments *attach.Fetcher
	HTTPClient  *http.Client
	Logger      *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Provider is the Linear provider.
type Provider struct {
	cfg    Config
	log    *slog.Logger
	tokens *oauth.Tokens
	// newAPI makes the Linear client of an installation (a fake in tests).
	newAPI  func(in *core.Installation) platform
	budgets *budgets
	// renews shares a renewal after a 401 among this process's callers.
	renews singleflight.Group

	bg providers.Background // refusals told after the ack

	people  people  // who users are, looked up when they answer
	choices choices // the repositories chosen for sessions

	mu    sync.Mutex
	acked map[string]bool             // inputs given their thought in this process
	tools providers.ToolCache[string] // the sessions' MCP servers, by installation
}

var (
	_ providers.Provider      = (*Provider)(nil)
	_ providers.WebhookIntake = (*Provider)(nil)
	_ providers.InstallFlow   = (*Provider)(nil)
	_ providers.OutputSink    = (*Provider)(nil)
	_ providers.ToolServer    = (*Provider)(nil)
	_ providers.Revoker       = (*Provider)(nil)
	_ providers.Starter       = (*Provider)(nil)
	_ providers.FileHost      = (*Provider)(nil)
)

// New returns the provider.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.WebhookSecret == "":
		return nil, errors.New("linear: a webhook secret is required")
	case cfg.ClientID == "" || cfg.ClientSecret == "":
		return nil, errors.New("linear: a client id and secret are required")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	cfg.APIURL = strings.TrimSuffix(cfg.APIURL, "/")
	if cfg.AuthorizeURL == "" {
		cfg.AuthorizeURL = DefaultAuthorizeURL
		if cfg.APIURL != DefaultAPIURL {
			cfg.AuthorizeURL = cfg.APIURL + "/oauth/authorize"
		}
	}
	cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = DefaultScopes
	}
	if cfg.ReplayWindow <= 0 {
		cfg.ReplayWindow = DefaultReplayWindow
	}
	if cfg.RequestsPerHour <= 0 {
		cfg.RequestsPerHour = DefaultRequestsPerHour
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 60
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = web.APIClient(30 * time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Provider{cfg: cfg, log: cfg.Logger.With("provider", Name), acked: map[string]bool{}}
	p.bg.Logger = p.log
	p.tokens = &oauth.Tokens{Store: cfg.Installations, Sealer: cfg.Sealer, Refresh: p.refresh, Margin: cfg.RefreshMargin, Now: cfg.Now}
	p.budgets = newBudgets(float64(cfg.RequestsPerHour)/3600, cfg.Burst, cfg.Now)
	p.newAPI = p.graphqlAPI
	return p, nil
}

// Start has nothing to do: installations come with the OAuth flow.
func (p *Provider) Start(context.Context) error { return nil }

// Stop waits for the refusals being told.
func (p *Provider) Stop(ctx context.Context) error { return p.bg.Wait(ctx) }

// Name is "linear".
func (p *Provider) Name() string { return Name }

// Renderer is the output sink's Linear part.
func (p *Provider) Renderer() output.Renderer { return &renderer{p: p} }

// installation finds the installation of an organization.
func (p *Provider) installation(ctx context.Context, org string) (*core.Installation, error) {
	return p.cfg.Installations.FindInstallation(ctx, Name, org)
}

// sessionInstallation finds the installation a session came through.
func (p *Provider) sessionInstallation(ctx context.Context, s *core.Session) (*core.Installation, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, fmt.Errorf("session %s is not from linear: %w", s.ID, core.ErrInvalid)
	}
	return p.installation(ctx, s.Origin.TenantID)
}

// sessionPage is the gateway's page of a session.
func (p *Provider) sessionPage(id string) string {
	if p.cfg.PublicURL == "" {
		return ""
	}
	return p.cfg.PublicURL + "/sessions/" + id
}

// firstAck reports whether this process has not yet sent the thought that
// acknowledges an input; the set is bounded, and forgetting only costs a
// check at Linear.
func (p *Provider) firstAck(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.acked[id] {
		return false
	}
	if len(p.acked) > 10_000 {
		p.acked = map[string]bool{}
	}
	p.acked[id] = true
	return true
}

func (p *Provider) forgetAck(id string) {
	p.mu.Lock()
	delete(p.acked, id)
	p.mu.Unlock()
}
