package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestVaultStoreConformance(t *testing.T) { storetest.RunVaults(t, fresh) }

func TestEnvironmentStoreConformance(t *testing.T) { storetest.RunEnvironments(t, fresh) }

func TestSkillStoreConformance(t *testing.T) { storetest.RunSkills(t, fresh) }

func TestInstallationConformance(t *testing.T) { storetest.RunInstallations(t, fresh) }

// TestConcurrentCreateTakesTurns: a replica saving an installation or
// recording a once key that another replica is creating at that moment
// waits for it and then finds it, rather than failing on the unique key.
func TestConcurrentCreateTakesTurns(t *testing.T) {
	taken := &core.Installation{ID: core.NewID(core.PrefixInstallation), Provider: "slack", ExternalID: "T1", CreatedAt: core.Now()}
	body, err := core.EncodeJSON(taken)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		create string // what the other replica has inserted, not yet committed
		args   []any
		write  func(ctx context.Context, s *Store) error
	}{
		{
			name:   "installation",
			create: "INSERT INTO installations (id, provider, external_id, body) VALUES ($1, $2, $3, $4)",
			args:   []any{taken.ID, taken.Provider, taken.ExternalID, body},
			write: func(ctx context.Context, s *Store) error {
				in, err := s.SaveInstallation(ctx, &core.Installation{Provider: "slack", ExternalID: "T1", Name: "second"}, []byte("tok"), nil)
				if err == nil && (in.ID != taken.ID || in.Name != "second" || !in.HasToken) {
					err = fmt.Errorf("saved %+v, want the other replica's %s updated", in, taken.ID)
				}
				return err
			},
		},
		{
			name:   "once",
			create: "INSERT INTO once_keys (key, until) VALUES ($1, $2)",
			args:   []any{"oauth:state:x", time.Now().Add(time.Hour)},
			write: func(ctx context.Context, s *Store) error {
				fresh, err := s.Once(ctx, "oauth:state:x", time.Now().Add(time.Hour))
				if err == nil && fresh {
					err = errors.New("a key the other replica recorded was new")
				}
				return err
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, dsn := openTest(t, Options{})
			r, name := replica(t, dsn)
			ctx := t.Context()
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.WithoutCancel(ctx))
			if _, err := tx.Exec(ctx, tc.create, tc.args...); err != nil {
				t.Fatal(err)
			}
			went, res := make(chan struct{}), make(chan error, 1)
			go func() {
				err := tc.write(ctx, r)
				close(went)
				res <- err
			}()
			waitForLockWait(t, s, name, went)
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-res; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMemoryStoreConformance(t *testing.T) { storetest.RunMemory(t, fresh) }
