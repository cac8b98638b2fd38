// Package providers is the contract every platform provider meets: a
// small base interface (Provider) and the optional capabilities a provider
// may add (webhook intake, install flow, output sink, MCP tools, thread
// context, token revocation, background work), each checked at compile
// time with `var _ providers.X = (*T)(nil)`.
//
// Each platform is a package of its own under providers/ (slack, github,
// linear); none imports another. Each declares itself as a Module (its
// settings, and how to build it); cmd/switchboard lists the modules, and a
// Set built from them wires each capability it finds: no init()
// registration. A provider keeps verifying, decoding, its trigger rules
// and rendering; what it decides goes to the Intake, the one intake path
// (intake.go). Shared machinery lives beside them: the output sink that
// renders a session's log onto a platform from a recorded position, with
// the exactly-once post protocol (providers/output), and the
// /v1/installations handlers (providers/installations); inbound webhook
// checks live in webhooks/, install state, token sealing and refresh in
// oauth/.
package providers

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/output"
)

// Provider is a platform. Its name is the provider of the sessions it
// starts (core.Origin.Provider), of its installations, the path segment of
// its endpoints and the name of its MCP server (mcp_<name>_<tool>).
type Provider interface {
	Name() string
}

// WebhookIntake receives the platform's webhooks (POST /webhooks/<name>…).
type WebhookIntake interface {
	Provider
	RegisterWebhooks(mux *http.ServeMux)
}

// InstallFlow installs the gateway into a tenant of the platform through
// OAuth; Set.Register mounts it with oauth.Flow at /oauth/<name>/install
// and /oauth/<name>/callback. A nil Installer means the provider is set up
// without one (a single workspace's token).
type InstallFlow interface {
	Provider
	Installer() oauth.Installer
}

// OutputSink renders the logs of sessions that came from the platform
// onto it (replies, progress, questions); the Set runs it in an
// output.Sink.
type OutputSink interface {
	Provider
	Renderer() output.Renderer
}

// ToolServer offers the platform's abilities to the model as an
// in-process MCP server scoped to the session's installation and thread.
// It returns nil when it has nothing for the session. A provider returns
// the same server for the same session while it keeps it, since the MCP
// bridge reconnects when the pointer changes.
type ToolServer interface {
	Provider
	ToolServer(ctx context.Context, s *core.Session) (*server.MCPServer, error)
}

// ContextPrimer gives the model the platform context a session started
// in (the thread's messages before the mention): events to log before the
// session's first turn.
type ContextPrimer interface {
	Provider
	Prime(ctx context.Context, s *core.Session) ([]core.Event, error)
}

// Revoker revokes an installation's tokens at the platform before the
// gateway forgets them (DELETE /v1/installations/{id}). It is asked
// whether or not the installation has stored tokens, and returns nil
// when it holds none.
type Revoker interface {
	Provider
	Revoke(ctx context.Context, in *core.Installation) error
}

// FileHost downloads the files its platform keeps for the messages that
// triggered the agent: intake records them pending (attach.Fetcher.Record)
// and the first turn that reads a message asks for them, through the Set
// (core.AttachmentFetcher).
type FileHost interface {
	Provider
	// FetchAttachments fetches the pending attachments of one tenant
	// (core.AttachmentSource.Tenant), as attach.Fetcher.Fetch does.
	FetchAttachments(ctx context.Context, tenant string, atts []core.Attachment) ([]core.Attachment, error)
}

// Starter has work that runs with the gateway (a single-workspace token
// checked at start, background notices); Stop ends it.
type Starter interface {
	Provider
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}
