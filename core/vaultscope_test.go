package core

import "testing"

func TestParseCredentialScope(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  CredentialScope
		valid bool
	}{
		{"global", CredentialScope{Type: ScopeGlobal}, true},
		{"tenant:slack:T0123", CredentialScope{Type: ScopeTenant, Tenant: "slack:T0123"}, true},
		{"tenant_group: acme ", CredentialScope{Type: ScopeTenantGroup, TenantGroup: "acme"}, true},
		{"tenant", CredentialScope{Type: ScopeTenant}, false},
		{"tenant_group:", CredentialScope{Type: ScopeTenantGroup}, false},
		{"global:acme", CredentialScope{Type: "global:acme"}, false},
		{"team:acme", CredentialScope{Type: "team:acme"}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := ParseCredentialScope(tc.in)
			if got != tc.want {
				t.Fatalf("ParseCredentialScope(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if err := got.Validate(); (err == nil) != tc.valid {
				t.Fatalf("Validate() = %v, want valid %v", err, tc.valid)
			}
		})
	}
}
