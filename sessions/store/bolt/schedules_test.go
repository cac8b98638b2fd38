package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestScheduleConformance(t *testing.T) {
	storetest.RunSchedules(t, func(t *testing.T) storetest.ScheduleStore {
		s, _ := openTemp(t, Options{})
		return s
	})
}
