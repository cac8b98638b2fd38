package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// TestSkillDeleteRacesAgent: a skill's delete and an agent version
// pinning the skill, written by two replicas at once, take turns on the
// skill's row, so the second sees the first: the delete is refused when
// the agent came first, and the agent when the delete did.
func TestSkillDeleteRacesAgent(t *testing.T) {
	tests := []struct {
		name string
		// first does, in the other replica's open transaction, what the
		// store does for the write that comes first.
		first func(ctx context.Context, tx pgx.Tx, agent *core.Agent, sk *core.Skill) error
		// second is the write that comes second, and what it must fail with.
		second func(ctx context.Context, s *Store, agent *core.Agent, sk *core.Skill) error
		want   error
		names  string
	}{
		{
			name: "agent first",
			first: func(ctx context.Context, tx pgx.Tx, agent *core.Agent, sk *core.Skill) error {
				next := *agent
				next.Version++
				var err error
				if next.Skills, err = record.ResolveSkills([]core.SkillRef{{ID: sk.ID}}, skillsIn(ctx, tx)); err != nil {
					return err
				}
				_, err = putAgent(ctx, tx, &next, false)
				return err
			},
			second: func(ctx context.Context, s *Store, _ *core.Agent, sk *core.Skill) error {
				return s.DeleteSkill(ctx, sk.ID)
			},
			want:  core.ErrConflict,
			names: "pinner",
		},
		{
			name: "delete first",
			first: func(ctx context.Context, tx pgx.Tx, _ *core.Agent, sk *core.Skill) error {
				if _, err := getSkill(ctx, tx, sk.ID, 0, lockSkill); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `DELETE FROM skills WHERE id = $1`, sk.ID)
				return err
			},
			second: func(ctx context.Context, s *Store, agent *core.Agent, sk *core.Skill) error {
				_, err := s.UpdateAgent(ctx, agent.ID, 0, func(a *core.Agent) error {
					a.Skills = []core.SkillRef{{ID: sk.ID}}
					return nil
				})
				return err
			},
			want:  core.ErrInvalid,
			names: "skills[0]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, dsn := openTest(t, Options{})
			r, name := replica(t, dsn)
			ctx := t.Context()
			sk, err := s.CreateSkill(ctx, core.SkillUpload{Name: "lint", Description: "Lints.",
				Files: map[string][]byte{core.SkillManifestFile: []byte("---\nname: lint\ndescription: Lints.\n---\n")}})
			if err != nil {
				t.Fatal(err)
			}
			agent, err := s.CreateAgent(ctx, &core.Agent{Name: "pinner", Model: "anthropic/claude-test"})
			if err != nil {
				t.Fatal(err)
			}
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.WithoutCancel(ctx))
			if err := tc.first(ctx, tx, agent, sk); err != nil {
				t.Fatal(err)
			}
			went, res := make(chan struct{}), make(chan error, 1)
			go func() {
				err := tc.second(ctx, r, agent, sk)
				close(went)
				res <- err
			}()
			waitForLockWait(t, s, name, went)
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-res; !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("the second write = %v, want %v naming %s", err, tc.want, tc.names)
			}
		})
	}
}
