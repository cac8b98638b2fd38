package vaults

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// CheckNotSecret refuses values that equal a vault credential's secret
// (a token, header value, access or refresh token, client secret): an ACP
// agent's runtime.env is written into its sandbox, where no secret goes.
// field names what is refused; the error names the credential, never the
// value.
func (r *Resolver) CheckNotSecret(ctx context.Context, field string, values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	after := ""
	for {
		vs, more, err := r.Store.ListVaults(ctx, after, 1000)
		if err != nil {
			return err
		}
		for _, v := range vs {
			creds, err := r.Store.ListCredentials(ctx, v.ID)
			if err != nil {
				return err
			}
			for _, c := range creds {
				_, sealed, err := r.Store.GetCredential(ctx, c.ID)
				if err != nil {
					return err
				}
				sec, err := openSecret(r.Sealer, c.ID, sealed)
				if err != nil {
					return err
				}
				for name, val := range values {
					if val == "" {
						continue
					}
					for _, s := range []string{sec.Token, sec.Value, sec.AccessToken, sec.RefreshToken, sec.ClientSecret} {
						if s != "" && s == val {
							return fmt.Errorf("field %q: %s is the secret of vault credential %s: name it as a credential instead, it never enters a sandbox: %w", field, name, c.ID, core.ErrInvalid)
						}
					}
				}
			}
			after = v.ID
		}
		if !more {
			return nil
		}
	}
}
