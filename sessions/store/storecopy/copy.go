// Package storecopy carries a session store from the bbolt file of a data
// directory into an empty PostgreSQL database: the store copy command.
// Every record travels as stored (sessions/store/dump), so ids, seqs, times and
// sealed values stay the same; the target then serves as the source did,
// with the same master key.
package storecopy

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/dump"
)

// Source is a store that dumps its records (the bbolt store).
type Source interface {
	Dump(ctx context.Context, put dump.Put) error
}

// Target is a store that loads a dump into itself, empty, in one
// transaction, under the master key's check value (the PostgreSQL store).
type Target interface {
	Load(ctx context.Context, keyCheck string, fill func(dump.Put) error) error
}

// Keys is what a copy needs of the master key: opening the sealed values,
// to prove they are the key's, and its check value for the target.
type Keys interface {
	Open(sealed, aad []byte) ([]byte, error)
	KeyCheck() string
}

// Summary counts the records copied, by kind (dump.Record's Kind).
type Summary map[string]int

// Copy loads everything src keeps into dst. Every sealed value must open
// with keys, or nothing is copied: a target holding values its master key
// cannot open would fail later, one token at a time.
func Copy(ctx context.Context, src Source, dst Target, keys Keys) (Summary, error) {
	sum := Summary{}
	err := dst.Load(ctx, keys.KeyCheck(), func(put dump.Put) error {
		return src.Dump(ctx, func(r dump.Record) error {
			if err := opens(keys, r); err != nil {
				return err
			}
			sum[r.Kind()]++
			return put(r)
		})
	})
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// opens checks that a record's sealed value, if any, opens with keys.
func opens(keys Keys, r dump.Record) error {
	var what string
	var sealed, aad []byte
	switch r := r.(type) {
	case dump.Credential:
		what, sealed, aad = "credential "+r.ID, r.Sealed, []byte(r.ID)
	case dump.Installation:
		what, sealed, aad = "the tokens of installation "+r.ID, r.SealedTokens, core.InstallationAAD(r.Provider, r.ExternalID)
	case dump.Destination:
		what, sealed, aad = "the secret of destination "+r.ID, r.SealedSecret, []byte(r.ID)
	}
	if sealed == nil {
		return nil
	}
	if _, err := keys.Open(sealed, aad); err != nil {
		return fmt.Errorf("the master key does not open %s: it is not the key the store was served with: %w", what, core.ErrInvalid)
	}
	return nil
}

// Write prints the summary, one kind a line in dump.Kinds' order.
func (s Summary) Write(w io.Writer) error {
	width := 0
	for _, k := range dump.Kinds {
		width = max(width, len(k))
	}
	var b strings.Builder
	for _, k := range dump.Kinds {
		fmt.Fprintf(&b, "  %-*s %d\n", width, k, s[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
