package linear

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// Answers to confirmations: while a tool call of the agent session's
// session waits for a person, a prompt "allow" or "deny" from a member of
// the workspace is that person's user.tool_confirmation, never a message.

// waiting is what a session waits on when a person must allow or deny
// tool calls.
type waiting struct {
	key     string // the agent session's key: the session's origin or a link
	session *core.Session
	calls   []string // the calls a person answers (custom tools' excluded)
	// inTurn: the turn waits inside itself (an ACP permission request):
	// a message queues behind the answer.
	inTurn bool
}

// waitingFor is the wait of the session of key, or nil when it waits for
// no person's confirmation.
func (p *Provider) waitingFor(ctx context.Context, k string) (*waiting, error) {
	s, err := p.cfg.Sessions.SessionByKey(ctx, k)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	pa := s.PendingAction
	if pa == nil || pa.Budget != nil || len(pa.ToolUseIDs) == 0 {
		return nil, nil
	}
	// A custom tool's result comes from the application: only the other
	// calls are a person's to answer.
	evs, err := p.cfg.Sessions.Events(ctx, s.ID, 0, 0)
	if err != nil {
		return nil, err
	}
	custom := map[string]bool{}
	for _, e := range evs {
		var b core.ToolUseBody
		if e.Type == core.TypeAgentCustomToolUse && e.Decode(&b) == nil {
			custom[b.ToolUseID] = true
		}
	}
	w := &waiting{key: k, session: s, inTurn: s.TurnID != ""}
	for _, id := range pa.ToolUseIDs {
		if !custom[id] {
			w.calls = append(w.calls, id)
		}
	}
	if len(w.calls) == 0 {
		return nil, nil
	}
	return w, nil
}

// confirm queues a member's answer (allow or deny) to every call the
// session waits on, each with who gave it; anyone else is told in place
// why the answer does not count, and nothing is queued.
func (p *Provider) confirm(ctx context.Context, in *core.Installation, pl *Payload, w *waiting, result string, dedupe []string, log *slog.Logger) error {
	who := pl.actor()
	u, err := p.person(ctx, in, who)
	if err != nil {
		return err // a 5xx: Linear delivers the prompt again
	}
	if !u.member() {
		log.Info("confirmation refused: not a member of the workspace", "session_id", w.session.ID, "user", who, "guest", u.Guest, "app", u.App, "active", u.Active)
		p.tell(in, pl, "elicitation", "Only members of this workspace can allow or deny what I asked: your answer does not count. "+
			"A member can reply **allow** or **deny**.")
		return nil
	}
	by := "by Linear user " + who
	if u.Name != "" {
		by = "by Linear user " + u.Name + " (" + who + ")"
	}
	queued := false
	for _, id := range w.calls {
		raw, err := json.Marshal(core.ToolConfirmationBody{ToolUseID: id, Result: result, Message: by})
		if err != nil {
			return err
		}
		// One key per call: a redelivery, or a crash between two calls,
		// queues each answer once.
		keys := make([]string, len(dedupe))
		for i, d := range dedupe {
			keys[i] = d + ":" + id
		}
		res, err := p.cfg.Intake.Route(ctx, providers.Trigger{Installation: in, Origin: core.Origin{Provider: Name, Key: w.key},
			Input: core.NewInput(core.TypeUserToolConfirmation, raw), Dedupe: keys, Continue: true})
		if err != nil {
			return err
		}
		queued = queued || res.Outcome == providers.Queued
	}
	if queued {
		log.Info("linear confirmation queued", "session_id", w.session.ID, "result", result, "user", who)
		name := cmp.Or(u.Name, who)
		note := "Allowed by " + name + ". Going on…"
		if result == answerDeny {
			note = "Denied by " + name + "."
		}
		p.tell(in, pl, "thought", note)
	}
	return nil
}

// memberTTL is how long a look-up of who a user is counts, and
// memberWait how long a webhook waits for one (Linear wants its answer
// within 5 s; past that it delivers the prompt again).
const (
	memberTTL  = 5 * time.Minute
	memberWait = 3 * time.Second
)

// people caches who users are, by organization and user.
type people struct {
	mu sync.Mutex
	m  map[string]personAt
}

type personAt struct {
	person
	at time.Time
}

// person is the workspace's user id, looked up at Linear (cached
// briefly); a user Linear does not know is no member.
func (p *Provider) person(ctx context.Context, in *core.Installation, id string) (person, error) {
	k := in.ExternalID + ":" + id
	now := p.cfg.Now()
	p.people.mu.Lock()
	c, ok := p.people.m[k]
	p.people.mu.Unlock()
	if ok && now.Sub(c.at) < memberTTL {
		return c.person, nil
	}
	if id == "" {
		return person{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, memberWait)
	defer cancel()
	if err := p.budgets.wait(ctx, in.ExternalID, prioAnswer); err != nil {
		return person{}, err
	}
	u, err := p.newAPI(in).user(ctx, id)
	if ae := asAPIError(err); ae != nil && ae.UserError {
		u, err = person{ID: id}, nil
	}
	if err != nil {
		return person{}, err
	}
	p.people.mu.Lock()
	defer p.people.mu.Unlock()
	if p.people.m == nil || len(p.people.m) > 10_000 {
		p.people.m = map[string]personAt{}
	}
	p.people.m[k] = personAt{person: u, at: now}
	return u, nil
}
