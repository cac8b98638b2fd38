package bolt

import (
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// metaCredentialScopes marks a file whose credential records all carry a
// scope: Open writes it once into a file of an earlier release, whose
// credentials were all the admin's, so global.
const metaCredentialScopes = "credential_scopes"

// scopeCredentials rewrites every credential stored without a scope as a
// global one, then marks the file. Decoding reads a missing scope as
// global too; the rewrite makes the records say so, as the API shows them.
func scopeCredentials(tx *bbolt.Tx) error {
	meta := bkt(tx, bucketMeta)
	if meta.Get([]byte(metaCredentialScopes)) != nil {
		return nil
	}
	creds := bkt(tx, bucketCredentials)
	var keys, vals [][]byte
	err := creds.ForEach(func(k, v []byte) error {
		c, err := record.DecodeCredential(v)
		if err != nil {
			return err
		}
		raw, err := record.Encode("credential", c.ID, c)
		if err != nil {
			return err
		}
		// Collected first: bbolt cursors must not walk a bucket while it
		// is being written to.
		keys, vals = append(keys, append([]byte(nil), k...)), append(vals, raw)
		return nil
	})
	if err != nil {
		return fmt.Errorf("scope credentials: %w", err)
	}
	for i, k := range keys {
		if err := creds.Put(k, vals[i]); err != nil {
			return fmt.Errorf("scope credential %s: %w", k, err)
		}
	}
	return meta.Put([]byte(metaCredentialScopes), []byte{1})
}
