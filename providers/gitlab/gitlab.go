// Package gitlab is the GitLab provider: it puts the gateway's agents
// into the issues and merge requests of gitlab.com and self-managed
// instances.
//
//   - Intake (POST /webhooks/gitlab): the X-Gitlab-Token header compared
//     in constant time with the webhook secret before anything is
//     decoded; then a note (Note Hook) that mentions @<username> on an
//     issue or merge request, or the trigger label added (Issue Hook,
//     Merge Request Hook), starts or continues the session keyed
//     gitlab:<group/sub/project>#<iid> (issues) or …!<iid> (merge
//     requests). Only members with Developer access or above trigger it
//     (a cached members/all call). A reply in a discussion the agent
//     answered in steers it without a mention. Each input is stored with
//     the Idempotency-Key header (GitLab 17.4 and later keep it across
//     retries), or else the note's id and action, as its dedupe key in
//     one durable transaction before the 2xx. The app's own notes carry a
//     hidden marker and are never taken for a person's.
//   - Output sink (Renderer): the answer as a note in the discussion the
//     mention came from, posted exactly once by providers/output (an
//     intent and the marker in the body); the turn as a commit status on
//     the merge request's head, its target_url the session's page; a
//     note "@<username> stop" interrupts the turn.
//   - Approvals: a tool call waiting for a person is asked about in a
//     note; "@<username> allow" or "deny" from a Developer or above
//     answers it (a user.tool_confirmation naming who answered).
//
// Tokens: in single-project mode a project access token from the
// settings; else an installation per instance through the OAuth
// application (install.go), its rotating refresh token renewed once
// across replicas.
package gitlab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
)

// Name is the provider's name: the origin provider of its sessions.
const Name = "gitlab"

// DefaultURL is the instance the provider talks to by default.
const DefaultURL = "https://gitlab.com"

// Sessions is what the provider needs of the session store.
type Sessions interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	SessionByKey(ctx context.Context, key string) (*core.Session, error)
	Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error)
	Pending(ctx context.Context, sessionID string) ([]core.Event, error)
}

// Installations is what the provider needs of the installation store.
type Installations interface {
	core.InstallationStore
	core.OnceStore
}

// Config configures the provider.
type Config struct {
	// URL is the instance's web address (default DefaultURL); its REST
	// API is under /api/v4.
	URL           string
	WebhookSecret string
	// SigningToken, when set, is the webhooks' signing token: their
	// Standard Webhooks signature is required as well as the secret.
	SigningToken string
	// Token and Project are the single-project mode: a project access
	// token and the project's path.
	Token   string
	Project string
	// ClientID and ClientSecret are the OAuth application's (install.go);
	// AllowedHosts are self-managed hosts on a private network it may
	// reach.
	ClientID     string
	ClientSecret string
	AllowedHosts []string
	// Username is the app's user: @<username> mentions trigger it (in
	// token mode it is learned from the token at start when empty).
	Username string
	// TriggerLabel starts a session when added (default: the username).
	TriggerLabel string
	// MemberTTL is how long an access level, once read, is trusted
	// (default a minute).
	MemberTTL time.Duration
	// PublicURL is the gateway's base: a session's page is
	// <PublicURL>/sessions/<id>.
	PublicURL     string
	MaxBody       int64
	Sessions      Sessions
	Installations Installations
	Sealer        core.Sealer
	States        *oauth.States
	// Intake stores what the intake decided (providers.Intake).
	Intake     *providers.Intake
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now is the clock of the member cache (default time.Now).
	Now func() time.Time
}

// Provider is the GitLab provider.
type Provider struct {
	cfg Config
	log *slog.Logger
	bg  providers.Background
	// signer verifies signed webhooks (nil without a signing token).
	signer *standardwebhooks.Webhook

	mu      sync.Mutex
	members map[string]memberEntry // project id/user id → access level (access.go)
	// username is the app's user, from the settings or the token.
	username string

	own ownState // OAuth tokens, tool servers, git (oauthsource.go, tools.go, git.go)
}

var (
	_ providers.Provider      = (*Provider)(nil)
	_ providers.WebhookIntake = (*Provider)(nil)
	_ providers.Starter       = (*Provider)(nil)
)

// New returns the provider.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.WebhookSecret == "":
		return nil, errors.New("gitlab: a webhook secret is required")
	case cfg.Token == "" && cfg.ClientID == "":
		return nil, errors.New("gitlab: a project token or an OAuth application is required")
	case cfg.Token != "" && cfg.Project == "":
		return nil, errors.New("gitlab: the token's project is required")
	}
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	cfg.URL = strings.TrimSuffix(cfg.URL, "/")
	if _, err := url.Parse(cfg.URL); err != nil {
		return nil, err
	}
	if cfg.MemberTTL <= 0 {
		cfg.MemberTTL = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = web.APIClient(30 * time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Provider{cfg: cfg, log: cfg.Logger.With("provider", Name), members: map[string]memberEntry{}, username: cfg.Username}
	if cfg.SigningToken != "" {
		var err error
		if p.signer, err = standardwebhooks.NewWebhook(cfg.SigningToken); err != nil {
			return nil, fmt.Errorf("gitlab: signing token: %w", err)
		}
	}
	p.bg.Logger = p.log
	p.initOwn()
	return p, nil
}

// Name is "gitlab".
func (p *Provider) Name() string { return Name }

// Stop waits for background notices.
func (p *Provider) Stop(ctx context.Context) error { return p.bg.Wait(ctx) }

// host is the instance's host name.
func (p *Provider) host() string {
	u, _ := url.Parse(p.cfg.URL) // checked by New
	return u.Host
}

// triggerLabel is the label that starts a session.
func (p *Provider) triggerLabel() string {
	if p.cfg.TriggerLabel != "" {
		return p.cfg.TriggerLabel
	}
	return p.appUser()
}

// appUser is the app's username.
func (p *Provider) appUser() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.username
}
