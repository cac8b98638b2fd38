package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// sessionView is the part of a session the checks read.
type sessionView struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	LastSeq uint64 `json:"last_seq"`
	Origin  *struct {
		Provider string `json:"provider"`
		Key      string `json:"key"`
	} `json:"origin"`
}

type eventView struct {
	Seq   uint64          `json:"seq"`
	Type  string          `json:"type"`
	Level string          `json:"level"`
	Body  json.RawMessage `json:"body"`
}

// snapshot is every session and its log, as the API shows them.
type snapshot struct {
	sessions []sessionView
	events   map[string][]eventView
	pending  map[string]int
}

func page[T any](w *world, path string) ([]T, bool, error) {
	code, raw, err := w.call("GET", path, nil)
	if err != nil {
		return nil, false, err
	}
	if code != http.StatusOK {
		return nil, false, fmt.Errorf("GET %s: %d %s", path, code, raw)
	}
	var p struct {
		Data    []T  `json:"data"`
		HasMore bool `json:"has_more"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, false, fmt.Errorf("GET %s: %w", path, err)
	}
	return p.Data, p.HasMore, nil
}

func (w *world) snapshot() (*snapshot, error) {
	s := &snapshot{events: map[string][]eventView{}, pending: map[string]int{}}
	after := ""
	for {
		list, more, err := page[sessionView](w, "/v1/sessions?limit=1000&after="+url.QueryEscape(after))
		if err != nil {
			return nil, err
		}
		s.sessions = append(s.sessions, list...)
		if !more || len(list) == 0 {
			break
		}
		after = list[len(list)-1].ID
	}
	for _, ses := range s.sessions {
		var seq uint64
		for {
			evs, more, err := page[eventView](w, "/v1/sessions/"+ses.ID+"/events?limit=1000&after="+strconv.FormatUint(seq, 10))
			if err != nil {
				return nil, err
			}
			s.events[ses.ID] = append(s.events[ses.ID], evs...)
			if !more || len(evs) == 0 {
				break
			}
			seq = evs[len(evs)-1].Seq
		}
		pend, _, err := page[json.RawMessage](w, "/v1/sessions/"+ses.ID+"/pending")
		if err != nil {
			return nil, err
		}
		s.pending[ses.ID] = len(pend)
	}
	return s, nil
}

// markers find the inputs' and the answers' unique marks in a text.
type markers struct{ input, answer *regexp.Regexp }

func newMarkers() markers {
	return markers{input: regexp.MustCompile(`\[in:[a-z]+-\d+\]`), answer: regexp.MustCompile(`Soak answer #\d+\.`)}
}

func text(body json.RawMessage) string {
	var b struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(body, &b)
	return b.Text
}

// figures are what the soak reports; any violation fails it.
type figures struct {
	Inputs, Refused, Unanswered, Interrupts, RateLimits int
	Kills, Starts                                       int
	Sessions, Turns, OpenTurns                          int
	Answers, Posted                                     int
	Deliveries, DeliveryFailures                        int
	Lost, Doubled                                       int
	GoroutinesStart, GoroutinesEnd                      int
	Violations                                          []string
}

func (f *figures) violate(format string, args ...any) {
	f.Violations = append(f.Violations, fmt.Sprintf(format, args...))
}

// check compares the logs with what the traffic was told and with what
// the fakes and the receiver recorded.
func (w *world) check(l *ledger, s *snapshot) *figures {
	f := &figures{}
	mk := newMarkers()
	l.mu.Lock()
	f.Inputs, f.Unanswered, f.Interrupts, f.RateLimits = len(l.accepted), l.unanswered, l.interrupts, l.limits
	f.Refused = len(l.refused)
	for _, r := range l.refused {
		f.violate("refused: %s", r)
	}
	accepted := make(map[string]string, len(l.accepted))
	for k, v := range l.accepted {
		accepted[k] = v
	}
	roots := append([]string(nil), l.slackRoots...)
	l.mu.Unlock()
	f.Sessions = len(s.sessions)

	// Every acknowledged input in exactly one session, exactly once.
	seen := map[string][]string{}
	for _, ses := range s.sessions {
		for _, e := range s.events[ses.ID] {
			if e.Type != "user.message" {
				continue
			}
			for _, m := range mk.input.FindAllString(text(e.Body), -1) {
				seen[m] = append(seen[m], ses.ID)
			}
		}
	}
	for m := range accepted {
		switch n := len(seen[m]); {
		case n == 0:
			f.Lost++
			f.violate("input %s was acknowledged and is in no session", m)
		case n > 1:
			f.Doubled++
			f.violate("input %s is logged %d times, in %v", m, n, seen[m])
		}
	}
	for m, in := range seen {
		if _, ok := accepted[m]; !ok && len(in) > 1 {
			f.Doubled++
			f.violate("input %s (never acknowledged) is logged %d times", m, len(in))
		}
	}

	// Every turn ended; every session at rest.
	for _, ses := range s.sessions {
		started, ended := 0, 0
		for _, e := range s.events[ses.ID] {
			switch e.Type {
			case "turn.started":
				started++
			case "turn.completed":
				ended++
			}
		}
		f.Turns += started
		if started != ended || ses.Status != "idle" || s.pending[ses.ID] > 0 {
			f.OpenTurns++
			f.violate("session %s: %d turns started, %d ended, status %s, %d inputs pending", ses.ID, started, ended, ses.Status, s.pending[ses.ID])
		}
	}

	// Every answer of a platform session posted exactly once on it.
	posted := w.posted(mk, roots)
	for _, ses := range s.sessions {
		if ses.Origin == nil {
			continue
		}
		for _, e := range s.events[ses.ID] {
			if e.Type != "agent.message" || e.Level != "user" {
				continue
			}
			for _, m := range mk.answer.FindAllString(text(e.Body), -1) {
				f.Answers++
				switch n := posted[ses.Origin.Provider][m]; {
				case n == 0:
					f.Lost++
					f.violate("answer %q of %s is not on %s", m, ses.ID, ses.Origin.Provider)
				case n > 1:
					f.Doubled++
					f.violate("answer %q of %s is on %s %d times", m, ses.ID, ses.Origin.Provider, n)
				}
			}
		}
	}
	for p, counts := range posted {
		for m, n := range counts {
			f.Posted += n
			if n > 1 {
				f.violate("%q is on %s %d times", m, p, n)
			}
		}
	}

	// Every event delivered to the destination, in order per session.
	w.rc.mu.Lock()
	f.Deliveries, f.DeliveryFailures = w.rc.accepted, w.rc.failed
	for _, b := range w.rc.bad {
		f.violate("receiver: %s", b)
	}
	w.rc.mu.Unlock()
	for _, ses := range s.sessions {
		var next uint64 = 1
		for _, seq := range w.rc.received(ses.ID) {
			switch {
			case seq == next:
				next++
			case seq > next:
				f.violate("session %s: seq %d delivered before seq %d", ses.ID, seq, next)
				next = seq + 1
			}
		}
		if last := uint64(len(s.events[ses.ID])); next <= last {
			f.Lost++
			f.violate("session %s: %d of %d events delivered", ses.ID, next-1, last)
		}
	}
	return f
}

// posted counts the answers on each platform, by marker.
func (w *world) posted(mk markers, slackRoots []string) map[string]map[string]int {
	out := map[string]map[string]int{"slack": {}, "github": {}, "linear": {}}
	add := func(p, s string) {
		for _, m := range mk.answer.FindAllString(s, -1) {
			out[p][m]++
		}
	}
	for _, root := range slackRoots {
		for _, m := range w.slack.Thread(slackChannel, root) {
			if m.User == w.team.BotUserID {
				add("slack", m.Text)
			}
		}
	}
	for n := 1; n <= githubIssues; n++ {
		for _, c := range w.github.Comments(githubRepo, n) {
			if c.User == w.github.Slug+"[bot]" {
				add("github", c.Body)
			}
		}
	}
	for _, a := range w.linear.Activities() {
		if a.Type == "response" {
			add("linear", a.Body)
		}
	}
	return out
}

// containers lists the sessions that have a running sandbox container.
func containers() ([]string, error) {
	out, err := exec.Command("docker", "ps", "--filter", "label=switchboard.session", "--format", `{{.Label "switchboard.session"}}`).Output()
	if err != nil {
		return nil, fmt.Errorf("docker ps: %w", err)
	}
	return strings.Fields(string(out)), nil
}
