package client_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// TestStream: the stream is opened resuming after the seq given and its
// bytes come back as the server sent them; a refusal is an *APIError and
// an answer that is not SSE is refused.
func TestStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer tok":
			http.Error(w, `{"error":{"type":"unauthorized","message":"bad token"}}`, http.StatusUnauthorized)
		case r.URL.Path == "/v1/sessions/ses_json/events":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"data":[]}`)
		case r.URL.Path != "/v1/sessions/ses_1/events":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"type":"not_found","message":"no such session"}}`)
		case r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Last-Event-ID") != "4" || r.URL.Query().Get("after") != "4":
			http.Error(w, "want an SSE request resuming after 4, got "+r.URL.RawQuery, http.StatusBadRequest)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, sseEvent(5))
		}
	}))
	defer srv.Close()
	c := client.New(srv.URL, "tok", nil)

	resp, err := c.Stream(t.Context(), "ses_1", 4, "")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(raw) != sseEvent(5) {
		t.Fatalf("relayed %q, want %q", raw, sseEvent(5))
	}

	for _, tt := range []struct {
		id     string
		status int
	}{{"ses_gone", 404}, {"ses_json", 406}} {
		t.Run(tt.id, func(t *testing.T) {
			_, err := c.Stream(t.Context(), tt.id, 4, "")
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.Status != tt.status {
				t.Fatalf("err %v, want an APIError %d", err, tt.status)
			}
		})
	}
}
