package sandbox

import (
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/environments"
	"github.com/switchboardhq/switchboard/sandbox/hands"
)

// NoSandboxNote is added to the system prompt when sessions have no
// sandbox, so that the model does not promise work it cannot do.
const NoSandboxNote = "Note: this gateway runs without a code sandbox. The bash, read, write, edit, ls, glob and grep tools are not available: you cannot run commands, or read or change files. Say so if a request needs them."

// HandsTools are the tools over d, a backend Open returned; none when it
// is nil (no sandbox), so that the model is not offered tools that would
// fail.
func HandsTools(d *Docker, s Settings) []core.Tool {
	if d == nil {
		return nil
	}
	return hands.Tools(d, hands.Options{MaxTimeout: s.command})
}

// RegisterEnvironments mounts /v1/environments on mux: the environments
// in envs, with their credentials checked in creds and, when there is a
// sandbox (d not nil), their images in its engine.
func RegisterEnvironments(mux *http.ServeMux, d *Docker, envs core.EnvironmentStore, creds environments.CredentialLookup, maxBody int64, log *slog.Logger) {
	h := &environments.Handler{Store: envs, Credentials: creds, Logger: log, MaxBody: maxBody}
	// A nil *Docker in the interface would look like a checker.
	if d != nil {
		h.Images = d
	}
	h.Register(mux)
}
