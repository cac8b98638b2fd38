package linear

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// TestToolCallsShareTheBudget: the model's mcp_linear_* calls take the
// organization's budget at their own priority, behind actions and ahead of
// thoughts, and a RATELIMITED answer blocks the organization's calls. The
// clock is the test's: the bucket refills only when the test moves it.
func TestToolCallsShareTheBudget(t *testing.T) {
	var calls atomic.Int64
	limited := atomic.Bool{}
	linear := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if limited.Load() {
			w.Write([]byte(`{"errors":[{"message":"Rate limit exceeded","extensions":{"code":"RATELIMITED"}}]}`))
			return
		}
		w.Write([]byte(`{"data":{"teams":{"nodes":[]}}}`))
	}))
	t.Cleanup(linear.Close)
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	sealer, err := oauth.NewSealer("a master key for the linear tests")
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{now: time.Unix(1_700_000_000, 0)}
	p, err := New(Config{ClientID: "client-1", ClientSecret: "s", WebhookSecret: testSecret, APIURL: linear.URL,
		Sessions: store, Installations: store, Sealer: sealer, Burst: 2, RequestsPerHour: 3600, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	in := &core.Installation{Provider: Name, ExternalID: testOrg, Metadata: map[string]string{"app_user_id": testAppUser}}
	sealed, exp, err := p.tokens.Seal(in, oauth.TokenSet{AccessToken: "tok", RefreshToken: "ref", Expiry: clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SaveInstallation(t.Context(), in, sealed, exp); err != nil {
		t.Fatal(err)
	}
	srv, err := p.ToolServer(t.Context(), &core.Session{ID: "ses_tools", Origin: &core.Origin{Provider: Name, Key: key(testOrg, "as-1"), TenantID: testOrg}})
	if err != nil || srv == nil {
		t.Fatalf("tool server %v %v", srv, err)
	}
	tool := srv.GetTool("list_teams")
	if tool == nil {
		t.Fatal("no list_teams tool")
	}
	listTeams := func() <-chan *mcp.CallToolResult {
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			var req mcp.CallToolRequest
			req.Params.Name = "list_teams"
			res, err := tool.Handler(t.Context(), req)
			if err != nil {
				res = mcp.NewToolResultError(err.Error())
			}
			done <- res
		}()
		return done
	}
	result := func(what string, done <-chan *mcp.CallToolResult) *mcp.CallToolResult {
		t.Helper()
		select {
		case res := <-done:
			return res
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer", what)
			return nil
		}
	}
	// The burst of two goes at once.
	for i := range 2 {
		if res := result("call in the burst", listTeams()); res.IsError {
			t.Fatalf("call %d: %+v", i, res.Content)
		}
	}
	// The third waits at its priority, with a thought behind it, until
	// the clock refills one call: the tool call takes it, the thought
	// still waits.
	third := listTeams()
	waitUntil(t, "the tool call waiting", func() bool { return p.budgets.waitingAt(testOrg, prioTool) == 1 })
	thought := waitTake(t.Context(), p.budgets, testOrg, prioThought)
	waitUntil(t, "the thought waiting", func() bool { return p.budgets.waitingAt(testOrg, prioThought) == 1 })
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d calls reached Linear with the budget spent", n)
	}
	clock.advance(time.Second)
	if res := result("the third call", third); res.IsError {
		t.Fatalf("third call: %+v", res.Content)
	}
	select {
	case <-thought:
		t.Fatal("the thought went on the refill the tool call took")
	default:
	}
	clock.advance(time.Second)
	if err := <-thought; err != nil {
		t.Fatal(err)
	}

	// RATELIMITED: the model reads an error, and the organization's calls
	// wait for the reset (Linear said nothing: five seconds).
	limited.Store(true)
	clock.advance(time.Second)
	if res := result("the limited call", listTeams()); !res.IsError {
		t.Fatalf("a RATELIMITED answer reached the model as %+v", res.Content)
	}
	p.budgets.mu.Lock()
	blocked := p.budgets.get(testOrg).blocked
	p.budgets.mu.Unlock()
	if want := clock.Now().Add(5 * time.Second); !blocked.Equal(want) {
		t.Fatalf("after RATELIMITED the organization is blocked until %v, want %v", blocked, want)
	}
}
