package harness_test

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// memLog is an in-memory harness.Log with the store's append semantics.
type memLog struct {
	mu      sync.Mutex
	sess    core.Session
	events  []core.Event
	pending []core.Event
	changed chan struct{} // closed at the next append (next)
}

func newMemLog() *memLog {
	return &memLog{sess: core.Session{ID: "ses_test", Status: core.StatusIdle}}
}

func (m *memLog) GetSession(_ context.Context, id string) (*core.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sess
	return &s, nil
}

func (m *memLog) Pending(context.Context, string) ([]core.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]core.Event(nil), m.pending...), nil
}

func (m *memLog) queue(typ string, body any) {
	b, _ := json.Marshal(body)
	m.mu.Lock()
	defer m.mu.Unlock()
	in := core.NewInput(typ, b)
	in.SessionID = m.sess.ID
	m.pending = append(m.pending, in)
	if m.sess.Status != core.StatusRunning && !m.sess.BudgetPaused() {
		m.sess.Status = core.StatusQueued
	}
}

// raise is the store's SetSessionLimits for a paused turn: the turn is
// queued to run again.
func (m *memLog) raise() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.add(core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorHuman,
		core.StatusChangedBody{Status: core.StatusQueued, StopReason: m.sess.StopReason}))
}

func (m *memLog) Append(_ context.Context, _ string, req core.AppendRequest) ([]core.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []core.Event
	if req.TakeInputs {
		n := 0
		for n < len(m.pending) {
			n++
			if m.pending[n-1].Type == core.TypeUserInterrupt {
				break
			}
		}
		for _, e := range m.pending[:n] {
			e.ProcessedAt = core.Now().Ptr()
			if req.TurnID != "" {
				e.TurnID = req.TurnID
			}
			out = append(out, m.add(e))
		}
		m.pending = m.pending[n:]
	}
	for _, e := range req.Events {
		if e.TurnID == "" {
			e.TurnID = req.TurnID
		}
		out = append(out, m.add(e))
	}
	return out, nil
}

// next returns a channel closed at the next append.
func (m *memLog) next() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.changed == nil {
		m.changed = make(chan struct{})
	}
	return m.changed
}

func (m *memLog) add(e core.Event) core.Event {
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
	if e.ID == "" {
		e.ID = core.NewID(core.PrefixEvent)
	}
	e.SessionID = m.sess.ID
	e.Seq = uint64(len(m.events) + 1)
	e.CreatedAt = core.Now()
	m.events = append(m.events, e)
	m.sess.LastSeq = e.Seq
	switch e.Type {
	case core.TypeStatusChanged:
		var b core.StatusChangedBody
		_ = e.Decode(&b)
		m.sess.Status, m.sess.StopReason = b.Status, b.StopReason
		// The stores' pause projection (sessions/store/record.FollowPause).
		switch {
		case b.PendingAction != nil:
			m.sess.PendingAction = b.PendingAction
		case b.Status == core.StatusQueued || b.Status == core.StatusRunning:
			m.sess.PendingAction = nil
		}
	case core.TypeTurnStarted:
		m.sess.TurnID = e.TurnID
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		_ = e.Decode(&b)
		m.sess.Usage = m.sess.Usage.Add(b.Usage)
		m.sess.CostUSD = core.AddCost(m.sess.CostUSD, b.CostUSD)
		m.sess.Turns++
		m.sess.TurnID, m.sess.PendingAction = "", nil
	}
	return e
}

func (m *memLog) Events(_ context.Context, _ string, after uint64, limit int) ([]core.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []core.Event
	for _, e := range m.events {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out, nil
}

// types lists the logged event types.
func (m *memLog) types() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.events {
		out = append(out, e.Type)
	}
	return out
}

func (m *memLog) last(typ string) core.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.events) - 1; i >= 0; i-- {
		if m.events[i].Type == typ {
			return m.events[i]
		}
	}
	return core.Event{}
}

// blockTool blocks until its context ends or release is closed.
type blockTool struct {
	calls   chan struct{}
	release chan struct{}
}

func (b *blockTool) Def() core.ToolDef {
	return core.ToolDef{Name: "block", Description: "blocks", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (b *blockTool) Call(ctx context.Context, _ core.ToolCall) (core.ToolResult, error) {
	b.calls <- struct{}{}
	select {
	case <-ctx.Done():
		return core.ToolResult{}, ctx.Err()
	case <-b.release:
		return core.ToolResult{Output: "released"}, nil
	}
}
