package webtools

import (
	"io"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
)

func load(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	v, err := settings.Parse("serve", Options(), nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return LoadConfig(v)
}

func TestLoadConfig(t *testing.T) {
	c, err := load(t, nil)
	if err != nil || c.Fetch || c.Search != "" || !c.Robots || c.AllowPrivate || c.MaxBytes != DefaultMaxBytes || c.Timeout != DefaultTimeout || c.MaxResults != DefaultMaxResults {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = load(t, map[string]string{"SWITCHBOARD_WEB_FETCH": "on", "SWITCHBOARD_WEB_FETCH_POLICY": "always_ask", "SWITCHBOARD_WEB_SEARCH": "brave", "SWITCHBOARD_WEB_SEARCH_KEY": "k"})
	if err != nil || !c.Fetch || c.FetchPolicy != core.PolicyAsk || c.Search != BackendBrave || c.SearchURL != BraveURL || c.SearchPolicy != core.PolicyAllow {
		t.Fatalf("brave: %+v %v", c, err)
	}
	if c, err = load(t, map[string]string{"SWITCHBOARD_WEB_FETCH_FROM": "gateway"}); err != nil || !c.FromGateway {
		t.Fatalf("from the gateway: %+v %v", c, err)
	}
	c, err = load(t, map[string]string{"SWITCHBOARD_WEB_SEARCH": "searxng", "SWITCHBOARD_WEB_SEARCH_URL": "http://searxng:8080"})
	if err != nil || c.Search != BackendSearXNG || c.SearchURL != "http://searxng:8080" {
		t.Fatalf("searxng: %+v %v", c, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SWITCHBOARD_WEB_FETCH": "yes"}, `SWITCHBOARD_WEB_FETCH="yes": want on or off`},
		{map[string]string{"SWITCHBOARD_WEB_FETCH_FROM": "proxy"}, `SWITCHBOARD_WEB_FETCH_FROM="proxy": want sandbox or gateway`},
		{map[string]string{"SWITCHBOARD_WEB_FETCH_POLICY": "deny"}, `SWITCHBOARD_WEB_FETCH_POLICY="deny": want always_allow or always_ask`},
		{map[string]string{"SWITCHBOARD_WEB_SEARCH": "google"}, `SWITCHBOARD_WEB_SEARCH="google": want off, searxng or brave`},
		{map[string]string{"SWITCHBOARD_WEB_SEARCH": "searxng"}, "SWITCHBOARD_WEB_SEARCH_URL is required with SWITCHBOARD_WEB_SEARCH=searxng"},
		{map[string]string{"SWITCHBOARD_WEB_SEARCH": "searxng", "SWITCHBOARD_WEB_SEARCH_URL": "searxng:8080"}, `SWITCHBOARD_WEB_SEARCH_URL="searxng:8080": want an http(s) URL`},
		{map[string]string{"SWITCHBOARD_WEB_SEARCH": "brave"}, "SWITCHBOARD_WEB_SEARCH_KEY is required with SWITCHBOARD_WEB_SEARCH=brave"},
		{map[string]string{"SWITCHBOARD_WEB_SEARCH_MAX_RESULTS": "50"}, "SWITCHBOARD_WEB_SEARCH_MAX_RESULTS=50: want at most 20"},
	} {
		if _, err := load(t, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
}
