package webtools

import (
	"fmt"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
)

// Defaults of Options.
const (
	DefaultMaxBytes   = 2 << 20
	DefaultTimeout    = 30 * time.Second
	DefaultMaxResults = 10
	// MaxResults bounds what a search may be configured to return.
	MaxResults = 20
	// BraveURL is the Brave Search API's web search endpoint.
	BraveURL = "https://api.search.brave.com/res/v1/web/search"
)

// Where web_fetch fetches from.
const (
	FromSandbox = "sandbox"
	FromGateway = "gateway"
)

// The search backends.
const (
	BackendSearXNG = "searxng"
	BackendBrave   = "brave"
)

// Options are the settings of the web tools.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_WEB_FETCH", Flag: "web-fetch", Default: "off", Usage: "offer the web_fetch tool: on or off"},
		{Env: "SWITCHBOARD_WEB_FETCH_FROM", Flag: "web-fetch-from", Default: FromSandbox, Usage: "where web_fetch fetches from: sandbox (the session's sandbox through its egress proxy, its environment's allowlist applying; the gateway when there is no sandbox) or gateway (always the gateway, public addresses only)"},
		{Env: "SWITCHBOARD_WEB_FETCH_POLICY", Flag: "web-fetch-policy", Default: string(core.PolicyAllow), Usage: "web_fetch runs at once (always_allow) or after a person confirms each call (always_ask)"},
		{Env: "SWITCHBOARD_WEB_FETCH_MAX_BYTES", Flag: "web-fetch-max-bytes", Default: strconv.Itoa(DefaultMaxBytes), Usage: "most bytes of a page web_fetch downloads; the rest is cut, with a note"},
		{Env: "SWITCHBOARD_WEB_FETCH_TIMEOUT_SECONDS", Flag: "web-fetch-timeout-seconds", Default: strconv.Itoa(int(DefaultTimeout / time.Second)), Usage: "longest one web_fetch call may take, redirects and robots.txt included"},
		{Env: "SWITCHBOARD_WEB_FETCH_ROBOTS", Flag: "web-fetch-robots", Default: "true", Usage: "web_fetch honours the sites' robots.txt (user agent switchboard)"},
		{Env: "SWITCHBOARD_WEB_FETCH_ALLOW_PRIVATE", Flag: "web-fetch-allow-private", Default: "false", Usage: "let web_fetch from the gateway (sessions without a sandbox) reach loopback, private and link-local addresses; a sandbox's fetches follow SWITCHBOARD_EGRESS_ALLOW_PRIVATE"},
		{Env: "SWITCHBOARD_WEB_SEARCH", Flag: "web-search", Default: "off", Usage: "offer the web_search tool through a backend: off, searxng or brave"},
		{Env: "SWITCHBOARD_WEB_SEARCH_URL", Flag: "web-search-url", Default: "", Usage: "the search backend: a SearXNG instance's base URL (required for searxng; its json format enabled), or the Brave endpoint (default " + BraveURL + ")"},
		{Env: "SWITCHBOARD_WEB_SEARCH_KEY", Flag: "web-search-key", Default: "", Usage: "the Brave Search API subscription token (required for brave)"},
		{Env: "SWITCHBOARD_WEB_SEARCH_POLICY", Flag: "web-search-policy", Default: string(core.PolicyAllow), Usage: "web_search runs at once (always_allow) or after a person confirms each call (always_ask)"},
		{Env: "SWITCHBOARD_WEB_SEARCH_MAX_RESULTS", Flag: "web-search-max-results", Default: strconv.Itoa(DefaultMaxResults), Usage: fmt.Sprintf("most results one web_search returns (1 to %d)", MaxResults)},
	}
}

// Config is the validated values of Options.
type Config struct {
	// Fetch offers web_fetch, under FetchPolicy.
	Fetch       bool
	FetchPolicy core.Policy
	// FromGateway fetches from the gateway even for sessions with a
	// sandbox.
	FromGateway bool
	MaxBytes    int64
	Timeout     time.Duration
	Robots      bool
	// AllowPrivate lets the gateway's own fetcher reach internal
	// addresses; a sandbox's fetches go through its egress proxy, which
	// has its own setting.
	AllowPrivate bool

	// Search is the backend of web_search ("" when off), under
	// SearchPolicy.
	Search       string
	SearchURL    string
	SearchKey    string
	SearchPolicy core.Policy
	MaxResults   int
}

// LoadConfig checks the values of Options; a wrong one fails with one
// line that names its variable.
func LoadConfig(v settings.Values) (Config, error) {
	var c Config
	var err error
	switch v["SWITCHBOARD_WEB_FETCH"] {
	case "on":
		c.Fetch = true
	case "off", "":
	default:
		return c, fmt.Errorf("SWITCHBOARD_WEB_FETCH=%q: want on or off", v["SWITCHBOARD_WEB_FETCH"])
	}
	switch v["SWITCHBOARD_WEB_FETCH_FROM"] {
	case FromSandbox, "":
	case FromGateway:
		c.FromGateway = true
	default:
		return c, fmt.Errorf("SWITCHBOARD_WEB_FETCH_FROM=%q: want sandbox or gateway", v["SWITCHBOARD_WEB_FETCH_FROM"])
	}
	if c.FetchPolicy, err = policy(v, "SWITCHBOARD_WEB_FETCH_POLICY"); err != nil {
		return c, err
	}
	n, err := v.Int("SWITCHBOARD_WEB_FETCH_MAX_BYTES", 1024)
	if err != nil {
		return c, err
	}
	c.MaxBytes = int64(n)
	if c.Timeout, err = v.Duration("SWITCHBOARD_WEB_FETCH_TIMEOUT_SECONDS"); err != nil {
		return c, err
	}
	if c.Robots, err = v.Bool("SWITCHBOARD_WEB_FETCH_ROBOTS"); err != nil {
		return c, err
	}
	if c.AllowPrivate, err = v.Bool("SWITCHBOARD_WEB_FETCH_ALLOW_PRIVATE"); err != nil {
		return c, err
	}
	if c.SearchPolicy, err = policy(v, "SWITCHBOARD_WEB_SEARCH_POLICY"); err != nil {
		return c, err
	}
	if c.MaxResults, err = v.Int("SWITCHBOARD_WEB_SEARCH_MAX_RESULTS", 1); err != nil {
		return c, err
	}
	if c.MaxResults > MaxResults {
		return c, fmt.Errorf("SWITCHBOARD_WEB_SEARCH_MAX_RESULTS=%d: want at most %d", c.MaxResults, MaxResults)
	}
	c.SearchKey = v["SWITCHBOARD_WEB_SEARCH_KEY"]
	switch v["SWITCHBOARD_WEB_SEARCH"] {
	case "off", "":
		return c, nil
	case BackendSearXNG:
		if v["SWITCHBOARD_WEB_SEARCH_URL"] == "" {
			return c, fmt.Errorf("SWITCHBOARD_WEB_SEARCH_URL is required with SWITCHBOARD_WEB_SEARCH=searxng: the instance's base URL")
		}
	case BackendBrave:
		if c.SearchKey == "" {
			return c, fmt.Errorf("SWITCHBOARD_WEB_SEARCH_KEY is required with SWITCHBOARD_WEB_SEARCH=brave: the API's subscription token")
		}
		if v["SWITCHBOARD_WEB_SEARCH_URL"] == "" {
			c.SearchURL = BraveURL
		}
	default:
		return c, fmt.Errorf("SWITCHBOARD_WEB_SEARCH=%q: want off, searxng or brave", v["SWITCHBOARD_WEB_SEARCH"])
	}
	c.Search = v["SWITCHBOARD_WEB_SEARCH"]
	if c.SearchURL == "" {
		if c.SearchURL, err = v.URL("SWITCHBOARD_WEB_SEARCH_URL"); err != nil {
			return c, err
		}
	}
	return c, nil
}

// policy is always_allow or always_ask: a tool that is off is not
// offered at all, so deny has no use here.
func policy(v settings.Values, name string) (core.Policy, error) {
	switch p := core.Policy(v[name]); p {
	case "", core.PolicyAllow:
		return core.PolicyAllow, nil
	case core.PolicyAsk:
		return p, nil
	}
	return "", fmt.Errorf("%s=%q: want %s or %s", name, v[name], core.PolicyAllow, core.PolicyAsk)
}
