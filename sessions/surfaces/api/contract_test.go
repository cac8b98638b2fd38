package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
)

// TestSessionViewNames: a session from a platform keeps the contract's
// JSON names whatever the Go fields are called: origin.provider, .key,
// .tenant (the platform's own id, Origin.TenantID) and .url, and the
// session's qualified tenant.
func TestSessionViewNames(t *testing.T) {
	s := &core.Session{ID: "ses_1", Status: core.StatusIdle, Tenant: "chat:T1",
		Origin: &core.Origin{Provider: "chat", Key: "chat:T1:C1:1.2", TenantID: "T1", URL: "https://chat.example/t/1"}}
	raw, err := json.Marshal(api.ViewSession(s))
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Origin map[string]any `json:"origin"`
		Tenant string         `json:"tenant"`
	}
	if err := json.Unmarshal(raw, &view); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"provider": "chat", "key": "chat:T1:C1:1.2", "tenant": "T1", "url": "https://chat.example/t/1"}
	if len(view.Origin) != len(want) {
		t.Fatalf("origin %v, want %v", view.Origin, want)
	}
	for k, v := range want {
		if view.Origin[k] != v {
			t.Errorf("origin.%s = %v, want %v", k, view.Origin[k], v)
		}
	}
	if view.Tenant != "chat:T1" || !strings.Contains(string(raw), `"tenant":"chat:T1"`) {
		t.Errorf("tenant %q in %s", view.Tenant, raw)
	}
}
