package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// benchSessions is how many sessions BenchList stores.
const benchSessions = 10_000

// BenchList lists the first 100-session page of benchSessions sessions
// with each filter. Half the sessions have a message (queued) and half
// none (idle); providers, tenants and agents take turns; one message in
// ten holds the searched text, so a text page reads about 2,000.
func BenchList(b *testing.B, s core.Store) {
	ctx := b.Context()
	providers := []string{"slack", "github", "linear", ""}
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	const writers = 32
	for w := range writers {
		wg.Go(func() {
			for i := w; i < benchSessions; i += writers {
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
	for _, tc := range []struct {
		name string
		f    core.SessionFilter
	}{
		{"none", core.SessionFilter{}},
		{"status", core.SessionFilter{Status: core.StatusIdle}},
		{"agent", core.SessionFilter{AgentID: "agt_3"}},
		{"provider", core.SessionFilter{Provider: "github"}},
		{"tenant", core.SessionFilter{Tenant: "tenant:3"}},
		{"text", core.SessionFilter{Text: "deploy the release"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tc.f.Limit = 100
			for b.Loop() {
				l, err := s.ListSessions(ctx, tc.f)
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
