package mcpbridge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// rotatingCreds hands out tokens[i]; Refresh moves to the next one.
type rotatingCreds struct {
	mu        sync.Mutex
	tokens    []string
	i         int
	refreshes int
}

func (c *rotatingCreds) Header(_ context.Context, id, _ string) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id != "vcr_1" {
		return "", "", core.ErrForbidden
	}
	return "Authorization", "Bearer " + c.tokens[c.i], nil
}

func (c *rotatingCreds) Token(context.Context, string) (string, error) { return "", nil }

func (c *rotatingCreds) Refresh(context.Context, string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshes++
	if c.i+1 >= len(c.tokens) {
		return errors.New("cannot refresh")
	}
	c.i++
	return nil
}

func TestAuthTransport(t *testing.T) {
	// The server accepts "good" only and echoes the body it got.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)

	for _, c := range []struct {
		name          string
		tokens        []string
		id            string
		replayable    bool
		wantStatus    int
		wantErr       bool
		wantRefreshes int
	}{
		{"accepted", []string{"good"}, "vcr_1", true, http.StatusOK, false, 0},
		{"refreshed and replayed", []string{"expired", "good"}, "vcr_1", true, http.StatusOK, false, 1},
		{"refresh fails: the 401 stands", []string{"expired"}, "vcr_1", true, http.StatusUnauthorized, false, 1},
		{"body cannot be replayed: no refresh", []string{"expired", "good"}, "vcr_1", false, http.StatusUnauthorized, false, 0},
		{"credential not for this host", []string{"good"}, "vcr_other", true, 0, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			creds := &rotatingCreds{tokens: c.tokens}
			tr := &authTransport{base: http.DefaultTransport, creds: creds, id: c.id, sec: &secrets{}, log: slog.New(slog.DiscardHandler)}
			var body io.Reader = strings.NewReader(`{"jsonrpc":"2.0"}`)
			if !c.replayable {
				body = io.NopCloser(body) // hides the type, so no GetBody
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if c.wantErr {
				if err == nil {
					resp.Body.Close()
					t.Fatal("want an error")
				}
				if strings.Contains(err.Error(), "good") {
					t.Errorf("error shows the credential: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, c.wantStatus)
			}
			if c.wantStatus == http.StatusOK && string(got) != `{"jsonrpc":"2.0"}` {
				t.Errorf("server got body %q", got)
			}
			if creds.refreshes != c.wantRefreshes {
				t.Errorf("refreshes = %d, want %d", creds.refreshes, c.wantRefreshes)
			}
			if r := tr.sec.redact("Bearer " + c.tokens[0]); strings.Contains(r, c.tokens[0]) {
				t.Errorf("a sent credential is not redacted: %q", r)
			}
		})
	}
}
