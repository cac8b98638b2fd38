package console_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// TestOverviewSandboxHints: the overview's sandbox section names the
// cause the gateway found and the one fix for it, with the docs linked
// where the gateway serves them; a cause it does not know is not made up.
func TestOverviewSandboxHints(t *testing.T) {
	docs := `(see <a href="../docs/sandbox.md">docs/sandbox.md</a>)`
	tests := []struct {
		name          string
		off           *console.SandboxOff
		containers    console.Containers
		want, wantNot []string
	}{
		{
			name: "the image is missing",
			off:  &console.SandboxOff{Cause: "the Docker engine answers but has no image switchboard-sandbox:latest (nothing is pulled)", Fix: "build it with scripts/sandbox-image --full, then restart the gateway"},
			want: []string{
				`The cause: <span id="sandboxes-cause">the Docker engine answers but has no image switchboard-sandbox:latest (nothing is pulled)</span>.`,
				`<span id="sandboxes-fix">build it with scripts/sandbox-image --full, then restart the gateway</span>`, docs,
			},
			wantNot: []string{"SWITCHBOARD_SANDBOX</code>", "to docker"},
		},
		{
			name: "turned off",
			off:  &console.SandboxOff{Cause: "SWITCHBOARD_SANDBOX is none", Fix: "set SWITCHBOARD_SANDBOX to docker (or remove it), then restart the gateway"},
			want: []string{`<span id="sandboxes-cause">SWITCHBOARD_SANDBOX is none</span>`, `<span id="sandboxes-fix">set SWITCHBOARD_SANDBOX to docker (or remove it), then restart the gateway</span>`, docs},
		},
		{
			name:    "off, the cause unknown",
			want:    []string{`id="sandboxes-off"`, `agents have no shell or files. ` + docs},
			wantNot: []string{"sandboxes-cause", "sandboxes-fix"},
		},
		{
			name:       "the engine does not list them",
			containers: fakeContainers{err: errors.New("Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\nIs the docker daemon running?")},
			want:       []string{`The Docker engine did not list the sandboxes (Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?). Check that the engine runs, then reload.`},
			wantNot:    []string{"sandboxes-off"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := installEnv(t, func(c *console.Config) { c.Containers, c.SandboxOff = tt.containers, tt.off })
			c, _ := e.signIn()
			rec := e.do(req{method: "GET", path: "/console/", cookie: c})
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			contains(t, rec.Body.String(), tt.want, tt.wantNot)
		})
	}
}

// TestOverviewNoSessionsHint: with no sessions the overview says why
// from what it knows: nothing installed, or installed and not talked to.
func TestOverviewNoSessionsHint(t *testing.T) {
	for _, tt := range []struct {
		name      string
		installed bool
		want      string
	}{
		{"nothing installed", false, `and nothing is installed
for anyone to talk to it: install an app from <a href="installations">Installations</a>`},
		{"installed", true, `and nobody has yet where an app is installed: mention the agent there`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, f := installEnv(t, nil)
			if !tt.installed {
				f.list = nil
			}
			c, _ := e.signIn()
			contains(t, e.do(req{method: "GET", path: "/console/", cookie: c}).Body.String(), []string{`id="no-sessions"`, tt.want}, nil)
		})
	}
}

// TestEnvironmentsSandboxHint: the environments page says when no
// session runs in an environment, with the cause and fix the overview
// gives.
func TestEnvironmentsSandboxHint(t *testing.T) {
	for _, tt := range []struct {
		name          string
		containers    console.Containers
		off           *console.SandboxOff
		want, wantNot []string
	}{
		{"off", nil, &console.SandboxOff{Cause: "SWITCHBOARD_SANDBOX is none", Fix: "set SWITCHBOARD_SANDBOX to docker"},
			[]string{`<p class="notice" id="environments-sandbox-off">Sandboxes are off on this gateway, so no session runs in an environment.
The cause: <span id="sandboxes-cause">SWITCHBOARD_SANDBOX is none</span>.`, `(see <a href="../docs/sandbox.md">docs/sandbox.md</a>)`}, nil},
		{"on", fakeContainers{}, nil, nil, []string{"environments-sandbox-off"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := installEnv(t, func(c *console.Config) { c.Containers, c.SandboxOff = tt.containers, tt.off })
			e.api.HandleFunc("GET /v1/environments", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"data":[],"has_more":false}`))
			})
			c, _ := e.signIn()
			rec := e.do(req{method: "GET", path: "/console/environments", cookie: c})
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			contains(t, rec.Body.String(), tt.want, tt.wantNot)
		})
	}
}
