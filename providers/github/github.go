// Package github is the GitHub App provider: it puts the gateway's agents
// into issues and pull requests.
//
//   - Intake (POST /webhooks/github): X-Hub-Signature-256 over the raw
//     body, then the event decoded (go-github's types), the trigger rules
//     applied (rules.go: an @<slug> mention in a comment, review or review
//     comment, or the trigger label added), the commenter's write access
//     checked (a cached API call), and the input stored with the delivery
//     id (and the review id, so a review and its comments make one turn)
//     as dedupe keys in one durable transaction before the 2xx.
//     Installations are recorded lazily from any event that names one,
//     and tracked from installation events (installation.go): their
//     repositories, and whether they are active, suspended or deleted
//     (the events of the last two are ignored).
//   - Install (install.go): /oauth/github/install sends the person to
//     the App's install page with a signed state; the callback verifies
//     the installation with the App's JWT and records it.
//   - Context (Prime): the or PR's title and body, and its
//     earlier comments (history.go), reach the model once, before the
//     session's first turn.
//   - Output sink (Renderer): 👀 on the triggering comment, progress as a
//     check run on the PR head (Stop as a requested action) or one status
//     comment edited in place on issues, with the agent's plan as a task
//     list, answers in the review comment's thread or as issue comments;
//     driven from the log by providers/output, exactly once (an intent
//     and a marker in the body).
//   - Approvals (approval.go, wait.go): a tool call waiting for a person
//     keeps the run in progress with Allow, Deny and Stop, and is asked
//     about in a comment; a button or "@app allow|deny" from someone with
//     write access answers it (a user.tool_confirmation).
//
// Tokens: the App's JWT and installation tokens are made and renewed by
// ghinstallation from the App's private key; none is stored.
package github

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/attach"
	"github.com/switchboardhq/switchboard/providers/output"
)

// Name is the provider's name: the origin provider of its sessions.
const Name = "github"

// Defaults of the REST base and the web host.
const (
	DefaultAPIURL = "https://api.github.com/"
	DefaultWebURL = "https://github.com"
)

// Sessions is what the provider needs of the session store.
type Sessions interface {
	GetAgent(ctx context.Context, idOrName string) (*core.Agent, error)
	Pending(ctx context.Context, sessionID string) ([]core.Event, error)
	SessionByKey(ctx context.Context, key string) (*core.Session, error)
	Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error)
	AddLink(ctx context.Context, sessionID string, l core.LinkBody) (*core.Session, error)
}

// Installations is what the provider needs of the installation store.
type Installations interface {
	core.InstallationStore
	core.OnceStore
}

// Config configures the provider.
type Config struct {
	AppID         int64
	PrivateKey    []byte // PEM
	WebhookSecret string
	Slug          string
	// TriggerLabel starts a session when added (default: the slug).
	TriggerLabel string
	APIURL       string // default DefaultAPIURL
	WebURL       string // default DefaultWebURL
	// PermissionTTL is how long a permission answer is trusted (default
	// 1 min).
	PermissionTTL time.Duration
	// Now is the clock the permission cache is judged by (default
	// time.Now).
	Now           func() time.Time
	MaxBody       int64
	Sessions      Sessions
	Installations Installations
	// Intake stores what the intake decided (providers.Intake).
	Intake    *providers.Intake
	Transport http.RoundTripper // default a web.APIClient's transport
	// HistoryLimit is how many earlier comments of the issue or pull
	// request the first turn sees (default DefaultHistoryLimit; below
	// zero none).
	HistoryLimit int
	// Attachments downloads the images of triggering comments; nil
	// leaves them out.
	Attachments *attach.Fetcher
	Logger      *slog.Logger
}

// Provider is the GitHub provider.
type Provider struct {
	cfg  Config
	log  *slog.Logger
	apps *ghinstallation.AppsTransport
	// manifest is the flow that creates an App, mounted with the webhooks
	// (it refuses to make a second one); nil when built outside Module.
	manifest *Manifest

	instMu sync.Mutex // serialises changes to installation records

	mu      sync.Mutex
	clients map[int64]installationClient // per installation; ghinstallation renews its token
	perms   map[string]permEntry
	git     gitTokens
	bg      providers.Background

	tools providers.ToolCache[int64] // the sessions' MCP servers, by installation (tools.go)
}

type permEntry struct {
	write bool
	until time.Time
}

var (
	_ providers.Provider         = (*Provider)(nil)
	_ providers.WebhookIntake    = (*Provider)(nil)
	_ providers.OutputSink       = (*Provider)(nil)
	_ providers.Starter          = (*Provider)(nil)
	_ providers.ContextPrimer    = (*Provider)(nil)
	_ providers.ToolServer       = (*Provider)(nil)
	_ providers.Revoker          = (*Provider)(nil)
	_ providers.RepositorySource = (*Provider)(nil)
	_ providers.FileHost         = (*Provider)(nil)
)

// New returns the provider.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.AppID <= 0:
		return nil, errors.New("github: an app id is required")
	case cfg.WebhookSecret == "":
		return nil, errors.New("github: a webhook secret is required")
	case cfg.Slug == "":
		return nil, errors.New("github: the app slug is required")
	}
	if err := checkKey(cfg.PrivateKey); err != nil {
		return nil, err
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	if cfg.WebURL == "" {
		cfg.WebURL = DefaultWebURL
	}
	cfg.WebURL = strings.TrimSuffix(cfg.WebURL, "/")
	if cfg.TriggerLabel == "" {
		cfg.TriggerLabel = cfg.Slug
	}
	if cfg.HistoryLimit == 0 {
		cfg.HistoryLimit = DefaultHistoryLimit
	}
	if cfg.PermissionTTL <= 0 {
		cfg.PermissionTTL = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Transport == nil {
		cfg.Transport = web.APIClient(0).Transport
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	apps, err := ghinstallation.NewAppsTransport(cfg.Transport, cfg.AppID, cfg.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("github: private key: %w", err)
	}
	apps.BaseURL = strings.TrimSuffix(cfg.APIURL, "/")
	p := &Provider{cfg: cfg, log: cfg.Logger.With("provider", Name), apps: apps,
		clients: map[int64]installationClient{}, perms: map[string]permEntry{}}
	p.bg.Logger = p.log
	return p, nil
}

// checkKey refuses a private key that is not an RSA PEM key, so a wrong
// one fails at start, not at the first event.
func checkKey(key []byte) error {
	b, _ := pem.Decode(key)
	if b == nil {
		return errors.New("github: the private key is not PEM")
	}
	if _, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
		return nil
	}
	if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err != nil {
		return fmt.Errorf("github: the private key does not parse: %w", err)
	}
	return nil
}

// Name is "github".
func (p *Provider) Name() string { return Name }

// Renderer is the output sink's GitHub part.
func (p *Provider) Renderer() output.Renderer { return &renderer{p: p} }

// Start has nothing to do: installations are learned from events.
func (p *Provider) Start(context.Context) error { return nil }

// Stop waits for background notices.
func (p *Provider) Stop(ctx context.Context) error {
	return p.bg.Wait(ctx)
}

// newClient is a go-github client over rt against the configured base.
func (p *Provider) newClient(rt http.RoundTripper) *gh.Client {
	c := gh.NewClient(&http.Client{Transport: rt, Timeout: 30 * time.Second})
	u, _ := url.Parse(p.cfg.APIURL) // checked by config
	c.BaseURL = u
	return c
}

// client is a REST client acting as the installation; ghinstallation
// renews the installation token before it expires.
func (p *Provider) client(installation int64) *gh.Client { return p.installationClient(installation).c }

// installationToken is the installation's token, renewed before it
// expires; it goes nowhere but to GitHub.
func (p *Provider) installationToken(ctx context.Context, installation int64) (string, error) {
	return p.installationClient(installation).t.Token(ctx)
}

// installationClient is an installation's REST client and the transport
// that holds its token.
type installationClient struct {
	c *gh.Client
	t *ghinstallation.Transport
}

func (p *Provider) installationClient(installation int64) installationClient {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[installation]; ok {
		return c
	}
	t := ghinstallation.NewFromAppsTransport(p.apps, installation)
	c := installationClient{c: p.newClient(t), t: t}
	p.clients[installation] = c
	return c
}

// appClient is a REST client acting as the App (JWT).
func (p *Provider) appClient() *gh.Client { return p.newClient(p.apps) }

// sessionInstallation is the GitHub installation id of a session.
func sessionInstallation(s *core.Session) (int64, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return 0, fmt.Errorf("session %s is not from github: %w", s.ID, core.ErrInvalid)
	}
	id, err := strconv.ParseInt(s.Origin.TenantID, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("session %s: installation %q: %w", s.ID, s.Origin.TenantID, core.ErrInvalid)
	}
	return id, nil
}
