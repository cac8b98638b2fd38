package storecopy_test

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/backend"
)

// page reads every page of a list whose items have ids.
func page[T any](t *testing.T, list func(after string) ([]T, bool, error), id func(T) string) []T {
	t.Helper()
	var out []T
	after := ""
	for {
		items, more, err := list(after)
		must(t, err)
		out = append(out, items...)
		if !more || len(items) == 0 {
			return out
		}
		after = id(items[len(items)-1])
	}
}

// snapshot is everything a store answers through its contract, as JSON:
// two stores holding the same records give the same text. now is the
// test's clock, for the queues' due times.
func snapshot(t *testing.T, s backend.Store, now time.Time) string {
	t.Helper()
	ctx := t.Context()
	snap := map[string]any{}
	agents := page(t, func(after string) ([]*core.Agent, bool, error) { return s.ListAgents(ctx, after, 1) }, func(a *core.Agent) string { return a.ID })
	var versions []*core.Agent
	for _, a := range agents {
		for v := 1; v <= a.Version; v++ {
			av, err := s.GetAgentVersion(ctx, a.ID, v)
			must(t, err)
			versions = append(versions, av)
		}
	}
	snap["agents"], snap["agent_versions"] = agents, versions
	snap["schedules"] = page(t, func(after string) ([]*core.Schedule, bool, error) {
		return s.ListSchedules(ctx, core.ScheduleQuery{After: after, Limit: 1})
	}, func(s *core.Schedule) string { return s.ID })
	dueSchedules, err := s.DueSchedules(ctx, now.Add(24*time.Hour), 0)
	must(t, err)
	snap["schedules_due"] = dueSchedules

	list := page(t, func(after string) ([]*core.Session, bool, error) {
		page, err := s.ListSessions(ctx, core.SessionFilter{After: after, Limit: 2})
		return page.Sessions, page.HasMore, err
	}, func(s *core.Session) string { return s.ID })
	type sessionView struct {
		Session      *core.Session
		ByKey        *core.Session
		ByLink       []string
		Events       []core.Event
		Pending      []core.Event
		Destinations []*core.Destination
		Sink         core.SinkPosition
		AttachTokens []*core.AttachToken
	}
	var views []sessionView
	for _, sess := range list {
		v := sessionView{Session: sess}
		var err error
		for _, l := range sess.Links {
			linked, err := s.SessionByKey(ctx, l.Key)
			must(t, err)
			v.ByLink = append(v.ByLink, linked.ID)
		}
		if sess.Origin != nil {
			v.ByKey, err = s.SessionByKey(ctx, sess.Origin.Key)
			must(t, err)
			v.Sink, err = s.SinkPosition(ctx, sess.Origin.Provider, sess.ID)
			must(t, err)
		}
		v.Events, err = s.Events(ctx, sess.ID, 0, 0)
		must(t, err)
		v.Pending, err = s.Pending(ctx, sess.ID)
		must(t, err)
		v.Destinations, _, err = s.ListDestinations(ctx, core.DestinationQuery{SessionID: sess.ID})
		must(t, err)
		v.AttachTokens, err = s.ListAttachTokens(ctx, sess.ID)
		must(t, err)
		views = append(views, v)
	}
	snap["sessions"] = views
	counts, err := s.CountByStatus(ctx)
	must(t, err)
	snap["counts"] = counts
	turns, err := s.OpenTurns(ctx)
	must(t, err)
	snap["open_turns"] = turns
	wakes, err := s.DueWakes(ctx, now.Add(24*time.Hour), 1000)
	must(t, err)
	next, ok, err := s.NextWake(ctx)
	must(t, err)
	snap["wakes"], snap["next_wake"] = wakes, map[string]any{"at": next.UTC(), "ok": ok}
	active := map[string][]string{}
	for _, sink := range []string{"slack", "github", "linear"} {
		active[sink], err = s.ActiveSinkSessions(ctx, sink)
		must(t, err)
	}
	snap["active_sinks"] = active

	vaults := page(t, func(after string) ([]*core.Vault, bool, error) { return s.ListVaults(ctx, after, 1) }, func(v *core.Vault) string { return v.ID })
	creds := map[string]any{}
	for _, v := range vaults {
		cs, err := s.ListCredentials(ctx, v.ID)
		must(t, err)
		for _, c := range cs {
			_, sealed, err := s.GetCredential(ctx, c.ID)
			must(t, err)
			creds[c.ID] = map[string]any{"credential": c, "sealed": sealed}
		}
	}
	snap["vaults"], snap["credentials"] = vaults, creds
	snap["environments"] = page(t, func(after string) ([]*core.Environment, bool, error) { return s.ListEnvironments(ctx, after, 1) },
		func(e *core.Environment) string { return e.ID })
	installs := page(t, func(after string) ([]*core.Installation, bool, error) {
		return s.ListInstallations(ctx, core.InstallationQuery{After: after, Limit: 1})
	}, func(in *core.Installation) string { return in.ID })
	tokens := map[string][]byte{}
	for _, in := range installs {
		if in.HasToken {
			tokens[in.ID], err = s.InstallationTokens(ctx, in.ID)
			must(t, err)
		}
	}
	snap["installations"], snap["tokens"] = installs, tokens

	dests := page(t, func(after string) ([]*core.Destination, bool, error) {
		return s.ListDestinations(ctx, core.DestinationQuery{After: after, Limit: 1})
	}, func(d *core.Destination) string { return d.ID })
	secrets := map[string][]byte{}
	for _, d := range dests {
		secrets[d.ID], err = s.DestinationSecret(ctx, d.ID)
		must(t, err)
	}
	snap["destinations"], snap["secrets"] = dests, secrets
	snap["deliveries"] = page(t, func(after string) ([]*core.Delivery, bool, error) {
		return s.ListDeliveries(ctx, core.DeliveryQuery{After: after, Limit: 3})
	}, func(d *core.Delivery) string { return d.ID })
	// Claiming is how the queue is read; the claims are let go at once,
	// and their epochs are no part of the copy.
	claimed, nextDue, err := s.ClaimDeliveries(ctx, "snapshot", time.Minute, now.Add(24*time.Hour), 100)
	must(t, err)
	must(t, s.ReleaseDeliveryClaims(ctx, "snapshot"))
	var due []*core.Delivery
	for _, c := range claimed {
		due = append(due, c.Delivery)
	}
	snap["due"], snap["next_due"] = due, nextDue.UTC()
	snap["skills"] = skills(t, s)
	snap["memory"] = memorySnapshot(t, s)
	snap["hourly_stats"], err = s.HourlyStats(ctx, time.Time{}, now.Add(24*time.Hour))
	must(t, err)
	return jsonOf(t, snap)
}

// skills reads every version of every skill, each with its files'
// contents.
func skills(t *testing.T, s backend.Store) []core.SkillBundle {
	ctx := t.Context()
	var out []core.SkillBundle
	for _, latest := range page(t, func(after string) ([]*core.Skill, bool, error) { return s.ListSkills(ctx, after, 1) },
		func(sk *core.Skill) string { return sk.ID }) {
		for v := 1; v <= latest.Version; v++ {
			sk, err := s.GetSkill(ctx, latest.ID, v)
			must(t, err)
			b := core.SkillBundle{Skill: sk, Files: map[string][]byte{}}
			for _, f := range sk.Files {
				b.Files[f.Path], err = s.SkillFile(ctx, sk.ID, v, f.Path)
				must(t, err)
			}
			out = append(out, b)
		}
	}
	return out
}

// memorySnapshot is every memory store with, by partition, its files
// and every retained version of them with its content.
func memorySnapshot(t *testing.T, s backend.Store) map[string]any {
	ctx := t.Context()
	out := map[string]any{}
	stores := page(t, func(after string) ([]*core.MemoryStore, bool, error) { return s.ListMemoryStores(ctx, after, 1) },
		func(m *core.MemoryStore) string { return m.ID })
	out["stores"] = stores
	for _, m := range stores {
		parts, err := s.MemoryPartitions(ctx, m.ID)
		must(t, err)
		for _, p := range parts {
			files, err := s.MemoryFiles(ctx, m.ID, p, true)
			must(t, err)
			var versions []*core.MemoryVersion
			for _, f := range files {
				h, err := s.MemoryHistory(ctx, m.ID, p, f.Path)
				must(t, err)
				for _, v := range h {
					full, err := s.MemoryFile(ctx, m.ID, p, v.Path, v.Version)
					must(t, err)
					versions = append(versions, full)
				}
			}
			out[m.ID+"/"+p] = map[string]any{"files": files, "versions": versions}
		}
	}
	return out
}
