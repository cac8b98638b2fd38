package webhooks_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/webhooks"
)

func TestInbound(t *testing.T) {
	verify := func(h http.Header, body []byte) error {
		if h.Get("X-Sig") != webhooks.HMACHex("secret", body) {
			return webhooks.ErrBadSignature
		}
		return nil
	}
	tests := []struct {
		name     string
		body     string
		sig      string
		handle   error
		want     int
		handled  bool
		wantType string
	}{
		{name: "verified", body: `{"a":1}`, sig: webhooks.HMACHex("secret", []byte(`{"a":1}`)), want: 200, handled: true},
		{name: "bad signature", body: `{"a":1}`, sig: webhooks.HMACHex("other", []byte(`{"a":1}`)), want: 401, wantType: "unauthorized"},
		{name: "too large", body: strings.Repeat("x", 65), sig: "x", want: 413, wantType: "payload_too_large"},
		{name: "malformed", body: `{`, sig: webhooks.HMACHex("secret", []byte(`{`)), handle: core.ErrInvalid, want: 400, handled: true, wantType: "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			handled := false
			in := &webhooks.Inbound{MaxBody: 64, Verify: verify, Handle: func(w http.ResponseWriter, r *http.Request, body []byte) error {
				handled = true
				if tc.handle != nil {
					return tc.handle
				}
				w.WriteHeader(200)
				return nil
			}}
			req := httptest.NewRequest("POST", "/webhooks/x", strings.NewReader(tc.body))
			req.Header.Set("X-Sig", tc.sig)
			rec := httptest.NewRecorder()
			in.ServeHTTP(rec, req)
			if rec.Code != tc.want || handled != tc.handled || !strings.Contains(rec.Body.String(), tc.wantType) {
				t.Fatalf("status %d handled %v body %s", rec.Code, handled, rec.Body)
			}
		})
	}
}

func TestCheckTimestamp(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		ts   string
		want error
	}{
		{strconv.FormatInt(now.Unix(), 10), nil},
		{strconv.FormatInt(now.Add(-4*time.Minute).Unix(), 10), nil},
		{strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), webhooks.ErrStale},
		{strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), webhooks.ErrStale},
		{"yesterday", core.ErrUnauthorized},
	} {
		t.Run(tc.ts, func(t *testing.T) {
			err := webhooks.CheckTimestamp(tc.ts, now, 5*time.Minute)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) || (err != nil && !errors.Is(err, core.ErrUnauthorized)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
