package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// receiver is the outbound webhooks' destination: it verifies each
// delivery, fails a fraction of them with a 503, and records per session
// the seqs it accepted, in arrival order.
type receiver struct {
	srv    *httptest.Server
	hook   *standardwebhooks.Webhook
	failOf float64

	mu       sync.Mutex
	rnd      *rand.Rand
	got      map[string][]uint64 // session → accepted seqs, repeats included
	failed   int
	accepted int
	bad      []string // deliveries that did not verify or decode
}

func newReceiver(secret string, failOf float64, seed uint64) (*receiver, error) {
	hook, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	r := &receiver{hook: hook, failOf: failOf, rnd: rand.New(rand.NewPCG(seed, 3)), got: map[string][]uint64{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r, nil
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.hook.Verify(body, req.Header); err != nil {
		r.bad = append(r.bad, "does not verify: "+err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var env struct {
		SessionID string `json:"session_id"`
		EventID   string `json:"event_id"`
		Event     struct {
			ID  string `json:"id"`
			Seq uint64 `json:"seq"`
		} `json:"event"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.SessionID == "" || env.Event.Seq == 0 || env.Event.ID != env.EventID || req.Header.Get("webhook-id") != env.EventID {
		r.bad = append(r.bad, "malformed delivery: "+string(body))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.rnd.Float64() < r.failOf {
		r.failed++
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.accepted++
	r.got[env.SessionID] = append(r.got[env.SessionID], env.Event.Seq)
	w.WriteHeader(http.StatusNoContent)
}

// received is a copy of a session's accepted seqs.
func (r *receiver) received(session string) []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]uint64(nil), r.got[session]...)
}
