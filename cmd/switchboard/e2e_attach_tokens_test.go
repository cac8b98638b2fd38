package main_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestCLIAttachTokens: session attach-token create shows the token once
// with the command line for an editor; the token reads and steers its
// own session only; list shows no secret; revoke ends its access with a
// clear error.
func TestCLIAttachTokens(t *testing.T) {
	_, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken)
	sb.ok("", "agent", "create", "--name", "helper", "--model", "anthropic/claude-test")
	id := field(t, sb.ok("", "session", "create", "--agent", "helper"), "id")
	other := field(t, sb.ok("", "session", "create", "--agent", "helper"), "id")
	if _, errOut, code := sb.run("", "session", "attach-token", "create", id); code != 2 || !strings.Contains(errOut, "--person is required") {
		t.Fatalf("attach-token create without --person: exit %d, %s", code, errOut)
	}

	out := sb.ok("", "session", "attach-token", "create", id, "--person", "Ada Lovelace")
	token := strings.TrimSuffix(field(t, out, "token"), "  (shown once)")
	tokenID := field(t, out, "id")
	if !strings.HasPrefix(token, "sba_"+id+"_") || field(t, out, "editor") != "SWITCHBOARD_TOKEN="+token+" switchboard acp --url "+srv.url {
		t.Fatalf("attach-token create printed:\n%s", out)
	}
	var list page[struct {
		ID, Person, Token string
		RevokedAt         *string `json:"revoked_at"`
	}]
	sb.okJSON(&list, "session", "attach-token", "list", id, "--json")
	if len(list.Data) != 1 || list.Data[0].ID != tokenID || list.Data[0].Person != "Ada Lovelace" || list.Data[0].Token != "" || list.Data[0].RevokedAt != nil {
		t.Fatalf("attach-token list: %+v", list)
	}

	ada := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+token)
	if st := ada.ok("", "session", "status", id); !strings.Contains(st, id) {
		t.Fatalf("status with the attach token:\n%s", st)
	}
	ada.ok("", "session", "send", id, "continue from my editor")
	ada.fails("may only read and steer its own session", "session", "status", other)
	ada.fails("may only read and steer its own session", "session", "list")
	srv.waitFor(id, "the message signed by Ada", func(_ sessionState, evs []event) bool {
		for _, e := range evs {
			if e.Type == "user.message" && strings.Contains(string(e.Body), `"by":"Ada Lovelace"`) && strings.Contains(string(e.Body), `"via":"editor"`) {
				return true
			}
		}
		return false
	})

	out = sb.ok("", "session", "attach-token", "revoke", id, tokenID)
	if field(t, out, "revoked_at") == "" {
		t.Fatalf("attach-token revoke printed:\n%s", out)
	}
	ada.fails("attach token "+tokenID+" was revoked", "session", "status", id)
	sb.okJSON(&list, "session", "attach-token", "list", id, "--json")
	if len(list.Data) != 1 || list.Data[0].RevokedAt == nil {
		t.Fatalf("attach-token list after the revoke: %+v", list)
	}
}
