package bolt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// putLegacyAgent stores an agent the way a release without a naming rule
// could have, bypassing validation.
func putLegacyAgent(t *testing.T, s *Store, name string) *core.Agent {
	t.Helper()
	a := &core.Agent{ID: core.NewID(core.PrefixAgent), Name: name, Model: "anthropic/x", Version: 1, CreatedAt: s.clock(), UpdatedAt: s.clock()}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		if err := bkt(tx, bucketAgentNames).Put([]byte(name), []byte(a.ID)); err != nil {
			return err
		}
		_, err := putAgent(tx, a)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAgentNames: names follow ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ on create
// and rename; an agent stored with a name outside the rule still loads and
// updates, and each such agent gets one warning at start-up.
func TestAgentNames(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{})
	for _, name := range []string{"a", "Agent-1", "v1.2_beta", "9", strings.Repeat("x", 64)} {
		if _, err := s.CreateAgent(ctx, &core.Agent{Name: name, Model: "anthropic/x"}); err != nil {
			t.Errorf("create %q: %v", name, err)
		}
	}
	bad := []string{"", " a", "-a", ".hidden", "a b", "../etc", "a/b", "a\x00b", "ab\u202ecd", "é", strings.Repeat("x", 65), strings.Repeat("x", 100<<10)}
	for _, name := range bad {
		if _, err := s.CreateAgent(ctx, &core.Agent{Name: name, Model: "anthropic/x"}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("create %.20q: err = %v, want ErrInvalid", name, err)
		}
	}

	legacy := []*core.Agent{putLegacyAgent(t, s, "old name"), putLegacyAgent(t, s, "../up")}
	for _, a := range legacy {
		got, err := s.GetAgent(ctx, a.Name)
		if err != nil || got.ID != a.ID {
			t.Fatalf("legacy agent %q by name: %+v %v", a.Name, got, err)
		}
		v2, err := s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.System = "still here"; return nil })
		if err != nil || v2.Version != 2 || v2.Name != a.Name {
			t.Fatalf("update legacy agent %q: %+v %v", a.Name, v2, err)
		}
	}
	if _, err := s.UpdateAgent(ctx, legacy[0].ID, 0, func(x *core.Agent) error { x.Name = "still bad"; return nil }); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("rename to a name outside the rule: %v", err)
	}
	if _, err := s.UpdateAgent(ctx, legacy[0].ID, 0, func(x *core.Agent) error { x.Name = "fixed"; return nil }); err != nil {
		t.Fatalf("rename to a good name: %v", err)
	}

	var out bytes.Buffer
	if err := WarnStoredAgents(ctx, s, slog.New(slog.NewTextHandler(&out, nil))); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "level=WARN"); n != 1 || !strings.Contains(out.String(), legacy[1].ID) {
		t.Fatalf("want one warning, for %s:\n%s", legacy[1].ID, out.String())
	}
}
