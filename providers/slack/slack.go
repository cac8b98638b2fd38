// Package slack is the Slack provider: it puts the gateway's agents into
// Slack threads.
//
//   - Intake (POST /webhooks/slack): the Events API, signed with the
//     app's signing secret (v0, five-minute window), body-limited; each
//     event is decided by the trigger rules (rules.go), then stored with
//     its dedupe keys (the event id and the message identity) in one
//     transaction before the 200; no Slack call is made before it.
//   - Interactivity (POST /webhooks/slack/interactivity): the Stop button,
//     answers to questions and allow/deny of ask-first tools.
//   - Output sink (Renderer): 👀 on receipt, progress (the assistant
//     thread status, or one status message edited in place), every
//     user-level message in the thread as mrkdwn, split at Slack's limits,
//     questions and confirmations as Block Kit buttons, limits and errors
//     explained; driven from the log by providers/output, exactly once.
//   - MCP tools scoped to the installation and thread (tools.go), and the
//     thread's earlier messages as context for the first turn (Prime).
//   - Install: OAuth v2 with token rotation (Installer), or one
//     workspace's bot token (SLACK_BOT_TOKEN); uninstalls forget tokens.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/attach"
	"github.com/switchboardhq/switchboard/providers/output"
)

// Name is the provider's name: the origin provider of its sessions.
const Name = "slack"

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// DefaultScopes are the bot scopes an install asks for, as the app's
// manifest declares them (Scopes). chat:write also covers
// assistant.threads.setStatus.
var DefaultScopes = []string{
	"app_mentions:read", "channels:history", "chat:write", "groups:history",
	"im:history", "mpim:history", "reactions:read", "reactions:write", "users:read", filesScope,
}

// AgentScope is the scope declaring the app an agent adds (agent sessions
// and streamed answers); an install asks for it with the agent setting.
const AgentScope = "assistant:write"

// Scopes are the bot scopes of the app: DefaultScopes, and AgentScope
// for an app configured as an agent. The install asks for them and the
// manifest declares them.
func Scopes(agent bool) []string {
	if agent {
		return append(slices.Clone(DefaultScopes), AgentScope)
	}
	return slices.Clone(DefaultScopes)
}

// Sessions is what the provider needs of the session store.
type Sessions interface {
	GetAgent(ctx context.Context, idOrName string) (*core.Agent, error)
	GetSession(ctx context.Context, id string) (*core.Session, error)
	Pending(ctx context.Context, sessionID string) ([]core.Event, error)
}

// Installations is what the provider needs of the installation store.
type Installations interface {
	core.InstallationStore
	core.OnceStore
}

// Config configures the provider.
type Config struct {
	SigningSecret string
	ClientID      string
	ClientSecret  string
	// BotToken is single-workspace mode: no install, this token's team
	// (learned with auth.test at Start) is the only one served.
	BotToken string
	// AppToken turns Socket Mode on: events and interactions come over a
	// WebSocket the gateway opens (socket.go).
	AppToken string
	APIURL   string // default DefaultAPIURL
	// Scopes and UserScopes are asked for at install; a user token with
	// search:read enables the search tool.
	Scopes     []string
	UserScopes []string
	// AllowBots lets other bots' messages trigger the agent (never its
	// own).
	AllowBots bool
	// HistoryLimit is how many earlier messages of the thread the first
	// turn sees (default 15, what conversations.replies returns per call
	// to apps outside the Marketplace).
	HistoryLimit int
	// StatusEvery throttles progress updates of a running turn (default
	// 2 s).
	StatusEvery time.Duration
	// Agent: the app is configured as a Slack agent, so answers stream
	// (chat.startStream) and the thread's agent session shows the turn
	// (stream.go, agentsession.go).
	Agent bool
	// StreamEvery is the least time between two appends to a streamed
	// answer (0: every delta at once); StreamLimit the most text one
	// streamed message holds (default DefaultStreamLimit).
	StreamEvery time.Duration
	StreamLimit int
	// RefreshMargin renews a rotating token this long before it expires
	// (default oauth.DefaultRefreshMargin).
	RefreshMargin time.Duration
	MaxBody       int64
	// Attachments downloads the files of triggering messages; nil leaves
	// them out.
	Attachments   *attach.Fetcher
	Sessions      Sessions
	Installations Installations
	Sealer        core.Sealer
	// Intake stores what the intake decided (providers.Intake).
	Intake     *providers.Intake
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Provider is the Slack provider.
type Provider struct {
	cfg    Config
	log    *slog.Logger
	tokens *oauth.Tokens
	// single is the team served in bot-token mode ("" otherwise).
	single string

	mu      sync.Mutex
	reacted map[string]bool // input ids given 👀 in this process
	tools   providers.ToolCache[toolKey]
	bg      providers.Background
	// socket is the Socket Mode connection's loop, when on.
	socket socketLoop
}

var (
	_ providers.Provider      = (*Provider)(nil)
	_ providers.WebhookIntake = (*Provider)(nil)
	_ providers.InstallFlow   = (*Provider)(nil)
	_ providers.OutputSink    = (*Provider)(nil)
	_ providers.ToolServer    = (*Provider)(nil)
	_ providers.ContextPrimer = (*Provider)(nil)
	_ providers.Revoker       = (*Provider)(nil)
	_ providers.Starter       = (*Provider)(nil)
	_ providers.FileHost      = (*Provider)(nil)
)

// New returns the provider.
func New(cfg Config) (*Provider, error) {
	if cfg.SigningSecret == "" && cfg.AppToken == "" {
		return nil, errors.New("slack: a signing secret (or an app-level token, for Socket Mode) is required")
	}
	if cfg.BotToken == "" && (cfg.ClientID == "" || cfg.ClientSecret == "") {
		return nil, errors.New("slack: a bot token, or a client id and secret, is required")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = Scopes(cfg.Agent)
	}
	if cfg.HistoryLimit <= 0 {
		cfg.HistoryLimit = 15
	}
	if cfg.StatusEvery <= 0 {
		cfg.StatusEvery = 2 * time.Second
	}
	if cfg.StreamLimit <= 0 {
		cfg.StreamLimit = DefaultStreamLimit
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = web.APIClient(30 * time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Provider{cfg: cfg, log: cfg.Logger.With("provider", Name), reacted: map[string]bool{}}
	p.bg.Logger = p.log
	p.tokens = &oauth.Tokens{Store: cfg.Installations, Sealer: cfg.Sealer, Refresh: p.refresh, Margin: cfg.RefreshMargin}
	return p, nil
}

// Name is "slack".
func (p *Provider) Name() string { return Name }

// Renderer is the output sink's Slack part.
func (p *Provider) Renderer() output.Renderer { return &renderer{p: p} }

// Stop waits for background notices.
func (p *Provider) Stop(ctx context.Context) error {
	p.socket.stop()
	return p.bg.Wait(ctx)
}

// installation finds the installation of a tenant.
func (p *Provider) installation(ctx context.Context, tenant string) (*core.Installation, error) {
	return p.cfg.Installations.FindInstallation(ctx, Name, tenant)
}

// sessionInstallation finds the installation a session came through.
func (p *Provider) sessionInstallation(ctx context.Context, s *core.Session) (*core.Installation, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, fmt.Errorf("session %s is not from slack: %w", s.ID, core.ErrInvalid)
	}
	return p.installation(ctx, s.Origin.TenantID)
}

// client is a Web API client with the installation's bot token, renewed
// first when it is about to expire.
func (p *Provider) client(ctx context.Context, in *core.Installation) (*api, error) {
	ts, err := p.tokens.Get(ctx, in)
	if err != nil {
		return nil, err
	}
	return p.newAPI(ts.AccessToken), nil
}

// userClient is a Web API client with the installation's user token, for
// the methods bots may not call (search); nil when there is none.
func (p *Provider) userClient(ctx context.Context, in *core.Installation) (*api, error) {
	ts, err := p.tokens.Get(ctx, in)
	if err != nil {
		return nil, err
	}
	if ts.Extra["user_token"] == "" {
		return nil, nil
	}
	return p.newAPI(ts.Extra["user_token"]), nil
}

func (p *Provider) newAPI(token string) *api {
	return &api{c: slackapi.New(token, slackapi.OptionAPIURL(p.cfg.APIURL), slackapi.OptionHTTPClient(p.cfg.HTTPClient)), log: p.log}
}

// identityOf is what the trigger rules need of an installation.
func (p *Provider) identityOf(in *core.Installation, env *Envelope) identity {
	id := identity{allowBots: p.cfg.AllowBots}
	if in != nil {
		id.botUserID, id.botID = in.Metadata["bot_user_id"], in.Metadata["bot_id"]
	}
	if id.botUserID == "" && env != nil {
		id.botUserID = env.botUserID()
	}
	return id
}
