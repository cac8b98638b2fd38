package sandbox

import (
	"context"
	"testing"
)

// TestContainers: the deployment's sandboxes are listed with their
// sessions, names and states, and a removed one is gone from the list.
func TestContainers(t *testing.T) {
	d := newDocker(t)
	ctx := context.Background()
	if list, err := d.Containers(ctx); err != nil || len(list) != 0 {
		t.Fatalf("before any sandbox: %+v %v", list, err)
	}
	one, two := newSession(), newSession()
	sh(t, d, one, "true")
	sh(t, d, two, "true")
	list, err := d.Containers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Container{}
	for _, c := range list {
		got[c.SessionID] = c
	}
	for _, s := range []string{one, two} {
		id, _ := containerState(t, d, s)
		c := got[s]
		if c.ID != id || c.Name != d.cfg.containerName(s) || c.State != "running" || c.Created.IsZero() || c.Status == "" {
			t.Errorf("sandbox of %s: %+v", s, c)
		}
	}
	if len(list) != 2 || list[0].Created.Before(list[1].Created) {
		t.Fatalf("list %+v, want two, newest first", list)
	}
	if err := d.Remove(ctx, one); err != nil {
		t.Fatal(err)
	}
	if list, err = d.Containers(ctx); err != nil || len(list) != 1 || list[0].SessionID != two {
		t.Fatalf("after removing one: %+v %v", list, err)
	}
}
