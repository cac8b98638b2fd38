// Package harness is the agent loop, the built-in runtime (Default): it
// derives a model context from a session's log alone, calls the model,
// runs tool calls, appends every step to the log, takes inputs that
// arrive mid-turn at the next step, enforces the turn's limits and
// compacts long contexts (unless the agent turns that off). It also
// holds the contract every runtime meets (Harness, Cycle, Outcome) and
// the pieces they share (OpenTurn, StatusEvent, ReasonFor).
//
// Because everything it knows is in the log, any process can resume any
// session after a crash: Run first closes tool calls that were left
// without a result, then picks the open turn up where the log says it
// stopped.
package harness

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
)

// Harness drives an agent version's turns over a session's log. Each
// runtime kind (core.AgentRuntime) has one: Default is the built-in loop;
// an ACP agent in the session's sandbox is another. The session runtime
// calls Run once per cycle with the harness of the pinned version's kind.
type Harness interface {
	// Run takes the session's pending inputs and runs turns until none are
	// left or a turn yields for a person. A cancelled ctx whose cause is
	// ErrShutdown or core.ErrLeaseLost leaves the open turn in the log for
	// whoever runs the session next.
	Run(ctx context.Context, c *Cycle) (Outcome, error)
}

// Log is what the harness needs of the session store.
type Log interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	Pending(ctx context.Context, sessionID string) ([]core.Event, error)
	Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error)
	Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error)
}

// Cycle is one visit of the runtime to a session.
type Cycle struct {
	SessionID string
	Agent     *core.Agent // the pinned version
	Holder    string      // the runtime instance, recorded as the turn's lease
	// Epoch is the runtime's lease on the session: every append carries
	// it, and the store refuses them (core.ErrLeaseLost) once another
	// runtime took the session over. Zero: unfenced.
	Epoch  uint64
	Log    Log
	Model  core.Model
	Tools  *toolset.Registry
	Limits core.Limits // resolved: no zero fields
	// Attachments reads what messages' attachments hold, and Images says
	// the model takes images; nil tells the model only that files were
	// attached.
	Attachments *Attachments
	Images      bool
	// Installation labels the turns' measurements
	// (core.Session.InstallationLabel).
	Installation string
	// MaxToolOutput caps what one tool call returns to the model, in bytes
	// (default 64 KiB).
	MaxToolOutput int
	// ContextWindow is the model's window in tokens; compaction starts when
	// the context passes CompactFraction of it.
	ContextWindow   int
	CompactFraction float64
	Logger          *slog.Logger
	// Failpoint, when set, is called at named points of a turn
	// ("after_response": a model response is in, not yet logged;
	// "after_answer": the final answer is logged, turn.completed is not):
	// crash and fencing tests park or pause the process there. Nil
	// outside test builds.
	Failpoint func(point string)
	// Inputs, when set, receives a value when an input is queued for the
	// session while the cycle runs (a wake), so a harness that waits on
	// something else (a parked permission request) notices it. Inputs
	// stay in the store either way: a missed value costs latency only.
	Inputs <-chan struct{}
	// Contexts, when set, keeps the session's model context between steps
	// and cycles, so each step decodes only what was logged since.
	Contexts *Contexts
	// Session, when set, is the session as the runtime read it for this
	// cycle, under its lease: the harness's first look at it.
	Session *core.Session
	// Opened names a turn the runtime opened with the session's pending
	// inputs in the transaction that granted its lease (OpenTurn's
	// append): Default runs it as a new turn.
	Opened string
}

// session returns the session: the one the runtime read for the cycle
// the first time, else as the store has it now.
func (c *Cycle) session(ctx context.Context) (*core.Session, error) {
	if s := c.Session; s != nil {
		c.Session = nil
		return s, nil
	}
	return c.Log.GetSession(ctx, c.SessionID)
}

// Outcome summarises a cycle.
type Outcome struct {
	Turns  int         // turns completed in this cycle
	Reason core.Reason // the last turn's yield reason, if any
	Usage  core.Usage  // tokens used in this cycle
	// Paused: the session's open turn waits for a session budget to be
	// raised; its queued inputs wait with it.
	Paused bool
}

// Causes a runtime gives when it cancels a cycle's context.
var (
	// ErrInterrupted: a user.interrupt arrived; the turn yields canceled.
	ErrInterrupted = errors.New("turn interrupted")
	// ErrShutdown: the gateway is stopping; the turn stays open in the log
	// and is resumed at the next start.
	ErrShutdown = errors.New("gateway shutting down")
	// errDeadline is the cause of a turn's own deadline.
	errDeadline = errors.New("turn deadline exceeded")
)

// Observer receives measurements; the runtime wires it to metrics.
type Observer interface {
	ModelCall(model string, d time.Duration, u core.Usage, err error)
	// TurnCompleted is called once a turn's turn.completed is logged.
	TurnCompleted(TurnReport)
}

// TurnReport is what a completed turn measured.
type TurnReport struct {
	Agent        string // the agent's name
	Installation string // Cycle.Installation
	Model        string
	Reason       core.Reason
	Usage        core.Usage
	CostUSD      *float64 // nil when the model has no price
}

type nopObserver struct{}

func (nopObserver) ModelCall(string, time.Duration, core.Usage, error) {}
func (nopObserver) TurnCompleted(TurnReport)                           {}
