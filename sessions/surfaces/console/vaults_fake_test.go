package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// vaultsCall is one request the fake /v1 API received.
type vaultsCall struct{ Method, Path, Body string }

// fakeVaultsAPI is the vault and webhook endpoints of the /v1 API in memory,
// answering in the real handlers' JSON (core types, web.Page, the error
// shape). It records every call and refuses those listed in refuse.
type fakeVaultsAPI struct {
	mu     sync.Mutex
	calls  []vaultsCall
	refuse map[string]string // "METHOD path" → the message of a 400
	now    core.Time
	n      int

	vaults     map[string]*core.Vault
	creds      map[string]*core.Credential
	dests      map[string]*core.Destination
	deliveries map[string]*core.Delivery
}

func newFakeVaultsAPI(e *env) *fakeVaultsAPI {
	f := &fakeVaultsAPI{refuse: map[string]string{}, now: core.NewTime(e.clock.Now()),
		vaults: map[string]*core.Vault{}, creds: map[string]*core.Credential{}, dests: map[string]*core.Destination{}, deliveries: map[string]*core.Delivery{}}
	for pattern, fn := range map[string]func(*http.Request, []byte) (int, any){
		"POST /v1/vaults":                          f.createVault,
		"GET /v1/vaults":                           f.listVaults,
		"GET /v1/vaults/{id}":                      f.getVault,
		"DELETE /v1/vaults/{id}":                   f.deleteVault,
		"POST /v1/vaults/{id}/credentials":         f.createCredential,
		"GET /v1/vaults/{id}/credentials":          f.listCredentials,
		"POST /v1/vaults/{id}/credentials/{cid}":   f.rotateCredential,
		"DELETE /v1/vaults/{id}/credentials/{cid}": f.deleteCredential,
		"POST /v1/destinations":                    f.createDestination,
		"GET /v1/destinations":                     f.listDestinations,
		"DELETE /v1/destinations/{id}":             f.deleteDestination,
		"POST /v1/destinations/{id}/{action}":      f.destinationAction,
		"GET /v1/deliveries":                       f.listDeliveries,
		"GET /v1/deliveries/{id}":                  f.getDelivery,
		"POST /v1/deliveries/{id}/redeliver":       f.redeliver,
	} {
		e.api.HandleFunc(pattern, f.serve(fn))
	}
	return f
}

func (f *fakeVaultsAPI) serve(fn func(*http.Request, []byte) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, vaultsCall{r.Method, r.URL.RequestURI(), string(body)})
		status, out := http.StatusBadRequest, any(nil)
		if msg, ok := f.refuse[r.Method+" "+r.URL.Path]; ok {
			out = apiErr("invalid_request", msg)
		} else {
			status, out = fn(r, body)
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		web.WriteJSON(w, status, out)
	}
}

func apiErr(typ, msg string) any {
	return map[string]any{"error": map[string]string{"type": typ, "message": msg}}
}

func notFound(what, id string) (int, any) {
	return http.StatusNotFound, apiErr("not_found", fmt.Sprintf("%s %q not found", what, id))
}

// posted returns the calls that change something (not GETs).
func (f *fakeVaultsAPI) posted() []vaultsCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []vaultsCall
	for _, c := range f.calls {
		if c.Method != http.MethodGet {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeVaultsAPI) id(prefix string) string {
	f.n++
	return fmt.Sprintf("%s_%03d", prefix, f.n)
}

func onePage[T any](items []T) web.Page[T] {
	if items == nil {
		items = []T{}
	}
	return web.Page[T]{Data: items, HasMore: false}
}

func sorted[T any](m map[string]T, keep func(T) bool) []T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []T
	for _, k := range keys {
		if keep(m[k]) {
			out = append(out, m[k])
		}
	}
	return out
}

func (f *fakeVaultsAPI) createVault(_ *http.Request, body []byte) (int, any) {
	var b struct{ Name, Description string }
	_ = json.Unmarshal(body, &b)
	if b.Name == "" {
		return http.StatusBadRequest, apiErr("invalid_request", `field "name" is required`)
	}
	v := &core.Vault{ID: f.id("vlt"), Name: b.Name, Description: b.Description, CreatedAt: f.now, UpdatedAt: f.now}
	f.vaults[v.ID] = v
	return http.StatusCreated, v
}

func (f *fakeVaultsAPI) listVaults(*http.Request, []byte) (int, any) {
	return http.StatusOK, onePage(sorted(f.vaults, func(*core.Vault) bool { return true }))
}

func (f *fakeVaultsAPI) getVault(r *http.Request, _ []byte) (int, any) {
	v, ok := f.vaults[r.PathValue("id")]
	if !ok {
		return notFound("vault", r.PathValue("id"))
	}
	return http.StatusOK, v
}

func (f *fakeVaultsAPI) deleteVault(r *http.Request, _ []byte) (int, any) {
	if _, ok := f.vaults[r.PathValue("id")]; !ok {
		return notFound("vault", r.PathValue("id"))
	}
	delete(f.vaults, r.PathValue("id"))
	return http.StatusNoContent, nil
}

// credBody is the credential body's metadata fields (the fake keeps no
// value).
type credBody struct {
	Name       *string               `json:"name"`
	Kind       *core.CredentialKind  `json:"kind"`
	Hosts      *[]string             `json:"hosts"`
	HeaderName *string               `json:"header_name"`
	Scope      *core.CredentialScope `json:"scope"`
}

func (f *fakeVaultsAPI) createCredential(r *http.Request, body []byte) (int, any) {
	if _, ok := f.vaults[r.PathValue("id")]; !ok {
		return notFound("vault", r.PathValue("id"))
	}
	var b credBody
	_ = json.Unmarshal(body, &b)
	if b.Kind == nil || b.Name == nil || b.Hosts == nil {
		return http.StatusBadRequest, apiErr("invalid_request", `field "name" is required`)
	}
	c := &core.Credential{ID: f.id("vcr"), VaultID: r.PathValue("id"), Name: *b.Name, Kind: *b.Kind, Hosts: *b.Hosts, CreatedAt: f.now, UpdatedAt: f.now}
	if b.HeaderName != nil {
		c.HeaderName = *b.HeaderName
	}
	c.Scope = core.GlobalScope
	if b.Scope != nil {
		c.Scope = b.Scope.Normal()
	}
	f.creds[c.ID] = c
	return http.StatusCreated, c
}

func (f *fakeVaultsAPI) listCredentials(r *http.Request, _ []byte) (int, any) {
	id := r.PathValue("id")
	if _, ok := f.vaults[id]; !ok {
		return notFound("vault", id)
	}
	return http.StatusOK, onePage(sorted(f.creds, func(c *core.Credential) bool { return c.VaultID == id }))
}

func (f *fakeVaultsAPI) rotateCredential(r *http.Request, _ []byte) (int, any) {
	c, ok := f.creds[r.PathValue("cid")]
	if !ok || c.VaultID != r.PathValue("id") {
		return notFound("credential", r.PathValue("cid"))
	}
	c.UpdatedAt = core.NewTime(c.UpdatedAt.Time.Add(time.Hour))
	return http.StatusOK, c
}

func (f *fakeVaultsAPI) deleteCredential(r *http.Request, _ []byte) (int, any) {
	if _, ok := f.creds[r.PathValue("cid")]; !ok {
		return notFound("credential", r.PathValue("cid"))
	}
	delete(f.creds, r.PathValue("cid"))
	return http.StatusNoContent, nil
}

func (f *fakeVaultsAPI) createDestination(_ *http.Request, body []byte) (int, any) {
	var spec core.DestinationSpec
	_ = json.Unmarshal(body, &spec)
	level := spec.Level
	if level == "" {
		level = core.LevelInternal
	}
	d := &core.Destination{ID: f.id("dst"), URL: spec.URL, Level: level, Types: spec.Types, Status: core.DestinationActive, CreatedAt: f.now, UpdatedAt: f.now}
	if d.Types == nil {
		d.Types = []string{}
	}
	f.dests[d.ID] = d
	out := core.CreatedDestination{Destination: *d}
	if spec.Secret == "" || spec.Secret == "generate" {
		out.Secret = "whsec_generatedOnceZm9vYmFyYmF6cXV4"
	}
	return http.StatusCreated, out
}

func (f *fakeVaultsAPI) listDestinations(*http.Request, []byte) (int, any) {
	return http.StatusOK, onePage(sorted(f.dests, func(*core.Destination) bool { return true }))
}

func (f *fakeVaultsAPI) deleteDestination(r *http.Request, _ []byte) (int, any) {
	if _, ok := f.dests[r.PathValue("id")]; !ok {
		return notFound("destination", r.PathValue("id"))
	}
	delete(f.dests, r.PathValue("id"))
	return http.StatusNoContent, nil
}

func (f *fakeVaultsAPI) destinationAction(r *http.Request, _ []byte) (int, any) {
	d, ok := f.dests[r.PathValue("id")]
	if !ok {
		return notFound("destination", r.PathValue("id"))
	}
	switch r.PathValue("action") {
	case "pause":
		d.Status, d.PausedAt = core.DestinationPaused, &f.now
	case "resume":
		d.Status, d.PausedAt = core.DestinationActive, nil
	default:
		return http.StatusNotFound, apiErr("not_found", "no such endpoint")
	}
	return http.StatusOK, d
}

func (f *fakeVaultsAPI) listDeliveries(r *http.Request, _ []byte) (int, any) {
	q := r.URL.Query()
	state, ok := core.ParseDeliveryState(q.Get("state"))
	if !ok {
		return http.StatusBadRequest, apiErr("invalid_request", fmt.Sprintf("state=%q: want pending, delivered or dead", q.Get("state")))
	}
	return http.StatusOK, onePage(sorted(f.deliveries, func(d *core.Delivery) bool {
		return (state == "" || d.State == state) && (q.Get("destination") == "" || d.DestinationID == q.Get("destination"))
	}))
}

func (f *fakeVaultsAPI) getDelivery(r *http.Request, _ []byte) (int, any) {
	d, ok := f.deliveries[r.PathValue("id")]
	if !ok {
		return notFound("delivery", r.PathValue("id"))
	}
	return http.StatusOK, d
}

func (f *fakeVaultsAPI) redeliver(r *http.Request, _ []byte) (int, any) {
	d, ok := f.deliveries[r.PathValue("id")]
	if !ok {
		return notFound("delivery", r.PathValue("id"))
	}
	if d.State == core.DeliveryPending {
		return http.StatusConflict, apiErr("conflict", fmt.Sprintf("delivery %q is pending", d.ID))
	}
	d.State = core.DeliveryPending
	return http.StatusAccepted, d
}

// addDelivery stores a delivery in state st with one failed attempt.
func (f *fakeVaultsAPI) addDelivery(id, dest string, st core.DeliveryState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliveries[id] = &core.Delivery{
		ID: id, DestinationID: dest, SessionID: "ses_1", EventID: "evt_" + id, EventType: "agent.message", Seq: 3, State: st,
		AttemptCount: 9, Attempts: []core.Attempt{{At: f.now, StatusCode: 503, LatencyMS: 41, Error: "HTTP 503 from the receiver"}},
		CreatedAt: f.now, UpdatedAt: f.now,
	}
}

// contains reports whether s holds any of subs.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
