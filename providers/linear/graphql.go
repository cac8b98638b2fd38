package linear

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/Khan/genqlient/graphql"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/linear/linearapi"
)

// graphqlAPI is the platform over Linear's GraphQL API (linearapi), acting
// as the installation.
func (p *Provider) graphqlAPI(in *core.Installation) platform {
	return &gql{p: p, c: p.client(in)}
}

// client is a linearapi client acting as the installation.
func (p *Provider) client(in *core.Installation) graphql.Client {
	return newGraphQL(p.cfg.APIURL, p.httpClient(in))
}

func newGraphQL(base string, hc *http.Client) graphql.Client {
	return linearapi.NewClient(base+"/graphql", hc)
}

type gql struct {
	p *Provider
	c graphql.Client
}

func (g *gql) createActivity(ctx context.Context, a activity) error {
	raw, err := json.Marshal(a.Content)
	if err != nil {
		return err
	}
	var eph *bool
	if a.Ephemeral {
		eph = &a.Ephemeral
	}
	id := a.ID
	var signal *linearapi.AgentActivitySignal
	var meta *json.RawMessage
	if len(a.Select) > 0 {
		sel := linearapi.AgentActivitySignalSelect
		m, err := json.Marshal(map[string]any{"options": a.Select})
		if err != nil {
			return err
		}
		signal, meta = &sel, (*json.RawMessage)(&m)
	}
	resp, err := linearapi.CreateAgentActivity(ctx, g.c, a.AgentSession, raw, eph, &id, signal, meta)
	if err != nil {
		return g.classify(err)
	}
	if !resp.AgentActivityCreate.Success {
		return &apiError{Msg: "agentActivityCreate: success false"}
	}
	return nil
}

// activityExists asks for the activity by id; Linear answers an id it
// does not have with an entity-not-found error.
func (g *gql) activityExists(ctx context.Context, id string) (bool, error) {
	resp, err := linearapi.GetAgentActivity(ctx, g.c, id)
	if linearapi.NotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, g.classify(err)
	}
	return resp.AgentActivity.Id != "", nil
}

func (g *gql) updateSession(ctx context.Context, agentSession string, u sessionUpdate) error {
	var err error
	if u.ExternalURL != "" {
		err = linearapi.SetExternalURL(ctx, g.c, agentSession, u.ExternalURL, "switchboard session")
	}
	if err == nil && len(u.Plan) > 0 {
		plan := u.Plan
		_, err = linearapi.UpdateAgentSession(ctx, g.c, agentSession, nil, nil, &plan)
	}
	if err != nil {
		return g.classify(err)
	}
	return nil
}

func (g *gql) user(ctx context.Context, id string) (person, error) {
	resp, err := linearapi.GetUser(ctx, g.c, id)
	if err != nil {
		return person{}, g.classify(err)
	}
	u := resp.User
	return person{ID: u.Id, Name: u.Name, Active: u.Active, Guest: u.Guest, App: u.App}, nil
}

func (g *gql) repositorySuggestions(ctx context.Context, issueID, agentSession string, candidates []repoRef) ([]suggestion, error) {
	in := make([]linearapi.CandidateRepository, len(candidates))
	for i, c := range candidates {
		in[i] = linearapi.CandidateRepository{Hostname: c.Host, RepositoryFullName: c.FullName}
	}
	var as *string
	if agentSession != "" {
		as = &agentSession
	}
	resp, err := linearapi.RepositorySuggestions(ctx, g.c, issueID, as, in)
	if err != nil {
		return nil, g.classify(err)
	}
	var out []suggestion
	for _, s := range resp.IssueRepositorySuggestions.Suggestions {
		out = append(out, suggestion{FullName: s.RepositoryFullName, Confidence: s.Confidence})
	}
	return out, nil
}

func (g *gql) viewer(ctx context.Context) (viewer, error) {
	resp, err := linearapi.Viewer(ctx, g.c)
	if err != nil {
		return viewer{}, g.classify(err)
	}
	return viewer{AppUserID: resp.Viewer.Id, AppUserName: resp.Viewer.Name,
		OrgID: resp.Organization.Id, OrgName: resp.Organization.Name, URLKey: resp.Organization.UrlKey}, nil
}

// classify turns linearapi's errors into the ones the sink acts on.
func (g *gql) classify(err error) error {
	var le *linearapi.Error
	if !errors.As(err, &le) {
		return err // transport: retried with the sink's backoff
	}
	ae := &apiError{Msg: err.Error()}
	switch wait, limited := linearapi.RateLimited(err); {
	case limited:
		ae.RateLimited = true
		if wait > 0 {
			ae.Reset = g.p.cfg.Now().Add(wait)
		}
	case linearapi.Unauthenticated(err):
		ae.Unauthorized = true
	case exists(err):
		ae.Exists = true
	case linearapi.UserError(err):
		ae.UserError = true
	}
	return ae
}

// exists recognises Linear refusing an entity whose id it has already.
func exists(err error) bool {
	var le *linearapi.Error
	if !errors.As(err, &le) {
		return false
	}
	for _, e := range le.Errors {
		m := strings.ToLower(e.Message)
		code, _ := e.Extensions["code"].(string)
		if code == "CONFLICT" || strings.Contains(m, "already exists") || strings.Contains(m, "duplicate") {
			return true
		}
	}
	return false
}
