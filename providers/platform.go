package providers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Platform is what the rest of the gateway knows of a platform, whether
// or not it is configured: its package declares it in its Module, and
// nothing outside that package names the platform. The session store, the
// engine and the surfaces (API, CLI, console) learn everything
// platform-specific from here, through cmd/switchboard's wiring.
type Platform struct {
	// Name is the provider of the platform's sessions and installations
	// (core.Origin.Provider), the first segment of its origin keys, the
	// path segment of its endpoints and its MCP server's name.
	Name string
	// Label is how people write the platform's name ("Slack").
	Label string
	// Thread says what one of its origin keys names, to follow "a" or
	// "this" in a sentence ("Slack thread").
	Thread string
	// Key is the grammar of the platform's origin keys (anchored), and
	// KeyForm how the docs write one ("slack:<team>:<channel>:<thread ts>").
	Key     *regexp.Regexp
	KeyForm string
	// SettingPrefixes are the prefixes of the platform's variables: one
	// that is no setting is most likely a typo.
	SettingPrefixes []string
	// Docs is the platform's page of the documentation.
	Docs string
	// Setup says what to set for the platform to be served at all, and
	// NoInstall what to do when it is served without an install flow.
	Setup, NoInstall string
	// SetupFlow is the path, under the gateway's root, of a flow that
	// creates the platform's app when it is served without one ("" when
	// it has none), and SetupFlowText its link's text.
	SetupFlow, SetupFlowText string
	// KeyURL is the web address of what an origin key names, "" when the
	// key does not hold enough to build one; nil when no key does.
	KeyURL func(key string) string
	// MetricsLabel names a tenant's installation as a metrics label
	// of bounded cardinality; nil when the tenant is that name already.
	MetricsLabel func(tenant string) string
	// Health reads an installation's state from what the platform keeps
	// in its metadata; ok false when the platform keeps none there and the
	// installation stands by its tokens.
	Health func(in *core.Installation) (h InstallationHealth, ok bool)
}

// InstallationHealth is how an installation stands, as the console says.
type InstallationHealth struct {
	OK   bool
	Text string
}

// Platforms are the platforms the gateway ships, in the order of its
// modules.
type Platforms []Platform

// PlatformsOf lists the modules' platforms.
func PlatformsOf(modules []Module) Platforms {
	out := make(Platforms, 0, len(modules))
	for _, m := range modules {
		out = append(out, m.Platform)
	}
	return out
}

// Lookup is the platform named name.
func (ps Platforms) Lookup(name string) (Platform, bool) {
	i := slices.IndexFunc(ps, func(p Platform) bool { return p.Name == name })
	if i < 0 {
		return Platform{}, false
	}
	return ps[i], true
}

// Names are the platforms' names, in order.
func (ps Platforms) Names() []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// Labels names the platforms as a sentence does: "Slack, GitHub and
// Linear".
func (ps Platforms) Labels() string {
	var labels []string
	for _, p := range ps {
		labels = append(labels, p.Label)
	}
	if len(labels) < 2 {
		return strings.Join(labels, "")
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " and " + labels[len(labels)-1]
}

// SettingPrefixes are the prefixes of every platform's variables.
func (ps Platforms) SettingPrefixes() []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.SettingPrefixes...)
	}
	return out
}

// CheckKey checks an origin key against its platform's grammar and says
// whose it is.
func (ps Platforms) CheckKey(key string) (string, error) {
	provider, err := core.KeyProvider(key)
	if err != nil {
		return "", ps.keyError(key)
	}
	p, ok := ps.Lookup(provider)
	if !ok || p.Key == nil || !p.Key.MatchString(key) {
		return "", ps.keyError(key)
	}
	return provider, nil
}

func (ps Platforms) keyError(key string) error {
	var forms []string
	for _, p := range ps {
		if p.KeyForm != "" {
			forms = append(forms, p.KeyForm)
		}
	}
	return fmt.Errorf("key %q: want %s: %w", key, orList(forms), core.ErrInvalid)
}

// KeyURL is the web address of what an origin key names, "" when none can
// be built from it.
func (ps Platforms) KeyURL(provider, key string) string {
	if p, ok := ps.Lookup(provider); ok && p.KeyURL != nil {
		return p.KeyURL(key)
	}
	return ""
}

// MetricsLabel names the installation a session runs under as a
// metrics label of bounded cardinality: its tenant, as its platform names
// it, and "api" for a session created over the API, whatever tenant it
// was given.
func (ps Platforms) MetricsLabel(s *core.Session) string {
	provider := s.Provider()
	if provider == core.ProviderAPI {
		return core.ProviderAPI
	}
	if s.Tenant == "" {
		return provider
	}
	if p, ok := ps.Lookup(provider); ok && p.MetricsLabel != nil {
		return p.MetricsLabel(s.Tenant)
	}
	return s.Tenant
}

// Threads says what the named platforms' origin keys name, for a
// sentence: "a Slack thread or a Linear issue".
func (ps Platforms) Threads(names []string) string {
	var out []string
	for _, n := range names {
		if p, ok := ps.Lookup(n); ok && p.Thread != "" {
			out = append(out, article(p.Thread)+" "+p.Thread)
		}
	}
	return orList(out)
}

// orList joins items as a sentence does: "a", "a or b", "a, b or c";
// with a comma before the last "or" when an item has an "or" of its own
// ("an issue or pull request, or a thread").
func orList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	last := " or "
	if slices.ContainsFunc(items, func(s string) bool { return strings.Contains(s, " or ") }) {
		last = ", or "
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// article is the indefinite article before a word.
func article(word string) string {
	if word != "" && strings.ContainsRune("AEIOUaeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
