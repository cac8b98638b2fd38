package github

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/webhooks"
)

// RegisterWebhooks mounts POST /webhooks/github; the signature is checked
// over the raw body before anything is decoded.
func (p *Provider) RegisterWebhooks(mux *http.ServeMux) {
	mux.Handle("POST /webhooks/github", &webhooks.Inbound{MaxBody: p.cfg.MaxBody, Verify: p.verify, Handle: p.handle, Logger: p.log})
	if p.manifest != nil {
		p.manifest.Register(mux)
	}
}

// verify checks X-Hub-Signature-256 (sha256=<hex HMAC of the body>).
// GitHub signs no timestamp, so replays are stopped by the delivery id's
// durable dedupe instead of a window, and by the signed body's own
// identity (dedupeKeys) against a delivery id that was changed.
func (p *Provider) verify(h http.Header, body []byte) error {
	got, ok := strings.CutPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
	if !ok || !webhooks.EqualSignature(got, webhooks.HMACHex(p.cfg.WebhookSecret, body)) {
		return webhooks.ErrBadSignature
	}
	return nil
}

// handle decides an event and stores what it asks for before the 2xx.
func (p *Provider) handle(w http.ResponseWriter, r *http.Request, body []byte) error {
	event, delivery := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	ev, err := Decode(event, body)
	if err != nil {
		return err
	}
	log := p.log.With("event", event, "delivery", delivery)
	if ev != nil {
		if err := p.handleEvent(r.Context(), ev, delivery, log); err != nil {
			return err // a 5xx; GitHub's redelivery is then safe (dedupe)
		}
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (p *Provider) handleEvent(ctx context.Context, ev any, delivery string, log *slog.Logger) error {
	d := decide(ev, identity{slug: p.cfg.Slug, label: p.cfg.TriggerLabel})
	if d.change != nil {
		if d.installation == 0 {
			return nil
		}
		_, err := p.trackInstallation(ctx, d.installation, *d.change, log)
		return err
	}
	var in *core.Installation
	if d.installation != 0 {
		var active bool
		var err error
		if in, active, err = p.recordInstallation(ctx, d.installation, d.account); err != nil {
			return err
		}
		if !active {
			log.Info("event of a deleted or suspended github installation ignored", "installation", d.installation, "act", d.act.String())
			return nil
		}
	}
	switch d.act {
	case actIgnore, actInstall:
		log.Debug("github event needs no session", "act", d.act.String(), "why", d.why)
		return nil
	case actInterrupt, actRetry, actAnswer:
		return p.requestedAction(ctx, in, d, delivery, log)
	}
	if in != nil && !policyAllows(in.Policy, d.ref.Owner, d.ref.Repo, d.ref.Login) {
		log.Info("trigger refused by the access policy", "installation_id", in.ID, "login", d.ref.Login, "repository", d.ref.Owner+"/"+d.ref.Repo)
		p.replyOnce(d, delivery, "Sorry @"+d.ref.Login+", I am not set up to take requests from you in this repository.")
		return nil
	}
	write, err := p.canWrite(ctx, d.ref)
	if err != nil {
		return err
	}
	switch {
	case !write && d.answer != "":
		log.Info("answer refused: the commenter has no write access", "login", d.ref.Login, "key", d.key)
		p.replyOnce(d, delivery, refusedAnswer(d.ref.Login))
		return nil
	case !write:
		log.Info("trigger refused: the commenter has no write access", "login", d.ref.Login, "key", d.key)
		p.replyOnce(d, delivery, "Sorry @"+d.ref.Login+", I only take requests from people with write access to this repository.")
		return nil
	case d.answer != "":
		return p.answer(ctx, in, d, delivery, log)
	}
	if d.ref.ReviewID != 0 && d.group != "" {
		if text, ok := p.wholeReview(ctx, d); ok {
			d.text = text
		}
	}
	return p.store(ctx, d, delivery)
}

// dedupeKeys are the delivery id and the signed body's identity: for a
// review and its comments the review (they arrive as separate deliveries
// and make one turn), else the comment, the label added or the Stop
// clicked.
func dedupeKeys(d decision, delivery string) []string {
	var keys []string
	if delivery != "" {
		keys = append(keys, "github:delivery:"+delivery)
	}
	switch {
	case d.group != "":
		keys = append(keys, d.group)
	case d.ref.CommentID != 0:
		// X-GitHub-Delivery is not signed: the comment is a second key,
		// so its signed body sent again under another delivery id adds
		// nothing either.
		keys = append(keys, "github:comment:"+d.ref.Kind+":"+strconv.FormatInt(d.ref.CommentID, 10))
	case d.signed != "":
		// The same for a label added and a Stop clicked: the signed body's
		// identity, so a replayed Stop cancels no later turn.
		keys = append(keys, d.signed)
	}
	return keys
}

// store starts or continues the session of the issue or PR with the
// input and its dedupe keys in one durable transaction.
func (p *Provider) store(ctx context.Context, d decision, delivery string) error {
	r := d.ref
	atts := p.attachments(d.installation, d.text)
	body, err := json.Marshal(inputBody{Text: d.text, GitHub: &r, Attachments: atts})
	if err != nil {
		return err
	}
	// The issue's title and body ride only on the input that starts the
	// session.
	withContext, err := json.Marshal(inputBody{Text: d.text, GitHub: &r, Context: &d.context, Attachments: atts})
	if err != nil {
		return err
	}
	in, err := p.cfg.Installations.FindInstallation(ctx, Name, strconv.FormatInt(d.installation, 10))
	if err != nil {
		return err
	}
	kind := "issues"
	if r.PR {
		kind = "pull"
	}
	start := core.NewInput(core.TypeUserMessage, withContext)
	t := providers.Trigger{
		Installation: in,
		Origin: core.Origin{Provider: Name, Key: d.key, TenantID: strconv.FormatInt(d.installation, 10),
			URL: p.cfg.WebURL + "/" + r.Owner + "/" + r.Repo + "/" + kind + "/" + strconv.Itoa(r.Number), Title: d.context.Title},
		Tenant:     Name + ":" + r.Owner + "/" + r.Repo,
		Input:      core.NewInput(core.TypeUserMessage, body),
		StartInput: &start,
		Dedupe:     dedupeKeys(d, delivery),
		Actor:      r.Login,
	}
	if l, ok := providers.ParseBudgetCommand(d.said); ok {
		t.Budget = &l
	}
	if u, ok := providers.ParseContinue(d.said); ok {
		t.ContinueURL = u
	}
	// GitHub has no reply only the asker sees: the answer holds no token.
	t.Editor = providers.ParseEditorCommand(d.said)
	res, err := p.cfg.Intake.Route(ctx, t)
	switch {
	case err != nil:
	case res.Outcome == providers.BudgetSet, res.Outcome == providers.BudgetRefused, res.Outcome == providers.Linked, res.Outcome == providers.LinkRefused,
		res.Outcome == providers.EditorAnswered:
		p.replyOnce(d, delivery, "@"+r.Login+" "+res.Note)
	}
	return err
}

// Prime gives a new session the issue or PR it was called on (title and
// body), from the input that started it, and the conversation there
// before the mention (earlier): user.messages (level internal, actor
// system) logged before the first turn. Later turns get
// only what happened (the new comment, and a review comment's file, line
// and hunk, which are new each time).
func (p *Provider) Prime(ctx context.Context, s *core.Session) ([]core.Event, error) {
	if s.Origin == nil || s.Origin.Provider != Name || s.LastSeq != 0 {
		return nil, nil
	}
	pending, err := p.cfg.Sessions.Pending(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	for _, e := range pending {
		var b inputBody
		if e.Type != core.TypeUserMessage || e.Decode(&b) != nil || b.GitHub == nil || b.Context == nil {
			continue
		}
		text := contextText(*b.GitHub, *b.Context) + "\n\n" + p.cloneHint(*b.GitHub)
		evs := []core.Event{core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: text})}
		if e, ok := p.earlier(ctx, s, *b.GitHub); ok {
			evs = append(evs, e)
		}
		return evs, nil
	}
	return nil, nil
}

// requestedAction is the check run's Stop, Retry, Allow or Deny button,
// from someone with write access; an Allow or Deny from anyone else is
// refused with a comment saying why. A Retry when there is nothing to
// retry (the turn was retried already, a later one ended) is logged and
// dropped: the button only shows on a check run whose turn can be
// retried.
func (p *Provider) requestedAction(ctx context.Context, in *core.Installation, d decision, delivery string, log *slog.Logger) error {
	owner, repo, number, _ := parseKey(d.key)
	d.ref.Owner, d.ref.Repo, d.ref.Number = owner, repo, number
	if in != nil && !policyAllows(in.Policy, owner, repo, d.ref.Login) {
		log.Info(d.act.String()+" refused by the access policy", "installation_id", in.ID, "login", d.ref.Login, "repository", owner+"/"+repo)
		if d.act == actAnswer {
			p.replyOnce(d, delivery, "Sorry @"+d.ref.Login+", I am not set up to take requests from you in this repository. Nothing was answered.")
		}
		return nil
	}
	ok, err := p.canWrite(ctx, d.ref)
	switch {
	case err != nil:
		return err
	case !ok && d.act == actAnswer:
		log.Info("answer refused: no write access", "login", d.ref.Login)
		p.replyOnce(d, delivery, refusedAnswer(d.ref.Login))
		return nil
	case !ok:
		return nil
	case d.act == actAnswer:
		return p.answer(ctx, in, d, delivery, log)
	}
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
			log.Info("retry from the check run refused", "session_id", s.ID, "err", err)
			return nil
		}
	}
	res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Origin: core.Origin{Provider: Name, Key: d.key},
		Input: input, Dedupe: dedupeKeys(d, delivery), Continue: true})
	if err == nil && res.Outcome == providers.Queued {
		log.Info(d.act.String()+" requested from the check run", "session_id", res.Session.ID, "login", d.ref.Login)
	}
	return err
}

// canWrite asks GitHub whether the user may write to the repository
// (admin, maintain or write), trusting an answer for PermissionTTL.
func (p *Provider) canWrite(ctx context.Context, r ref) (bool, error) {
	if r.Login == "" {
		return false, nil
	}
	key := strings.ToLower(r.Owner + "/" + r.Repo + "/" + r.Login)
	p.mu.Lock()
	e, ok := p.perms[key]
	p.mu.Unlock()
	if ok && p.cfg.Now().Before(e.until) {
		return e.write, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second) // GitHub waits 10 s for the 2xx
	defer cancel()
	lvl, resp, err := p.client(r.Installation).Repositories.GetPermissionLevel(ctx, r.Owner, r.Repo, r.Login)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		lvl, err = &gh.RepositoryPermissionLevel{Permission: gh.String("none")}, nil
	}
	if err != nil {
		return false, err
	}
	// The legacy permission field folds maintain into write and triage
	// into read, which is the line we want.
	perm := lvl.GetPermission()
	write := perm == "admin" || perm == "write"
	p.mu.Lock()
	if len(p.perms) > 10_000 {
		p.perms = map[string]permEntry{}
	}
	p.perms[key] = permEntry{write: write, until: p.cfg.Now().Add(p.cfg.PermissionTTL)}
	p.mu.Unlock()
	return write, nil
}

// replyOnce answers a trigger that gets no turn (one from someone without
// write access or outside the access policy, a budget or continue
// command) once per delivery, after the ack.
func (p *Provider) replyOnce(d decision, delivery, text string) {
	p.bg.Go(func(ctx context.Context) {
		first, err := p.cfg.Installations.Once(ctx, replyKey(delivery, d), time.Now().Add(8*24*time.Hour))
		if err != nil || !first {
			return
		}
		if err := p.reply(ctx, d.ref, text); err != nil {
			p.log.Warn("tell a refused commenter", "login", d.ref.Login, "err", err)
		}
	})
}

// replyKey names the one reply to a trigger of d told once per
// delivery.
func replyKey(delivery string, d decision) string { return "github:refused:" + delivery + ":" + d.key }

// reply answers where the trigger was: a review comment in its thread,
// anything else as an issue comment.
func (p *Provider) reply(ctx context.Context, r ref, text string) error {
	c := p.client(r.Installation)
	if r.Kind == kindReviewComment && r.CommentID != 0 {
		to := r.CommentID
		if r.ThreadID != 0 {
			to = r.ThreadID
		}
		_, _, err := c.PullRequests.CreateCommentInReplyTo(ctx, r.Owner, r.Repo, r.Number, text, to)
		return err
	}
	_, _, err := c.Issues.CreateComment(ctx, r.Owner, r.Repo, r.Number, &gh.IssueComment{Body: gh.String(text)})
	return err
}
