package postgres

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestStatsConformance(t *testing.T) {
	storetest.RunStats(t, func(t *testing.T, now func() time.Time) storetest.StatsStore {
		s, _ := openTest(t, Options{Now: now})
		return s
	})
}
