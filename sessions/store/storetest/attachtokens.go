package storetest

import (
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// AttachTokenStore is a session store that keeps attach tokens.
type AttachTokenStore interface {
	core.Store
	core.AttachTokenStore
}

// RunAttachTokens runs the core.AttachTokenStore suite. open must return
// a fresh, empty store for each subtest and close it when the test ends.
func RunAttachTokens[S AttachTokenStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s AttachTokenStore)
	}{
		{"create_list_revoke", testAttachTokens},
		{"refused", testAttachTokensRefused},
		{"archived", testAttachTokensArchived},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func newAttachToken(sessionID, person string) core.AttachToken {
	return core.AttachToken{ID: core.NewID(core.PrefixAttachToken), SessionID: sessionID, Person: person, IssuedBy: core.IssuedByAdmin, Hash: "5e" + person}
}

// testAttachTokens: a token comes back as created, hash included, with
// its time set; a session lists its own, oldest first; a revoke is logged
// once, and a second changes nothing; a use is recorded.
func testAttachTokens(t *testing.T, s AttachTokenStore) {
	ctx := t.Context()
	sess, other := newSession(t, s), newSession(t, s)
	ada, err := s.CreateAttachToken(ctx, newAttachToken(sess.ID, "Ada Lovelace"))
	must(t, err)
	if ada.CreatedAt.IsZero() || ada.Revoked() || ada.LastUsedAt != nil || ada.Hash != "5eAda Lovelace" || ada.Person != "Ada Lovelace" || ada.IssuedBy != "admin" {
		t.Fatalf("created %+v", ada)
	}
	grace := newAttachToken(sess.ID, "Grace Hopper")
	grace.PersonID, grace.IssuedBy = "U0GRACE", "chat:U0GRACE"
	_, err = s.CreateAttachToken(ctx, grace)
	must(t, err)
	_, err = s.CreateAttachToken(ctx, newAttachToken(other.ID, "Alan Turing"))
	must(t, err)
	list, err := s.ListAttachTokens(ctx, sess.ID)
	must(t, err)
	if len(list) != 2 || list[0].ID != ada.ID || list[1].ID != grace.ID || list[1].PersonID != "U0GRACE" || list[1].IssuedBy != "chat:U0GRACE" {
		t.Fatalf("the session's tokens: %+v", list)
	}
	evs, err := s.Events(ctx, sess.ID, 0, 0)
	must(t, err)
	var b core.AttachTokenBody
	if len(evs) != 2 || evs[0].Type != core.TypeAttachTokenCreated || evs[0].Level != core.LevelInternal || evs[0].Decode(&b) != nil ||
		b != (core.AttachTokenBody{ID: ada.ID, Person: "Ada Lovelace", By: "admin"}) {
		t.Fatalf("logged %+v", evs)
	}
	revoked, err := s.RevokeAttachToken(ctx, sess.ID, ada.ID, "admin")
	must(t, err)
	if !revoked.Revoked() || revoked.RevokedBy != "admin" {
		t.Fatalf("revoked %+v", revoked)
	}
	again, err := s.RevokeAttachToken(ctx, sess.ID, ada.ID, "someone else")
	must(t, err)
	if again.RevokedBy != "admin" || !again.RevokedAt.Equal(revoked.RevokedAt.Time) {
		t.Fatalf("a second revoke changed the token: %+v", again)
	}
	evs, err = s.Events(ctx, sess.ID, 2, 0)
	must(t, err)
	if len(evs) != 1 || evs[0].Type != core.TypeAttachTokenRevoked || evs[0].Decode(&b) != nil || b.ID != ada.ID {
		t.Fatalf("the revokes logged %+v, want one session.attach_token_revoked", evs)
	}
	read, err := s.GetAttachToken(ctx, ada.ID)
	must(t, err)
	if !read.Revoked() || read.Hash != ada.Hash {
		t.Fatalf("read back %+v", read)
	}
	used := core.Now()
	must(t, s.TouchAttachToken(ctx, grace.ID, used))
	if read, err := s.GetAttachToken(ctx, grace.ID); err != nil || read.LastUsedAt == nil || !read.LastUsedAt.Equal(used.Time) || read.Revoked() {
		t.Fatalf("after a use %+v (%v)", read, err)
	}
	if getSession(t, s, sess.ID).LastSeq != 3 {
		t.Fatal("a use was logged")
	}
}

// testAttachTokensRefused: bad tokens, unknown sessions and tokens, and
// another session's token are refused, and nothing is stored.
func testAttachTokensRefused(t *testing.T, s AttachTokenStore) {
	ctx := t.Context()
	sess, other := newSession(t, s), newSession(t, s)
	for name, tc := range map[string]struct {
		tok  func(*core.AttachToken)
		want error
	}{
		"no person":       {func(a *core.AttachToken) { a.Person = "  " }, core.ErrInvalid},
		"control":         {func(a *core.AttachToken) { a.Person = "Ada\nLovelace" }, core.ErrInvalid},
		"no hash":         {func(a *core.AttachToken) { a.Hash = "" }, core.ErrInvalid},
		"no issuer":       {func(a *core.AttachToken) { a.IssuedBy = "" }, core.ErrInvalid},
		"bad id":          {func(a *core.AttachToken) { a.ID = "tok_1" }, core.ErrInvalid},
		"unknown session": {func(a *core.AttachToken) { a.SessionID = "ses_00000000000000000000000000" }, core.ErrNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			tok := newAttachToken(sess.ID, "Ada")
			tc.tok(&tok)
			if _, err := s.CreateAttachToken(ctx, tok); !errors.Is(err, tc.want) {
				t.Fatalf("created: %v, want %v", err, tc.want)
			}
		})
	}
	if list, err := s.ListAttachTokens(ctx, sess.ID); err != nil || len(list) != 0 || getSession(t, s, sess.ID).LastSeq != 0 {
		t.Fatalf("after refusals: %+v (%v)", list, err)
	}
	tok, err := s.CreateAttachToken(ctx, newAttachToken(other.ID, "Ada"))
	must(t, err)
	if _, err := s.CreateAttachToken(ctx, *tok); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("the same id again: %v, want ErrConflict", err)
	}
	if _, err := s.RevokeAttachToken(ctx, sess.ID, tok.ID, "admin"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another session's token revoked: %v, want ErrNotFound", err)
	}
	if _, err := s.RevokeAttachToken(ctx, sess.ID, "atk_00000000000000000000000000", "admin"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("an unknown token revoked: %v, want ErrNotFound", err)
	}
	if _, err := s.GetAttachToken(ctx, "atk_00000000000000000000000000"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("an unknown token: %v, want ErrNotFound", err)
	}
	if _, err := s.ListAttachTokens(ctx, "ses_00000000000000000000000000"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("an unknown session's tokens: %v, want ErrNotFound", err)
	}
	if err := s.TouchAttachToken(ctx, "atk_00000000000000000000000000", core.Now()); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("an unknown token used: %v, want ErrNotFound", err)
	}
}

// testAttachTokensArchived: an archived session takes no new token, and
// its tokens can still be revoked (nothing logged: its log is closed).
func testAttachTokensArchived(t *testing.T, s AttachTokenStore) {
	ctx := t.Context()
	sess := newSession(t, s)
	tok, err := s.CreateAttachToken(ctx, newAttachToken(sess.ID, "Ada"))
	must(t, err)
	_, err = s.Archive(ctx, sess.ID)
	must(t, err)
	if _, err := s.CreateAttachToken(ctx, newAttachToken(sess.ID, "Grace")); !errors.Is(err, core.ErrArchived) {
		t.Fatalf("a token for an archived session: %v, want ErrArchived", err)
	}
	revoked, err := s.RevokeAttachToken(ctx, sess.ID, tok.ID, "admin")
	must(t, err)
	if !revoked.Revoked() {
		t.Fatalf("revoked %+v", revoked)
	}
	if read, err := s.GetAttachToken(ctx, tok.ID); err != nil || !read.Revoked() {
		t.Fatalf("read back %+v (%v)", read, err)
	}
	if got := getSession(t, s, sess.ID).LastSeq; got != 1 {
		t.Fatalf("the archived session's log moved to seq %d", got)
	}
}
