package record

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// storedDeliveries are deliveries in every shape a record takes: pending
// with no attempt, attempted with and without errors, settled, with
// strings that need escaping, zero times, many attempts.
func storedDeliveries() []core.Delivery {
	at := core.NewTime(time.Date(2026, 11, 29, 4, 5, 6, 789_000_000, time.UTC))
	sess := &core.Session{ID: "ses_1"}
	ev := core.Event{ID: "evt_1", Type: core.TypeAgentMessage, Seq: 42}
	pending := *NewDelivery("dst_1", sess, ev, 7, at)
	attempted := pending
	attempted.Attempts = nil
	AddAttempt(&attempted, core.Attempt{At: at, StatusCode: 502, LatencyMS: 31, Error: "bad gateway <html> é"}, at)
	AddAttempt(&attempted, core.Attempt{At: at, LatencyMS: 5000, Error: "timeout"}, at)
	attempted.FirstAttemptAt = at.Ptr()
	delivered := attempted
	delivered.Attempts = append(append([]core.Attempt{}, attempted.Attempts...), core.Attempt{At: at, StatusCode: 204, LatencyMS: 2})
	delivered.State, delivered.NextAttemptAt, delivered.DeliveredAt = core.DeliveryDelivered, nil, at.Ptr()
	escaped := attempted
	escaped.Attempts = []core.Attempt{{At: at, Error: "dial \"10.0.0.1\": refused\n \u2028"}}
	nilAttempts := pending
	nilAttempts.Attempts = nil
	zeroTimes := pending
	zeroTimes.CreatedAt, zeroTimes.NextAttemptAt = core.Time{}, &core.Time{}
	many := pending
	many.Attempts = nil
	for i := range core.MaxAttemptsKept + 3 {
		AddAttempt(&many, core.Attempt{At: at, StatusCode: 500 + i, LatencyMS: int64(i)}, at)
	}
	return []core.Delivery{pending, attempted, delivered, escaped, nilAttempts, zeroTimes, many}
}

// TestDeliveryJSONAsEncodingJSON: EncodeDelivery writes what
// encoding/json writes, and DecodeDelivery reads what encoding/json reads,
// from every stored shape, field by field where it can.
func TestDeliveryJSONAsEncodingJSON(t *testing.T) {
	for i, d := range storedDeliveries() {
		if err := checkJSON(&d, EncodeDelivery); err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		raw := EncodeDelivery(&d)
		// The escaped error (delivery 3) is left to encoding/json.
		if _, fast := readDelivery(raw); fast != (i != 3) {
			t.Fatalf("delivery %d: read field by field %v\n %s", i, fast, raw)
		}
		got, err := DecodeDelivery(raw)
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		want := decodeDeliveryJSON(t, raw)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("delivery %d: read\n %+v\nencoding/json reads\n %+v", i, *got, *want)
		}
	}
}

// decodeDeliveryJSON is DecodeDelivery through encoding/json alone.
func decodeDeliveryJSON(t testing.TB, raw []byte) *core.Delivery {
	t.Helper()
	want, err := Decode[core.Delivery]("delivery", raw)
	if err != nil {
		t.Fatal(err)
	}
	if want.Attempts == nil {
		want.Attempts = []core.Attempt{}
	}
	return want
}

// TestDeliveryJSONEveryField: a delivery with every field set, so that a
// field added to core.Delivery and not to EncodeDelivery fails here.
func TestDeliveryJSONEveryField(t *testing.T) {
	var d core.Delivery
	fill(reflect.ValueOf(&d).Elem(), 0)
	if err := checkJSON(&d, EncodeDelivery); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeDeliveryOtherForms: records in another form (PostgreSQL's
// jsonb orders keys its own way; a field a later version adds; negative
// numbers) are read by encoding/json, and broken ones fail.
func TestDecodeDeliveryOtherForms(t *testing.T) {
	d := storedDeliveries()[2]
	raw, err := Encode("delivery", d.ID, &d)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	reordered, _ := json.Marshal(fields)
	indented, _ := json.MarshalIndent(fields, "", "  ")
	later := strings.TrimSuffix(string(raw), "}") + `,"later":1}`
	negative := strings.Replace(string(raw), `"latency_ms":2`, `"latency_ms":-2`, 1)
	for name, raw := range map[string]string{"reordered": string(reordered), "indented": string(indented), "a field after the last": later, "negative": negative} {
		if _, fast := readDelivery([]byte(raw)); fast {
			t.Fatalf("%s: read field by field", name)
		}
		got, err := DecodeDelivery([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := decodeDeliveryJSON(t, []byte(raw)); !reflect.DeepEqual(got, want) || got.ID != d.ID {
			t.Fatalf("%s: read\n %+v\nencoding/json reads\n %+v", name, *got, *want)
		}
	}
	for _, bad := range []string{``, `{`, `{"id":"dlv_1"`, strings.TrimSuffix(string(raw), "}")} {
		if _, err := DecodeDelivery([]byte(bad)); err == nil {
			t.Fatalf("%q read without an error", bad)
		}
	}
}

func FuzzDeliveryJSON(f *testing.F) {
	for _, d := range storedDeliveries() {
		for _, a := range d.Attempts {
			f.Add(d.ID, d.EventType, d.Seq, a.StatusCode, a.LatencyMS, a.Error)
		}
	}
	f.Fuzz(func(t *testing.T, id, typ string, seq uint64, code int, latency int64, msg string) {
		at := core.Now()
		d := core.Delivery{ID: id, DestinationID: "dst_1", SessionID: "ses_1", EventType: typ, Seq: seq,
			State: core.DeliveryPending, AttemptCount: 1, NextAttemptAt: at.Ptr(), CreatedAt: at, UpdatedAt: at,
			Attempts: []core.Attempt{{At: at, StatusCode: code, LatencyMS: latency, Error: msg}}}
		if err := checkJSON(&d, EncodeDelivery); err != nil {
			t.Fatal(err)
		}
		raw := EncodeDelivery(&d)
		got, err := DecodeDelivery(raw)
		if err != nil {
			t.Fatal(err)
		}
		if want := decodeDeliveryJSON(t, raw); !reflect.DeepEqual(got, want) {
			t.Fatalf("read\n %+v\nencoding/json reads\n %+v", got, want)
		}
	})
}

// BenchmarkDeliveryJSON writes and reads an attempted delivery's record
// both ways: the baseline is encoding/json's.
func BenchmarkDeliveryJSON(b *testing.B) {
	d := storedDeliveries()[1]
	benchJSON(b, &d, EncodeDelivery, DecodeDelivery)
}
