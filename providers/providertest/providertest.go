// Package providertest is the conformance suite for platform providers:
// the promises every platform keeps, run against each provider with its
// fake platform, as sessions/storetest is run against every store. A
// provider's tests call Run with a Platform, which says how to build the
// provider against its fake, how the fake delivers what people do there,
// and what the gateway shows on it. The suite owns the rest, as the
// gateway does: a bbolt store, the providers.Intake, a providers.Set with
// its output sink, and the webhooks served over HTTP. It names no
// platform.
//
// The suite stands in for the runtime: it logs a turn's events the way
// the harness does and reads what the store queued, so a provider is
// checked from the webhook it receives to what its fake recorded.
package providertest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/providers"
)

// Platform is a provider with its fake platform, as the suite drives
// them. Each subtest gets a new one (a fresh fake) and a fresh store; it
// holds one conversation (a thread, a pull request, an agent session),
// which its first Mention starts.
type Platform interface {
	// Describe is what the provider's module tells the rest of the
	// gateway of the platform (providers.Module.Platform).
	Describe() providers.Platform
	// Build builds the provider against the fake from what the gateway
	// hands every provider. The suite calls it once per process: a crash
	// test starts a second process over the same store.
	Build(d providers.Deps) (providers.Provider, error)
	// Install records, before the first process starts, the installation
	// the deliveries come from, when the provider learns it neither at
	// start nor from the deliveries themselves.
	Install(t *testing.T, d providers.Deps)
	// Earlier adds a person's message to the conversation before the
	// agent is first mentioned in it.
	Earlier(t *testing.T, text string)
	// Mention is a person's new message mentioning the agent, delivered
	// under the delivery id: the first starts the conversation, later ones
	// continue it.
	Mention(t *testing.T, delivery, text string) Webhook
	// Redeliver is w's message delivered again under another delivery id,
	// as the platform may: one message told by two events, or a signed
	// body sent again under a delivery header the signature leaves out.
	Redeliver(t *testing.T, w Webhook, delivery string) Webhook
	// Own is the agent's own message in the conversation mentioning the
	// agent (as its answers may: "reply @agent allow"), as the platform
	// delivers it back to the gateway.
	Own(t *testing.T, delivery, text string) Webhook
	// Stop is a person stopping the turn that runs, Retry one running a
	// failed turn again, Answer one answering the tool call the turn
	// waits on with result ("allow" or "deny"). Each waits, with WaitFor,
	// for what the platform must show before a person can do it (a
	// button), and uses it.
	Stop(t *testing.T) Webhook
	Retry(t *testing.T) Webhook
	Answer(t *testing.T, result string) Webhook
	// Posts are the messages, comments or activities the gateway posted
	// in the conversation, one text each (as edited since); Status is what
	// it shows there in place (a thread's status, check runs, a plan).
	Posts(t *testing.T) []string
	Status(t *testing.T) []string
	// WaitFor waits until cond holds, looking again as the fake records
	// calls, and fails the test after d.
	WaitFor(t *testing.T, d time.Duration, what string, cond func() bool)
	// Lacks is why the platform genuinely cannot do a, "" when it can.
	// The case of a lacked ability logs why instead of calling its
	// method; a platform that neither does it nor says why fails there.
	Lacks(a Ability) string
}

// Ability is something a platform may genuinely lack.
type Ability string

// OwnMessages: the agent's own messages come back as deliveries, so the
// provider must not take them for a person's.
const OwnMessages Ability = "own messages delivered back"

// LivePlan: what shows the turn (a status, a check run) can change while
// the turn runs, so the agent's plan is shown as it goes.
const LivePlan Ability = "a status that changes while the turn runs"

// Webhook is a delivery the platform makes to the gateway: a signed POST.
type Webhook struct {
	// Path is under the gateway's address: "/webhooks/<name>…".
	Path   string
	Header http.Header
	Body   []byte
}

// FromRequest is the webhook of a request the fake's signer built (for
// a URL that is the path alone).
func FromRequest(t *testing.T, req *http.Request) Webhook {
	t.Helper()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Webhook{Path: req.URL.Path, Header: req.Header.Clone(), Body: body}
}

// Tampered is w with a body its signature does not cover.
func (w Webhook) Tampered() Webhook {
	w.Body = append(bytes.Clone(w.Body), ' ')
	return w
}

// Clone is a copy of w whose header and body can be changed.
func (w Webhook) Clone() Webhook {
	return Webhook{Path: w.Path, Header: w.Header.Clone(), Body: bytes.Clone(w.Body)}
}

// Run runs the suite; newPlatform returns a new platform with its own
// fake for each subtest.
func Run(t *testing.T, newPlatform func(t *testing.T) Platform) {
	tests := []struct {
		name string
		fn   func(t *testing.T, w *world)
	}{
		{"intake/described", testDescribed},
		{"intake/replayed_delivery", testReplayedDelivery},
		{"intake/bad_signature", testBadSignature},
		{"intake/own_messages", testOwnMessages},
		{"intake/stop", testStop},
		{"intake/retry", testRetry},
		{"output/answer_once", testAnswerOnce("")},
		{"output/answer_once_crash_before_post", testAnswerOnce("before_post")},
		{"output/answer_once_crash_after_post", testAnswerOnce("after_post")},
		{"output/confirmation_allowed", testConfirmation("allow")},
		{"output/confirmation_denied", testConfirmation("deny")},
		{"output/plan", testPlan},
		{"output/budget_pause", testBudgetPause},
		{"output/max_turns_pause", testMaxTurnsPause},
		{"prime/earlier_conversation", testEarlierConversation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newWorld(t, newPlatform(t))) })
	}
}

// lacking reports whether the platform lacks a, after checking that it
// says why.
func lacking(t *testing.T, p Platform, a Ability) bool {
	t.Helper()
	why := p.Lacks(a)
	if why == "" {
		return false
	}
	t.Logf("the platform lacks %s: %s", a, why)
	return true
}
