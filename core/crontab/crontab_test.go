package crontab

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// fires lists the due times of spec from after, n of them.
func fires(t *testing.T, spec *Spec, after time.Time, n int) []string {
	t.Helper()
	var out []string
	for range n {
		after = spec.Next(after)
		if after.IsZero() {
			t.Fatal("no next due time")
		}
		out = append(out, after.UTC().Format(time.RFC3339))
	}
	return out
}

// TestBerlinDaylightSaving: 02:30 every day in Europe/Berlin across both
// changes of 2026. On 29 March the clocks jump from 02:00 to 03:00: the
// skipped 02:30 is due at 03:00 (01:00 UTC), the next minute that
// exists. On 25 October they go back from 03:00 to 02:00: 02:30 happens
// twice and is due once, the first time (00:30 UTC, still summer time).
func TestBerlinDaylightSaving(t *testing.T) {
	spec, err := Parse("30 2 * * *", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, after string
		want        []string
	}{
		{"spring forward", "2026-03-27T12:00:00Z", []string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"fall back", "2026-10-23T12:00:00Z", []string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// Asked from between the two 02:30s of 25 October: the second is
		// not due again.
		{"between the repeats", "2026-10-25T00:45:00Z", []string{"2026-10-26T01:30:00Z"}},
		// Asked from the skipped hour itself.
		{"inside the skipped hour", "2026-03-29T00:59:00Z", []string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fires(t, spec, utc(tt.after), len(tt.want)); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("due at %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNext(t *testing.T) {
	for _, tt := range []struct {
		expr, zone, after string
		want              []string
	}{
		{"*/15 * * * *", "", "2026-01-01T00:07:00Z", []string{"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z"}},
		{"0 9 * * 1-5", "America/New_York", "2026-11-27T15:00:00Z", []string{"2026-11-30T14:00:00Z", "2026-12-01T14:00:00Z"}}, // Friday 10:00 → Monday 09:00 EST
		{"@daily", "UTC", "2026-02-28T00:00:00Z", []string{"2026-03-01T00:00:00Z"}},
		{"0 0 29 2 *", "", "2026-01-01T00:00:00Z", []string{"2028-02-29T00:00:00Z"}},
		// Day of month or day of week when both are given, as cron does.
		{"0 12 1 * 0", "", "2026-11-27T00:00:00Z", []string{"2026-11-29T12:00:00Z", "2026-12-01T12:00:00Z", "2026-12-06T12:00:00Z"}},
		// Strictly after: a due time equal to after is not due again.
		{"0 * * * *", "", "2026-05-05T10:00:00Z", []string{"2026-05-05T11:00:00Z"}},
	} {
		t.Run(tt.expr+" "+tt.zone, func(t *testing.T) {
			spec, err := Parse(tt.expr, tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			if got := fires(t, spec, utc(tt.after), len(tt.want)); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("due at %v, want %v", got, tt.want)
			}
		})
	}
}

// TestParseErrors: a bad expression names "cron", a bad zone "time_zone".
func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ expr, zone, field string }{
		{"61 * * * *", "", `field "cron"`},
		{"* * * *", "", `field "cron"`},
		{"@every 1h", "", `field "cron"`},
		{"CRON_TZ=UTC 0 * * * *", "", `field "cron"`},
		{"0 0 30 2 *", "", `field "cron"`},
		{"0 * * * *", "Mars/Olympus", `field "time_zone"`},
		{"0 * * * *", "Local", `field "time_zone"`},
	} {
		t.Run(tt.expr+" "+tt.zone, func(t *testing.T) {
			_, err := Parse(tt.expr, tt.zone)
			if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("Parse(%q, %q) = %v, want an invalid %s", tt.expr, tt.zone, err, tt.field)
			}
		})
	}
}

// BenchmarkNext measures the next due time of a daily expression and of
// the rarest one (29 February), against time.Time.AddDate as a baseline.
func BenchmarkNext(b *testing.B) {
	daily, _ := Parse("30 2 * * *", "Europe/Berlin")
	leap, _ := Parse("0 0 29 2 *", "")
	at := utc("2026-03-01T00:00:00Z")
	b.Run("daily", func(b *testing.B) {
		for b.Loop() {
			daily.Next(at)
		}
	})
	b.Run("leap_day", func(b *testing.B) {
		for b.Loop() {
			leap.Next(at)
		}
	})
	b.Run("baseline_adddate", func(b *testing.B) {
		for b.Loop() {
			_ = at.AddDate(0, 0, 1)
		}
	})
}
