package record

import (
	"strconv"

	"github.com/switchboardhq/switchboard/core"
)

// A delivery queue writes and reads each delivery record a few times on
// its way out (queued, read ahead, attempted, read as the stream's new
// head), so they are on delivery's hot path: EncodeDelivery and
// readDelivery write and read them without reflection, in exactly the
// bytes encoding/json makes of a core.Delivery (core.EncodeJSON).

// EncodeDelivery is Encode for a delivery.
func EncodeDelivery(d *core.Delivery) []byte {
	buf := make([]byte, 0, 320+len(d.EventType)+len(d.Attempts)*80)
	buf = append(buf, `{"id":`...)
	buf = appendJSONString(buf, d.ID)
	buf = append(buf, `,"destination_id":`...)
	buf = appendJSONString(buf, d.DestinationID)
	buf = append(buf, `,"session_id":`...)
	buf = appendJSONString(buf, d.SessionID)
	buf = append(buf, `,"event_id":`...)
	buf = appendJSONString(buf, d.EventID)
	buf = append(buf, `,"event_type":`...)
	buf = appendJSONString(buf, d.EventType)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendUint(buf, d.Seq, 10)
	buf = append(buf, `,"state":`...)
	buf = appendJSONString(buf, string(d.State))
	buf = append(buf, `,"attempt_count":`...)
	buf = strconv.AppendInt(buf, int64(d.AttemptCount), 10)
	buf = append(buf, `,"attempts":`...)
	if d.Attempts == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '[')
		for i, a := range d.Attempts {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"at":`...)
			buf = appendJSONTime(buf, a.At)
			buf = append(buf, `,"status_code":`...)
			buf = strconv.AppendInt(buf, int64(a.StatusCode), 10)
			buf = append(buf, `,"latency_ms":`...)
			buf = strconv.AppendInt(buf, a.LatencyMS, 10)
			if a.Error != "" {
				buf = append(buf, `,"error":`...)
				buf = appendJSONString(buf, a.Error)
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	buf = appendOptTime(buf, `,"first_attempt_at":`, d.FirstAttemptAt)
	buf = appendOptTime(buf, `,"next_attempt_at":`, d.NextAttemptAt)
	buf = appendOptTime(buf, `,"delivered_at":`, d.DeliveredAt)
	buf = append(buf, `,"created_at":`...)
	buf = appendJSONTime(buf, d.CreatedAt)
	buf = append(buf, `,"updated_at":`...)
	buf = appendJSONTime(buf, d.UpdatedAt)
	return append(buf, '}')
}

// readDelivery reads a delivery record in EncodeDelivery's form, with no
// escape in its strings; ok is false for anything else, leaving it to
// encoding/json.
func readDelivery(raw []byte) (*core.Delivery, bool) {
	r := fieldReader{b: raw}
	d := &core.Delivery{}
	var state string
	if !r.lit(`{"id":`) || !r.str(&d.ID) ||
		!r.lit(`,"destination_id":`) || !r.str(&d.DestinationID) ||
		!r.lit(`,"session_id":`) || !r.str(&d.SessionID) ||
		!r.lit(`,"event_id":`) || !r.str(&d.EventID) ||
		!r.lit(`,"event_type":`) || !r.str(&d.EventType) ||
		!r.lit(`,"seq":`) || !r.uint(&d.Seq) ||
		!r.lit(`,"state":`) || !r.str(&state) ||
		!r.lit(`,"attempt_count":`) || !r.int(&d.AttemptCount) ||
		!r.lit(`,"attempts":`) || !r.attempts(&d.Attempts) ||
		!r.optTime(`,"first_attempt_at":`, &d.FirstAttemptAt) ||
		!r.optTime(`,"next_attempt_at":`, &d.NextAttemptAt) ||
		!r.optTime(`,"delivered_at":`, &d.DeliveredAt) ||
		!r.lit(`,"created_at":`) || !r.time(&d.CreatedAt) ||
		!r.lit(`,"updated_at":`) || !r.time(&d.UpdatedAt) ||
		!r.lit(`}`) || r.i != len(raw) {
		return nil, false
	}
	d.State = core.DeliveryState(state)
	return d, true
}

// attempts reads null or an array of attempts.
func (r *fieldReader) attempts(out *[]core.Attempt) bool {
	if r.lit("null") {
		*out = nil
		return true
	}
	if !r.lit("[") {
		return false
	}
	list := []core.Attempt{}
	for i := 0; !r.lit("]"); i++ {
		if i > 0 && !r.lit(",") {
			return false
		}
		var a core.Attempt
		var latency int
		if !r.lit(`{"at":`) || !r.time(&a.At) ||
			!r.lit(`,"status_code":`) || !r.int(&a.StatusCode) ||
			!r.lit(`,"latency_ms":`) || !r.int(&latency) ||
			!r.optStr(`,"error":`, &a.Error) ||
			!r.lit("}") {
			return false
		}
		a.LatencyMS = int64(latency)
		list = append(list, a)
	}
	*out = list
	return true
}
