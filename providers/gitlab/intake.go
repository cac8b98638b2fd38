package gitlab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/webhooks"
)

// RegisterWebhooks mounts POST /webhooks/gitlab; the secret token is
// checked before anything is decoded.
func (p *Provider) RegisterWebhooks(mux *http.ServeMux) {
	mux.Handle("POST /webhooks/"+Name, &webhooks.Inbound{MaxBody: p.cfg.MaxBody, Verify: p.verify, Handle: p.handle, Logger: p.log})
}

// verify compares X-Gitlab-Token with the webhook secret in constant
// time (of their digests, so not even the secret's length shows). The
// token proves the sender, not the body: with a signing token configured
// (GitLab's webhook signing, Standard Webhooks: webhook-id,
// webhook-timestamp and webhook-signature over them and the body) the
// signature is required too, and its timestamp must be recent.
func (p *Provider) verify(h http.Header, body []byte) error {
	got, want := sha256.Sum256([]byte(h.Get("X-Gitlab-Token"))), sha256.Sum256([]byte(p.cfg.WebhookSecret))
	if h.Get("X-Gitlab-Token") == "" || !webhooks.EqualSignature(hex.EncodeToString(got[:]), hex.EncodeToString(want[:])) {
		return webhooks.ErrBadSignature
	}
	if p.signer == nil {
		return nil
	}
	if err := p.signer.VerifyIgnoringTimestamp(body, h); err != nil {
		return fmt.Errorf("%w: %v", webhooks.ErrBadSignature, err)
	}
	return webhooks.CheckTimestamp(h.Get("webhook-timestamp"), p.cfg.Now(), 0)
}

// handle decides an event and stores what it asks for before the 2xx.
func (p *Provider) handle(w http.ResponseWriter, r *http.Request, body []byte) error {
	event := r.Header.Get("X-Gitlab-Event")
	log := p.log.With("event", event, "event_uuid", r.Header.Get("X-Gitlab-Event-UUID"))
	if event == eventNote || event == eventIssue || event == eventMR {
		var h hook
		if err := json.Unmarshal(body, &h); err != nil {
			return fmt.Errorf("gitlab %s: %w: %w", event, err, core.ErrInvalid)
		}
		// Another replica may have handled the install since this one
		// started: the installation tells whom mentions name.
		if err := p.startOAuth(r.Context()); err != nil {
			return err
		}
		d, err := decide(event, h, identity{username: p.appUser(), label: p.triggerLabel()})
		if err != nil {
			return err
		}
		d.ref.Instance = strings.TrimSuffix(r.Header.Get("X-Gitlab-Instance"), "/")
		if err := p.handleDecision(r.Context(), d, r.Header.Get("Idempotency-Key"), log); err != nil {
			return err // a 5xx; GitLab's retry is then safe (dedupe)
		}
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (p *Provider) handleDecision(ctx context.Context, d decision, idempotency string, log *slog.Logger) error {
	if d.act == actIgnore {
		log.Debug("gitlab event needs no session", "key", d.key, "why", d.why)
		return nil
	}
	instance := d.ref.Instance
	if instance == "" {
		instance = p.cfg.URL
	}
	in, err := p.installationFor(ctx, instance, d.ref.Project)
	if errors.Is(err, core.ErrNotFound) {
		log.Info("gitlab event of a project no installation serves; ignored", "project", d.ref.Project, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	if uid := in.Metadata["user_id"]; uid != "" && uid == strconv.FormatInt(d.ref.UserID, 10) {
		// The loop guard by id, should the app's username be unknown or
		// renamed: what the installing user does never triggers the app.
		log.Debug("gitlab event of the app's own user; ignored", "key", d.key)
		return nil
	}
	d.ref.Installation = in.ID
	// GitLab waits 10 s for the answer.
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	if d.act == actMessage && !d.mentioned {
		// Most comments are neither: asked first, so that they cost no
		// look-up of the commenter's role.
		steers, err := p.inAnsweredDiscussion(ctx, in, d)
		if err != nil || !steers {
			return err
		}
	}
	ok, err := p.mayAct(ctx, in, d.ref.ProjectID, d.ref.UserID)
	if err != nil {
		return err
	}
	keys := dedupeKeys(d, idempotency)
	switch {
	case !ok && d.act == actAnswer:
		log.Info("answer refused: not a Developer or above", "username", d.ref.Username, "key", d.key)
		p.replyOnce(d, "Sorry @"+d.ref.Username+", only members with the Developer role or above can allow or deny what the agent asks. Nothing was answered.")
		return nil
	case !ok:
		// Public projects let anyone comment: a mention from someone who
		// is not a Developer is ignored.
		log.Info("trigger ignored: not a Developer or above", "username", d.ref.Username, "key", d.key, "act", d.act.String())
		return nil
	case d.act == actAnswer:
		return p.answer(ctx, in, d, keys, log)
	case d.act == actInterrupt || d.act == actRetry:
		return p.command(ctx, d, keys, log)
	}
	return p.store(ctx, in, d, keys)
}

// dedupeKeys are the delivery's Idempotency-Key (GitLab 17.4 and later
// keep it across retries, unlike X-Gitlab-Event-UUID) and the event's
// content identity (the note and its action, or the label added): the
// one key of an older instance, and a second key against the same event
// delivered under another Idempotency-Key.
func dedupeKeys(d decision, idempotency string) []string {
	var keys []string
	if idempotency != "" {
		keys = append(keys, Name+":idempotency:"+idempotency)
	}
	return append(keys, d.identity)
}

// inputBody is a user.message from GitLab: the text, where it came from
// and, on the input that starts a session, the issue's or merge
// request's title and description.
type inputBody struct {
	Text    string         `json:"text"`
	GitLab  *ref           `json:"gitlab,omitempty"`
	Context *threadContext `json:"context,omitempty"`
}

// store starts or continues the session of the issue or merge request
// with the input and its dedupe keys in one durable transaction.
func (p *Provider) store(ctx context.Context, in *core.Installation, d decision, keys []string) error {
	r := d.ref
	text := "@" + r.Username + " wrote: " + d.text
	body, err := json.Marshal(inputBody{Text: text, GitLab: &r})
	if err != nil {
		return err
	}
	withContext, err := json.Marshal(inputBody{Text: text, GitLab: &r, Context: &d.context})
	if err != nil {
		return err
	}
	start := core.NewInput(core.TypeUserMessage, withContext)
	t := providers.Trigger{
		Installation: in,
		Origin:       core.Origin{Provider: Name, Key: d.key, TenantID: in.ID, URL: keyURL(p.instanceOf(in), d.key), Title: d.context.Title},
		Tenant:       tenantOf(r.Project),
		Input:        core.NewInput(core.TypeUserMessage, body),
		StartInput:   &start,
		Dedupe:       keys,
		Continue:     !d.mentioned,
		Actor:        r.Username,
	}
	if l, ok := providers.ParseBudgetCommand(d.said); ok {
		t.Budget = &l
	}
	if u, ok := providers.ParseContinue(d.said); ok {
		t.ContinueURL = u
	}
	// GitLab has no note only the asker sees: the answer holds no token,
	// it points to the console and the CLI.
	t.Editor = d.mentioned && providers.ParseEditorCommand(d.said)
	res, err := p.cfg.Intake.Route(ctx, t)
	switch {
	case err != nil:
	case res.Outcome == providers.BudgetSet, res.Outcome == providers.BudgetRefused, res.Outcome == providers.Linked, res.Outcome == providers.LinkRefused,
		res.Outcome == providers.EditorAnswered:
		p.replyOnce(d, "@"+r.Username+" "+res.Note)
	}
	return err
}

// instanceOf is the web address of the instance an installation is on.
func (p *Provider) instanceOf(in *core.Installation) string {
	if in != nil && in.Metadata["url"] != "" {
		return strings.TrimSuffix(in.Metadata["url"], "/")
	}
	return p.cfg.URL
}

// command is "@app stop" (interrupts the running turn) or "@app retry"
// (runs the failed turn again) from a Developer or above.
func (p *Provider) command(ctx context.Context, d decision, keys []string, log *slog.Logger) error {
	input := core.NewInput(core.TypeUserInterrupt, nil)
	if d.act == actRetry {
		s, err := p.cfg.Sessions.SessionByKey(ctx, d.key)
		if errors.Is(err, core.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if input, err = core.NewRetry(s, ""); err != nil {
			log.Info("retry refused", "session_id", s.ID, "err", err)
			p.replyOnce(d, "@"+d.ref.Username+" There is no failed turn here to retry.")
			return nil
		}
	}
	res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Origin: core.Origin{Provider: Name, Key: d.key},
		Input: input, Dedupe: keys, Continue: true, Actor: d.ref.Username})
	if err == nil && res.Outcome == providers.Queued {
		log.Info(d.act.String()+" requested", "session_id", res.Session.ID, "username", d.ref.Username)
	}
	return err
}

// inAnsweredDiscussion tells whether a note that does not mention the
// app replies in a discussion the app wrote in: such a reply steers the
// session (one that exists; it starts none).
func (p *Provider) inAnsweredDiscussion(ctx context.Context, in *core.Installation, d decision) (bool, error) {
	if d.ref.Discussion == "" {
		return false, nil
	}
	if _, err := p.cfg.Sessions.SessionByKey(ctx, d.key); errors.Is(err, core.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	c, err := p.apiClient(ctx, in)
	if err != nil {
		return false, err
	}
	var disc *gl.Discussion
	var resp *gl.Response
	if d.ref.Kind == kindMR {
		disc, resp, err = c.Discussions.GetMergeRequestDiscussion(d.ref.ProjectID, d.ref.IID, d.ref.Discussion, gl.WithContext(ctx))
	} else {
		disc, resp, err = c.Discussions.GetIssueDiscussion(d.ref.ProjectID, d.ref.IID, d.ref.Discussion, gl.WithContext(ctx))
	}
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("gitlab: discussion %s of %s: %w", d.ref.Discussion, d.key, err)
	}
	for _, n := range disc.Notes {
		if n.Author.Username != "" && strings.EqualFold(n.Author.Username, p.appUser()) {
			return true, nil
		}
	}
	return false, nil
}

// replyOnce answers a note that gets no turn (a refused answer, a budget
// or continue command) once, after the ack.
func (p *Provider) replyOnce(d decision, text string) {
	p.bg.Go(func(ctx context.Context) {
		first, err := p.cfg.Installations.Once(ctx, Name+":told:"+d.identity, time.Now().Add(8*24*time.Hour))
		if err != nil || !first {
			return
		}
		if err := p.reply(ctx, d.ref, text+"\n\n"+ownMarker("told:"+d.identity)); err != nil {
			p.log.Warn("tell a commenter", "username", d.ref.Username, "err", err)
		}
	})
}

// reply answers where a note was: in its discussion (a reply turns a
// single comment into a thread), or as a new note (a label has none).
// Every note the app posts but the comment tool's goes through here.
func (p *Provider) reply(ctx context.Context, r ref, text string) error {
	c, err := p.refClient(ctx, r)
	if err != nil {
		return err
	}
	text = noQuickActions(text) // the model's words, or a person's quoted
	switch {
	case r.Discussion != "" && r.Kind == kindMR:
		_, _, err = c.Discussions.AddMergeRequestDiscussionNote(r.ProjectID, r.IID, r.Discussion, &gl.AddMergeRequestDiscussionNoteOptions{Body: &text}, gl.WithContext(ctx))
	case r.Discussion != "":
		_, _, err = c.Discussions.AddIssueDiscussionNote(r.ProjectID, r.IID, r.Discussion, &gl.AddIssueDiscussionNoteOptions{Body: &text}, gl.WithContext(ctx))
	case r.Kind == kindMR:
		_, _, err = c.Notes.CreateMergeRequestNote(r.ProjectID, r.IID, &gl.CreateMergeRequestNoteOptions{Body: &text}, gl.WithContext(ctx))
	default:
		_, _, err = c.Notes.CreateIssueNote(r.ProjectID, r.IID, &gl.CreateIssueNoteOptions{Body: &text}, gl.WithContext(ctx))
	}
	return err
}

// refClient is the REST client of the installation a ref came through.
func (p *Provider) refClient(ctx context.Context, r ref) (*gl.Client, error) {
	in, err := p.cfg.Installations.GetInstallation(ctx, r.Installation)
	if err != nil {
		return nil, fmt.Errorf("gitlab installation %s: %w", r.Installation, err)
	}
	return p.apiClient(ctx, in)
}
