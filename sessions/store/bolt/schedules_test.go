package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestScheduleConformance(t *testing.T) { storetest.RunSchedules(t, fresh) }
