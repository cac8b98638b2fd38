package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestStatsConformance(t *testing.T) { storetest.RunStats(t, clocked) }
