package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	xoauth2 "golang.org/x/oauth2"
)

// activity is one agent activity to post.
type activity struct {
	// ID is the activity's id at Linear (a UUID the gateway derives from
	// the session and log position): the key that makes a post exactly once.
	ID           string
	AgentSession string
	Content      map[string]any // {"type":"thought","body":…}, …
	Ephemeral    bool
	// Select offers options to choose from (an elicitation's select
	// signal); a choice comes back as a prompt with its value.
	Select []option
}

// option is one choice of a select elicitation.
type option struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// kind is the activity's content type.
func (a activity) kind() string { s, _ := a.Content["type"].(string); return s }

// sessionUpdate changes an agent session; empty fields are left alone.
type sessionUpdate struct {
	ExternalURL string
	Plan        json.RawMessage
}

// viewer is who an installation's token acts as.
type viewer struct {
	AppUserID, AppUserName string
	OrgID, OrgName, URLKey string
}

// platform is what the provider calls at Linear for one installation.
type platform interface {
	createActivity(ctx context.Context, a activity) error
	// activityExists reports whether an activity with this id was created.
	activityExists(ctx context.Context, id string) (bool, error)
	updateSession(ctx context.Context, agentSession string, u sessionUpdate) error
	viewer(ctx context.Context) (viewer, error)
	// user looks a user of the workspace up.
	user(ctx context.Context, id string) (person, error)
	// repositorySuggestions ranks candidates for the issue.
	repositorySuggestions(ctx context.Context, issueID, agentSession string, candidates []repoRef) ([]suggestion, error)
}

// person is a user of the workspace as the gateway judges answers.
type person struct {
	ID, Name           string
	Active, Guest, App bool
}

// member reports whether the person belongs to the workspace: an active
// user who is neither a guest nor an app.
func (u person) member() bool { return u.Active && !u.Guest && !u.App }

// repoRef is a repository on a git host.
type repoRef struct{ Host, FullName string }

// suggestion is Linear's confidence (0 to 1) that an issue is about a
// repository.
type suggestion struct {
	FullName   string
	Confidence float64
}

// apiError is a Linear answer the sink acts on.
type apiError struct {
	// RateLimited: RATELIMITED; Reset is when the budget refills (zero:
	// unknown).
	RateLimited bool
	Reset       time.Time
	// UserError: Linear refused the input (retrying cannot help).
	UserError bool
	// Unauthorized: the token was refused even after a refresh.
	Unauthorized bool
	// Exists: an entity with the given id exists already.
	Exists bool
	Msg    string
}

func (e *apiError) Error() string { return "linear: " + e.Msg }

func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return nil
}

// authTransport authenticates requests as an installation: its access
// token, renewed before it expires, and renewed and retried once when
// Linear answers 401 (a token revoked or expired early).
type authTransport struct {
	p    *Provider
	in   *core.Installation
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ts, err := t.p.tokens.Get(req.Context(), t.in)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(req, ts.AccessToken)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || ts.RefreshToken == "" || (req.Body != nil && req.GetBody == nil) {
		return resp, err
	}
	next, rerr := t.p.renew(req.Context(), t.in, ts.AccessToken)
	if rerr != nil {
		t.p.log.Warn("linear token refused and could not be renewed", "installation_id", t.in.ID, "err", rerr)
		if refusedForGood(rerr) {
			return resp, nil // the 401 stands: the installation is gone
		}
		// The token endpoint failed (down, 5xx): an error the caller
		// retries, not a 401 the sink would give its output up for.
		resp.Body.Close()
		return nil, fmt.Errorf("renew a refused linear token: %w", rerr)
	}
	resp.Body.Close()
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.send(retry, next.AccessToken)
}

// refusedForGood reports whether a renewal failed because the tokens are
// gone (none stored, or the refresh token refused), not for a while.
func refusedForGood(err error) bool {
	var re *xoauth2.RetrieveError
	if errors.As(err, &re) {
		return re.Response == nil || re.Response.StatusCode < http.StatusInternalServerError
	}
	return errors.Is(err, oauth.ErrNoToken)
}

func (t *authTransport) send(req *http.Request, token string) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// renew refreshes an installation's tokens now, unless another caller
// (in this process or another replica) already replaced the refused
// access token. Callers in this process share one renewal; the store
// orders the replicas' (oauth.Tokens.Renew).
func (p *Provider) renew(ctx context.Context, in *core.Installation, refused string) (oauth.TokenSet, error) {
	v, err, _ := p.renews.Do(in.ID, func() (any, error) {
		return p.tokens.Renew(context.WithoutCancel(ctx), in, func(cur oauth.TokenSet) bool {
			return cur.AccessToken == refused
		})
	})
	return v.(oauth.TokenSet), err
}

// httpClient is an HTTP client acting as the installation.
func (p *Provider) httpClient(in *core.Installation) *http.Client {
	c := *p.cfg.HTTPClient
	c.Transport = &authTransport{p: p, in: in, base: p.cfg.HTTPClient.Transport}
	return &c
}
