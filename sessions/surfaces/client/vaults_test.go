package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func TestVaults(t *testing.T) {
	const vault = `{"id":"vlt_1","name":"team","created_at":"2030-01-02T03:04:05.000Z","updated_at":"2030-01-02T03:04:05.000Z"}`
	const cred = `{"id":"vcr_1","vault_id":"vlt_1","name":"docs","kind":"static_bearer","hosts":["docs.example.com"],
	 "created_at":"2030-01-02T03:04:05.000Z","updated_at":"2030-01-02T04:00:00.000Z"}`
	f, c := newFake(t, map[string]answer{
		"POST /v1/vaults":                           {201, vault},
		"GET /v1/vaults":                            {200, `{"data":[` + vault + `],"has_more":true}`},
		"GET /v1/vaults/vlt_1":                      {200, vault},
		"DELETE /v1/vaults/vlt_1":                   {204, ""},
		"POST /v1/vaults/vlt_1/credentials":         {201, cred},
		"GET /v1/vaults/vlt_1/credentials":          {200, `{"data":[` + cred + `],"has_more":false}`},
		"GET /v1/vaults/vlt_1/credentials/vcr_1":    {200, cred},
		"POST /v1/vaults/vlt_1/credentials/vcr_1":   {200, cred},
		"DELETE /v1/vaults/vlt_1/credentials/vcr_1": {204, ""},
		"POST /v1/vaults/vlt_2/credentials":         {400, `{"error":{"type":"invalid_request","message":"field \"token\" must not be empty"}}`},
	})
	ctx := context.Background()
	str := func(s string) *string { return &s }
	kind := core.CredentialStaticBearer

	v, err := c.CreateVault(ctx, client.VaultParams{Name: "team"})
	if err != nil || v.ID != "vlt_1" {
		t.Fatalf("create vault %+v %v", v, err)
	}
	if r := f.last(t); r.Method != "POST" || r.Path != "/v1/vaults" {
		t.Fatalf("request %+v", r)
	} else {
		jsonEq(t, r.Body, `{"name":"team"}`)
	}
	page, err := c.ListVaults(ctx, client.ListParams{After: "vlt_0", Limit: 5})
	if err != nil || len(page.Data) != 1 || !page.HasMore || f.last(t).Query != "after=vlt_0&limit=5" {
		t.Fatalf("list vaults %+v %v %q", page, err, f.last(t).Query)
	}
	if v, err = c.GetVault(ctx, "vlt_1"); err != nil || v.Name != "team" {
		t.Fatalf("get vault %+v %v", v, err)
	}

	cr, err := c.CreateCredential(ctx, "vlt_1", client.CredentialParams{Name: str("docs"), Kind: &kind, Hosts: &[]string{"docs.example.com"}, Token: str("s3cret")})
	if err != nil || cr.ID != "vcr_1" || cr.Kind != kind {
		t.Fatalf("create credential %+v %v", cr, err)
	}
	jsonEq(t, f.last(t).Body, `{"name":"docs","kind":"static_bearer","hosts":["docs.example.com"],"token":"s3cret"}`)
	// A rotate sends only what is given.
	if cr, err = c.RotateCredential(ctx, "vlt_1", "vcr_1", client.CredentialParams{Token: str("n3w")}); err != nil || cr.UpdatedAt.Time.Hour() != 4 {
		t.Fatalf("rotate %+v %v", cr, err)
	}
	if r := f.last(t); r.Method != "POST" || r.Path != "/v1/vaults/vlt_1/credentials/vcr_1" {
		t.Fatalf("request %+v", r)
	} else {
		jsonEq(t, r.Body, `{"token":"n3w"}`)
	}
	list, err := c.ListCredentials(ctx, "vlt_1", client.ListParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].Hosts[0] != "docs.example.com" {
		t.Fatalf("list credentials %+v %v", list, err)
	}
	if cr, err = c.GetCredential(ctx, "vlt_1", "vcr_1"); err != nil || cr.Name != "docs" {
		t.Fatalf("get credential %+v %v", cr, err)
	}
	if err := c.DeleteCredential(ctx, "vlt_1", "vcr_1"); err != nil || f.last(t).Method != "DELETE" {
		t.Fatalf("delete credential %v", err)
	}
	if err := c.DeleteVault(ctx, "vlt_1"); err != nil || f.last(t).Path != "/v1/vaults/vlt_1" {
		t.Fatalf("delete vault %v", err)
	}
	_, err = c.CreateCredential(ctx, "vlt_2", client.CredentialParams{Kind: &kind})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, `"token"`) {
		t.Fatalf("refusal %#v", err)
	}
}
