package main_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
)

// TestACPAgentKeyAndToolsThroughTheProxy is the ACP runtime's acceptance
// 2: the project's scripted agent, in its sandbox, calls the scripted
// model server through the egress proxy with a placeholder key (the
// server serves TLS from a CA the proxy trusts, on a private address the
// test allows), calls a Slack tool through the gateway's MCP endpoint,
// sends a plan and a permission request. The model server saw the real
// key and the sandbox never held it; the tool reached Slack; the turn's
// usage and cost are what the model server reported; a 1,000-token
// session budget pauses a turn whose model call goes past it.
func TestACPAgentKeyAndToolsThroughTheProxy(t *testing.T) {
	image := acpImage(t)
	realKey := "sk-ant-real-" + randomToken(t)
	ms, modelURL, caPEM := modelserver.StartTLS(t, sandboximage.HostBridgeAddress(t), func(s *modelserver.Server) { s.APIKey = realKey })
	dir := t.TempDir()
	ca, prices := filepath.Join(dir, "model-ca.pem"), filepath.Join(dir, "prices.json")
	if err := os.WriteFile(ca, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prices, []byte(`{"prices":[{"model":"anthropic/claude-acp-test","input":3,"output":15,"cache_read":0.3,"cache_write":3.75,"source":"test","as_of":"2026-11-01"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	w := startSlack(t, fakeslack.Team{ID: "T0ACPE", Name: "Acme"}, map[string]string{
		"SWITCHBOARD_SANDBOX": "docker", "SWITCHBOARD_SANDBOX_IMAGE": image, "SWITCHBOARD_SANDBOX_MEMORY_MB": "256",
		"SWITCHBOARD_EGRESS": "on", "SWITCHBOARD_EGRESS_ALLOW_PRIVATE": "true", "SWITCHBOARD_EGRESS_CA_FILE": ca,
		"SWITCHBOARD_PRICES": prices,
	})
	cli, dep := deploymentOf(t, w.srv.dataDir)
	hostport := strings.TrimPrefix(modelURL, "https://")

	// The agent's key, in a vault, bound to the model server's host.
	code, raw := w.srv.do("POST", "/v1/vaults", map[string]any{"name": "models"})
	if code != 201 {
		t.Fatalf("vault: %d %s", code, raw)
	}
	var v struct{ ID string }
	mustJSON(t, raw, &v)
	code, raw = w.srv.do("POST", "/v1/vaults/"+v.ID+"/credentials", map[string]any{
		"name": "anthropic", "kind": "header", "header_name": "x-api-key", "value": realKey, "hosts": []string{hostport}})
	if code != 201 {
		t.Fatalf("credential: %d %s", code, raw)
	}
	var cred struct{ ID string }
	mustJSON(t, raw, &cred)

	script := acpagent.Script{Turns: []acpagent.Turn{
		{Match: "go to work", Steps: []acpagent.Step{
			{Plan: []acpagent.PlanEntry{{Content: "Ask the model", Status: "in_progress", Priority: "high"}, {Content: "Tell the thread", Status: "pending", Priority: "medium"}}},
			{Model: &acpagent.ModelCall{Prompt: "What is the plan?"}},
			{MCP: &acpagent.MCPCall{Tool: "slack_post_message", Args: map[string]any{"text": "Posted through the gateway's MCP server."}}},
			{Permission: &acpagent.Tool{ID: "call_edit", Title: "Editing plan.md", Kind: "edit"}},
			{Say: "All done."},
		}},
		{Match: "spend", Steps: []acpagent.Step{{Model: &acpagent.ModelCall{Prompt: "Spend a lot."}}, {WaitCancel: true}}},
	}}
	rt := scripted(t, script)
	rt["model_credential"] = cred.ID
	rt["env"].(map[string]string)["ANTHROPIC_BASE_URL"] = modelURL
	rt["env"].(map[string]string)["ANTHROPIC_API_KEY"] = "sk-placeholder"
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{"model": "anthropic/claude-acp-test", "runtime": rt}); code != 200 {
		t.Fatalf("the ACP agent: %d %s", code, raw)
	}
	ms.Push(modelserver.Step{Text: "First ask, then tell.", Usage: modelserver.Usage{Input: 600, Output: 50}})

	m, id := mentionACP(t, w, "C0WORK", "go to work")
	ask := w.waitReply(w.team, "C0WORK", m.TS, "Allow this?")
	if code := w.click(w.team, "U0ALICE", ask, "sb_allow"); code != 200 {
		t.Fatalf("Allow: %d", code)
	}
	w.waitReply(w.team, "C0WORK", m.TS, "All done.")
	_, evs := w.srv.waitIdle(id)

	// The model server took the real key, from the proxy.
	reqs := ms.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("X-Api-Key") != realKey {
		t.Fatalf("model requests %d, key %q", len(reqs), reqs[0].Header.Get("X-Api-Key"))
	}
	if !strings.Contains(string(evs[len(evs)-1].Body)+bodies(evs), "model says: First ask, then tell.") {
		t.Fatalf("the model's answer did not reach the agent: %v", types(evs))
	}
	// The tool reached Slack, in the thread.
	if n := len(w.botReplies(w.team, "C0WORK", m.TS, "Posted through the gateway's MCP server.")); n != 1 {
		t.Fatalf("%d posts of the tool in the thread", n)
	}
	if count(evs, "agent.plan") != 1 || count(evs, "user.tool_confirmation") != 1 {
		t.Fatalf("log %v", types(evs))
	}
	// The turn's usage and cost are what the model server reported.
	var done struct {
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
		CostUSD *float64 `json:"cost_usd"`
	}
	for _, e := range evs {
		if e.Type == "turn.completed" {
			mustJSON(t, e.Body, &done)
		}
	}
	if done.Usage.InputTokens != 600 || done.Usage.OutputTokens != 50 || done.CostUSD == nil || math.Abs(*done.CostUSD-(600*3+50*15)/1e6) > 1e-9 {
		t.Fatalf("turn usage %+v cost %v, want 600/50 costing %v", done.Usage, done.CostUSD, (600*3+50*15)/1e6)
	}

	// Nothing in the sandbox holds the key: no file, no process's
	// environment or arguments, not the container's config.
	box, ok := sandboxes(t, cli, dep)[id]
	if !ok {
		t.Fatal("no sandbox for the session")
	}
	canary := "canary-" + randomToken(t)
	execIn(t, cli, box.ID, []byte(canary), "sh", "-c", "cat > /workspace/.canary")
	found := execIn(t, cli, box.ID, []byte(canary+"\n"+realKey+"\n"), "grep", "-rlsF", "-f", "-", "/", "--exclude-dir=proc", "--exclude-dir=sys", "--exclude-dir=dev")
	if strings.TrimSpace(found) != "/workspace/.canary" {
		t.Errorf("files holding the key (only the canary expected): %q", found)
	}
	dump := execIn(t, cli, box.ID, nil, "sh", "-c", `for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' < "$f"; done 2>/dev/null`)
	if !strings.Contains(dump, "sk-placeholder") {
		t.Fatalf("the dump did not read the agent's environment:\n%s", dump)
	}
	info, err := cli.ContainerInspect(context.Background(), box.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{
		"a process's environment or arguments": dump,
		"the container's config":               strings.Join(info.Container.Config.Env, "\n"),
		"the log":                              bodies(evs),
	} {
		if strings.Contains(text, realKey) {
			t.Errorf("%s holds the model key", where)
		}
	}

	// A session budget the model call goes past pauses the turn.
	budget, _ := json.Marshal(map[string]any{"max_session_tokens": 1000})
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{"limits": json.RawMessage(budget)}); code != 200 {
		t.Fatalf("the budget: %d %s", code, raw)
	}
	ms.Push(modelserver.Step{Text: "expensive", Usage: modelserver.Usage{Input: 1150, Output: 50}})
	m2, id2 := mentionACP(t, w, "C0SPEND", "spend it all")
	st, evs := w.srv.waitFor(id2, "the budget pause", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "budget_exceeded"
	})
	if count(evs, "turn.completed") != 0 || st.Usage.InputTokens != 0 {
		t.Fatalf("a paused turn is not ended: %+v, log %v", st, types(evs))
	}
	w.waitReply(w.team, "C0SPEND", m2.TS, "I paused")
}

// bodies is the log's bodies, one after the other.
func bodies(evs []event) string {
	var sb strings.Builder
	for _, e := range evs {
		sb.Write(e.Body)
	}
	return sb.String()
}
