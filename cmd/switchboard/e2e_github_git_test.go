package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
)

// startGitHubGit runs serve with Docker sandboxes behind the egress proxy
// and a fake git host (whose certificate only the proxy trusts) holding
// acme/widgets with files on main.
func startGitHubGit(t *testing.T, files map[string]string) (*githubWorld, *fakegithub.GitServer) {
	t.Helper()
	image := sandboximage.ForTest(t) // fails or skips without Docker, saying so
	var git *fakegithub.GitServer
	w := startGitHubWith(t, func(fake *fakegithub.Server) map[string]string {
		git = fake.StartGit(t, sandboximage.HostBridgeAddress(t))
		git.CreateRepo(t, "acme/widgets", files)
		ca := filepath.Join(t.TempDir(), "git-ca.pem")
		if err := os.WriteFile(ca, git.CAPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		return map[string]string{
			"SWITCHBOARD_SANDBOX":              "docker",
			"SWITCHBOARD_SANDBOX_IMAGE":        image,
			"SWITCHBOARD_SANDBOX_MEMORY_MB":    "256",
			"SWITCHBOARD_EGRESS":               "on",
			"SWITCHBOARD_EGRESS_ALLOW_PRIVATE": "true",
			"SWITCHBOARD_EGRESS_CA_FILE":       ca,
			"GITHUB_WEB_URL":                   git.URL,
		}
	})
	return w, git
}

// TestGitHubCodeWork is acceptance 4: inside the sandbox, git (the
// gateway's checkout before the first turn) clones the repository of the
// PR over HTTPS through the egress proxy (the git host's
// certificate comes from a CA only the proxy trusts; the sandbox trusts the
// proxy's), commits, pushes a branch, and the agent opens a PR with the
// GitHub tool. The git host saw installation tokens narrowed to the
// repository and its contents; no token is anywhere in the sandbox: not in its processes'
// environments, the container's config, git's config, the shell history or
// any file.
func TestGitHubCodeWork(t *testing.T) {
	w, git := startGitHubGit(t, map[string]string{"widget.go": "package widget\n"})
	w.fake.SetPermission("carol", "write")
	w.fake.SetHead("acme/widgets", 12, "0123456789abcdef0123456789abcdef01234567")
	cli, dep := deploymentOf(t, w.srv.dataDir)

	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{bashCall("toolu_git", fmt.Sprintf(`set -e
cd /workspace/widgets
test "$(git remote get-url origin)" = %s/acme/widgets.git
git checkout -q -b sb/fix-mondays
echo 'package widget // fixed' > widget.go
git -c user.name=agent -c user.email=agent@example.com commit -q -am 'Fix Mondays'
git push -q origin sb/fix-mondays 2>&1
echo pushed`, git.URL))}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_pr", Name: "mcp_github_create_pull_request",
			Input: map[string]any{"head": "sb/fix-mondays", "base": "main", "title": "Fix Mondays", "body": "Fixes the Monday bug."}}}},
		modelserver.Step{Text: "Opened a pull request with the fix."},
	)
	comment := w.fake.AddComment("acme/widgets", 12, false, "carol", "@sb-agent please fix it")
	if code := w.deliver("issue_comment", "", issueComment(12, true, comment, "carol", "@sb-agent please fix it"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	id := w.session("github:acme/widgets#12")
	_, evs := w.srv.waitIdle(id)
	res := results(t, evs)
	if r := res["toolu_git"]; r.IsError || !strings.Contains(r.Output, "pushed") {
		t.Fatalf("git in the sandbox: %+v", r)
	}
	if r := res["toolu_pr"]; r.IsError {
		t.Fatalf("open the PR: %+v", r)
	}

	// The push landed, and the PR is open from its branch.
	sha := git.Branch(t, "acme/widgets", "sb/fix-mondays")
	if sha == "" || git.Show(t, "acme/widgets", "sb/fix-mondays", "widget.go") != "package widget // fixed\n" {
		t.Fatal("the branch is not on the git host")
	}
	var pr *fakegithub.Issue
	for n := 1; n < 50; n++ {
		if is, ok := w.fake.Issue("acme/widgets", n); ok && is.Pull != nil && is.Pull.HeadRef == "sb/fix-mondays" {
			pr = &is
		}
	}
	if pr == nil || pr.Pull.HeadSHA != sha || pr.Pull.BaseRef != "main" {
		t.Fatalf("no PR from the pushed branch: %+v", pr)
	}

	// The git host took installation tokens narrowed to this repository.
	issued := w.fake.IssuedTokens()
	seen := git.Tokens()
	if len(seen) == 0 {
		t.Fatal("the git host saw no token")
	}
	for _, tok := range seen {
		it, ok := issued[tok]
		if !ok || !slices.Equal(it.Repositories, []string{"widgets"}) || !maps.Equal(it.Permissions, map[string]string{"contents": "write", "metadata": "read"}) {
			t.Fatalf("the git host took %q, narrowed to %+v (issued: %v)", tok, it, ok)
		}
	}

	// No token, nor the header made of it, anywhere in the sandbox.
	box, ok := sandboxes(t, cli, dep)[id]
	if !ok {
		t.Fatal("no sandbox for the session")
	}
	secrets := []string{}
	for tok := range issued {
		secrets = append(secrets, tok, base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok)))
	}
	canary := "canary-" + randomToken(t)
	execIn(t, cli, box.ID, []byte(canary), "sh", "-c", "cat > /workspace/.canary")
	patterns := []byte(canary + "\n" + strings.Join(secrets, "\n") + "\n")
	found := execIn(t, cli, box.ID, patterns, "grep", "-rlsF", "-f", "-", "/", "--exclude-dir=proc", "--exclude-dir=sys", "--exclude-dir=dev")
	if strings.TrimSpace(found) != "/workspace/.canary" {
		t.Errorf("files holding a token (only the canary expected): %q", found)
	}
	// What git itself would use, and what processes carry.
	dump := execIn(t, cli, box.ID, nil, "sh", "-c", `cd /workspace/widgets && git config --list --show-origin; cat ~/.bash_history ~/.git-credentials 2>/dev/null; for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; done 2>/dev/null`)
	if !strings.Contains(dump, "remote.origin.url="+git.URL) {
		t.Fatalf("the dump did not read git's config:\n%s", dump)
	}
	info, err := cli.ContainerInspect(context.Background(), box.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logText bytes.Buffer
	for _, e := range evs {
		logText.Write(e.Body)
	}
	for _, s := range secrets {
		for where, text := range map[string]string{
			"git config, history or a process environment": dump,
			"the container's config":                       strings.Join(info.Container.Config.Env, "\n"),
			"the log":                                      logText.String(),
			"the gateway's output":                         w.srv.out.String(),
		} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a token", where)
			}
		}
	}
}
