package postgres

import (
	"bytes"
	"io/fs"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// scopesMigration is the migration that gave credentials their scope.
const scopesMigration = 17

// TestCredentialsOfThePreviousSchemaOpenAsGlobal writes a credential as
// the schema before scopes stored it, then opens the store: the migration
// makes it global, its body the bytes the encoder writes for it.
func TestCredentialsOfThePreviousSchemaOpenAsGlobal(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.DSN(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	m, err := migrate.NewMigratorEx(ctx, conn, versionTable, &migrate.MigratorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrationFiles, "migrations")
	if err := m.LoadMigrations(sub); err != nil {
		t.Fatal(err)
	}
	if err := m.MigrateTo(ctx, scopesMigration-1); err != nil {
		t.Fatal(err)
	}

	// The previous release's credential: core.Credential without Scope.
	type previous struct {
		ID        string              `json:"id"`
		VaultID   string              `json:"vault_id"`
		Name      string              `json:"name"`
		Kind      core.CredentialKind `json:"kind"`
		Hosts     []string            `json:"hosts"`
		Scopes    []string            `json:"scopes,omitempty"`
		CreatedAt core.Time           `json:"created_at"`
		UpdatedAt core.Time           `json:"updated_at"`
	}
	now := core.Now()
	vault := &core.Vault{ID: core.NewID(core.PrefixVault), Name: "ci", CreatedAt: now, UpdatedAt: now}
	old := previous{ID: core.NewID(core.PrefixCredential), VaultID: vault.ID, Name: `"scope": not a field`, Kind: core.CredentialOAuth,
		Hosts: []string{"api.example.com"}, Scopes: []string{"scope"}, CreatedAt: now, UpdatedAt: now}
	vraw, _ := record.Encode("vault", vault.ID, vault)
	craw, _ := record.Encode("credential", old.ID, old)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO vaults (id, body) VALUES ($1, $2)", []any{vault.ID, vraw}},
		{"INSERT INTO credentials (id, vault_id, body) VALUES ($1, $2, $3)", []any{old.ID, vault.ID, craw}},
		{"INSERT INTO credential_secrets (credential_id, sealed) VALUES ($1, $2)", []any{old.ID, []byte("sealed")}},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}

	s, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, sealed, err := s.GetCredential(ctx, old.ID)
	if err != nil || c.Scope != core.GlobalScope || c.Name != old.Name || string(sealed) != "sealed" {
		t.Fatalf("credential %+v, %v: want the old one, scope global", c, err)
	}
	var body []byte
	if err := s.pool.QueryRow(ctx, "SELECT body FROM credentials WHERE id = $1", old.ID).Scan(&body); err != nil {
		t.Fatal(err)
	}
	want, _ := record.Encode("credential", c.ID, c)
	if !bytes.Equal(body, want) {
		t.Fatalf("migrated body\n%s\nwant the encoder's\n%s", body, want)
	}
}
