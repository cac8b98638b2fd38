package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestEnvironmentStoreConformance(t *testing.T) { storetest.RunEnvironments(t, fresh) }

// TestEnvironmentsSurviveReopen: the environment buckets are durable, and a
// database from before they existed gains them on open.
func TestEnvironmentsSurviveReopen(t *testing.T) {
	s, path := openTemp(t, Options{})
	ctx := t.Context()
	e, err := s.CreateEnvironment(ctx, &core.Environment{Name: "kept", Packages: core.Packages{Apt: []string{"jq"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.GetEnvironment(ctx, "kept")
	if err != nil || got.ID != e.ID || got.Packages.Apt[0] != "jq" {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
}
