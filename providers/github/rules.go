package github

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
)

// act is what an event asks of the gateway.
type act int

const (
	actIgnore    act = iota
	actTrigger       // start or continue the issue's or PR's session
	actInstall       // record (or update) the installation
	actInterrupt     // the check run's Stop button
	actRetry         // the check run's Retry button
	actAnswer        // the check run's Allow or Deny button
)

func (a act) String() string {
	return [...]string{"ignore", "trigger", "install", "interrupt", "retry", "answer"}[a]
}

// Kinds of trigger, as recorded in the input.
const (
	kindIssueComment  = "issue_comment"
	kindReviewComment = "review_comment"
	kindReview        = "review"
	kindLabel         = "label"
)

// ref names what triggered an input; it rides in the input so the sink
// knows where to react and answer.
type ref struct {
	Kind         string `json:"kind"`
	Installation int64  `json:"installation"`
	Owner        string `json:"owner"`
	Repo         string `json:"repo"`
	Number       int    `json:"number"`
	PR           bool   `json:"pr,omitempty"`
	HeadSHA      string `json:"head_sha,omitempty"`
	CommentID    int64  `json:"comment_id,omitempty"` // issue or review comment
	// ThreadID is the review comment that starts the thread CommentID
	// replies in: GitHub takes replies to a thread's first comment only.
	ThreadID int64  `json:"thread_id,omitempty"`
	ReviewID int64  `json:"review_id,omitempty"`
	Login    string `json:"login,omitempty"`
}

// inputBody is a user.message from GitHub.
type inputBody struct {
	Text   string `json:"text"`
	GitHub *ref   `json:"github,omitempty"`
	// Context rides on the input that starts a session; the model gets it
	// once, before the first turn (Prime).
	Context     *issueContext     `json:"context,omitempty"`
	Attachments []core.Attachment `json:"attachments,omitempty"`
}

// issueContext is the issue or PR a trigger happened on.
type issueContext struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
}

// decision is the outcome of the trigger rules for one event.
type decision struct {
	act          act
	why          string // for the log, when ignored
	installation int64
	account      string // the installation's account login
	key          string // github:<owner>/<repo>#<number>
	ref          ref
	text         string // the model's input: what happened
	said         string // a comment's body without the app's mention (thread commands)
	// answer is allow or deny: a comment or button that answers a tool
	// call waiting for approval; toolUse the call a button names.
	answer  string
	toolUse string
	context issueContext
	// group names deliveries that make one turn together (a review and
	// its review comments), used as an extra dedupe key.
	group string
	// signed names what the signed body tells, for events whose identity
	// is not a comment id: a second dedupe key beside the unsigned
	// delivery id (labelKey, stopKey).
	signed string
	// change is what an installation event says of its installation.
	change *installChange
}

// identity is what the rules know of the app.
type identity struct {
	slug  string
	label string
}

// sessionKey is the origin key of an issue's or PR's session.
func sessionKey(owner, repo string, number int) string {
	return "github:" + owner + "/" + repo + "#" + strconv.Itoa(number)
}

// parseKey splits a session key into owner, repo and number.
func parseKey(key string) (owner, repo string, number int, err error) {
	rest, ok := strings.CutPrefix(key, "github:")
	slash, hash := strings.Index(rest, "/"), strings.LastIndex(rest, "#")
	if ok && slash > 0 && hash > slash+1 {
		if n, err := strconv.Atoi(rest[hash+1:]); err == nil && n > 0 {
			return rest[:slash], rest[slash+1 : hash], n, nil
		}
	}
	return "", "", 0, fmt.Errorf("session key %q: want github:<owner>/<repo>#<number>: %w", key, core.ErrInvalid)
}

// mentions reports whether text mentions @slug as a whole word (not
// @slug-other or someone@slug.example).
func mentions(text, slug string) bool {
	re := regexp.MustCompile(`(?i)(^|[^\w@.-])@` + regexp.QuoteMeta(slug) + `(\[bot\])?($|[^\w-])`)
	return re.MatchString(text)
}

// withoutMention is text without its mentions of @slug, trimmed.
func withoutMention(text, slug string) string {
	re := regexp.MustCompile(`(?i)@` + regexp.QuoteMeta(slug) + `(\[bot\])?\b`)
	return strings.TrimSpace(re.ReplaceAllString(text, ""))
}

// botLogin is the login the app acts as.
func (id identity) botLogin() string { return id.slug + "[bot]" }

// own reports whether a user is the app itself (loop guard).
func (id identity) own(u *gh.User) bool {
	return u != nil && strings.EqualFold(u.GetLogin(), id.botLogin())
}

// bot reports whether a user is an App or another bot: they never
// trigger the agent, whatever they mention. Two Apps that answer each
// other (a refusal mentions whom it refuses) would otherwise talk
// forever.
func bot(u *gh.User) bool {
	return u != nil && (strings.EqualFold(u.GetType(), "Bot") || strings.HasSuffix(strings.ToLower(u.GetLogin()), "[bot]"))
}

// decide applies the trigger rules (docs/github.md) to a decoded event. It is
// pure: permission checks and storage are the caller's.
func decide(ev any, id identity) decision {
	switch e := ev.(type) {
	case *gh.PingEvent:
		return decision{why: "ping"}
	case *gh.InstallationEvent:
		return decision{act: actInstall, installation: e.GetInstallation().GetID(), account: e.GetInstallation().GetAccount().GetLogin(),
			change: installChangeOf(e)}
	case *gh.InstallationRepositoriesEvent:
		return decision{act: actInstall, installation: e.GetInstallation().GetID(), account: e.GetInstallation().GetAccount().GetLogin(),
			change: installChangeOf(e)}
	case *gh.IssueCommentEvent:
		if e.GetAction() != "created" {
			return decision{why: "comment " + e.GetAction()}
		}
		if id.own(e.GetComment().GetUser()) || id.own(e.GetSender()) {
			return decision{why: "own comment"}
		}
		if bot(e.GetComment().GetUser()) || bot(e.GetSender()) {
			return decision{why: "a bot's comment"}
		}
		body := e.GetComment().GetBody()
		if !mentions(body, id.slug) {
			return decision{why: "no mention"}
		}
		is := e.GetIssue()
		r := baseRef(kindIssueComment, e.GetInstallation(), e.GetRepo(), is.GetNumber(), is.IsPullRequest(), e.GetSender())
		r.CommentID = e.GetComment().GetID()
		d := trigger(r, "@"+r.Login+" commented:\n"+body, is.GetTitle(), is.GetBody())
		d.said = withoutMention(body, id.slug)
		d.answer = parseAnswer(d.said)
		return d
	case *gh.PullRequestReviewCommentEvent:
		if e.GetAction() != "created" {
			return decision{why: "review comment " + e.GetAction()}
		}
		c := e.GetComment()
		if id.own(c.GetUser()) || id.own(e.GetSender()) {
			return decision{why: "own comment"}
		}
		if bot(c.GetUser()) || bot(e.GetSender()) {
			return decision{why: "a bot's comment"}
		}
		if !mentions(c.GetBody(), id.slug) {
			return decision{why: "no mention"}
		}
		pr := e.GetPullRequest()
		r := baseRef(kindReviewComment, e.GetInstallation(), e.GetRepo(), pr.GetNumber(), true, e.GetSender())
		r.CommentID, r.ThreadID, r.ReviewID, r.HeadSHA = c.GetID(), c.GetInReplyTo(), c.GetPullRequestReviewID(), pr.GetHead().GetSHA()
		line := c.GetLine()
		if line == 0 {
			line = c.GetOriginalLine()
		}
		text := fmt.Sprintf("@%s commented on %s line %d:\n%s\n\nDiff hunk:\n```diff\n%s\n```", r.Login, c.GetPath(), line, c.GetBody(), c.GetDiffHunk())
		d := trigger(r, text, pr.GetTitle(), pr.GetBody())
		if r.ReviewID != 0 {
			d.group = "github:review:" + strconv.FormatInt(r.ReviewID, 10)
		}
		return d
	case *gh.PullRequestReviewEvent:
		if e.GetAction() != "submitted" {
			return decision{why: "review " + e.GetAction()}
		}
		rv := e.GetReview()
		if id.own(rv.GetUser()) || id.own(e.GetSender()) {
			return decision{why: "own review"}
		}
		if bot(rv.GetUser()) || bot(e.GetSender()) {
			return decision{why: "a bot's review"}
		}
		if !mentions(rv.GetBody(), id.slug) {
			return decision{why: "no mention"}
		}
		pr := e.GetPullRequest()
		r := baseRef(kindReview, e.GetInstallation(), e.GetRepo(), pr.GetNumber(), true, e.GetSender())
		r.ReviewID, r.HeadSHA = rv.GetID(), pr.GetHead().GetSHA()
		text := fmt.Sprintf("@%s reviewed (%s):\n%s", r.Login, strings.ToLower(rv.GetState()), rv.GetBody())
		d := trigger(r, text, pr.GetTitle(), pr.GetBody())
		d.group = "github:review:" + strconv.FormatInt(r.ReviewID, 10)
		return d
	case *gh.IssuesEvent:
		if e.GetAction() != "labeled" || !strings.EqualFold(e.GetLabel().GetName(), id.label) {
			return decision{why: "issues " + e.GetAction()}
		}
		if id.own(e.GetSender()) {
			return decision{why: "own label"}
		}
		if bot(e.GetSender()) {
			return decision{why: "a bot's label"}
		}
		is := e.GetIssue()
		r := baseRef(kindLabel, e.GetInstallation(), e.GetRepo(), is.GetNumber(), is.IsPullRequest(), e.GetSender())
		d := trigger(r, "@"+r.Login+" added the label "+e.GetLabel().GetName()+".", is.GetTitle(), is.GetBody())
		d.signed = labelKey(d, e.GetLabel(), is.GetUpdatedAt())
		return d
	case *gh.PullRequestEvent:
		if e.GetAction() != "labeled" || !strings.EqualFold(e.GetLabel().GetName(), id.label) {
			return decision{why: "pull_request " + e.GetAction()}
		}
		if id.own(e.GetSender()) {
			return decision{why: "own label"}
		}
		if bot(e.GetSender()) {
			return decision{why: "a bot's label"}
		}
		pr := e.GetPullRequest()
		r := baseRef(kindLabel, e.GetInstallation(), e.GetRepo(), pr.GetNumber(), true, e.GetSender())
		r.HeadSHA = pr.GetHead().GetSHA()
		d := trigger(r, "@"+r.Login+" added the label "+e.GetLabel().GetName()+".", pr.GetTitle(), pr.GetBody())
		d.signed = labelKey(d, e.GetLabel(), pr.GetUpdatedAt())
		return d
	case *gh.CheckRunEvent:
		ra := e.GetRequestedAction()
		if e.GetAction() != "requested_action" || ra == nil || !slices.Contains([]string{stopAction, retryAction, allowAction, denyAction}, ra.Identifier) {
			return decision{why: "check_run " + e.GetAction()}
		}
		if e.GetCheckRun().GetApp().GetSlug() != "" && !strings.EqualFold(e.GetCheckRun().GetApp().GetSlug(), id.slug) {
			return decision{why: "another app's check run"}
		}
		key := checkRunSession(e.GetCheckRun().GetExternalID())
		if _, _, _, err := parseKey(key); err != nil {
			return decision{why: "check run without a session key"}
		}
		d := decision{act: actInterrupt, installation: e.GetInstallation().GetID(), key: key,
			ref: ref{Login: e.GetSender().GetLogin(), Installation: e.GetInstallation().GetID()}}
		switch ra.Identifier {
		case retryAction:
			d.act = actRetry
		case allowAction, denyAction:
			// Answered once per call, not per run: a run shows one call
			// after another while the turn waits (approval.go).
			d.act, d.answer, d.toolUse = actAnswer, ra.Identifier, shownCall(e.GetCheckRun().GetOutput().GetSummary())
			return d
		}
		if id := e.GetCheckRun().GetID(); id != 0 {
			// One Stop and one Retry per check run, which is one per turn.
			d.signed = "github:" + ra.Identifier + ":" + strconv.FormatInt(id, 10) + ":" + ra.Identifier
		}
		return d
	}
	return decision{why: "event not handled"}
}

// labelKey is the identity of a trigger label added: the issue or PR, the
// label, the item's updated_at (which the labeling moves) and who added
// it; "" when the body has no updated_at, so that a label removed and
// added again is not taken for a replay.
func labelKey(d decision, l *gh.Label, updated gh.Timestamp) string {
	if d.act != actTrigger || updated.IsZero() {
		return ""
	}
	return "github:label:" + d.key + ":" + strings.ToLower(l.GetName()) + ":" +
		strconv.FormatInt(updated.UnixNano(), 10) + ":" + strings.ToLower(d.ref.Login)
}

func baseRef(kind string, in *gh.Installation, repo *gh.Repository, number int, pr bool, sender *gh.User) ref {
	return ref{Kind: kind, Installation: in.GetID(), Owner: repo.GetOwner().GetLogin(), Repo: repo.GetName(),
		Number: number, PR: pr, Login: sender.GetLogin()}
}

func trigger(r ref, text, title, body string) decision {
	if len(body) > 4000 {
		cut := 4000
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + "…"
	}
	d := decision{act: actTrigger, installation: r.Installation, key: sessionKey(r.Owner, r.Repo, r.Number), ref: r, text: text,
		context: issueContext{Title: title, Body: strings.TrimSpace(body)}}
	if r.Installation == 0 || r.Owner == "" || r.Repo == "" || r.Number == 0 {
		return decision{why: "event without installation, repository or number"}
	}
	return d
}

// contextText is what the model learns of the issue or PR before the
// session's first turn. Later inputs carry only what happened, so the body
// is not repeated on every mention.
func contextText(r ref, c issueContext) string {
	kind := "issue"
	if r.PR {
		kind = "pull request"
	}
	text := fmt.Sprintf("You were called on the %s %s/%s#%d: %s", kind, r.Owner, r.Repo, r.Number, c.Title)
	if c.Body != "" {
		text += "\n\n" + c.Body
	}
	return text
}
