package core

import (
	"context"
	"time"
)

// PrefixSchedule begins a schedule's id.
const PrefixSchedule = "sch"

// Schedule sends an input at due times: every time a cron expression in a
// time zone is due, or once at a given time. Its target is an existing
// session (the input is queued on it) or an agent (each fire starts a new
// session of it with the input).
type Schedule struct {
	ID string `json:"id"`
	// Cron (five fields, in TimeZone, default UTC) makes it recurring; At
	// makes it a one-off. Exactly one is set.
	Cron     string         `json:"cron,omitempty"`
	TimeZone string         `json:"time_zone,omitempty"`
	At       *Time          `json:"at,omitempty"`
	Target   ScheduleTarget `json:"target"`
	// Paused schedules do not fire; resuming one makes its next due time
	// the first after the resume (what was due meanwhile is skipped).
	Paused bool `json:"paused"`
	// NextAt is when it fires next: nil while paused, and once a one-off
	// fired.
	NextAt *Time `json:"next_at"`
	// LastFiredAt is the due time it last fired for, LastSessionID the
	// session that fire queued its input on, Fires how often it fired.
	LastFiredAt   *Time  `json:"last_fired_at"`
	LastSessionID string `json:"last_session_id,omitempty"`
	Fires         int64  `json:"fires"`
	// LastError says why it stopped firing (its session was archived or
	// deleted); the schedule is paused then.
	LastError string `json:"last_error,omitempty"`
	// CreatedBy is "admin", or the id of the session whose model made it
	// with the schedule tool.
	CreatedBy string `json:"created_by"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
}

// ScheduleTarget is what a schedule's fire does.
type ScheduleTarget struct {
	// SessionID: queue Input on this session. Else Agent (an agent id):
	// start a new session of the agent's latest version with Input, and
	// with Metadata and Tenant as POST /v1/sessions takes them.
	SessionID string            `json:"session_id,omitempty"`
	Agent     string            `json:"agent,omitempty"`
	Input     string            `json:"input"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	Tenant    string            `json:"tenant,omitempty"`
	// Post, with Agent, gives each new session a place on a platform: the
	// message is posted there first, and the session answers in its
	// thread.
	Post *SchedulePost `json:"post,omitempty"`
}

// SchedulePost is where a scheduled session's conversation takes place:
// a channel of an installation (Slack).
type SchedulePost struct {
	Provider     string `json:"provider"`
	Installation string `json:"installation"` // its id
	Channel      string `json:"channel"`
}

// ThreadOpener is a provider that starts a conversation for a session
// that has none yet.
type ThreadOpener interface {
	// OpenThread posts text as a new message in channel of the
	// installation and returns the origin of a session that answers in
	// its thread, with the session's tenant. key names the post: a
	// message posted before under key is found, not posted again.
	OpenThread(ctx context.Context, installationID, channel, text, key string) (origin Origin, tenant string, err error)
}

// CreatedByAdmin is Schedule.CreatedBy for schedules made over the API.
const CreatedByAdmin = "admin"

// ScheduleQuery selects schedules in a list (id order).
type ScheduleQuery struct {
	// Session keeps the schedules that target it or that its model made.
	Session string
	After   string
	Limit   int
}

// Fire is what a schedule's due time queued.
type Fire struct {
	// Fired is false when the due time was not the schedule's to fire
	// any more: another replica fired it, or it was paused, moved or
	// deleted meanwhile.
	Fired    bool
	Schedule *Schedule
	// Session is the session the input was queued on (new or targeted).
	Session *Session
	Created bool
}

// ScheduleStore keeps schedules. Firing claims a due time in the same
// transaction that queues the input, so each due time fires once across
// restarts and replicas.
type ScheduleStore interface {
	// CreateSchedule saves a new schedule; it assigns the id and times.
	CreateSchedule(ctx context.Context, s *Schedule) (*Schedule, error)
	GetSchedule(ctx context.Context, id string) (*Schedule, error)
	ListSchedules(ctx context.Context, q ScheduleQuery) (list []*Schedule, hasMore bool, err error)
	// UpdateSchedule applies fn to the schedule and saves it (pause,
	// resume: fn sets Paused and NextAt).
	UpdateSchedule(ctx context.Context, id string, fn func(*Schedule) error) (*Schedule, error)
	DeleteSchedule(ctx context.Context, id string) error
	// DueSchedules returns up to limit schedules whose NextAt is at or
	// before now, earliest first.
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]*Schedule, error)
	// NextScheduleAt is the earliest NextAt of all schedules.
	NextScheduleAt(ctx context.Context) (time.Time, bool, error)
	// FireSchedule fires the schedule for its due time due, which must
	// still be its NextAt (else Fired is false and nothing is written):
	// in one transaction it queues the target's input (on the target
	// session, or on a new session made from start) and moves NextAt to
	// next (nil: it is done). A target session that is archived or gone
	// pauses the schedule with LastError instead.
	FireSchedule(ctx context.Context, id string, due time.Time, next *time.Time, start *NewSession) (*Fire, error)
}

// ScheduleLister lists schedules a page at a time.
type ScheduleLister interface {
	ListSchedules(ctx context.Context, q ScheduleQuery) ([]*Schedule, bool, error)
}

// EachSchedule calls fn with each schedule q selects, in id order, until
// fn says to stop.
func EachSchedule(ctx context.Context, l ScheduleLister, q ScheduleQuery, fn func(*Schedule) bool) error {
	q.Limit = 1000
	return EachItem(func(after string) ([]*Schedule, bool, error) {
		q.After = after
		return l.ListSchedules(ctx, q)
	}, func(s *Schedule) string { return s.ID }, fn)
}
