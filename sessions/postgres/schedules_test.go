package postgres

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/storetest"
)

func TestScheduleConformance(t *testing.T) {
	storetest.RunSchedules(t, func(t *testing.T) storetest.ScheduleStore {
		s, _ := openTest(t, Options{})
		return s
	})
}
