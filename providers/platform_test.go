package providers_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// testPlatforms are two made-up platforms, so that these tests name none
// the gateway ships.
var testPlatforms = providers.Platforms{
	{Name: "chat", Label: "Chat", Thread: "Chat thread", Key: regexp.MustCompile(`^chat:[A-Z0-9]+:[0-9]+$`), KeyForm: "chat:<room>:<n>",
		SettingPrefixes: []string{"CHAT_"}},
	{Name: "forge", Label: "Forge", Thread: "Forge issue or merge request", Key: regexp.MustCompile(`^forge:[a-z]+/[a-z]+#[1-9][0-9]*$`),
		KeyForm: "forge:<owner>/<repo>#<n>", SettingPrefixes: []string{"FORGE_APP_", "FORGE_HOOK_"},
		KeyURL:       func(key string) string { return "https://forge.example/" + strings.TrimPrefix(key, "forge:") },
		MetricsLabel: func(tenant string) string { owner, _, _ := strings.Cut(tenant, "/"); return owner }},
}

func TestPlatformsCheckKey(t *testing.T) {
	for _, key := range []string{"chat:R1:7", "forge:acme/app#7"} {
		if p, err := testPlatforms.CheckKey(key); err != nil || p != key[:strings.Index(key, ":")] {
			t.Errorf("CheckKey(%q) = %q, %v", key, p, err)
		}
	}
	for _, key := range []string{"", "chat", "chat:R1", "forge:acme/app#0", "forge:acme", "jira:X-1", "Chat:R1:7", "chat:R1:7 "} {
		_, err := testPlatforms.CheckKey(key)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "chat:<room>:<n> or forge:<owner>/<repo>#<n>") {
			t.Errorf("CheckKey(%q): %v, want invalid naming every form", key, err)
		}
	}
}

func TestPlatformsDescribe(t *testing.T) {
	if got := testPlatforms.Labels(); got != "Chat and Forge" {
		t.Errorf("Labels = %q", got)
	}
	if got := strings.Join(testPlatforms.SettingPrefixes(), " "); got != "CHAT_ FORGE_APP_ FORGE_HOOK_" {
		t.Errorf("SettingPrefixes = %q", got)
	}
	if got := testPlatforms.Threads([]string{"forge", "chat"}); got != "a Forge issue or merge request, or a Chat thread" {
		t.Errorf("Threads = %q", got)
	}
	if got := testPlatforms.Threads([]string{"chat"}); got != "a Chat thread" {
		t.Errorf("Threads of one = %q", got)
	}
	if got := testPlatforms.KeyURL("forge", "forge:acme/app#7"); got != "https://forge.example/acme/app#7" {
		t.Errorf("KeyURL = %q", got)
	}
	if got := testPlatforms.KeyURL("chat", "chat:R1:7"); got != "" {
		t.Errorf("KeyURL of a platform without addresses = %q", got)
	}
}

func TestPlatformsMetricsLabel(t *testing.T) {
	tests := []struct {
		name string
		s    core.Session
		want string
	}{
		{"api", core.Session{Tenant: "team-a"}, "api"},
		{"by the platform", core.Session{Origin: &core.Origin{Provider: "forge", Key: "forge:acme/app#1"}, Tenant: "forge:acme/app"}, "forge:acme"},
		{"the tenant", core.Session{Origin: &core.Origin{Provider: "chat", Key: "chat:R1:1"}, Tenant: "chat:R1"}, "chat:R1"},
		{"no tenant", core.Session{Origin: &core.Origin{Provider: "chat", Key: "chat:R1:1"}}, "chat"},
		{"unknown platform", core.Session{Origin: &core.Origin{Provider: "mail", Key: "mail:x"}, Tenant: "mail:x"}, "mail:x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testPlatforms.MetricsLabel(&tt.s); got != tt.want {
				t.Errorf("MetricsLabel = %q, want %q", got, tt.want)
			}
		})
	}
}
