// Package crontab reads cron expressions in a time zone and says when
// they are next due, with the wall-clock rules a person expects across
// daylight-saving changes: a time the clocks skip is due at the next
// minute that exists, a time they repeat is due once, at its first
// occurrence.
//
// The five fields (minute, hour, day of month, month, day of week) and the
// descriptors (@hourly, @daily, @weekly, @monthly, @yearly) are parsed by
// robfig/cron; this package only walks the calendar.
package crontab

import (
	"fmt"
	"strings"
	"time"
	// The zone database is in the binary: a container image from scratch
	// has no /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"github.com/switchboardhq/switchboard/core"
)

// Spec is a cron expression in a time zone.
type Spec struct {
	expr  string
	zone  *time.Location
	sched *cron.SpecSchedule
}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// horizon bounds the search for the next due time: an expression with no
// date in it (the 30th of February) is refused.
const horizon = 8 * 366 * 24 * time.Hour

// Parse reads expr (five fields or a descriptor) in the IANA time zone
// zone ("" is UTC). The error wraps core.ErrInvalid and names the field
// at fault, "cron" or "time_zone".
func Parse(expr, zone string) (*Spec, error) {
	loc, err := Zone(zone)
	if err != nil {
		return nil, err
	}
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "@every") {
		return nil, fmt.Errorf("field \"cron\": %q: @every is not supported; give the five fields (minute hour day-of-month month day-of-week): %w", expr, core.ErrInvalid)
	}
	if strings.HasPrefix(strings.ToUpper(expr), "CRON_TZ=") || strings.HasPrefix(strings.ToUpper(expr), "TZ=") {
		return nil, fmt.Errorf("field \"cron\": %q: give the time zone in \"time_zone\", not in the expression: %w", expr, core.ErrInvalid)
	}
	s, err := parser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("field \"cron\": %q: %v (want five fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly): %w", expr, err, core.ErrInvalid)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("field \"cron\": %q is not a calendar schedule: %w", expr, core.ErrInvalid)
	}
	out := &Spec{expr: expr, zone: loc, sched: spec}
	if out.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("field \"cron\": %q is never due: %w", expr, core.ErrInvalid)
	}
	return out, nil
}

// Zone loads an IANA time zone ("" is UTC); the error wraps
// core.ErrInvalid and names the field "time_zone".
func Zone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("field \"time_zone\": name a zone (e.g. Europe/Berlin), not Local: %w", core.ErrInvalid)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("field \"time_zone\": %q is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC): %w", name, core.ErrInvalid)
	}
	return loc, nil
}

// String is the expression as given.
func (s *Spec) String() string { return s.expr }

// Location is the spec's time zone.
func (s *Spec) Location() *time.Location { return s.zone }

// Next is the first due time strictly after after; zero when there is
// none within eight years.
func (s *Spec) Next(after time.Time) time.Time {
	after = after.In(s.zone)
	// Walk the wall clock, day by day, from the day after falls on.
	y, m, d := after.Date()
	for day := time.Date(y, m, d, 12, 0, 0, 0, time.UTC); day.Sub(after) < horizon; day = day.AddDate(0, 0, 1) {
		if !s.onDay(day) {
			continue
		}
		for h := range 24 {
			if s.sched.Hour&(1<<uint(h)) == 0 {
				continue
			}
			for mi := range 60 {
				if s.sched.Minute&(1<<uint(mi)) == 0 {
					continue
				}
				at := instant(day.Year(), day.Month(), day.Day(), h, mi, s.zone)
				if at.After(after) {
					return at
				}
			}
		}
	}
	return time.Time{}
}

// starBit marks a day field given as "*" (or "?"): with one of the two
// day fields a star, a day must match both; with neither, either.
const starBit = 1 << 63

// onDay reports whether the calendar date of day (its UTC fields) is due.
func (s *Spec) onDay(day time.Time) bool {
	if s.sched.Month&(1<<uint(day.Month())) == 0 {
		return false
	}
	dom := s.sched.Dom&(1<<uint(day.Day())) != 0
	dow := s.sched.Dow&(1<<uint(day.Weekday())) != 0
	if s.sched.Dom&starBit != 0 || s.sched.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// instant is the first moment the wall clock of loc reads the given
// minute; for a minute the clocks skip, the first moment after the skip
// (the next minute that exists).
func instant(y int, mo time.Month, d, h, mi int, loc *time.Location) time.Time {
	wall := time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	// The wall minute is at UTC wall-offset for one of the offsets in
	// force around it; a repeated minute matches both, a skipped one none.
	var best time.Time
	for _, probe := range []time.Duration{-36 * time.Hour, 36 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		at := wall.Add(-time.Duration(off) * time.Second)
		if sameWall(at.In(loc), wall) && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	_, off := time.Date(y, mo, d, h, mi, 0, 0, loc).Zone()
	if at := wall.Add(-time.Duration(off) * time.Second); sameWall(at.In(loc), wall) && (best.IsZero() || at.Before(best)) {
		best = at
	}
	if !best.IsZero() {
		return best
	}
	// Skipped: the clocks jump over this minute. The first moment whose
	// wall clock reads later is the jump itself.
	lo := wall.Add(-36 * time.Hour)
	hi := wall.Add(36 * time.Hour)
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if wallOf(mid.In(loc)).Before(wall) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi.Truncate(time.Second)
}

// wallOf is t's wall clock as a UTC time, for comparing wall clocks.
func wallOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

func sameWall(t, wall time.Time) bool { return wallOf(t).Equal(wall) }
