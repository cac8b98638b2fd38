package gitlab

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// The webhook events the provider reads (X-Gitlab-Event).
const (
	eventNote  = "Note Hook"
	eventIssue = "Issue Hook"
	eventMR    = "Merge Request Hook"
)

// hookUser is a webhook's user.
type hookUser struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Name     string `json:"name"`
}

// hookProject is a webhook's project.
type hookProject struct {
	ID                int64  `json:"id"`
	PathWithNamespace string `json:"path_with_namespace"`
	WebURL            string `json:"web_url"`
	VisibilityLevel   int    `json:"visibility_level"`
}

// hookThread is a webhook's issue or merge request (a Note Hook's issue
// or merge_request, or an Issue or Merge Request Hook's
// object_attributes).
type hookThread struct {
	ID          int64  `json:"id"`
	IID         int64  `json:"iid"`
	Title       string `json:"title"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Action      string `json:"action"`
	UpdatedAt   string `json:"updated_at"`
	LastCommit  struct {
		ID string `json:"id"`
	} `json:"last_commit"`
}

type hookLabel struct {
	Title string `json:"title"`
}

// hook is the part of the webhooks the provider reads.
type hook struct {
	ObjectKind string          `json:"object_kind"`
	User       hookUser        `json:"user"`
	Project    hookProject     `json:"project"`
	Attributes json.RawMessage `json:"object_attributes"`
	Issue      *hookThread     `json:"issue"`
	MR         *hookThread     `json:"merge_request"`
	Changes    struct {
		Labels *struct {
			Previous []hookLabel `json:"previous"`
			Current  []hookLabel `json:"current"`
		} `json:"labels"`
	} `json:"changes"`
}

// hookNote is a Note Hook's object_attributes.
type hookNote struct {
	ID           int64  `json:"id"`
	Note         string `json:"note"`
	NoteableType string `json:"noteable_type"`
	AuthorID     int64  `json:"author_id"`
	System       bool   `json:"system"`
	DiscussionID string `json:"discussion_id"`
	Type         string `json:"type"`
	Action       string `json:"action"`
	URL          string `json:"url"`
}

// act is what an event asks of the gateway.
type act int

const (
	actIgnore    act = iota
	actMessage       // a mention, a label, a reply: an input
	actInterrupt     // "@app stop"
	actRetry         // "@app retry"
	actAnswer        // "@app allow|deny"
)

func (a act) String() string {
	return [...]string{"ignore", "message", "interrupt", "retry", "answer"}[a]
}

// decision is what the trigger rules made of an event.
type decision struct {
	act act
	why string // why it is ignored
	ref ref
	key string
	// text is the input's text; said the note without the mention.
	text, said string
	// answer is "allow" or "deny" for actAnswer.
	answer string
	// mentioned: the note mentions the app; a reply without one only
	// steers a session in a discussion the app answered in.
	mentioned bool
	// identity names the event's content for dedupe: the note and its
	// action, or the label added.
	identity string
	// context is the issue's or merge request's title and description,
	// for the input that starts a session.
	context threadContext
	public  bool
}

// ref says where an input came from and where its answers go.
type ref struct {
	ProjectID int64  `json:"project_id"`
	Project   string `json:"project"` // group/sub/project
	Kind      string `json:"kind"`    // "#" or "!"
	IID       int64  `json:"iid"`
	// NoteID and Discussion are the triggering note's and its
	// discussion's (none for a label).
	NoteID     int64  `json:"note_id,omitempty"`
	Discussion string `json:"discussion,omitempty"`
	// HeadSHA is a merge request's head: the commit status goes there.
	HeadSHA  string `json:"head_sha,omitempty"`
	UserID   int64  `json:"user_id"`
	Username string `json:"username"`
	// Installation is the installation's id in the gateway.
	Installation string `json:"installation,omitempty"`
	// Instance is the instance's address (X-Gitlab-Instance).
	Instance string `json:"instance,omitempty"`
}

// threadContext is an issue's or merge request's title and description.
type threadContext struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	URL         string `json:"url,omitempty"`
}

// identity is the app's user and trigger label, as the rules see them.
type identity struct{ username, label string }

// mentionOf matches a mention of the app: @<username> not inside a word
// or a longer username.
func mentionOf(username string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[^\w@./-])@` + regexp.QuoteMeta(username) + `($|[^\w.-]|\.($|\s))`)
}

// marker matches the hidden marker the app puts in its notes (ownMarker).
var marker = regexp.MustCompile(`\s*<!-- switchboard:[^>]*-->`)

// ownMarker is the hidden marker of an app's note, named by key: every
// note the app writes carries one, so the loop guard knows it even when
// the app writes as a person's OAuth user.
func ownMarker(key string) string { return "<!-- switchboard:" + key + " -->" }

// decide applies the trigger rules to a decoded webhook.
func decide(event string, h hook, id identity) (decision, error) {
	d := decision{ref: ref{ProjectID: h.Project.ID, Project: h.Project.PathWithNamespace, UserID: h.User.ID, Username: h.User.Username},
		public: h.Project.VisibilityLevel == 20}
	if h.Project.PathWithNamespace == "" || h.Project.ID == 0 {
		return decision{why: "no project"}, nil
	}
	switch event {
	case eventNote:
		return decideNote(d, h, id)
	case eventIssue, eventMR:
		return decideLabel(d, event, h, id)
	}
	d.why = "event not handled"
	return d, nil
}

func decideNote(d decision, h hook, id identity) (decision, error) {
	var n hookNote
	if err := json.Unmarshal(h.Attributes, &n); err != nil {
		return d, fmt.Errorf("note hook: object_attributes: %w: %w", err, core.ErrInvalid)
	}
	var t *hookThread
	switch n.NoteableType {
	case "Issue":
		t, d.ref.Kind = h.Issue, kindIssue
	case "MergeRequest":
		t, d.ref.Kind = h.MR, kindMR
	default:
		d.why = "a note on a " + n.NoteableType
		return d, nil
	}
	if t == nil || t.IID == 0 {
		return d, fmt.Errorf("note hook: a note on a %s without it: %w", n.NoteableType, core.ErrInvalid)
	}
	d.ref.IID, d.ref.NoteID, d.ref.Discussion, d.ref.HeadSHA = t.IID, n.ID, n.DiscussionID, t.LastCommit.ID
	d.key = sessionKey(d.ref.Project, d.ref.Kind, t.IID)
	d.context = threadContext{Title: t.Title, Description: t.Description, URL: t.URL}
	action := n.Action
	if action == "" {
		action = "create" // instances before 16.11 tell of new notes only
	}
	d.identity = Name + ":note:" + strconv.FormatInt(h.Project.ID, 10) + ":" + strconv.FormatInt(n.ID, 10) + ":" + action
	switch {
	case n.System:
		d.why = "a system note"
		return d, nil
	case action != "create":
		d.why = "a note " + action + "d"
		return d, nil
	case strings.EqualFold(h.User.Username, id.username) || marker.MatchString(n.Note):
		// The loop guard: the app's own notes (its answers may quote
		// "@app allow") never trigger it.
		d.why = "the app's own note"
		return d, nil
	}
	mention := mentionOf(id.username)
	d.mentioned = mention.MatchString(n.Note)
	d.said = strings.TrimSpace(mention.ReplaceAllString(n.Note, "$1$2"))
	d.text = n.Note
	d.act = actMessage
	if !d.mentioned {
		// A reply in a thread (DiscussionNote, or DiffNote on a diff
		// line) may steer; a single comment (no type) may not.
		if n.Type == "" {
			d.act, d.why = actIgnore, "a comment that does not mention the app"
		}
		return d, nil
	}
	switch command := strings.ToLower(strings.TrimRight(d.said, ".! ")); command {
	case "stop":
		d.act = actInterrupt
	case "retry":
		d.act = actRetry
	case "allow", "deny":
		d.act, d.answer = actAnswer, command
	}
	return d, nil
}

// decideLabel starts a session when the trigger label is among the labels
// an issue or merge request update added.
func decideLabel(d decision, event string, h hook, id identity) (decision, error) {
	var t hookThread
	if err := json.Unmarshal(h.Attributes, &t); err != nil {
		return d, fmt.Errorf("%s: object_attributes: %w: %w", strings.ToLower(event), err, core.ErrInvalid)
	}
	labels := h.Changes.Labels
	if id.username != "" && strings.EqualFold(h.User.Username, id.username) {
		// The loop guard: a label the app's user added (a quick action
		// of its own, or a tool) never triggers it.
		d.why = "a label the app added"
		return d, nil
	}
	if labels == nil || t.IID == 0 {
		d.why = "no label changed"
		return d, nil
	}
	had := slices.ContainsFunc(labels.Previous, func(l hookLabel) bool { return strings.EqualFold(l.Title, id.label) })
	has := slices.ContainsFunc(labels.Current, func(l hookLabel) bool { return strings.EqualFold(l.Title, id.label) })
	if had || !has || id.label == "" {
		d.why = "the trigger label was not added"
		return d, nil
	}
	d.ref.Kind, d.ref.IID, d.ref.HeadSHA = kindIssue, t.IID, t.LastCommit.ID
	what := "issue"
	if event == eventMR {
		d.ref.Kind, what = kindMR, "merge request"
	}
	d.key = sessionKey(d.ref.Project, d.ref.Kind, t.IID)
	d.context = threadContext{Title: t.Title, Description: t.Description, URL: t.URL}
	d.identity = Name + ":label:" + d.key + ":" + id.label + ":" + t.UpdatedAt
	d.act = actMessage
	d.mentioned = true
	d.text = "@" + h.User.Username + " added the label " + id.label + " to this " + what + "."
	return d, nil
}
