package vaults

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestCheckNotSecret: a value that is any vault credential's secret is
// refused, naming the variable and the credential, never the value;
// other values pass.
func TestCheckNotSecret(t *testing.T) {
	e := newEnv(t)
	a, b := e.newVault("models"), e.newVault("platforms")
	key, header := e.secret("sk-ant"), e.secret("hdr")
	e.newCredential(a.ID, map[string]any{"name": "anthropic", "kind": "static_bearer", "hosts": []string{"api.anthropic.com"}, "token": key})
	c := e.newCredential(b.ID, map[string]any{"name": "docs", "kind": "header", "header_name": "X-Key", "hosts": []string{"docs.example"}, "value": header})
	r := e.resolver(nil)
	if err := r.CheckNotSecret(t.Context(), "runtime.env", map[string]string{"DEBUG": "1", "ANTHROPIC_API_KEY": "placeholder", "EMPTY": ""}); err != nil {
		t.Fatalf("plain values refused: %v", err)
	}
	err := r.CheckNotSecret(t.Context(), "runtime.env", map[string]string{"DEBUG": "1", "DOCS_KEY": header})
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "DOCS_KEY") || !strings.Contains(err.Error(), c.ID) || strings.Contains(err.Error(), header) {
		t.Fatalf("a secret: %v", err)
	}
	if err := r.CheckNotSecret(t.Context(), "runtime.env", map[string]string{"K": key}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("a bearer token: %v", err)
	}
}
