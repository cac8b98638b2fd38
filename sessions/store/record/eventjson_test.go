package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// loggedEvents are events as PrepareEvent leaves them, in every shape a
// record takes: optional fields set or not, strings that need escaping,
// a null body, times at the edges of their form.
func loggedEvents(t testing.TB) []core.Event {
	at := core.NewTime(time.Date(2026, 11, 29, 4, 5, 6, 789_000_000, time.UTC))
	plain := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "lorem <ipsum> & \u2028 \"quoted\" é"})
	plain.ID, plain.SessionID, plain.Seq, plain.CreatedAt = "evt_1", "ses_1", 7, at
	full := plain
	full.TurnID, full.SourceKey = "turn_9", "slack:T1:C1:1700000000.000100"
	full.QueuedAt, full.ProcessedAt = at.Ptr(), core.NewTime(at.Add(time.Hour)).Ptr()
	escaped := full
	escaped.SourceKey = "gitlab:grüppe/\"sub\"/proj\\ect#1\n"
	escaped.TurnID = "turn\t\x01"
	badUTF8 := plain
	badUTF8.SourceKey = "key\xff"
	nullBody := plain
	nullBody.Body = nil
	zeroTimes := plain
	zeroTimes.CreatedAt = core.Time{}
	zeroTimes.QueuedAt = &core.Time{}
	nested := plain
	nested.Body = json.RawMessage(`{"a":[1,{"b":"}"}],"c":null}`)
	var out []core.Event
	for _, e := range []core.Event{plain, full, escaped, badUTF8, nullBody, zeroTimes, nested} {
		if e.Body != nil {
			p, err := PrepareEvent(e)
			if err != nil {
				t.Fatal(err)
			}
			p.Seq = e.Seq
			e = p
		}
		out = append(out, e)
	}
	return out
}

// TestEventJSONAsEncodingJSON: EncodeEvent writes what encoding/json
// writes, and DecodeEvent reads back what encoding/json reads, from its
// own records and from records only encoding/json can read.
func TestEventJSONAsEncodingJSON(t *testing.T) {
	for i, e := range loggedEvents(t) {
		if err := checkJSON(&e, EncodeEvent); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		raw := EncodeEvent(&e)
		// Escaped strings (events 2 and 3) are left to encoding/json.
		if _, fast := readEvent(raw); fast != (i != 2 && i != 3) {
			t.Fatalf("event %d: read field by field: %v", i, fast)
		}
		got, err := DecodeEvent("event", raw)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		want, err := Decode[core.Event]("event", raw)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d: read\n %+v\nencoding/json reads\n %+v", i, got, want)
		}
	}
}

// TestEventJSONEveryField: an event with every field set, so that a field
// added to core.Event and not to EncodeEvent fails here.
func TestEventJSONEveryField(t *testing.T) {
	var e core.Event
	fill(reflect.ValueOf(&e).Elem(), 0)
	e.Body = json.RawMessage(`{"text":"every field"}`) // as PrepareEvent leaves it
	if err := checkJSON(&e, EncodeEvent); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeEventOtherForms: records in another form (reindented, fields
// reordered as PostgreSQL's jsonb writes them, a field after the body)
// are read as encoding/json reads them; bad ones fail as they did.
func TestDecodeEventOtherForms(t *testing.T) {
	e := loggedEvents(t)[1]
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(EncodeEvent(&e), &fields); err != nil {
		t.Fatal(err)
	}
	reordered, _ := json.Marshal(fields) // keys sorted
	indented, _ := json.MarshalIndent(fields, "", "  ")
	after := strings.TrimSuffix(string(EncodeEvent(&e)), "}") + `,"later":1}`
	for name, raw := range map[string]string{"reordered": string(reordered), "indented": string(indented), "a field after the body": after} {
		got, err := DecodeEvent("event", []byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := Decode[core.Event]("event", []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || got.ID != e.ID || got.SourceKey != e.SourceKey {
			t.Fatalf("%s: read\n %+v\nencoding/json reads\n %+v", name, *got, *want)
		}
	}
	for _, bad := range []string{``, `{`, `{"id":"evt_1"`, `{"id":"evt_1","session_id":"s","seq":1,"type":"t","level":"l","actor":"a","created_at":null,"body":{"a":}`} {
		if _, err := DecodeEvent("event", []byte(bad)); err == nil {
			t.Fatalf("%q read without an error", bad)
		}
	}
}

// TestDecodeEventOwnsItsBytes: the event read keeps nothing of the
// buffer, which a database reuses once the read is over.
func TestDecodeEventOwnsItsBytes(t *testing.T) {
	e := loggedEvents(t)[1]
	raw := EncodeEvent(&e)
	got, err := DecodeEvent("event", raw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i] = 'x'
	}
	if !reflect.DeepEqual(*got, e) {
		t.Fatalf("read %+v, then the buffer changed it", *got)
	}
}

func FuzzEventJSON(f *testing.F) {
	for _, e := range loggedEvents(f) {
		f.Add(e.ID, e.TurnID, e.SourceKey, e.Seq, string(e.Body))
	}
	f.Fuzz(func(t *testing.T, id, turn, source string, seq uint64, body string) {
		e := core.Event{ID: id, SessionID: "ses_1", Seq: seq, Type: core.TypeUserMessage, Level: core.LevelUser,
			Actor: core.ActorHuman, TurnID: turn, SourceKey: source, CreatedAt: core.Now(), Body: json.RawMessage(body)}
		p, err := PrepareEvent(e)
		if err != nil {
			return // not json: refused before any record is written
		}
		p.Seq = seq
		if err := checkJSON(&p, EncodeEvent); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeEvent("event", EncodeEvent(&p))
		if err != nil {
			t.Fatal(err)
		}
		want, err := Decode[core.Event]("event", EncodeEvent(&p))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read\n %+v\nencoding/json reads\n %+v", got, want)
		}
	})
}

// BenchmarkEventJSON writes and reads a logged message's record both
// ways: the baseline is encoding/json's.
func BenchmarkEventJSON(b *testing.B) {
	e := loggedEvents(b)[1]
	benchJSON(b, &e, EncodeEvent, func(raw []byte) (*core.Event, error) { return DecodeEvent("event", raw) })
}

// benchJSON times encode and decode of v's record beside encoding/json's.
func benchJSON[T any](b *testing.B, v *T, encode func(*T) []byte, decode func([]byte) (*T, error)) {
	raw := encode(v)
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			encode(v)
		}
	})
	b.Run("encode-encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := core.EncodeJSON(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := decode(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := Decode[T]("record", raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// checkJSON is for tests: an error when encode and encoding/json disagree
// on v.
func checkJSON[T any](v *T, encode func(*T) []byte) error {
	want, err := core.EncodeJSON(v)
	if err != nil {
		return err
	}
	if got := encode(v); !bytes.Equal(got, want) {
		return fmt.Errorf("encoded\n %s\nencoding/json\n %s", got, want)
	}
	return nil
}

// TestEncodeEventEmptyBody: an event whose body was never prepared, and
// is empty, still makes a record that reads.
func TestEncodeEventEmptyBody(t *testing.T) {
	e := core.Event{ID: "evt_1", SessionID: "ses_1", Seq: 1, Type: core.TypeUserMessage, Body: json.RawMessage{}}
	raw := EncodeEvent(&e)
	if !json.Valid(raw) {
		t.Fatalf("not json: %s", raw)
	}
	if _, err := DecodeEvent("event", raw); err != nil {
		t.Fatal(err)
	}
}
