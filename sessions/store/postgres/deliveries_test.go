package postgres

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestOutboxConformance(t *testing.T) {
	storetest.RunDeliveries(t, func(t *testing.T) storetest.DeliveryStore {
		s, _ := openTest(t, Options{})
		return s
	})
}
