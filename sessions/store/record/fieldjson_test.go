package record

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestAppendJSONTimeAsMarshalJSON: a record's times are written as
// core.Time's MarshalJSON writes them, at the edges of the layout's
// years and milliseconds, in any zone, and for random instants.
func TestAppendJSONTimeAsMarshalJSON(t *testing.T) {
	east := time.FixedZone("east", 5*3600+30*60)
	times := []time.Time{
		{},
		time.Date(2026, 11, 30, 4, 5, 6, 789_000_000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC), // sub-millisecond digits are cut, not rounded
		time.Date(2026, 3, 1, 2, 0, 0, 1_000_000, east),            // another zone is written in UTC
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1_000_000, time.UTC),
		time.Date(999, 7, 4, 12, 30, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // past the layout's four digits
		time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		times = append(times, time.Unix(rng.Int64N(400_000_000_000)-62_135_596_800, rng.Int64N(1e9)))
	}
	for _, tm := range times {
		ct := core.Time{Time: tm}
		want, err := ct.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONTime([]byte("x"), ct); string(got) != "x"+string(want) {
			t.Fatalf("%v: wrote %s, MarshalJSON writes %s", tm, got[1:], want)
		}
	}
}

// fill sets v, and every field, element and pointee under it, to a value
// that is not zero.
func fill(v reflect.Value, n int) {
	if v.Type() == reflect.TypeFor[core.Time]() {
		v.Set(reflect.ValueOf(core.NewTime(time.Date(2026, 1, 2, 3, 4, 5, int(n)*1_000_000, time.UTC))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v<" + strings.Repeat("x", n%5) + ">")
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n + 1))
	case reflect.Uint64:
		v.SetUint(uint64(n + 2))
	case reflect.Uint8:
		v.SetUint(uint64('a' + n%26))
	case reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), n+1)
		fill(s.Index(1), n+2)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range 3 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n+i)
			fill(e, n+i+7)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n+i)
			}
		}
	default:
		panic("fill: a field of kind " + v.Kind().String() + " is new here")
	}
}
