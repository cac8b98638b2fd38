package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckRequestText(t *testing.T) {
	tests := []struct {
		name, target string
		status       int
		names        string
	}{
		{"plain", "/v1/sessions?status=idle&q=hello", http.StatusOK, ""},
		{"unicode", "/v1/sessions?tenant=%C3%BC", http.StatusOK, ""},
		{"nul_in_path", "/v1/sessions/ses_%00", http.StatusBadRequest, "path"},
		{"invalid_utf8_in_path", "/v1/sessions/ses_%FF", http.StatusBadRequest, "path"},
		{"nul_in_query", "/v1/sessions?q=a%00b", http.StatusBadRequest, "query parameter q"},
		{"invalid_utf8_in_query", "/v1/sessions?tenant=%FF", http.StatusBadRequest, "query parameter tenant"},
		{"nul_in_query_name", "/v1/sessions?a%00=1", http.StatusBadRequest, "query parameter a\x00"},
	}
	h := CheckRequestText(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
			if rec.Code != tc.status {
				t.Fatalf("%s: status %d, want %d: %s", tc.target, rec.Code, tc.status, rec.Body)
			}
			if tc.status == http.StatusOK {
				return
			}
			var e struct {
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			if e.Error.Type != "invalid_request" || !strings.HasPrefix(e.Error.Message, tc.names) {
				t.Fatalf("%s: error %+v, want invalid_request naming %q", tc.target, e.Error, tc.names)
			}
		})
	}
}
