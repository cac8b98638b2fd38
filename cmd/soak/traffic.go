package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// Pools bound the sessions the soak opens; past them, inputs steer.
const (
	maxSlackThreads   = 30
	githubIssues      = 15
	maxLinearSessions = 20
	maxAPISessions    = 30
)

// ledger is what the traffic did: the inputs the gateway acknowledged
// (2xx), the ones it refused, and the sessions to look at.
type ledger struct {
	mu         sync.Mutex
	seq        int
	accepted   map[string]string // marker → kind
	refused    []string
	unanswered int // gave up retrying without a 2xx
	interrupts int
	limits     int // rate limits armed on the platforms
	slackRoots []string
	linearSess []string
	apiSess    []string
}

func (l *ledger) marker(kind string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return fmt.Sprintf("[in:%s-%d]", kind, l.seq)
}

func (l *ledger) accept(marker, kind string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted[marker] = kind
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accepted)
}

func (l *ledger) pick(rnd *rand.Rand, list *[]string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(*list) == 0 {
		return ""
	}
	return (*list)[rnd.IntN(len(*list))]
}

func (l *ledger) add(list *[]string, v string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*list = append(*list, v)
}

func (l *ledger) size(list *[]string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(*list)
}

// deliver sends what build makes until the gateway answers 2xx, waiting
// through kills; a 4xx other than 429 is a refusal. build is called per
// attempt so that signatures are fresh, as a platform's retries are.
func (w *world) deliver(ctx context.Context, l *ledger, what string, build func(base string) (*http.Request, error)) bool {
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		base := w.gw.URL()
		if base == "" {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		req, err := build(base)
		if err != nil {
			panic(fatal(err.Error()))
		}
		code, raw, err := send(req.WithContext(ctx))
		switch {
		case err != nil, code == http.StatusTooManyRequests, code >= 500:
			time.Sleep(50 * time.Millisecond)
		case code/100 == 2:
			return true
		default:
			l.mu.Lock()
			l.refused = append(l.refused, fmt.Sprintf("%s: %d %s", what, code, raw))
			l.mu.Unlock()
			return false
		}
	}
	l.mu.Lock()
	l.unanswered++
	l.mu.Unlock()
	return false
}

// drive sends one input after another until ctx ends, rate per second
// across all drivers.
func (w *world) drive(ctx context.Context, l *ledger, rnd *rand.Rand, gap time.Duration) {
	for ctx.Err() == nil {
		w.step(ctx, l, rnd)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(rnd.Int64N(int64(2 * gap)))):
		}
	}
}

func (w *world) step(ctx context.Context, l *ledger, rnd *rand.Rand) {
	switch n := rnd.IntN(100); {
	case n < 12:
		w.slackInput(ctx, l, rnd, l.size(&l.slackRoots) < maxSlackThreads && rnd.IntN(2) == 0)
	case n < 24:
		w.slackInput(ctx, l, rnd, false)
	case n < 44:
		w.githubInput(ctx, l, rnd)
	case n < 56:
		w.linearInput(ctx, l, rnd, l.size(&l.linearSess) < maxLinearSessions && rnd.IntN(2) == 0)
	case n < 66:
		w.linearInput(ctx, l, rnd, false)
	case n < 76:
		w.apiCreate(ctx, l)
	case n < 92:
		w.apiPost(ctx, l, rnd, false)
	case n < 97:
		w.apiPost(ctx, l, rnd, true)
	default:
		// The platforms push back: 429s on Slack and GitHub, RATELIMITED
		// on Linear, each for the next two calls.
		w.slack.RateLimit("chat.postMessage", 2, time.Second)
		w.github.SecondaryRateLimit(2)
		w.linear.RateLimit(2)
		l.mu.Lock()
		l.limits++
		l.mu.Unlock()
	}
}

// slackInput mentions the bot in a new thread or an existing one.
func (w *world) slackInput(ctx context.Context, l *ledger, rnd *rand.Rand, fresh bool) {
	root := ""
	if !fresh {
		if root = l.pick(rnd, &l.slackRoots); root == "" {
			fresh = true
		}
	}
	marker := l.marker("slack")
	m := w.slack.Human(w.team.ID, slackChannel, "U0ALICE", "<@"+w.team.BotUserID+"> please look "+marker, root)
	body := fakeslack.Event{Team: w.team, Inner: fakeslack.Mention(m)}.JSON()
	ok := w.deliver(ctx, l, "slack "+marker, func(base string) (*http.Request, error) {
		return fakeslack.SignedRequest(base+"/webhooks/slack", slackSecret, time.Now(), "application/json", body), nil
	})
	if ok {
		l.accept(marker, "slack")
		if fresh {
			l.add(&l.slackRoots, m.TS)
		}
	}
}

// githubInput comments on one of a few issues, mentioning the app.
func (w *world) githubInput(ctx context.Context, l *ledger, rnd *rand.Rand) {
	number := 1 + rnd.IntN(githubIssues)
	marker := l.marker("github")
	text := "@" + w.github.Slug + " please look " + marker
	id := w.github.AddComment(githubRepo, number, false, "alice", text)
	user := map[string]any{"login": "alice", "id": 1, "type": "User"}
	payload := map[string]any{
		"action": "created", "sender": user, "installation": map[string]any{"id": githubInstall},
		"repository": map[string]any{"id": 1, "name": "widgets", "full_name": githubRepo, "owner": map[string]any{"login": "acme", "id": 2, "type": "Organization"}},
		"issue":      map[string]any{"number": number, "title": "Widgets break, case " + strconv.Itoa(number), "body": "It breaks.", "user": user},
		"comment":    map[string]any{"id": id, "body": text, "user": user},
	}
	body, err := json.Marshal(payload)
	if err != nil {
		panic(fatal(err.Error()))
	}
	delivery := "soak-" + marker
	if w.deliver(ctx, l, "github "+marker, func(base string) (*http.Request, error) {
		return fakegithub.SignedRequest(base+"/webhooks/github", githubSecret, "issue_comment", delivery, body), nil
	}) {
		l.accept(marker, "github")
	}
}

// linearInput opens an agent session or prompts an existing one.
func (w *world) linearInput(ctx context.Context, l *ledger, rnd *rand.Rand, fresh bool) {
	session := ""
	if !fresh {
		if session = l.pick(rnd, &l.linearSess); session == "" {
			fresh = true
		}
	}
	marker := l.marker("linear")
	var body []byte
	if fresh {
		session = fmt.Sprintf("5a0c0000-0000-4000-8000-%012d", rnd.Int64N(1e12))
		body = w.linear.CreatedEvent(fakelinear.SessionEvent{SessionID: session, Issue: w.issue,
			PromptContext: "<issue identifier=\"" + w.issue.Identifier + "\"><title>please look " + marker + "</title></issue>"})
	} else {
		body = w.linear.PromptedEvent(fakelinear.SessionEvent{SessionID: session, Issue: w.issue, Prompt: "please look " + marker})
	}
	delivery := ""
	if w.deliver(ctx, l, "linear "+marker, func(base string) (*http.Request, error) {
		req := w.linear.WebhookRequest(base+"/webhooks/linear", body)
		if delivery == "" {
			delivery = req.Header.Get("Linear-Delivery")
		}
		req.Header.Set("Linear-Delivery", delivery)
		return req, nil
	}) {
		l.accept(marker, "linear")
		if fresh {
			l.add(&l.linearSess, session)
		}
	}
}

// apiCreate creates a session with an input, idempotently.
func (w *world) apiCreate(ctx context.Context, l *ledger) {
	if l.size(&l.apiSess) >= maxAPISessions {
		return
	}
	marker := l.marker("api")
	raw, _ := json.Marshal(map[string]any{"agent": "default", "input": "please look " + marker})
	var answer []byte
	if w.deliver(ctx, l, "api create "+marker, func(base string) (*http.Request, error) {
		req, err := apiRequest(base+"/v1/sessions", raw, marker)
		return req, err
	}) {
		l.accept(marker, "api")
		// The idempotent replay tells the id.
		code, b, err := w.call("POST", "/v1/sessions", json.RawMessage(raw), "Idempotency-Key", marker)
		for i := 0; (err != nil || code != http.StatusCreated) && i < 200 && ctx.Err() == nil; i++ {
			time.Sleep(50 * time.Millisecond)
			code, b, err = w.call("POST", "/v1/sessions", json.RawMessage(raw), "Idempotency-Key", marker)
		}
		answer = b
	}
	var created struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(answer, &created) == nil && created.ID != "" {
		l.add(&l.apiSess, created.ID)
	}
}

// apiPost steers or interrupts an API session, idempotently.
func (w *world) apiPost(ctx context.Context, l *ledger, rnd *rand.Rand, interrupt bool) {
	id := l.pick(rnd, &l.apiSess)
	if id == "" {
		return
	}
	kind := "api"
	ev := map[string]any{"type": "user.interrupt"}
	marker := l.marker(kind)
	if !interrupt {
		ev = map[string]any{"type": "user.message", "text": "also " + marker}
	}
	raw, _ := json.Marshal(map[string]any{"events": []any{ev}})
	if w.deliver(ctx, l, "api post "+marker, func(base string) (*http.Request, error) {
		return apiRequest(base+"/v1/sessions/"+id+"/events", raw, marker)
	}) {
		if interrupt {
			l.mu.Lock()
			l.interrupts++
			l.mu.Unlock()
			return
		}
		l.accept(marker, kind)
	}
}

func apiRequest(url string, body []byte, key string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	return req, nil
}
