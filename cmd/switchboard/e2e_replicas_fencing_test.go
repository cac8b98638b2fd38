package main_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestReplicasFencing: the replica holding a session's lease is paused
// (SIGSTOP) mid-turn; the lease expires and the other replica takes the
// session and finishes the turn; the paused replica is resumed (SIGCONT):
// what it writes late for the turn is refused, it gives the session up,
// the log stays as the new holder wrote it, and the session goes on
// working.
func TestReplicasFencing(t *testing.T) {
	// Replica A stops itself with the model's answer in hand, right before
	// it logs it: resumed, its first act is that late append.
	t.Run("paused before its append", func(t *testing.T) {
		r := startReplicas(t, nil)
		answerNamesReplica(r)
		r.srv[0].kill()
		r.srv[0].env["SWITCHBOARD_TEST_STOP_AFTER_RESPONSE"] = "1"
		r.srv[0] = r.srv[0].restart()
		// A alone takes the turn: B is paused until A asked the model.
		b := r.srv[1]
		signal(t, b, syscall.SIGSTOP)
		id := r.srv[0].createSession("fence me")
		if by := r.ranBy(r.waitModelRequest(1)); by != 0 {
			t.Fatalf("replica %s ran the turn", replicaName(by))
		}
		signal(t, b, syscall.SIGCONT)
		r.srv[0].waitLog("failpoint stopped: after_response\n")
		checkFenced(t, r, id, 0)
		if !strings.Contains(r.srv[0].out.String(), "write of epoch") {
			t.Fatalf("the resumed replica's late append was not refused by its epoch:\n%s", r.srv[0].out.String())
		}
	})
	// The holder is paused while its model call is in flight, and its
	// answer sent while it is paused: resumed, it reads the answer and
	// finds its lease gone, whichever comes first.
	t.Run("paused in a model call", func(t *testing.T) {
		r := startReplicas(t, nil)
		answerNamesReplica(r)
		release := holdAnswer(t, r.ms)
		id := r.srv[0].createSession("fence me")
		holder := r.ranBy(r.waitModelRequest(1))
		signal(t, r.srv[holder], syscall.SIGSTOP)
		checkFenced(t, r, id, holder, release)
	})
}

// answerNamesReplica makes each replica's answer name it, so the log
// shows whose answer it kept.
func answerNamesReplica(r *replicas) {
	r.ms.Default = func(req modelserver.Request) modelserver.Step {
		for i := range r.srv {
			if req.Header.Get("X-Api-Key") == replicaKey(i) {
				return modelserver.Step{Text: "answer from replica " + replicaName(i)}
			}
		}
		return modelserver.Step{Text: "answer from nowhere"}
	}
}

// checkFenced: with replica holder paused mid-turn, the other replica
// takes the session over and finishes the turn; then whatever was held
// for the paused one is released and it is resumed. It gives the session
// up, the log is unchanged, and a next input through it runs a turn.
func checkFenced(t *testing.T, r *replicas, id string, holder int, release ...func()) {
	t.Helper()
	other := 1 - holder
	paused := r.srv[holder]
	next := r.waitModelRequest(2)
	if by := r.ranBy(next); by != other {
		t.Fatalf("with replica %s paused, replica %s asked the model", replicaName(holder), replicaName(by))
	}
	_, evs := r.srv[other].waitIdle(id)
	checkLog(t, evs)
	if count(evs, "turn.started") != 1 || count(evs, "turn.completed") != 1 || count(evs, "agent.message") != 1 ||
		!logHolds(evs, "answer from replica "+replicaName(other)) {
		t.Fatalf("the turn was not finished by replica %s: %v", replicaName(other), types(evs))
	}

	for _, f := range release {
		f()
	}
	signal(t, paused, syscall.SIGCONT)
	paused.waitLog("session taken over by another runtime")
	out := paused.out.String()
	i := strings.Index(out, "session taken over by another runtime")
	t.Logf("replica %s, resumed: %s", replicaName(holder), strings.SplitN(out[i:], "\n", 2)[0])

	after := r.srv[other].events(id)
	if !sameEvents(after, evs) || logHolds(after, "answer from replica "+replicaName(holder)) {
		t.Fatalf("the resumed replica changed the log:\nbefore %v\nafter  %v", types(evs), types(after))
	}
	// The session goes on working, through the replica that was paused.
	code, raw := paused.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "still there?"}}})
	if code != 202 {
		t.Fatalf("input through the resumed replica: %d %s", code, raw)
	}
	_, evs = paused.waitFor(id, "the next turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})
	checkLog(t, evs)
	if count(evs, "turn.started") != 2 || count(evs, "agent.message") != 2 {
		t.Fatalf("log after the next turn: %v", types(evs))
	}
}

func signal(t *testing.T, s *server, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%v: %v", sig, err)
	}
}

// logHolds reports whether any event's body holds text.
func logHolds(evs []event, text string) bool {
	for _, e := range evs {
		if strings.Contains(string(e.Body), text) {
			return true
		}
	}
	return false
}
