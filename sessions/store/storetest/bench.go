package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// ListSessions is how many sessions SeedList stores.
const ListSessions = 10_000

// ListFilters are the filters BenchList measures, each over SeedList's
// sessions, each with more than a page of matches.
var ListFilters = []struct {
	Name   string
	Filter core.SessionFilter
}{
	{"none", core.SessionFilter{}},
	{"status", core.SessionFilter{Status: core.StatusIdle}},
	{"agent", core.SessionFilter{AgentID: "agt_3"}},
	{"provider", core.SessionFilter{Provider: "forge"}},
	{"tenant", core.SessionFilter{Tenant: "tenant:3"}},
	{"text", core.SessionFilter{Text: "deploy the release"}},
}

// BenchList lists the first 100-session page of SeedList's sessions with
// each of ListFilters.
func BenchList(b *testing.B, s core.Store) {
	ctx := b.Context()
	SeedList(b, s)
	for _, tc := range ListFilters {
		b.Run(tc.Name, func(b *testing.B) {
			f := tc.Filter
			f.Limit = 100
			for b.Loop() {
				l, err := s.ListSessions(ctx, f)
				if err != nil {
					b.Fatal(err)
				}
				if len(l.Sessions) != 100 {
					b.Fatalf("a page of %d", len(l.Sessions))
				}
			}
		})
	}
}

// SeedList stores ListSessions sessions for list benchmarks. Half the
// sessions have a message (queued) and half none (idle); providers,
// tenants and agents take turns; one message in ten holds the text
// "Deploy the Release", so a text page reads about 2,000.
func SeedList(b testing.TB, s core.Store) {
	ctx := b.Context()
	providers := []string{"chat", "forge", "tracker", ""}
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	const writers = 32
	for w := range writers {
		wg.Go(func() {
			for i := w; i < ListSessions; i += writers {
				req := core.NewSession{Session: core.Session{
					ID:     fmt.Sprintf("ses_bench%05d", i),
					Agent:  core.AgentRef{ID: fmt.Sprintf("agt_%d", i%5), Version: 1},
					Tenant: fmt.Sprintf("tenant:%d", i%7),
				}}
				if p := providers[i%len(providers)]; p != "" {
					req.Session.Origin = &core.Origin{Provider: p, Key: fmt.Sprintf("%s:%d", p, i)}
				}
				if i%2 == 0 {
					text := fmt.Sprintf("please look at the report number %d", i)
					if i%20 == 0 {
						text = "Deploy the Release, please"
					}
					req.Inputs = []core.Event{message(text)}
				}
				if _, err := s.CreateSession(ctx, req); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
