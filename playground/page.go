package playground

import (
	"embed"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

//go:embed static
var static embed.FS

// maxInput bounds what the page posts: a message, a comment, a prompt.
const maxInput = 64 << 10

// page serves the playground's page and the actions it posts.
type page struct {
	world   *world
	model   modelView
	console string
	assets  web.Assets
	log     *slog.Logger
}

func newPage(w *world, model modelView, console string, log *slog.Logger) (*page, error) {
	assets, err := web.LoadAssets(static, "static")
	if err != nil {
		return nil, err
	}
	return &page{world: w, model: model, console: console, assets: assets, log: log}, nil
}

// handler is the page's routes, behind the loopback guard.
func (p *page) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { p.serveAsset(w, r, "index.html") })
	mux.HandleFunc("GET /static/{name}", func(w http.ResponseWriter, r *http.Request) { p.serveAsset(w, r, r.PathValue("name")) })
	mux.Handle("GET /api/state", web.Wrap(p.log, p.state))
	mux.Handle("POST /api/slack/messages", web.Wrap(p.log, p.slackMessage))
	mux.Handle("POST /api/slack/reactions", web.Wrap(p.log, p.slackReaction))
	mux.Handle("POST /api/slack/clicks", web.Wrap(p.log, p.slackClick))
	mux.Handle("POST /api/github/comments", web.Wrap(p.log, p.githubComment))
	mux.Handle("POST /api/gitlab/notes", web.Wrap(p.log, p.gitlabNote))
	mux.Handle("POST /api/linear/delegations", web.Wrap(p.log, p.linearDelegation))
	mux.Handle("POST /api/linear/prompts", web.Wrap(p.log, p.linearPrompt))
	return guard(mux)
}

func (p *page) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !p.assets.Serve(w, r, name) {
		http.NotFound(w, r)
	}
}

// guard answers only requests meant for this loopback page: its Host is
// a loopback name (no DNS rebinding), and a post comes from the page
// itself as JSON (another site's form cannot write in the playground,
// where a real model spends money).
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "the playground answers on a loopback address only", http.StatusMisdirectedRequest)
			return
		}
		if r.Method == http.MethodPost {
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				web.WriteError(w, r, nil, web.Errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "post JSON (Content-Type: application/json)"))
				return
			}
			if o := r.Header.Get("Origin"); o != "" {
				if u, err := url.Parse(o); err != nil || u.Host != r.Host {
					web.WriteError(w, r, nil, web.Errorf(http.StatusForbidden, "forbidden", "posts come from the playground's own page"))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether host (with or without a port) names this
// machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (p *page) state(w http.ResponseWriter, r *http.Request) error {
	st := p.world.snapshot()
	st.Model, st.Console = p.model, p.console
	web.WriteJSON(w, http.StatusOK, st)
	return nil
}

// decode reads a post's JSON body into v.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := web.ReadBody(w, r, maxInput)
	if err != nil {
		return err
	}
	return web.Decode(body, v)
}

// required refuses an empty field.
func required(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return web.Invalid("%s is empty: write something first", name)
	}
	return nil
}

// delivered is the answer to an action: what it named and is not there
// as a 404, a failed delivery as a 502.
func delivered(w http.ResponseWriter, err error) error {
	if errors.Is(err, core.ErrNotFound) {
		return err
	}
	if err != nil {
		return web.Errorf(http.StatusBadGateway, "bad_gateway", "%v", err)
	}
	web.WriteJSON(w, http.StatusAccepted, map[string]bool{"delivered": true})
	return nil
}

func (p *page) slackMessage(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Text     string `json:"text"`
		ThreadTS string `json:"thread_ts"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := required("text", in.Text); err != nil {
		return err
	}
	note, err := p.world.slackPost(in.Text, in.ThreadTS)
	if err != nil || note == "" {
		return delivered(w, err)
	}
	web.WriteJSON(w, http.StatusAccepted, map[string]any{"delivered": true, "note": note})
	return nil
}

func (p *page) slackReaction(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		TS   string `json:"ts"`
		Name string `json:"name"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := required("name", in.Name); err != nil {
		return err
	}
	return delivered(w, p.world.slackReact(in.TS, in.Name))
}

func (p *page) slackClick(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		TS       string `json:"ts"`
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := required("action_id", in.ActionID); err != nil {
		return err
	}
	return delivered(w, p.world.slackClick(in.TS, in.ActionID, in.Value))
}

func (p *page) githubComment(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Body string `json:"body"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := required("body", in.Body); err != nil {
		return err
	}
	return delivered(w, p.world.githubComment(in.Body))
}

func (p *page) gitlabNote(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Body       string `json:"body"`
		Discussion string `json:"discussion"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := required("body", in.Body); err != nil {
		return err
	}
	return delivered(w, p.world.gitlabNote(in.Body, in.Discussion))
}

func (p *page) linearDelegation(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Issue string `json:"issue"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if err := required("issue", in.Issue); err != nil {
		return err
	}
	return delivered(w, p.world.linearDelegate(in.Issue))
}

func (p *page) linearPrompt(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Session string `json:"session"`
		Body    string `json:"body"`
		Stop    bool   `json:"stop"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if !in.Stop {
		if err := required("body", in.Body); err != nil {
			return err
		}
	}
	return delivered(w, p.world.linearPrompt(in.Session, in.Body, in.Stop))
}
