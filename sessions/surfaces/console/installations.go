package console

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Platform is a platform the gateway ships, as its provider describes
// it: the console names no platform of its own.
type Platform struct {
	// Name is the provider's, Label how people write it, Thread what one
	// of its origin keys names ("Slack thread").
	Name, Label, Thread string
	// Served says the gateway is configured for the platform, and
	// Install that its install flow is served at /oauth/<name>/install.
	Served, Install bool
	// Setup is what to set for the platform to be served at all, and
	// NoInstall what to do when it is served without an install flow.
	Setup, NoInstall string
	// SetupFlow is the path, under the gateway's root, of a flow that
	// creates the platform's app when it is served without one, and
	// SetupFlowText its link's text.
	SetupFlow, SetupFlowText string
	// Docs is the platform's page of the documentation.
	Docs string
	// KeyURL is the address of what an origin key names ("" when it
	// cannot be built; nil when no key can).
	KeyURL func(key string) string
	// Health reads an installation's state from its metadata; ok false
	// when the installation stands by its tokens.
	Health func(in *core.Installation) (text string, healthy, ok bool)
	// App is how to create the platform's app by hand for this gateway;
	// nil when its provider says nothing of it.
	App *AppSetup
}

// AppSetup is a platform's app to create by hand: what the command
// Command prints for this gateway, and what the gateway still lacks to
// serve the platform, from its own settings.
type AppSetup struct {
	// Command is the command line that prints the manifest.
	Command string
	// Manifest is what to paste or enter on the platform; "" when it
	// cannot be made, and Problem says why.
	Manifest, Problem string
	// Steps say what to do, in order.
	Steps []string
	// Checklist is what the gateway has and lacks, in the order it is
	// done.
	Checklist []Check
}

// Check is one item of a checklist: Fix says how to do what is not Done.
type Check struct {
	Text, Fix string
	Done      bool
}

// Missing counts the items not done.
func (a *AppSetup) Missing() int {
	n := 0
	for _, c := range a.Checklist {
		if !c.Done {
			n++
		}
	}
	return n
}

// installOffer is one platform's entry on the page: an install link, or
// what to set instead.
type installOffer struct {
	Platform
	// Href is the install flow's address relative to the page, "" when
	// there is none.
	Href string
	// Note says why there is no link.
	Note string
	// SetupHref is the address of the flow that creates the platform's
	// app, set when the gateway is served without one.
	SetupHref string
}

// installRow is one installation as the pages show it.
type installRow struct {
	*core.Installation
	// Label names the platform; AgentName the bound agent ("" for the
	// agent named default).
	Label, AgentName string
	Health           health
}

// health is how an installation stands: OK, or what is wrong.
type health struct {
	OK   bool
	Text string
	// Expires is when its token expires (renewed before), nil when it
	// does not.
	Expires *time.Time
}

// healthOf reads an installation's state: what its platform keeps in its
// metadata, else its tokens.
func (h *Handler) healthOf(in *core.Installation, now time.Time) health {
	if p, ok := h.platform(in.Provider); ok && p.Health != nil {
		if text, healthy, ok := p.Health(in); ok {
			return health{OK: healthy, Text: text}
		}
	}
	if !in.HasToken {
		return health{Text: "No token: the app was uninstalled or its tokens revoked. Install it again."}
	}
	if in.TokenExpiresAt != nil {
		t := in.TokenExpiresAt.Time
		if !now.Before(t) {
			return health{Text: "Token expired and not renewed: the gateway's log says why. Install it again.", Expires: &t}
		}
		return health{OK: true, Text: "Token valid", Expires: &t}
	}
	return health{OK: true, Text: "Token valid"}
}

// platform is the platform named provider.
func (h *Handler) platform(provider string) (Platform, bool) {
	i := slices.IndexFunc(h.cfg.Platforms, func(p Platform) bool { return p.Name == provider })
	if i < 0 {
		return Platform{}, false
	}
	return h.cfg.Platforms[i], true
}

// labelOf is how people write the platform's name.
func (h *Handler) labelOf(provider string) string {
	if p, ok := h.platform(provider); ok && p.Label != "" {
		return p.Label
	}
	return provider
}

// maxListPages bounds how many pages of 1000 a console page reads of a
// list the store does not count.
const maxListPages = 10

// allPages reads every page of a list (at most maxListPages), each after
// the last item of the one before.
func allPages[T any](list func(client.ListParams) (*web.Page[T], error), id func(T) string) ([]T, error) {
	var out []T
	p := client.ListParams{Limit: 1000}
	for range maxListPages {
		page, err := list(p)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Data...)
		if !page.HasMore || len(page.Data) == 0 {
			break
		}
		p.After = id(page.Data[len(page.Data)-1])
	}
	return out, nil
}

// allInstallations reads every installation (in id order).
func (h *Handler) allInstallations(ctx context.Context) ([]core.Installation, error) {
	return allPages(func(p client.ListParams) (*web.Page[core.Installation], error) {
		return h.api.ListInstallations(ctx, "", p)
	},
		func(in core.Installation) string { return in.ID })
}

// allAgents reads every agent's latest version.
func (h *Handler) allAgents(ctx context.Context) ([]core.Agent, error) {
	return allPages(func(p client.ListParams) (*web.Page[core.Agent], error) { return h.api.ListAgents(ctx, p) },
		func(a core.Agent) string { return a.ID })
}

// rowsOf are the installations as the pages show them, their agents
// named from agents.
func (h *Handler) rowsOf(list []core.Installation, agents []core.Agent) []installRow {
	names := map[string]string{}
	for _, a := range agents {
		names[a.ID] = a.Name
	}
	now := h.cfg.Now()
	rows := make([]installRow, 0, len(list))
	for i := range list {
		in := &list[i]
		name := names[in.Agent]
		if name == "" {
			name = in.Agent // an agent deleted since, or not yet listed
		}
		rows = append(rows, installRow{Installation: in, Label: h.labelOf(in.Provider), AgentName: name, Health: h.healthOf(in, now)})
	}
	return rows
}

type installationsPage struct {
	Offers []installOffer
	Rows   []installRow
}

func (h *Handler) registerInstallations(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/installations", h.signedIn(h.installations))
	mux.HandleFunc("GET /console/installations/{id}", h.signedIn(h.installation))
	mux.HandleFunc("POST /console/installations/{id}", h.signedIn(h.editInstallation))
	mux.HandleFunc("POST /console/installations/{id}/uninstall", h.signedIn(h.uninstall))
}

// offers are the install links of the platforms, from r's page: the
// flows are served at the gateway's root, beside /console/.
func (h *Handler) offers(r *http.Request) []installOffer {
	var out []installOffer
	for _, p := range h.cfg.Platforms {
		o := installOffer{Platform: p, Note: p.Setup}
		switch {
		case p.Served && p.Install:
			o.Href, o.Note = relative(r, "../oauth/"+p.Name+"/install"), ""
		case p.Served:
			o.Note = p.NoInstall
			if p.SetupFlow != "" {
				o.SetupHref = relative(r, "../"+p.SetupFlow)
			}
		}
		out = append(out, o)
	}
	return out
}

func (h *Handler) installations(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	ctx := r.Context()
	list, err := h.allInstallations(ctx)
	if err != nil {
		h.failed(w, r, s, "list the installations", err)
		return
	}
	agents, err := h.allAgents(ctx)
	if err != nil {
		h.failed(w, r, s, "list the agents", err)
		return
	}
	p := installationsPage{Offers: h.offers(r), Rows: h.rowsOf(list, agents)}
	h.render(w, r, http.StatusOK, "installations", layout{Title: "Installations", Nav: "installations", CSRF: s.CSRF, Page: p})
}

// installationPage is one installation with its edit and uninstall forms.
type installationPage struct {
	Root, CSRF string
	Row        installRow
	Agents     []core.Agent
	// The form's values: as stored, or as typed when refused.
	Agent, Channels, Users string
	Errors                 formErrors
	// Confirm is the message under the uninstall form's checkbox.
	Confirm string
}

// policyText is a policy list as the form shows it, one per line.
func policyText(list []string) string { return strings.Join(list, "\n") }

// policyList reads a policy field: IDs separated by commas, spaces or
// lines.
func policyList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
}

// installationForm reads the installation and the agents for its page;
// ok is false when it answered already.
func (h *Handler) installationForm(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) (*installationPage, bool) {
	ctx, id := r.Context(), r.PathValue("id")
	in, err := h.api.GetInstallation(ctx, id)
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		h.message(w, r, s, http.StatusNotFound, "No such installation", "There is no installation "+id+": it may have been uninstalled. See Installations.")
		return nil, false
	}
	if err != nil {
		h.failed(w, r, s, "read the installation", err)
		return nil, false
	}
	agents, err := h.allAgents(ctx)
	if err != nil {
		h.failed(w, r, s, "list the agents", err)
		return nil, false
	}
	p := &installationPage{Root: relative(r, ""), CSRF: s.CSRF, Row: h.rowsOf([]core.Installation{*in}, agents)[0], Agents: agents,
		Agent: in.Agent, Channels: policyText(in.Policy.Channels), Users: policyText(in.Policy.Users)}
	return p, true
}

func (h *Handler) renderInstallation(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, p *installationPage) {
	title := p.Row.Label + " " + p.Row.Name
	if p.Row.Name == "" {
		title = p.Row.Label + " " + p.Row.ExternalID
	}
	h.render(w, r, status, "installation", layout{Title: title, Nav: "installations", CSRF: s.CSRF, Page: p})
}

func (h *Handler) installation(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	if p, ok := h.installationForm(w, r, s); ok {
		h.renderInstallation(w, r, s, http.StatusOK, p)
	}
}

func (h *Handler) editInstallation(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	p, ok := h.installationForm(w, r, s)
	if !ok {
		return
	}
	f := r.PostForm
	p.Agent, p.Channels, p.Users = f.Get("agent"), f.Get("channels"), f.Get("users")
	_, err := h.api.UpdateInstallation(r.Context(), p.Row.ID, client.InstallationParams{
		Agent:  &p.Agent,
		Policy: &core.AccessPolicy{Channels: policyList(p.Channels), Users: policyList(p.Users)},
	})
	if err != nil {
		h.installationRefused(w, r, s, p, "update the installation", err, "agent", "policy")
		return
	}
	done(w, r, "installations")
}

// installationRefused shows the API's refusal on the installation's page, under the
// field among fields it names; any other error is a failure to do what.
func (h *Handler) installationRefused(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, p *installationPage, what string, err error, fields ...string) {
	fe, status, ok := refusal(err, fields...)
	if !ok {
		h.failed(w, r, s, what, err)
		return
	}
	p.Errors = fe
	h.renderInstallation(w, r, s, status, p)
}

func (h *Handler) uninstall(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	p, ok := h.installationForm(w, r, s)
	if !ok {
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		p.Confirm = "Tick the box to confirm: nothing was uninstalled."
		h.renderInstallation(w, r, s, http.StatusUnprocessableEntity, p)
		return
	}
	if err := h.api.DeleteInstallation(r.Context(), p.Row.ID); err != nil {
		h.installationRefused(w, r, s, p, "uninstall the installation", err)
		return
	}
	done(w, r, "installations")
}
