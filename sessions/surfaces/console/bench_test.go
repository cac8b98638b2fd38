package console_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/backend"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
	"github.com/switchboardhq/switchboard/sessions/surfaces/console"
)

// BenchmarkSessionPages renders the console's sessions page, 100 of
// 10,000 sessions, with each filter the page offers, on both backends,
// and beside it the same page of the plain API (GET /v1/sessions) over
// the same store: what the console adds to a list is the difference.
// Each is the handler's time, with no network in between. Run by
// scripts/bench-console.
func BenchmarkSessionPages(b *testing.B) {
	b.Run("bbolt", func(b *testing.B) {
		s, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), bolt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchPages(b, s)
	})
	b.Run("postgres", func(b *testing.B) {
		s, err := postgres.Open(b.Context(), pgtest.DSN(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchPages(b, s)
	})
}

func benchPages(b *testing.B, s backend.Store) {
	storetest.SeedList(b, s)
	auth := &api.Auth{AdminToken: token, Sessions: s}
	v1 := http.NewServeMux()
	(&api.Handler{Store: s}).Register(v1)
	apiHandler := auth.Wrap(v1)
	// The platforms storetest.SeedList's sessions come from.
	seeded := []console.Platform{{Name: "chat", Label: "Chat"}, {Name: "forge", Label: "Forge"}, {Name: "tracker", Label: "Tracker"}}
	con, err := console.New(s, console.Config{AdminToken: token, Platforms: seeded})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", apiHandler)
	con.Register(mux, apiHandler)
	cookie := benchSignIn(b, mux)

	pages := []struct{ name, query string }{
		{"none", ""},
		{"status", "status=idle"},
		{"agent", "agent=agt_3"},
		{"provider", "provider=forge"},
	}
	for _, p := range pages {
		b.Run(p.name+"/console", func(b *testing.B) {
			benchGet(b, mux, "/console/sessions?"+p.query, func(r *http.Request) { r.AddCookie(cookie) })
		})
		b.Run(p.name+"/api", func(b *testing.B) {
			benchGet(b, mux, "/v1/sessions?limit=100&"+p.query, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) })
		})
	}
}

func benchSignIn(b *testing.B, mux http.Handler) *http.Cookie {
	form := url.Values{"token": {token}}.Encode()
	r := httptest.NewRequest(http.MethodPost, "/console/sign-in", strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, r)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 {
		b.Fatalf("sign in: %d %s", rec.Code, rec.Body)
	}
	return cookies[0]
}

// benchGet serves path until the benchmark ends, checking each answer is
// a full page of 100 sessions.
func benchGet(b *testing.B, mux http.Handler, path string, auth func(*http.Request)) {
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		auth(r)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		if n := pageRows(b, rec); n != 100 {
			b.Fatalf("GET %s: %d sessions, want a page of 100", path, n)
		}
	}
}

// pageRows counts the sessions of a console page or an API list.
func pageRows(b *testing.B, rec *httptest.ResponseRecorder) int {
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		return strings.Count(rec.Body.String(), "<tr data-session=")
	}
	var page struct{ Data []json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		b.Fatal(err)
	}
	return len(page.Data)
}
