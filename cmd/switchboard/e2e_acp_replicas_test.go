package main_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestACPReplicasFencing is the ACP runtime's acceptance 6c: with two
// replicas on PostgreSQL, the one running an ACP turn is paused
// (SIGSTOP); the other takes the session over and finishes the turn
// with an agent of its own; resumed (SIGCONT), the paused replica kills
// its agent process (its sandbox of the session goes with it). The
// thread gets one answer.
func TestACPReplicasFencing(t *testing.T) {
	image := acpImage(t)
	r := startReplicas(t, map[string]string{
		"SWITCHBOARD_SANDBOX": "docker", "SWITCHBOARD_SANDBOX_IMAGE": image, "SWITCHBOARD_SANDBOX_MEMORY_MB": "256",
		"SWITCHBOARD_EGRESS": "on",
	})
	deps := [2]struct{ dir string }{{r.srv[0].dataDir}, {r.srv[1].dataDir}}
	code, raw := r.srv[0].do("POST", "/v1/vaults", map[string]any{"name": "models"})
	if code != 201 {
		t.Fatalf("vault: %d %s", code, raw)
	}
	var v struct{ ID string }
	mustJSON(t, raw, &v)
	code, raw = r.srv[0].do("POST", "/v1/vaults/"+v.ID+"/credentials", map[string]any{
		"name": "anthropic", "kind": "header", "header_name": "x-api-key", "value": "sk-ant-" + randomToken(t), "hosts": []string{"models.example"}})
	if code != 201 {
		t.Fatalf("credential: %d %s", code, raw)
	}
	var cred struct{ ID string }
	mustJSON(t, raw, &cred)
	rt := scripted(t, acpagent.Script{Turns: []acpagent.Turn{
		{MatchAll: "gateway restarted", Steps: []acpagent.Step{{Say: "Finished by the replica that took over."}}},
		{Match: "fence", Steps: []acpagent.Step{toolDone("Reading the code"), {IgnoreCancel: true}}},
	}})
	rt["model_credential"] = cred.ID
	if code, raw := r.srv[0].do("POST", "/v1/agents/default", map[string]any{"runtime": rt}); code != 200 {
		t.Fatalf("the ACP agent: %d %s", code, raw)
	}
	w := r.slackOn(0)
	m := w.fake.Human(r.team.ID, "C0FENCE", "U0ALICE", "<@"+r.team.BotUserID+"> fence me", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	id := w.session(r.team.ID, "C0FENCE", m.TS)
	r.srv[0].waitFor(id, "the turn running", func(_ sessionState, evs []event) bool { return count(evs, "agent.tool_result") == 1 })
	// The holder is the replica whose deployment runs the session's
	// sandbox.
	holder := -1
	for i, d := range deps {
		cli, dep := deploymentOf(t, d.dir)
		if c, ok := sandboxes(t, cli, dep)[id]; ok && c.State == "running" {
			holder = i
		}
	}
	if holder < 0 {
		t.Fatal("no replica runs the session's sandbox")
	}
	other := 1 - holder
	signal(t, r.srv[holder], syscall.SIGSTOP)
	answer := "Finished by the replica that took over."
	w.fake.WaitFor(t, patience, "the answer from the other replica", func() bool { return r.answers("C0FENCE", m.TS, answer) == 1 })
	_, evs := r.srv[other].waitIdle(id)
	checkLog(t, evs)
	signal(t, r.srv[holder], syscall.SIGCONT)
	paused := r.srv[holder]
	paused.waitLog("session taken over by another runtime")

	// The paused replica's agent is gone with its sandbox of the session,
	// an orphan it removes. (Its proxy refuses the session's model and
	// tool traffic meanwhile: the egress proxy's fencing tests.)
	cli, dep := deploymentOf(t, deps[holder].dir)
	deadline := time.Now().Add(patience)
	for {
		box, ok := sandboxes(t, cli, dep)[id]
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			top, _ := cli.ContainerTop(context.Background(), box.ID, client.ContainerTopOptions{})
			t.Fatalf("the paused replica's sandbox of the session is still there (%s), running %v", box.State, top.Processes)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := r.settledAnswers("C0FENCE", m.TS, answer); n != 1 {
		t.Fatalf("%d answers in the thread", n)
	}
}
