package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func TestFindByIDOrName(t *testing.T) {
	all := []core.Vault{{ID: "vlt_0", Name: "vlt_4"}, {ID: "vlt_1", Name: "team"}, {ID: "vlt_2", Name: "ops"}, {ID: "vlt_3", Name: "prod"}, {ID: "vlt_4", Name: "prod"}}
	idName := func(v core.Vault) (string, string) { return v.ID, v.Name }
	for _, tt := range []struct {
		ref, id, err string
	}{
		{"vlt_2", "vlt_2", ""},
		{"team", "vlt_1", ""},
		{"taem", "", `no vault has the id or name "taem"; did you mean "team"?`},
		{"prod", "", `2 vaults are named "prod": vlt_3, vlt_4; give an id`},
		{"vlt_4", "vlt_4", ""},
	} {
		t.Run(tt.ref, func(t *testing.T) {
			v, err := find("vault", tt.ref, all, idName)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || v.ID != tt.id {
				t.Fatalf("found %+v, %v", v, err)
			}
		})
	}
	creds := []core.Credential{{ID: "vcr_1", Name: "gh"}, {ID: "vcr_2", Name: "gh"}}
	if _, err := find("credential of vault team", "gh", creds, func(c core.Credential) (string, string) { return c.ID, c.Name }); err == nil ||
		err.Error() != `2 credentials of vault team are named "gh": vcr_1, vcr_2; give an id` {
		t.Fatalf("two credentials of one name: %v", err)
	}
	if _, err := find("vault", "x", []core.Vault(nil), idName); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("nothing to suggest: %v", err)
	}
}

// pagedVaults serves n vaults two to a page.
func pagedVaults(n int) func(context.Context, client.ListParams) (*web.Page[core.Vault], error) {
	return func(_ context.Context, p client.ListParams) (*web.Page[core.Vault], error) {
		start := 0
		if p.After != "" {
			fmt.Sscanf(p.After, "vlt_%d", &start)
		}
		page := &web.Page[core.Vault]{Data: []core.Vault{}}
		for i := start + 1; i <= n && len(page.Data) < 2; i++ {
			page.Data = append(page.Data, core.Vault{ID: fmt.Sprintf("vlt_%d", i), Name: fmt.Sprintf("v%d", i)})
		}
		page.HasMore = start+len(page.Data) < n
		return page, nil
	}
}

func TestListAllReadsEveryPage(t *testing.T) {
	all, err := listAll(context.Background(), pagedVaults(5), func(v core.Vault) string { return v.ID })
	if err != nil || len(all) != 5 || all[4].ID != "vlt_5" {
		t.Fatalf("listed %+v, %v", all, err)
	}
}

func TestOrClosest(t *testing.T) {
	idName := func(v core.Vault) (string, string) { return v.ID, v.Name }
	notFound := &client.APIError{Status: 404, Type: "not_found", Message: `not found`}
	err := orClosest(context.Background(), notFound, "vault", "v22", pagedVaults(3), idName)
	if err == nil || err.Error() != `no vault has the id or name "v22"; did you mean "v2"?` {
		t.Fatalf("a 404 for an unknown name: %v", err)
	}
	other := errors.New("connection refused")
	if err := orClosest(context.Background(), other, "vault", "v22", pagedVaults(3), idName); err != other {
		t.Fatalf("another error changed: %v", err)
	}
}

func TestSetSecret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := newSubcommand(cliIO{stdin: strings.NewReader("from-stdin\n"), stdout: io.Discard, stderr: io.Discard}, "credential create", "")
	var p client.CredentialParams
	if err := c.setSecret(write("tok", "tok-1\n"), core.CredentialStaticBearer, &p); err != nil || p.Token == nil || *p.Token != "tok-1" {
		t.Fatalf("static_bearer: %v %+v", err, p)
	}
	if err := c.setSecret("-", core.CredentialHeader, &p); err != nil || p.Value == nil || *p.Value != "from-stdin" {
		t.Fatalf("header from stdin: %v %+v", err, p)
	}
	if err := c.setSecret(write("oauth", `{"access_token":"a","refresh_token":"r"}`), core.CredentialOAuth, &p); err != nil ||
		*p.AccessToken != "a" || *p.RefreshToken != "r" || p.ClientSecret != nil {
		t.Fatalf("oauth: %v %+v", err, p)
	}
	if err := c.setSecret(write("bad", `{"acess_token":"a"}`), core.CredentialOAuth, &p); err == nil || !strings.Contains(err.Error(), "access_token, refresh_token, client_secret") {
		t.Fatalf("oauth with a misspelt field: %v", err)
	}
	if err := c.setSecret(filepath.Join(dir, "missing"), core.CredentialHeader, &p); err == nil || !strings.Contains(err.Error(), "--value-file") {
		t.Fatalf("a missing file: %v", err)
	}
}
