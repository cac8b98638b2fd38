package playground

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// state is what the page shows: each platform as its people would see it.
type state struct {
	Model   modelView  `json:"model"`
	Console string     `json:"console"`
	Slack   slackView  `json:"slack"`
	GitHub  githubView `json:"github"`
	GitLab  gitlabView `json:"gitlab"`
	Linear  linearView `json:"linear"`
}

type modelView struct {
	Name     string `json:"name"`
	Scripted bool   `json:"scripted"`
}

type slackView struct {
	Channel  string         `json:"channel"`
	Messages []slackMessage `json:"messages"`
}

type slackMessage struct {
	TS string `json:"ts"`
	// Status is the agent's status in the thread ("is thinking…"), as
	// Slack shows it under an assistant thread while a turn runs.
	Status    string         `json:"status,omitempty"`
	Author    string         `json:"author"`
	Bot       bool           `json:"bot"`
	Text      string         `json:"text"`
	Edited    bool           `json:"edited,omitempty"`
	Reactions []string       `json:"reactions,omitempty"`
	Buttons   []slackButton  `json:"buttons,omitempty"`
	Replies   []slackMessage `json:"replies,omitempty"`
}

type slackButton struct {
	ActionID string `json:"action_id"`
	Value    string `json:"value"`
	Text     string `json:"text"`
}

type githubView struct {
	Repo     string          `json:"repo"`
	Number   int             `json:"number"`
	Title    string          `json:"title"`
	Author   string          `json:"author"`
	App      string          `json:"app"`
	Comments []githubComment `json:"comments"`
	Checks   []githubCheck   `json:"checks"`
}

type githubComment struct {
	Author    string   `json:"author"`
	Bot       bool     `json:"bot"`
	Body      string   `json:"body"`
	Review    bool     `json:"review,omitempty"`
	Edited    bool     `json:"edited,omitempty"`
	Reactions []string `json:"reactions,omitempty"`
}

type githubCheck struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

type linearView struct {
	Issues   []linearIssue   `json:"issues"`
	Sessions []linearSession `json:"sessions"`
}

type linearIssue struct {
	ID         string `json:"id"`
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
	Desc       string `json:"description"`
	State      string `json:"state"`
}

type linearSession struct {
	ID      string        `json:"id"`
	Issue   string        `json:"issue"` // its identifier
	Title   string        `json:"title"`
	Entries []linearEntry `json:"entries"`
}

// linearEntry is one line of an agent session's activity stream: the
// person's prompt, or an activity the agent created.
type linearEntry struct {
	Kind string    `json:"kind"` // prompt, stop, thought, action, response, elicitation, error
	Body string    `json:"body"`
	At   time.Time `json:"at"`
}

// snapshot reads the simulators.
func (w *world) snapshot() state {
	return state{Slack: w.slackView(), GitHub: w.githubView(), GitLab: w.gitlabView(), Linear: w.linearView()}
}

func (w *world) slackView() slackView {
	v := slackView{Channel: slackChannelName, Messages: []slackMessage{}}
	status := map[string]string{} // thread ts → the latest status set
	for _, c := range w.slack.Calls("assistant.threads.setStatus") {
		if c.Str("channel_id") == slackChannel {
			status[c.Str("thread_ts")] = c.Str("status")
		}
	}
	for _, root := range w.slack.Channel(slackChannel) {
		m := w.slackMessage(root)
		m.Status = status[root.TS]
		for _, r := range w.slack.Thread(slackChannel, root.TS) {
			if r.TS != root.TS {
				m.Replies = append(m.Replies, w.slackMessage(r))
			}
		}
		v.Messages = append(v.Messages, m)
	}
	return v
}

func (w *world) slackMessage(m fakeslack.Message) slackMessage {
	out := slackMessage{TS: m.TS, Author: slackUserName, Text: m.Text, Edited: m.Edits > 0, Reactions: m.Reacts}
	if m.BotID != "" || m.User == w.team.BotUserID {
		out.Author, out.Bot = "switchboard", true
	}
	text, buttons := readBlocks(m.Blocks)
	if strings.TrimSpace(out.Text) == "" {
		out.Text = text
	}
	out.Buttons = buttons
	out.Text = strings.NewReplacer("<@"+w.team.BotUserID+">", "@switchboard", "<@"+slackUser+">", "@"+slackUserName).Replace(out.Text)
	return out
}

// readBlocks finds a message's section text and its buttons.
func readBlocks(raw json.RawMessage) (string, []slackButton) {
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &blocks) != nil {
		return "", nil
	}
	var text []string
	var buttons []slackButton
	for _, b := range blocks {
		if b.Type == "section" && b.Text != nil {
			text = append(text, b.Text.Text)
		}
		for _, e := range b.Elements {
			if e.Type == "button" {
				buttons = append(buttons, slackButton{ActionID: e.ActionID, Value: e.Value, Text: e.Text.Text})
			}
		}
	}
	return strings.Join(text, "\n"), buttons
}

// htmlComment is markup GitHub does not show (the gateway's marker).
var htmlComment = regexp.MustCompile(`(?s)\s*<!--.*?-->`)

func (w *world) githubView() githubView {
	pr, _ := w.github.Issue(githubRepo, githubPR)
	v := githubView{Repo: githubRepo, Number: githubPR, Title: pr.Title, Author: pr.User, App: w.github.Slug,
		Comments: []githubComment{}, Checks: []githubCheck{}}
	bot := w.github.Slug + "[bot]"
	for _, c := range w.github.Comments(githubRepo, githubPR) {
		v.Comments = append(v.Comments, githubComment{Author: c.User, Bot: c.User == bot, Body: htmlComment.ReplaceAllString(c.Body, ""), Review: c.Review, Edited: c.Edits > 0, Reactions: c.Reactions})
	}
	for _, c := range w.github.CheckRuns() {
		if c.Repo == githubRepo && c.HeadSHA == githubHead {
			v.Checks = append(v.Checks, githubCheck{Name: c.Name, Status: c.Status, Conclusion: c.Conclusion, Summary: c.Summary})
		}
	}
	return v
}

func (w *world) linearView() linearView {
	v := linearView{Issues: []linearIssue{}, Sessions: []linearSession{}}
	states := map[string]string{}
	for _, t := range w.linear.Teams() {
		for _, s := range t.States {
			states[s.ID] = s.Name
		}
	}
	byID := map[string]linearIssue{}
	for _, i := range w.linear.Issues() {
		li := linearIssue{ID: i.ID, Identifier: i.Identifier, Title: i.Title, Desc: i.Desc, State: states[i.StateID]}
		byID[i.ID] = li
		v.Issues = append(v.Issues, li)
	}
	w.mu.Lock()
	delegated := slices.Clone(w.delegated)
	prompts := slices.Clone(w.prompts)
	w.mu.Unlock()
	activities := w.linear.Activities()
	for _, d := range slices.Backward(delegated) {
		s := linearSession{ID: d.Session, Issue: byID[d.Issue].Identifier, Title: byID[d.Issue].Title, Entries: []linearEntry{}}
		for _, p := range prompts {
			if p.Session == d.Session {
				kind := "prompt"
				if p.Stop {
					kind = "stop"
				}
				s.Entries = append(s.Entries, linearEntry{Kind: kind, Body: p.Body, At: p.At})
			}
		}
		for i, a := range activities {
			if a.SessionID != d.Session || a.Ephemeral && !lastOf(activities[i+1:], d.Session) {
				continue // an ephemeral activity shows until the next one replaces it
			}
			s.Entries = append(s.Entries, linearEntry{Kind: a.Type, Body: activityText(a.Type, a.Body, a.Action, a.Parameter, a.Result), At: a.At})
		}
		slices.SortStableFunc(s.Entries, func(a, b linearEntry) int { return a.At.Compare(b.At) })
		v.Sessions = append(v.Sessions, s)
	}
	return v
}

// lastOf reports whether none of later is the session's.
func lastOf(later []fakelinear.Activity, session string) bool {
	for _, a := range later {
		if a.SessionID == session {
			return false
		}
	}
	return true
}

// activityText is an activity as Linear shows it: an action as its verb,
// parameter and result.
func activityText(typ, body, action, parameter, result string) string {
	if typ != "action" {
		return body
	}
	s := action
	if parameter != "" {
		s += " " + parameter
	}
	if result != "" {
		s += " → " + oneLine(result, 200)
	}
	return s
}
