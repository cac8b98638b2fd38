package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// Failed sign-ins are limited per client address: the sixth within a
// minute is refused, the right token included, so the token cannot be
// guessed at speed. Each attempt is counted before its token is checked
// and uncounted when it signs in.
const (
	maxFailures   = 5
	failureWindow = time.Minute
)

// cookieSpec is how the sign-in cookie is named and scoped.
type cookieSpec struct {
	name   string
	path   string
	secure bool
}

// newCookieSpec scopes the cookie to the console's path on plain http. On
// https it is Secure with the __Host- prefix, which pins it to this host
// and demands Path=/; the console then reads it only on its own routes.
func newCookieSpec(publicURL string) (cookieSpec, error) {
	prefix, https, err := publicPath(publicURL)
	if err != nil {
		return cookieSpec{}, err
	}
	if https {
		return cookieSpec{name: "__Host-switchboard_console", path: "/", secure: true}, nil
	}
	return cookieSpec{name: "switchboard_console", path: prefix + "/console/"}, nil
}

func (c cookieSpec) make(value string, expires time.Time, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: c.name, Value: value, Path: c.path, Expires: expires, MaxAge: maxAge,
		Secure: c.secure, HttpOnly: true, SameSite: http.SameSiteStrictMode,
	}
}

// keyCheck fingerprints the admin token for ConsoleSession.KeyCheck: an
// HMAC keyed by the token, so the store learns nothing it could sign in
// with.
func keyCheck(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("switchboard console sign-in"))
	return hex.EncodeToString(m.Sum(nil))
}

// secretID is the store's ID of a cookie's secret.
func secretID(secret []byte) string {
	sum := sha256.Sum256(secret)
	return hex.EncodeToString(sum[:])
}

func random32() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return b
}

// clientAddress is the address failed sign-ins are counted by: the
// connection's peer, or, behind a reverse proxy named in
// SWITCHBOARD_TRUSTED_PROXIES, the client it forwarded for
// (web.Client). A proxy not named there counts as the client, so every
// client behind it shares its limit.
func clientAddress(r *http.Request) string { return web.Client(r) }

// current returns the request's sign-in, nil when it has none that is
// valid: no cookie, one the store does not know or that expired, or one
// made with another admin token.
func (h *Handler) current(r *http.Request) (*core.ConsoleSession, error) {
	c, err := r.Cookie(h.cookie.name)
	if err != nil {
		return nil, nil
	}
	secret, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(secret) != 32 {
		return nil, nil
	}
	s, err := h.store.GetConsoleSession(r.Context(), secretID(secret), h.cfg.Now())
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sign-in: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(s.KeyCheck), []byte(h.keyCheck)) != 1 {
		return nil, nil
	}
	return s, nil
}

// signedIn serves next to signed-in requests only. Without a sign-in a
// page request goes to the sign-in page and anything else is refused; a
// request that changes something must carry the sign-in's CSRF token.
func (h *Handler) signedIn(next func(http.ResponseWriter, *http.Request, *core.ConsoleSession)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.current(r)
		if err != nil {
			h.failed(w, r, nil, "read your sign-in", err)
			return
		}
		reads := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case s == nil && reads:
			seeOther(w, relative(r, "sign-in"))
		case s == nil:
			h.message(w, r, nil, http.StatusForbidden, "Signed out", "You are not signed in to the console, so nothing was changed. Sign in and try again.")
		case !reads && !h.checkCSRF(w, r, s):
			h.message(w, r, s, http.StatusForbidden, "Form expired", "The form did not carry this sign-in's token, so nothing was changed. Reload the page and try again.")
		default:
			next(w, r, s)
		}
	}
}

// relative is the address of the console page target as seen from r's.
func relative(r *http.Request, target string) string {
	rest, _ := strings.CutPrefix(r.URL.Path, "/console/")
	return strings.Repeat("../", strings.Count(rest, "/")) + target
}

// signInPage is what the sign-in form shows.
type signInPage struct{ Error string }

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	s, err := h.current(r)
	if err != nil {
		h.failed(w, r, nil, "read your sign-in", err)
		return
	}
	if s != nil {
		seeOther(w, "./")
		return
	}
	h.render(w, r, http.StatusOK, "signin", layout{Title: "Sign in", Page: signInPage{}})
}

func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	ctx, addr, now := r.Context(), clientAddress(r), h.cfg.Now()
	// The attempt is counted before its token is checked: attempts made at
	// once cannot all pass a count that none of them is in yet.
	ok, err := h.store.ReserveSignIn(ctx, addr, now, failureWindow, maxFailures)
	if err != nil {
		h.failed(w, r, nil, "check recent sign-ins", err)
		return
	}
	if !ok {
		h.log.Warn("console: sign-in refused, too many failures", "address", addr)
		h.render(w, r, http.StatusTooManyRequests, "signin", layout{Title: "Sign in", Page: signInPage{
			Error: fmt.Sprintf("Too many failed sign-ins from your address (%d in a minute). Wait a minute, then try again.", maxFailures),
		}})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, formLimit)
	token := ""
	if r.ParseForm() == nil {
		token = r.PostForm.Get("token")
	}
	// Fingerprints have one length, so the comparison says nothing of the
	// token's.
	if token == "" || subtle.ConstantTimeCompare([]byte(keyCheck(token)), []byte(h.keyCheck)) != 1 {
		// The attempt stays counted: it failed.
		h.log.Warn("console: sign-in failed", "address", addr)
		h.render(w, r, http.StatusUnauthorized, "signin", layout{Title: "Sign in", Page: signInPage{Error: "That is not the admin token."}})
		return
	}
	if err := h.store.ReleaseSignIn(ctx, addr, now); err != nil {
		h.failed(w, r, nil, "uncount your sign-in", err)
		return
	}
	secret := random32()
	s := &core.ConsoleSession{
		ID: secretID(secret), CSRF: base64.RawURLEncoding.EncodeToString(random32()), KeyCheck: h.keyCheck,
		Address: addr, CreatedAt: now.UTC(), ExpiresAt: now.Add(h.cfg.SessionLifetime).UTC(),
	}
	if err := h.store.CreateConsoleSession(ctx, s); err != nil {
		h.failed(w, r, nil, "save your sign-in", err)
		return
	}
	h.log.Info("console: signed in", "address", addr)
	http.SetCookie(w, h.cookie.make(base64.RawURLEncoding.EncodeToString(secret), s.ExpiresAt, int(h.cfg.SessionLifetime/time.Second)))
	seeOther(w, "./")
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	if err := h.store.DeleteConsoleSession(r.Context(), s.ID); err != nil {
		h.failed(w, r, s, "sign you out", err)
		return
	}
	http.SetCookie(w, h.cookie.make("", time.Unix(0, 0), -1))
	seeOther(w, "sign-in")
}
